"""``bench/accelerator.py`` (issue 26 item 4) in a subprocess on the CPU, float32 by default (no JAX_ENABLE_X64).

``--tiny`` must exit 0 with a timed row for every area of ``jaxlab verify`` (finite, positive medians, finite
outputs), say for every float32-only case why bfloat16 is skipped, and lower jaxlab's custom primitives (the MM-DiT
token matmul, the DSN BPTT pair, ``sort_floats``, the surrogate Heaviside) for cpu, cuda, rocm and tpu. The public
entry points around them carry jaxlab's run-time input checks (``equinox.error_if``, a host callback), which lower
only for the backend present: on the other platforms they must read ``callback``, never ``FAIL``, and with
``EQX_ON_ERROR=off`` they must lower everywhere.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlab.core.verification import discover_areas

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "accelerator.py"
PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
BF16_CASES = {"core/gram", "pe_spread/attention_fwd_bwd", "semantic_flow/mmdit_sample", "flow_agent/cfm_fit",
              "token_router/tiny_decoder_decode"}


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "EQX_ON_ERROR")}
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("accelerator") / "x.json"
    proc = _run(["--tiny", "--out", str(out)], _env())
    data = json.loads(out.read_text()) if out.exists() else None
    return proc, data


def _tail(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\nstdout:\n{proc.stdout[-6000:]}\nstderr:\n{proc.stderr[-6000:]}"


def test_tiny_run_exits_zero_and_reports_the_platform_first(tiny):
    proc, data = tiny
    assert proc.returncode == 0, _tail(proc)
    assert data is not None, _tail(proc)
    first = proc.stdout.splitlines()[0]
    assert first.startswith("jax ") and "jax.devices()" in first and "Cpu" in first, first
    assert data["meta"]["backend"] == "cpu" and data["meta"]["x64"] is False
    # one JSON line per case row, as the other bench scripts print
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert len([ln for ln in lines if ln.get("kind") == "case"]) == len(data["cases"])


def test_every_area_has_a_timed_row(tiny):
    _, data = tiny
    rows = data["cases"]
    errors = [f"{r['area']}/{r['case']} [{r['dtype']}]: {r.get('error')}" for r in rows if r["status"] == "error"]
    assert not errors, "\n".join(errors)
    timed = {r["area"] for r in rows if r["status"] == "ok"}
    missing = set(discover_areas()) - timed
    assert not missing, f"areas without a timed case: {sorted(missing)}"
    # a host-bound flagship is reported, with its reason, and its area still has a timed kernel
    for r in rows:
        if r["status"] == "host-bound":
            assert r["note"] and r["area"] in timed


def test_every_median_is_finite_and_positive(tiny):
    _, data = tiny
    for r in (r for r in data["cases"] if r["status"] == "ok"):
        name = f"{r['area']}/{r['case']} [{r['dtype']}]"
        assert math.isfinite(r["median_s"]) and r["median_s"] > 0, name
        assert math.isfinite(r["compile_s"]) and r["compile_s"] >= 0, name
        assert math.isfinite(r["throughput"]) and r["throughput"] > 0, name
        assert r["finite"], f"{name}: non-finite output"
        assert r["ratio_kind"] in ("n/a", "same-size", "items/s-normalised"), name


def test_float32_everywhere_and_bf16_rows_or_a_reason(tiny):
    _, data = tiny
    ok = [r for r in data["cases"] if r["status"] == "ok"]
    by_case: dict[str, set] = {}
    for r in ok:
        by_case.setdefault(f"{r['area']}/{r['case']}", set()).add(r["dtype"])
    for name, dtypes in by_case.items():
        assert "float32" in dtypes or dtypes == {"int32/bool"}, (name, dtypes)
        if name in BF16_CASES:
            assert "bfloat16" in dtypes, name
        else:
            assert "bfloat16" not in dtypes, name
    for r in ok:
        name = f"{r['area']}/{r['case']}"
        if r["dtype"] == "float32" and name not in BF16_CASES:
            assert "bf16 skipped: " in r["note"], f"{name}: no reason for skipping bfloat16"
        if r["dtype"] == "bfloat16":
            assert r["matmul_dtypes"], f"{name}: no matmul found in the bf16 program"


def test_custom_primitives_lower_on_every_platform(tiny):
    _, data = tiny
    rows = data["lowering"]
    assert rows, "the lowering check did not run in --tiny"
    targets = {r["target"] for r in rows}
    for t in targets:
        assert {r["platform"] for r in rows if r["target"] == t} == set(PLATFORMS), t
    for needle in ("mmdit token matmul", "dsn neuron scan", "sort_floats", "heaviside_sg", "dsn_scan", "rf_loss"):
        assert any(needle in t for t in targets), needle
    failed = [f"{r['target']} on {r['platform']}: {r.get('error')}" for r in rows if r["status"] == "FAIL"]
    assert not failed, "custom primitives that do not lower:\n" + "\n".join(failed)
    for r in rows:
        if r["path"] == "primitive" or r["platform"] == "cpu":
            assert r["status"] == "ok", r
        else:  # public entry points with run-time checks: a host callback lowers only for the backend present
            assert r["status"] == "ok" or (r["status"] == "callback" and r["has_callback"]), r


def test_public_entry_points_lower_everywhere_without_runtime_checks(tmp_path):
    out = tmp_path / "lowering.json"
    proc = _run(["--check-lowering", "--out", str(out)], _env(EQX_ON_ERROR="off"))
    assert proc.returncode == 0, _tail(proc)
    rows = json.loads(out.read_text())["lowering"]
    assert len(rows) >= 4 * 10
    bad = [f"{r['target']} on {r['platform']}: {r['status']} {r.get('error', '')}" for r in rows
           if r["status"] != "ok"]
    assert not bad, "\n".join(bad)
