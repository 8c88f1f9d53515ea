"""The PDE-constrained inverse problem target (reconstructed, following Aristoff & Bangerth, arXiv:2102.07263):
second-order accuracy on a manufactured solution, exact inverse scaling in the coefficient, autodiff gradient vs finite
differences, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.sampling.msip import pde_inverse as P


def _manufactured_error(m: int) -> float:
    # u* = sin(πx) sin(2πy) with a = 1 + x (smooth), f = -∇·(a∇u*) = -(u*_x + a Δu*)
    g = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(g, g, indexing="ij")
    u = np.sin(np.pi * X) * np.sin(2 * np.pi * Y)
    ux = np.pi * np.cos(np.pi * X) * np.sin(2 * np.pi * Y)
    lap = -5 * np.pi**2 * u
    f = -(ux + (1 + X) * lap)
    c = (np.arange(m) + 0.5) / m
    a_cells = np.broadcast_to((1 + c)[:, None], (m, m))  # a at the cell centres
    return float(np.max(np.abs(np.asarray(P.poisson_solve(a_cells, f)) - u)))


def test_scheme_is_second_order():
    e16, e32 = _manufactured_error(16), _manufactured_error(32)
    assert e32 < 2e-2
    assert np.log2(e16 / e32) == pytest.approx(2.0, abs=0.25)


def test_scaling_the_coefficient_scales_the_observations_inversely():
    x = jax.random.normal(jax.random.key(0), (64,))
    o1, o3 = P.observe(x), P.observe(x + jnp.log(3.0))
    np.testing.assert_allclose(np.asarray(o3), np.asarray(o1) / 3.0, rtol=1e-12)
    # constant coefficient: the solution is symmetric under x <-> y, so are the observations
    o = np.asarray(P.observe(jnp.zeros(64))).reshape(13, 13)
    np.testing.assert_allclose(o, o.T, rtol=1e-12)
    assert o.min() > 0  # f > 0, zero boundary: u > 0 inside


def test_log_density_gradient_and_maximum_at_the_truth():
    prob = P.pde_inverse_problem()
    lp = jax.jit(prob.target.log_density)
    x0 = prob.log_theta_true + 0.3 * jax.random.normal(jax.random.key(1), (64,))
    g = np.asarray(jax.grad(lp)(x0))
    e = np.zeros(64)
    for k in (0, 17, 42, 63):
        e[:] = 0.0
        e[k] = 1e-5
        fd = (float(lp(x0 + e)) - float(lp(x0 - e))) / 2e-5
        assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-6)
    # noise-free data: the misfit vanishes at the truth, which beats every perturbation of it
    truth = float(lp(prob.log_theta_true))
    assert truth == pytest.approx(-0.5 * float(jnp.sum(prob.log_theta_true**2)) / 4.0, rel=1e-12)
    assert float(lp(x0)) < truth
    assert prob.target.dim == 64 and prob.z.shape == (169,)


def test_bad_inputs():
    with pytest.raises(ValueError, match="multiple of 8"):
        P.pde_inverse_problem(mesh=20)
    with pytest.raises(ValueError, match="log_theta"):
        P.observe(jnp.zeros(63))
    with pytest.raises(ValueError, match="needs a key"):
        P.pde_inverse_problem(add_noise=True)
    with pytest.raises(ValueError, match="noise_std"):
        P.pde_inverse_problem(noise_std=0.0)


def test_msip_runs_on_the_pde_target_and_raises_the_log_density():
    from jaxlab.sampling import msip as M

    prob = P.pde_inverse_problem(mesh=16)
    lp = prob.target.log_density
    Y0 = prob.log_theta_true + 0.5 * jax.random.normal(jax.random.key(2), (12, 64))
    est = M.fredholm_estimator(lp, gamma=0.9)
    state, _ = M.msip(jax.random.key(3), Y0, est, num_steps=5, step_size=0.1, lengthscale=0.3, jitter=1e-6)
    before = float(jnp.mean(jax.vmap(lp)(Y0)))
    after = float(state.weights @ jax.vmap(lp)(state.particles))
    assert np.all(np.isfinite(np.asarray(state.particles)))
    assert after > before + 20  # measured: -92.6 -> -17.3
