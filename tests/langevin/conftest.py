"""Shared fixtures of the annealed-Langevin tests: the Gaussian toy of `gaussian_toy` (d = 2, n = 10)."""

import jax
import pytest

from jaxlab.sampling.langevin.models import gaussian_toy


@pytest.fixture(scope="session")
def toy():
    return gaussian_toy(jax.random.key(0), 10)
