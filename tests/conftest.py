"""Test-wide settings: theorems are checked in float64, on the CPU; tests/ is importable (shared helpers)."""

import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_enable_x64", True)

# JAX's persistent compilation cache (jaxlab.core.cache: the user's cache folder, $JAXLAB_CACHE_DIR, `off` to
# disable), here and, through JAX's environment variables, in the notebook kernels and subprocesses the tests start:
# a program that several of them compile (a README example, its notebook, a docstring example) compiles once.
from jaxlab.core.cache import enable_compilation_cache  # noqa: E402

enable_compilation_cache(children=True)

# tests/ on sys.path (importlib import mode does not add it): `from jaxlab_testing import raises_eager_and_jit`.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from jaxlab_testing import raises_eager_and_jit  # noqa: E402,F401  (also importable as conftest's)
