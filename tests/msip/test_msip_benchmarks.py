"""Benchmark targets and particle metrics against closed forms and the shared kernels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.kernels import energy_distance, ksd, mmd2
from jaxlab.sampling.msip import benchmarks as B


@pytest.mark.parametrize("target", [B.gmm(), B.funnel(3), B.gaussian_linear_inverse_problem()],
                         ids=lambda t: t.name)
def test_exact_samplers_satisfy_the_stein_identity(target):
    """Stein identity E[x_i ∂_i log π̃(x)] = -1 under π (diagonal: the funnel's off-diagonal terms have heavy
    tails): ties each sampler to its log density."""
    X = target.sample(jax.random.key(0), 40000)
    S = jax.jit(jax.vmap(jax.grad(target.log_density)))(X)
    np.testing.assert_allclose(np.mean(X * S, axis=0), -1.0, atol=0.05)
    np.testing.assert_allclose(X.mean(0), target.mean, atol=0.1 * np.sqrt(np.diag(target.cov)).max())


def test_linear_inverse_posterior_is_exact():
    t = B.gaussian_linear_inverse_problem()
    g, H = jax.jit(lambda x: (jax.grad(t.log_density)(x), jax.hessian(t.log_density)(x)))(t.mean)
    np.testing.assert_allclose(g, 0.0, atol=1e-10)
    np.testing.assert_allclose(H, -np.linalg.inv(t.cov), rtol=1e-10)


def test_kfrflow_posteriors_at_known_points():
    assert float(B.doughnut().log_density(jnp.array([2.0, 0.0]))) == pytest.approx(-2.0, abs=1e-12)
    # butterfly at the origin: G = 1, misfit (1 + 1)² / (2 · 0.36)
    assert float(B.butterfly().log_density(jnp.zeros(2))) == pytest.approx(-4 / 0.72, rel=1e-12)
    # spaceships at the origin: G = 1, misfit 4 / (2 · 0.25)
    assert float(B.spaceships().log_density(jnp.zeros(2))) == pytest.approx(-8.0, rel=1e-12)


def test_grid_sample_reproduces_gaussian_moments():
    X = B.grid_sample(lambda x: -0.5 * jnp.sum((x - jnp.array([1.0, -0.5])) ** 2 / jnp.array([1.0, 0.25])),
                      jax.random.key(1), 40000, resolution=200)
    np.testing.assert_allclose(X.mean(0), [1.0, -0.5], atol=0.02)
    np.testing.assert_allclose(X.var(0), [1.0, 0.25], rtol=0.05)


def test_particle_metrics_match_the_shared_kernels():
    rng = np.random.default_rng(0)
    Xr = jnp.asarray(rng.normal(size=(300, 2)))
    Y = jnp.asarray(rng.normal(size=(9, 2)))
    w = jnp.asarray(rng.dirichlet(np.ones(9)))
    ref = B.make_reference(Xr, lengthscale=1.5, batch_size=64)
    score = lambda x: -x  # noqa: E731
    m = B.particle_metrics(Y, w, ref, score)

    @jax.jit
    def shared(Y, w, Xr):
        return (mmd2(Y, w, Xr, None, lengthscale=1.5), energy_distance(Y, w, Xr, None),
                ksd(Y, w, -Y, lengthscale=1.5), B.mmd2_to_reference(Xr, None, ref))

    m_ref, e_ref, k_ref, self_mmd = shared(Y, w, Xr)
    assert float(m["mmd2"]) == pytest.approx(float(m_ref), rel=1e-10)
    assert float(m["energy"]) == pytest.approx(float(e_ref), rel=1e-10)
    assert float(m["ksd"]) == pytest.approx(float(k_ref), rel=1e-10)
    mean = np.asarray(w @ Y)
    assert float(m["mean_error"]) == pytest.approx(np.linalg.norm(mean - np.asarray(Xr).mean(0)), rel=1e-10)
    assert abs(float(self_mmd)) < 1e-12


def test_targets_reject_bad_arguments():
    with pytest.raises(ValueError, match="d must be >= 2"):
        B.funnel(1)
    with pytest.raises(ValueError, match="std must be > 0"):
        B.gmm(std=0.0)
    with pytest.raises(ValueError, match="lo < hi"):
        B.grid_sample(lambda x: -jnp.sum(x**2), jax.random.key(0), 10, lo=1.0, hi=-1.0)
