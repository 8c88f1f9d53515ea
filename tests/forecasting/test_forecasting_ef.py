"""EF roll-out: DF = EF(H = L), a NumPy loop reference, jit/vmap, the AR(1) oracle identity and an exact linear
recurrence (claims `forecasting:df_equals_ef_with_one_step`, `forecasting:ar1_oracle_k_step_mse`,
`forecasting:exact_recurrence_extrapolates_720_steps`), and the roll-out loss."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import forecasting as F

T, H, C = 48, 12, 3
KEY = jax.random.key(0)


def eqx_replace(m, w):
    return eqx.tree_at(lambda t: t.weight, m, w)


@pytest.fixture(scope="module")
def hist():
    return jnp.asarray(np.random.default_rng(1).normal(size=(5, T, C)))


def ef_numpy(weight, bias, x, L, s):
    """The EF roll-out of `ef_forecast` for a Linear model without RevIN, written with NumPy."""
    w, out = np.asarray(x), []
    while sum(len(o) for o in out) < L:
        y = (np.asarray(weight) @ w + np.asarray(bias)[:, None])[:s]
        out.append(y)
        w = np.concatenate([w, y])[-w.shape[0]:]
    return np.concatenate(out)[:L]


@pytest.mark.parametrize("L, stride", [(50, None), (50, 5), (12, 12), (7, 3), (100, 12)])
def test_ef_matches_numpy_loop(hist, L, stride):
    m = F.Linear(T, H, key=KEY, revin=False)
    got = F.ef_forecast(m, hist[0], L, stride=stride)
    np.testing.assert_allclose(got, ef_numpy(m.weight, m.bias, hist[0], L, stride or H), rtol=1e-10, atol=1e-12)


def test_df_is_ef_with_one_step(hist):
    """Claim `forecasting:df_equals_ef_with_one_step`: DF = EF(H = L), identical to the bit (the same single model
    call)."""
    m = F.MLPForecaster(T, H, key=KEY, width=16)
    f = jax.jit(jax.vmap(lambda x: F.ef_forecast(m, x, H)))
    g = jax.jit(jax.vmap(lambda x: F.df_forecast(m, x, H)))
    assert float(jnp.max(jnp.abs(f(hist) - g(hist)))) == 0.0
    assert float(jnp.max(jnp.abs(g(hist) - jax.jit(jax.vmap(m))(hist)))) == 0.0


def test_jit_vmap_match_per_history_calls_and_plain_callables(hist):
    m = F.DLinear(T, H, key=KEY)
    batched = jax.jit(jax.vmap(lambda x: F.ef_forecast(m, x, 30, stride=8)))(hist)
    for i in range(hist.shape[0]):
        np.testing.assert_allclose(batched[i], F.ef_forecast(m, hist[i], 30, stride=8), rtol=1e-12, atol=1e-12)

    def persist(w):  # any callable (T, C) -> (H, C): repeat the last value
        return jnp.repeat(w[-1:], 4, axis=0)

    out = F.ef_forecast(persist, hist[0], 9)
    np.testing.assert_array_equal(out, jnp.repeat(hist[0][-1:], 9, axis=0))


def test_ar1_oracle_identity():
    """Claim `forecasting:ar1_oracle_k_step_mse` (small): the oracle EF gives phi^k y_T for H in {1, 4, 24}, and the
    k-step MSE averaged over k = 1..96 matches mean_k (1 - phi^{2k}) / (1 - phi^2) = 5.0294 (20,000 Monte-Carlo
    windows)."""
    phi, L, n = 0.9, 96, 20_000
    ser = jax.vmap(lambda k: F.ar1_series(k, 4 + L, phi))(jax.random.split(jax.random.key(7), n))
    X, Y = ser[:, :4], ser[:, 4:]
    k = np.arange(1, L + 1)
    exact = phi ** k[None, :, None] * np.asarray(X[:, -1:, :])
    for Hh in (1, 4, 24):
        pred = jax.jit(jax.vmap(lambda x, Hh=Hh: F.ef_forecast(F.ar1_oracle(phi, Hh), x, L)))(X)
        np.testing.assert_allclose(pred, exact, rtol=1e-12, atol=1e-13)
    closed = np.mean((1 - phi ** (2 * k)) / (1 - phi**2))
    np.testing.assert_allclose(closed, 5.0294, atol=5e-5)
    mse_k = np.mean((np.asarray(pred) - np.asarray(Y)) ** 2, axis=(0, 2))
    np.testing.assert_allclose(mse_k.mean(), closed, rtol=0.03)
    np.testing.assert_allclose(mse_k[0], 1.0, rtol=0.04)  # one step: the innovation variance


@pytest.mark.parametrize("dtype, tol", [(jnp.float64, 1e-10), (jnp.float32, 1e-5)])
def test_exact_recurrence_extrapolates_720_steps(dtype, tol):
    """Claim `forecasting:exact_recurrence_extrapolates_720_steps`: least-squares Linear (T = 336, H = 24) on the first
    4,000 points of the two-sinusoid series, EF to L = 720 from t = 4500."""
    y = F.sinusoid_series(5300)
    X, Y = F.make_windows(y[:4000], 336, 24)
    m = jax.tree_util.tree_map(lambda a: a.astype(dtype), F.fit_linear(X, Y, bias=False))
    pred = F.ef_forecast(m, y[4500 - 336:4500].astype(dtype), 720)
    assert pred.dtype == dtype
    assert float(jnp.max(jnp.abs(pred - y[4500:5220]))) < tol


def test_rollout_loss_matches_ef_and_has_gradients(hist):
    m = F.Linear(T, H, key=KEY, revin=False)
    Y = jnp.asarray(np.random.default_rng(2).normal(size=(5, 24, C)))
    pred = jax.vmap(lambda x: F.ef_forecast(m, x, 24, stride=6))(hist)
    np.testing.assert_allclose(F.rollout_loss(m, hist, Y, stride=6), jnp.mean((pred - Y) ** 2), rtol=1e-12)
    # a finite-difference check of d loss / d W[0, -1] through four evolution steps
    g = jax.grad(lambda w: F.rollout_loss(eqx_replace(m, w), hist, Y, stride=6))(m.weight)
    eps = 1e-6
    up = F.rollout_loss(eqx_replace(m, m.weight.at[0, -1].add(eps)), hist, Y, stride=6)
    dn = F.rollout_loss(eqx_replace(m, m.weight.at[0, -1].add(-eps)), hist, Y, stride=6)
    np.testing.assert_allclose(g[0, -1], (up - dn) / (2 * eps), rtol=1e-6)
    with pytest.raises(ValueError, match=r"L = Y.shape\[1\] = 24 must be a multiple of stride=5"):
        F.rollout_loss(m, hist, Y, stride=5)


def test_ef_bad_inputs(hist):
    m = F.Linear(T, H, key=KEY, channels=C)
    x = hist[0]
    with pytest.raises(ValueError, match="L must be >= 1"):
        F.ef_forecast(m, x, 0)
    with pytest.raises(ValueError, match="stride must be <= the model's horizon H=12"):
        F.ef_forecast(m, x, 24, stride=13)
    with pytest.raises(ValueError, match="stride must be >= 1"):
        F.ef_forecast(m, x, 24, stride=0)
    with pytest.raises(ValueError, match="df_forecast needs a model with horizon H == L=24"):
        F.df_forecast(m, x, 24)
    with pytest.raises(ValueError, match="x_hist must have the model's 3 channels"):
        F.ef_forecast(m, x[:, :2], 24)
    with pytest.raises(ValueError, match=r"x_hist must have the model's 48 rows \(T\)"):
        F.ef_forecast(m, x[1:], 24)
    with pytest.raises(ValueError, match="x_hist must be finite"):
        F.ef_forecast(m, x.at[3, 1].set(jnp.nan), 24)
    with pytest.raises(ValueError, match=r"model must map x \(T, C\)"):
        F.ef_forecast(lambda w: w[-1], x, 24)
