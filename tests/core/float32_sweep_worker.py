"""The x64-off half of tests/core/test_float32_sweep.py; not collected by pytest.

Usage: ``JAX_ENABLE_X64=0 python float32_sweep_worker.py OUT_DIR [CASE_ID ...]`` runs the float32 run of every
case of ``test_float32_sweep.CASES`` (or of the named ones, in table order) with x64 off and pickles, per case,
``OUT_DIR/<case id>.pkl``: ``("ok", leaves)`` (the outputs' numeric leaves, as ``test_float32_sweep.leaves``
returns them) or ``("error", traceback)``; then ``OUT_DIR/done``. The inputs are built as in the test (in
float64 under ``jax.enable_x64(True)``, then rounded), so the parent compares the outputs with its own float64
run.
"""

import importlib.util
import os
import pathlib
import pickle
import sys
import traceback

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp


def main(out: str, ids: list[str]) -> None:
    out = pathlib.Path(out)
    assert not jax.config.jax_enable_x64, "run with JAX_ENABLE_X64=0"
    path = pathlib.Path(__file__).with_name("test_float32_sweep.py")
    spec = importlib.util.spec_from_file_location("float32_sweep_cases", path)
    cases = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    wanted = set(ids or cases.CASE_IDS)
    for cid, case in cases.CASE_IDS.items():
        if cid not in wanted:
            continue
        try:
            result = ("ok", cases.leaves(case.run(jnp.float32)))
        except Exception:  # reported by the parent's test of this case
            result = ("error", traceback.format_exc()[-4000:])
        tmp = out / f"{cid}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(result, f)
        os.replace(tmp, out / f"{cid}.pkl")  # whole files only: the parent polls for them
        print(cid, result[0], flush=True)
    (out / "done").touch()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
