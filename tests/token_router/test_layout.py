"""The area's import paths: README's former module paths still work, and importing the area starts no XLA
backend (so ``jax.distributed.initialize`` can still run after it)."""

import subprocess
import sys


def test_readme_import_paths_are_the_package_objects():
    from jaxlab.serving import token_router
    from jaxlab.serving.engine import TokenRouterEngine, table_router
    from jaxlab.serving.tiny_lm import TinyDecoder
    from jaxlab.serving.token_router import StepCostModel, bernoulli_router, derive_delayed_batching

    assert TokenRouterEngine is token_router.engine.TokenRouterEngine
    assert table_router is token_router.engine.table_router
    assert TinyDecoder is token_router.tiny_lm.TinyDecoder
    assert StepCostModel is token_router.cost_model.StepCostModel
    assert derive_delayed_batching is token_router.cost_model.derive_delayed_batching
    assert bernoulli_router is token_router.routers.bernoulli_router


def test_import_touches_no_backend():
    code = ("import jaxlab.serving, jaxlab.serving.engine, jaxlab.serving.tiny_lm, jaxlab.serving.token_router.claims\n"
            "import jax._src.xla_bridge as xb\nassert not xb._backends, list(xb._backends)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
