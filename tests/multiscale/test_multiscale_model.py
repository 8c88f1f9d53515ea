import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.multiscale import (
    MSIMConfig,
    bbp_overlap_square,
    first_chaos_exact_k2,
    first_chaos_mc,
    link_moments,
    msim_forward,
    overlaps,
    population_loss_linear,
    sample_data,
    sample_features,
    unfolding_estimator,
)
from jaxlab.multiscale.model import _TANH_SCALE
from jaxlab.multiscale.spectral import estimate_from_chaos, first_chaos_estimate, rank_one_split, unfold

W_TOY = jnp.array([[0.6, 0.8], [0.8, -0.6]])
X_TOY = jnp.array([1.0, 2.0, 3.0, 4.0])


def test_forward_convention_of_the_spec():
    assert float(msim_forward(W_TOY, X_TOY, MSIMConfig(2, 2, ("linear", "linear")))) == pytest.approx(-1.24, abs=1e-14)
    y = float(msim_forward(W_TOY, X_TOY, MSIMConfig(2, 2, ("tanh", "linear"))))
    assert y * _TANH_SCALE == pytest.approx(0.8 * math.tanh(2.2) - 0.6 * math.tanh(5.0), abs=1e-14)
    assert y * _TANH_SCALE == pytest.approx(0.1806490, abs=1e-7)


def test_linear_links_give_the_tensor_inner_product():
    d, K = 3, 3
    ws = sample_features(jax.random.key(0), d, K)
    x = jax.random.normal(jax.random.key(1), (d**K,))
    tensor = jnp.einsum("a,b,c->abc", ws[2], ws[1], ws[0]).reshape(-1)  # axis 0 coarsest
    assert float(msim_forward(ws, x, MSIMConfig(d, K, ("linear",) * K))) == pytest.approx(float(x @ tensor), rel=1e-12)


@pytest.mark.parametrize("link,mu1", [("linear", 1.0), ("tanh", 0.9646086893737248), ("he12", 1 / math.sqrt(2)),
                                      ("he13", 1 / math.sqrt(2)), ((0.0, 0.6, 0.8), 0.6)])
def test_link_presets_are_standardised_with_the_spec_mu1(link, mu1):
    mean, m2, m = link_moments(link)
    assert abs(mean) < 1e-12 and m2 == pytest.approx(1.0, abs=1e-12) and m == pytest.approx(mu1, abs=1e-12)


def test_tanh_constants_against_scipy_quadrature():
    from scipy import integrate, stats

    m2 = integrate.quad(lambda z: math.tanh(z) ** 2 * stats.norm.pdf(z), -np.inf, np.inf, epsabs=1e-14)[0]
    assert _TANH_SCALE == pytest.approx(math.sqrt(m2), rel=1e-14)
    assert m2 == pytest.approx(0.394294, abs=1e-6)


def test_he12_first_chaos_closed_forms_of_the_spec():
    w1 = jnp.array([0.5, 0.5, 0.5, -0.5])
    cfg = MSIMConfig(4, 2, ("he12", "he12"))
    for w2, expected in ((jnp.array([1.0, 0, 0, 0]), 1.207107), (jnp.full(4, 0.5), 0.853553)):
        T = first_chaos_exact_k2(jnp.stack([w1, w2]), cfg)
        assert float(T @ jnp.outer(w2, w1).reshape(-1)) == pytest.approx(expected, abs=1e-6)
        assert float(T @ jnp.outer(w2, w1).reshape(-1)) == pytest.approx(0.5 + math.sqrt(2) / 2 * float(jnp.sum(w2**3)),
                                                                        rel=1e-12)


@pytest.mark.parametrize("links", [("tanh", "linear"), ("he12", "he12"), ("tanh", "he12")])
def test_first_chaos_closed_form_matches_monte_carlo(links):
    d = 4
    cfg = MSIMConfig(d, 2, links)
    ws = sample_features(jax.random.key(3), d, 2)
    exact = first_chaos_exact_k2(ws, cfg)
    mc = first_chaos_mc(jax.random.key(4), ws, 400_000, cfg, chunk=50_000)
    # per-entry standard error of (1/n) Σ y x_j is about sqrt(E y² x_j²/n) ≈ 1.7e-3; allow 5 of them
    assert float(jnp.max(jnp.abs(mc - exact))) < 5 * 1.8e-3


def test_population_loss_linear_by_monte_carlo():
    d, K = 3, 3
    cfg = MSIMConfig(d, K, ("linear",) * K)
    ws = sample_features(jax.random.key(5), d, K)
    us = ws + 0.4 * jax.random.normal(jax.random.key(6), ws.shape)
    us = us / jnp.linalg.norm(us, axis=1, keepdims=True)
    X, y = sample_data(jax.random.key(7), ws, 200_000, cfg, chunk=50_000)
    f = jax.vmap(lambda x: msim_forward(us, x, cfg))(X)
    mc = 0.5 * jnp.mean((y - f) ** 2)
    se = 0.5 * jnp.std((y - f) ** 2) / math.sqrt(X.shape[0])
    assert abs(float(mc - population_loss_linear(us, ws))) < 5 * float(se)


def test_unfold_and_rank_one_split_recover_an_exact_rank_one_tensor():
    d, K = 3, 4
    ws = sample_features(jax.random.key(8), d, K)
    T = jnp.einsum("a,b,c,e->abce", ws[3], ws[2], ws[1], ws[0]).reshape(-1)
    assert unfold(T, d, K).shape == (9, 9)
    assert unfold(T, d, K, a=1).shape == (3, 27)
    np.testing.assert_allclose(overlaps(estimate_from_chaos(T, d, K), ws), 1.0, atol=1e-12)
    np.testing.assert_allclose(overlaps(estimate_from_chaos(T, d, K, n_power=50), ws), 1.0, atol=1e-12)
    split = rank_one_split(jnp.kron(ws[1], ws[0]), d, 2)
    np.testing.assert_allclose(jnp.abs(split @ ws[jnp.array([1, 0])].T).diagonal(), 1.0, atol=1e-12)


def test_bbp_overlap_closed_form():
    np.testing.assert_allclose(bbp_overlap_square(jnp.array([50.0, 200.0, 400.0]), 100), [0.0, 0.5, 0.75])


@pytest.mark.parametrize("K,d,n", [(3, 8, 2661), (4, 6, 1290)])
def test_strong_recovery_by_unfolding_with_linear_links(K, d, n):
    cfg = MSIMConfig(d, K, ("linear",) * K)
    worst = 1.0
    for seed in range(2):
        ws = sample_features(jax.random.key(10 + seed), d, K)
        X, y = sample_data(jax.random.key(20 + seed), ws, n, cfg)
        worst = min(worst, float(jnp.min(overlaps(unfolding_estimator(X, y, d, K), ws))))
    assert worst >= 0.99


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"cfg\.d must be >= 2"):
        msim_forward(W_TOY, X_TOY, MSIMConfig(1, 2, ("linear", "linear")))
    with pytest.raises(ValueError, match=r"cfg\.K must be >= 1"):
        msim_forward(W_TOY, X_TOY, MSIMConfig(2, 0, ()))
    with pytest.raises(ValueError, match="link must be one of"):
        msim_forward(W_TOY, X_TOY, MSIMConfig(2, 2, ("relu", "linear")))
    with pytest.raises(ValueError, match=r"cfg\.links must have K=2 entries"):
        msim_forward(W_TOY, X_TOY, MSIMConfig(2, 2, ("linear",)))
    with pytest.raises(ValueError, match="x must have length d\\^K = 4"):
        msim_forward(W_TOY, jnp.ones(5), MSIMConfig(2, 2, ("linear", "linear")))
    with pytest.raises(ValueError, match=r"ws must have shape \(2, 2\)"):
        msim_forward(jnp.ones((3, 2)), X_TOY, MSIMConfig(2, 2, ("linear", "linear")))
    with pytest.warns(UserWarning, match="unit vectors"):
        msim_forward(2 * W_TOY, X_TOY, MSIMConfig(2, 2, ("linear", "linear")))
    # He_2 alone has no first chaos
    cfg0 = MSIMConfig(2, 2, ((0.0, 0.0, 1.0), "linear"))
    with pytest.raises(ValueError, match="μ_1 = 0"):
        first_chaos_mc(jax.random.key(0), W_TOY, 10, cfg0)
    with pytest.raises(ValueError, match="μ_1 = 0"):
        unfolding_estimator(jnp.ones((4, 4)), jnp.ones(4), 2, 2, links=cfg0.links)
    from jaxlab.multiscale.model import check_config

    with pytest.raises(ValueError, match="not standardised"):
        check_config(MSIMConfig(2, 1, ((0.0, 2.0),)), strict=True)
    with pytest.raises(ValueError, match="needs n >= d samples"):
        unfolding_estimator(jnp.ones((3, 16)), jnp.ones(3), 4, 2)
    with pytest.raises(ValueError, match="y must have one entry per row"):
        unfolding_estimator(jnp.ones((5, 4)), jnp.ones(4), 2, 2)
    with pytest.raises(ValueError, match="X must be finite"):
        unfolding_estimator(jnp.full((5, 4), jnp.nan), jnp.ones(5), 2, 2)
    with pytest.raises(ValueError, match="n must be >= 1"):
        sample_data(jax.random.key(0), W_TOY, 0, MSIMConfig(2, 2, ("linear", "linear")))


def test_first_chaos_mc_is_the_centred_estimator_on_its_pair_stream():
    """Rebuild the stream by hand (chunk keys, pairs from core.random.normal_pairs, real parts then imaginary
    parts as rows, noise) and apply T = X^T (y - mean y) / m directly: same numbers, odd chunk rounded up."""
    from jaxlab.core import random as fast_random

    cfg = MSIMConfig(3, 2, ("tanh", "he12"), noise_std=0.3)
    ws = sample_features(jax.random.key(2), 3, 2)
    key, n, chunk = jax.random.key(5), 40, 7  # chunk 7 -> 8, n -> 5 chunks of 8
    rows, ys = [], []
    for k in jax.random.split(key, 5):
        kx, kn = jax.random.split(k)
        Z = fast_random.normal_pairs(kx, (4, 9), jnp.float64)
        X = jnp.concatenate([Z.real, Z.imag])
        noise = 0.3 * fast_random.normal(kn, (2, 4), jnp.float64).reshape(-1)
        rows.append(X)
        ys.append(jax.vmap(lambda x: msim_forward(ws, x, cfg))(X) + noise)
    X, y = jnp.concatenate(rows), jnp.concatenate(ys)
    expected = X.T @ (y - y.mean()) / X.shape[0]
    np.testing.assert_allclose(first_chaos_mc(key, ws, n, cfg, chunk=chunk), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(first_chaos_mc(key, ws, n, cfg, chunk=chunk, center=False), X.T @ y / X.shape[0],
                               rtol=1e-12, atol=1e-14)


def test_first_chaos_streaming_works_under_jit():
    cfg = MSIMConfig(3, 2, ("tanh", "linear"))
    ws = sample_features(jax.random.key(0), 3, 2)
    f = jax.jit(lambda k: first_chaos_mc(k, ws, 64, cfg, chunk=32))
    np.testing.assert_allclose(f(jax.random.key(1)), first_chaos_mc(jax.random.key(1), ws, 64, cfg, chunk=32),
                               rtol=1e-12)


@pytest.mark.parametrize("bad", [("X", jnp.nan), ("X", jnp.inf), ("y", jnp.nan), ("y", -jnp.inf)])
def test_non_finite_data_raise_eagerly_and_under_jit(bad):
    # under jit the check runs on the (D,) first chaos, not on the (n, D) data: every NaN/inf must still reach it
    from jaxlab_testing import raises_eager_and_jit

    which, value = bad
    X, y = jnp.ones((6, 4)).at[:, 1].set(2.0), jnp.arange(6.0)
    X = X.at[3, 2].set(value) if which == "X" else X
    y = y.at[2].set(value) if which == "y" else y
    raises_eager_and_jit(lambda X, y: unfolding_estimator(X, y, 2, 2), X, y, match="must be finite")
    raises_eager_and_jit(lambda X, y: first_chaos_estimate(X, y, center=False), X, y, match="must be finite")
