"""Every claim listed in ``claim_mutations.py`` fails when the function it tests carries a planted 3 % bias (or a
wrong constant): the claims' tolerances are tight enough to catch it. Runs in a subprocess so that no mutated
program stays in this process's JAX caches."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("claim_mutations.py")
ROOT = Path(__file__).resolve().parents[2]


def _mutations():
    spec = importlib.util.spec_from_file_location("claim_mutations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("claim_mutations", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.MUTATIONS


def test_every_planted_bias_fails_its_claim():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=900,
                         check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["claim"] for r in rows] == [m.claim for m in _mutations()]
    crashed = [r for r in rows if r["passed"] is None]
    survived = [r for r in rows if r["passed"] is True]
    assert not crashed, f"mutations that crashed their claim (they prove nothing): {crashed}"
    assert not survived, f"claims that still pass with a planted bias: {survived}"
