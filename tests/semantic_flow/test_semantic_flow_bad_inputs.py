"""Value checks of the semantic_flow area hold eagerly and under jit (they name the argument)."""

import jax.numpy as jnp
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.generative import rectified_flow as rf
from jaxlab.generative import semantic_flow as sf


def test_rf_value_checks_eager_and_jit():
    x = jnp.zeros((2, 3))
    raises_eager_and_jit(rf.rf_interpolate, x, x, 1.5, match="sigma")
    raises_eager_and_jit(rf.shift_sigmas, 0.5, -1.0, match="shift")
    raises_eager_and_jit(rf.shift_sigmas, jnp.array([0.5, -0.1]), 3.0, match="sigma")
    raises_eager_and_jit(rf.time_shift_exponential, jnp.array([0.5]), 0.5, -2.0, match="power")
    raises_eager_and_jit(rf.cfg_velocity, x, x, jnp.inf, match="scale")
    raises_eager_and_jit(rf.flux_mu, -3.0, match="n_img_tokens")


def test_semantic_energy_needs_subject_and_visual_roles_eager_and_jit():
    R = jnp.full((2, 16), 1 / 16)
    raises_eager_and_jit(lambda r, roles: sf.semantic_energy(r, roles)[0], R, jnp.array([0, 2]), match="roles")
    e, _ = sf.semantic_energy(R, jnp.array([0, 1]))
    assert float(e) == pytest.approx(float(sf.semantic_energy(R, jnp.array([0, 1]))[0]))
