"""The area's layout: README's import paths, importing the area starts no XLA backend (so
``jax.distributed.initialize`` can still run after it), needs neither py_trees nor networkx, and no environment
module imports a learner."""

import ast
import subprocess
import sys
from pathlib import Path

import jaxlab.agents.tree_of_skill as tos_pkg


def test_readme_import_paths():
    from jaxlab.agents import behavior_tree as bt_mod
    from jaxlab.agents import rodinsert as ri
    from jaxlab.agents import toposcope as ts
    from jaxlab.agents import tree_of_skill as tos

    assert bt_mod is tos.behavior_tree and ri is tos.rodinsert
    for name in ("GuidingNet", "train_guiding", "GuideConfig", "run_tos_episode"):
        assert hasattr(tos, name), name
    for name in ("rodinsert_bt_env", "scripted_skills", "OBS_DIM", "rodinsert_actions"):
        assert hasattr(ri, name), name
    for name in ("toy_schematic", "verify", "scope", "run_agent", "load_benchmark", "noisy_generator",
                 "rule_based_generator"):
        assert hasattr(ts, name), name


def test_import_touches_no_backend_and_needs_no_optional_peer():
    code = ("import sys\n"
            "sys.modules['networkx'] = None; sys.modules['py_trees'] = None\n"  # importing either now fails
            "import jaxlab.agents, jaxlab.agents.toposcope.claims, jaxlab.agents.tree_of_skill.claims\n"
            "import jax._src.xla_bridge as xb\nassert not xb._backends, list(xb._backends)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def _imports(module: str) -> set[str]:
    tree = ast.parse((Path(tos_pkg.__file__).parent / f"{module}.py").read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}


def test_environments_do_not_import_learners():
    learners = {f"jaxlab.agents.tree_of_skill.{m}" for m in ("ppo", "guiding", "chaining", "policies", "multistep")}
    for env in ("rodinsert", "rodinsert_tasks"):
        assert not (_imports(env) & learners), env


def test_masked_goal_checks_hold_under_jit():
    import jax
    import jax.numpy as jnp
    import pytest

    from jaxlab.agents.tree_of_skill import GoalSpec, goal_spec, masked_goal

    spec = goal_spec(1, 2)
    f = jax.jit(lambda u: masked_goal(jnp.ones(2), spec, u)[1])
    with pytest.raises(ValueError, match="use_goal must be 0/1"):
        masked_goal(jnp.ones(2), spec, jnp.asarray(0.5))
    with pytest.raises(Exception, match="use_goal must be 0/1"):
        jax.block_until_ready(f(jnp.asarray(0.5)))
    bad = GoalSpec(1, jnp.array([0.5, 0.0]))
    g = jax.jit(lambda m: masked_goal(jnp.ones(2), GoalSpec(1, m), jnp.asarray(1.0))[1])
    with pytest.raises(ValueError, match="space_mask must hold only 0/1"):
        masked_goal(jnp.ones(2), bad, jnp.asarray(1.0))
    with pytest.raises(Exception, match="space_mask must hold only 0/1"):
        jax.block_until_ready(g(bad.space_mask))
    assert float(f(jnp.asarray(1.0))[0]) == 1.0
