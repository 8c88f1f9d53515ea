"""Test-wide settings: theorems are checked in float64, on the CPU; tests/ is importable (shared helpers)."""

import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_enable_x64", True)

# tests/ on sys.path (importlib import mode does not add it): `from jaxlab_testing import raises_eager_and_jit`.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from jaxlab_testing import raises_eager_and_jit  # noqa: E402,F401  (also importable as conftest's)
