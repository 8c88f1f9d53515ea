"""MLE denoisers (claims `denoise:quadratic_mle_variance_in_1d`, `denoise:quadratic_mle_recovers_h_and_b`): batch
quadratic/cubic least squares and recursive least squares."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.optim import cubic_mle, quadratic_mle, rls_init, rls_step
from jaxlab.optim.denoise.claims import mle_1d_errors


def _quadratic_data(seed=0, d=5, t=20, sigma=0.0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    H, b = A @ A.T + np.eye(d), rng.standard_normal(d)
    xs = rng.standard_normal((t, d))
    return H, b, xs, xs @ H + b + sigma * rng.standard_normal((t, d))


def test_mle_1d_is_unbiased_with_regression_variance():
    err = np.asarray(mle_1d_errors(200_000))
    xs = np.arange(1.0, 11.0)
    var = 1 / 10 + (xs[-1] - xs.mean()) ** 2 / np.sum((xs - xs.mean()) ** 2)
    assert var == pytest.approx(0.345455, abs=1e-6)
    assert np.mean(err**2) == pytest.approx(var, rel=0.02)
    assert abs(np.mean(err)) < 4 * np.sqrt(var / err.size)


@pytest.mark.parametrize("symmetric", [False, True])
def test_quadratic_mle_recovers_noise_free_h_and_b(symmetric):
    H, b, xs, gs = _quadratic_data()
    Hh, bh = quadratic_mle(jnp.asarray(xs), jnp.asarray(gs), symmetric=symmetric)
    np.testing.assert_allclose(Hh, H, atol=1e-10)
    np.testing.assert_allclose(bh, b, atol=1e-10)


def test_unconstrained_mle_matches_numpy_lstsq():
    _, _, xs, gs = _quadratic_data(seed=1, sigma=0.5)
    W = np.linalg.lstsq(np.c_[xs, np.ones(len(xs))], gs, rcond=None)[0]
    Hh, bh = quadratic_mle(jnp.asarray(xs), jnp.asarray(gs))
    np.testing.assert_allclose(Hh, W[:-1].T, atol=1e-10)
    np.testing.assert_allclose(bh, W[-1], atol=1e-10)


@pytest.mark.parametrize("ridge", [0.0, 2.0])
def test_symmetric_mle_matches_vech_least_squares(ridge):
    # Reference: least squares over (vech H, b) with a design built from symmetric unit matrices; the ridge
    # penalty rho ||H||_F^2 weighs off-diagonal parameters twice (they appear twice in H).
    d = 4
    _, _, xs, gs = _quadratic_data(seed=2, d=d, t=12, sigma=0.5)
    j, k = np.triu_indices(d)
    E = np.zeros((len(j), d, d))
    E[np.arange(len(j)), j, k] = 1.0
    E[np.arange(len(j)), k, j] = 1.0
    cols_h = np.einsum("pij,sj->sip", E, xs).reshape(len(xs) * d, -1)
    cols_b = np.tile(np.eye(d), (len(xs), 1))
    A = np.c_[cols_h, cols_b]
    pen = np.r_[np.where(j == k, 1.0, 2.0), np.zeros(d)]
    theta = np.linalg.solve(A.T @ A + ridge * np.diag(pen), A.T @ gs.reshape(-1))
    H_ref = np.einsum("p,pij->ij", theta[: len(j)], E)
    Hh, bh = quadratic_mle(jnp.asarray(xs), jnp.asarray(gs), symmetric=True, ridge=ridge)
    np.testing.assert_allclose(Hh, H_ref, atol=1e-9)
    np.testing.assert_allclose(bh, theta[len(j):], atol=1e-9)


def test_cubic_mle_recovers_a_random_cubic():
    d, rng = 3, np.random.default_rng(3)
    T3 = rng.standard_normal((d, d, d))
    T3 = sum(np.transpose(T3, p) for p in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]) / 6
    H0, b = _quadratic_data(seed=4, d=d)[:2]
    xs = rng.standard_normal((15, d))
    gs = b + xs @ H0 + 0.5 * np.einsum("ijk,sj,sk->si", T3, xs, xs)
    H0h, bh, T3h = cubic_mle(jnp.asarray(xs), jnp.asarray(gs))
    np.testing.assert_allclose(H0h, H0, atol=1e-9)
    np.testing.assert_allclose(bh, b, atol=1e-9)
    np.testing.assert_allclose(T3h, T3, atol=1e-9)


def test_rls_matches_batch_ridge_and_quadratic_mle():
    _, _, xs, gs = _quadratic_data(seed=5, d=3, t=30, sigma=0.3)
    ridge = 0.7
    step = jax.jit(rls_step)
    state = rls_init(3, ridge)
    for x, g in zip(xs, gs, strict=True):
        state, g_hat = step(state, jnp.asarray(x), jnp.asarray(g))
    Phi = np.c_[xs, np.ones(len(xs))]
    W = np.linalg.solve(Phi.T @ Phi + ridge * np.eye(4), Phi.T @ gs)
    np.testing.assert_allclose(state.W, W, atol=1e-10)
    np.testing.assert_allclose(g_hat, Phi[-1] @ W, atol=1e-10)
    assert int(state.count) == 30
    state = rls_init(3, 1e-9)
    for x, g in zip(xs, gs, strict=True):
        state, g_hat = step(state, jnp.asarray(x), jnp.asarray(g))
    Hh, bh = quadratic_mle(jnp.asarray(xs), jnp.asarray(gs))
    np.testing.assert_allclose(g_hat, Hh @ xs[-1] + bh, atol=1e-6)


def test_bad_inputs():
    xs = jnp.ones((4, 3))
    with pytest.raises(ValueError, match="xs and gs must have the same shape"):
        quadratic_mle(xs, jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="at least 4 rows for the quadratic fit"):
        quadratic_mle(xs[:3], xs[:3])
    with pytest.raises(ValueError, match="at least 10 rows for the cubic fit"):
        cubic_mle(xs, xs)
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        quadratic_mle(xs, xs, ridge=-1.0)
    with pytest.raises(TypeError, match="xs must have a float dtype"):
        quadratic_mle(jnp.ones((4, 3), dtype=jnp.int32), xs)
    with pytest.raises(ValueError, match="ridge must be > 0"):
        rls_init(3, 0.0)
    with pytest.raises(ValueError, match=r"x must have shape \(3\)"):
        rls_step(rls_init(3, 1.0), jnp.ones(2), jnp.ones(3))
    quadratic_mle(xs[:2], xs[:2], ridge=0.1)  # ridge > 0 makes an under-determined fit well posed
