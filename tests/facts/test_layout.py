"""The area's import paths (README: ``from jaxlab.eval import load_verdicts, leaderboard, print_leaderboard``)
and that importing the area starts no XLA backend."""

import subprocess
import sys


def test_readme_import_paths_are_the_package_objects():
    from jaxlab.eval import facts, leaderboard, load_verdicts, print_leaderboard

    assert leaderboard is facts.table.leaderboard
    assert load_verdicts is facts.table.load_verdicts
    assert print_leaderboard is facts.table.print_leaderboard
    assert facts.facts_score is facts.metrics.facts_score


def test_import_touches_no_backend():
    code = ("import jaxlab.eval, jaxlab.eval.facts.claims\n"
            "import jax._src.xla_bridge as xb\nassert not xb._backends, list(xb._backends)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
