"""Test-wide settings: theorems are checked in float64, on the CPU."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_enable_x64", True)
