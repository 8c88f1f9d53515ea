"""Samplers keep the carry's dtype whatever the user's function returns (x64 on, as `jaxlab verify` runs).

A float32 start with a velocity, score or target that computes in float64 (a float64 constant inside it is
enough) must give a float32 result, close to the float64 run on the same start, not a scan-carry TypeError.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

C64 = np.float64(2.0)  # a float64 constant in the user's function promotes its output under x64


def velocity(x, s, cond):
    return jnp.asarray(C64) - x  # float64 output for a float32 x


def test_x64_is_on_in_these_tests():
    assert jnp.zeros(()).dtype == jnp.float64


@pytest.mark.parametrize("method", ["euler", "midpoint"])
def test_grid_ode_sample_keeps_float32(method):
    from jaxlab.generative.ode import grid_ode_sample

    grid = jnp.linspace(1.0, 0.0, 9)
    x32 = jnp.ones(3, jnp.float32)
    out, traj = grid_ode_sample(velocity, x32, grid, method=method, return_traj=True)
    ref = grid_ode_sample(velocity, x32.astype(jnp.float64), grid, method=method)
    assert out.dtype == traj.dtype == jnp.float32
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_rectified_flow_euler_and_diffrax_keep_float32():
    from jaxlab.generative.semantic_flow import diffrax_sample, euler_sample, make_sigmas

    x32 = jnp.zeros((2, 2), jnp.float32)
    out = euler_sample(velocity, x32, make_sigmas(8))
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(out, euler_sample(velocity, x32.astype(jnp.float64), make_sigmas(8)), rtol=1e-6)
    out = diffrax_sample(velocity, x32)
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(out, diffrax_sample(velocity, x32.astype(jnp.float64)), rtol=1e-5)


@pytest.mark.parametrize("method", ["euler", "midpoint", "diffrax"])
def test_flow_matching_ode_sample_keeps_float32(method):
    from jaxlab.generative.flow_agent import ode_sample

    x32 = jnp.zeros(3, jnp.float32)
    out = ode_sample(velocity, x32, num_steps=8, method=method)
    assert out.dtype == jnp.float32
    ref = ode_sample(velocity, x32.astype(jnp.float64), num_steps=8, method=method)
    np.testing.assert_allclose(out, ref, rtol=1e-5)


@pytest.mark.parametrize("which", ["fredholm", "gradient_free"])
def test_msip_keeps_float32_with_a_float64_target(which):
    from jaxlab.sampling.msip import fredholm_estimator, gradient_free_estimator, msip

    mu = np.array([1.0, -1.0])  # float64 constants in the user's log density

    def log_density(x):
        return -0.5 * jnp.sum((x - mu) ** 2)

    est = fredholm_estimator(log_density) if which == "fredholm" else gradient_free_estimator(log_density, n_quad=4)
    Y0 = jax.random.normal(jax.random.key(0), (16, 2), jnp.float32)
    state, _ = msip(jax.random.key(1), Y0, est, num_steps=3, step_size=0.5, lengthscale=0.5)
    assert state.particles.dtype == state.weights.dtype == jnp.float32
    assert bool(jnp.all(jnp.isfinite(state.particles)))
    if which != "fredholm":  # the Monte-Carlo nodes are drawn in the particles' dtype: other draws in float64
        return
    ref, _ = msip(jax.random.key(1), Y0.astype(jnp.float64), est, num_steps=3, step_size=0.5, lengthscale=0.5)
    # three steps through an N x N Gram solve with jitter 1e-7: float32 keeps ~3 digits of the unit-scale cloud
    np.testing.assert_allclose(state.particles, ref.particles, rtol=0, atol=5e-3)
