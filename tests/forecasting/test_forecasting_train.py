"""Training, the least-squares Linear, the truncation identity, the gradient-conflict diagnostic and the
horizon tables."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from jaxlab import forecasting as F

T, H, L, C = 48, 12, 36, 2
KEY = jax.random.key(0)


@pytest.fixture(scope="module")
def series():
    return F.ett_like(jax.random.key(4), n=1200, C=C)


@pytest.fixture(scope="module")
def windows(series):
    return F.make_windows(series[:800], T, L)


def test_fit_linear_matches_numpy_lstsq(windows):
    X, Y = windows
    m = F.fit_linear(X, Y[:, :H])
    A = np.moveaxis(np.asarray(X), 2, 1).reshape(-1, T)
    B = np.moveaxis(np.asarray(Y[:, :H]), 2, 1).reshape(-1, H)
    sol = np.linalg.lstsq(np.c_[A, np.ones(len(A))], B, rcond=None)[0]
    np.testing.assert_allclose(m.weight, sol[:T].T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(m.bias, sol[T], rtol=1e-6, atol=1e-8)
    ridge = F.fit_linear(X, Y[:, :H], ridge=10.0, bias=False)
    want = np.linalg.solve(A.T @ A + 10.0 * np.eye(T), A.T @ B)
    np.testing.assert_allclose(ridge.weight, want.T, rtol=1e-8, atol=1e-10)


def test_truncated_long_linear_equals_short_linear_at_the_optimum(windows):
    """With no parameter shared across output steps, DF-L truncated to H is DF-H exactly."""
    X, Y = windows
    long, short = F.fit_linear(X, Y), F.fit_linear(X, Y[:, :H])
    np.testing.assert_allclose(long.weight[:H], short.weight, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(long.bias[:H], short.bias, rtol=1e-9, atol=1e-11)


def test_adamw_training_approaches_least_squares(windows):
    X, Y = windows
    Yh = Y[:, :H]
    best = float(F.forecast_loss(F.fit_linear(X, Yh), X, Yh))
    m0 = F.Linear(T, H, key=KEY, revin=False)
    start = float(F.forecast_loss(m0, X, Yh))
    m, losses = F.train_forecaster(jax.random.key(1), m0, (X, Y), num_steps=1500, batch_size=64, learning_rate=3e-3,
                                   with_losses=True)
    end = float(F.forecast_loss(m, X, Yh))
    assert losses.shape == (1500,)
    assert best <= end <= 1.05 * best
    assert end < 0.5 * start


def test_training_from_a_series_cuts_windows_on_the_fly(series):
    m0 = F.MLPForecaster(T, H, key=KEY, width=32)
    m, losses = F.train_forecaster(jax.random.key(2), m0, series[:800], num_steps=300, with_losses=True)
    X, Y = F.make_windows(series[800:], T, H)
    assert float(F.forecast_loss(m, X, Y)) < 0.5 * float(F.forecast_loss(m0, X, Y))
    assert float(losses[-50:].mean()) < 0.5 * float(losses[:10].mean())


def test_rollout_finetune_lowers_the_rollout_loss(series, windows):
    X, Y = windows
    m0 = F.fit_linear(X, Y[:, :H], ridge=1.0)
    before = float(F.rollout_loss(m0, X, Y))
    m = F.rollout_finetune(jax.random.key(3), m0, (X, Y), k_steps=3, num_steps=200, learning_rate=1e-4)
    assert float(F.rollout_loss(m, X, Y)) < before


def test_gradient_conflict_zero_for_linear_and_matches_manual_cosine(windows):
    X, Y = windows[0][:256], windows[1][:256]
    lin = F.Linear(T, L, key=KEY)
    out = F.gradient_conflict(lin, X, Y, H, batch_size=64)
    assert out["cos"].shape == (4,)
    assert float(jnp.max(jnp.abs(out["cos"]))) == 0.0
    assert set(out["per_group"]) == {".weight", ".bias"}

    mlp = F.MLPForecaster(T, L, key=KEY, width=16)
    res = F.gradient_conflict(mlp, X, Y, H, batch_size=64)
    xb, yb = X[64:128], Y[64:128]

    params, static = eqx.partition(mlp, eqx.is_array)

    def part(p, lo, hi):
        return jnp.mean((jax.vmap(eqx.combine(p, static))(xb)[:, lo:hi] - yb[:, lo:hi]) ** 2)

    gn = ravel_pytree(jax.grad(part)(params, 0, H))[0]
    gf = ravel_pytree(jax.grad(part)(params, H, L))[0]
    want = float(gn @ gf / np.linalg.norm(gn) / np.linalg.norm(gf))
    np.testing.assert_allclose(res["cos"][1], want, rtol=1e-9)
    np.testing.assert_allclose(res["frac_negative"], np.mean(np.asarray(res["cos"]) < 0))
    # the output layer's rows are disjoint between near and far steps; the hidden layers are shared
    assert float(res["per_group"][".mlp.layers[2].weight"]) == 0.0
    assert abs(float(res["per_group"][".mlp.layers[0].weight"])) > 1e-3


def test_evaluate_horizons_matches_manual_windows(series):
    te = series[800:]
    m = F.DLinear(T, H, key=KEY)
    Ls = [12, 30]
    table = F.evaluate_horizons(m, te, Ls, window_stride=10)
    for Lh in Ls:
        X, Y = F.make_windows(te, T, Lh, stride=10)
        pred = np.asarray(jax.vmap(lambda x, Lh=Lh: F.ef_forecast(m, x, Lh))(X))
        assert table[Lh]["windows"] == X.shape[0]
        np.testing.assert_allclose(table[Lh]["mse"], np.mean((pred - np.asarray(Y)) ** 2), rtol=1e-10)
        np.testing.assert_allclose(table[Lh]["mae"], np.mean(np.abs(pred - np.asarray(Y))), rtol=1e-10)
    # (X, Y) windows and DF models
    X, Y = F.make_windows(te, T, 30, stride=10)
    models = {12: m, 30: F.Linear(T, 30, key=KEY)}
    df = F.evaluate_horizons(models, (X, Y), [12, 30], mode="df")
    np.testing.assert_allclose(df[30]["mse"], float(F.mse(jax.vmap(models[30])(X), Y)), rtol=1e-10)
    np.testing.assert_allclose(df[12]["mae"], float(F.mae(jax.vmap(m)(X), Y[:, :12])), rtol=1e-10)
    assert "MSE" in F.horizon_table({"DF": df})


def test_training_and_diagnostic_bad_inputs(series, windows):
    X, Y = windows
    m = F.Linear(T, H, key=KEY)
    with pytest.raises(ValueError, match="train_windows must have at least 60 rows"):
        F.train_forecaster(KEY, m, series[:59], num_steps=1)
    with pytest.raises(ValueError, match="train_windows must have X of length T=48"):
        F.train_forecaster(KEY, m, (X[:, 1:], Y), num_steps=1)
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        F.train_forecaster(KEY, m, (X, Y), num_steps=0)
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        F.train_forecaster(KEY, m, (X, Y), num_steps=1, learning_rate=0.0)
    with pytest.raises(ValueError, match="train_windows has 1 NaN entries"):
        F.train_forecaster(KEY, m, series[:100].at[3, 0].set(jnp.nan), num_steps=1)
    with pytest.raises(ValueError, match="H must be < the model's horizon L=12"):
        F.gradient_conflict(m, X, Y, 12)
    with pytest.raises(ValueError, match="Y must have X's"):
        F.forecast_loss(m, X, Y[:5])
    with pytest.raises(ValueError, match="H must be <= the model's horizon 12"):
        F.forecast_loss(m, X, Y, H=13)
    with pytest.raises(ValueError, match="mode must be 'ef' or 'df'"):
        F.evaluate_horizons(m, (X, Y), [12], mode="xx")
    with pytest.raises(ValueError, match="mode='df' needs one model per horizon"):
        F.evaluate_horizons(m, (X, Y), [12, 24], mode="df")
    with pytest.raises(ValueError, match="df_forecast needs a model with horizon H == L=24"):
        F.evaluate_horizons([m], (X, Y), [24], mode="df")
    with pytest.raises(ValueError, match="Ls must be <= the targets' length 36"):
        F.evaluate_horizons(m, (X, Y), [48])
    with pytest.raises(ValueError, match="pred and true must have the same shape"):
        F.mse(jnp.zeros(3), jnp.zeros(4))


def test_train_forecaster_is_the_core_trainer_bit_for_bit(windows):
    """train_forecaster == a hand-written clip + AdamW loop over the same minibatches (value_and_grad -> update ->
    apply_updates, one key per step), to the bit."""
    import optax

    X, Y = windows
    m0 = F.DLinear(T, H, key=KEY)
    m, losses = F.train_forecaster(jax.random.key(5), m0, (X, Y), num_steps=20, batch_size=16,
                                   learning_rate=1e-3, with_losses=True)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3, weight_decay=1e-4))
    params, static = eqx.partition(m0, eqx.is_array)

    @jax.jit
    def ref(params, key):
        def one(carry, k):
            p, s = carry
            i = jax.random.randint(k, (16,), 0, X.shape[0])
            v, g = jax.value_and_grad(lambda q: F.forecast_loss(eqx.combine(q, static), X[i], Y[i, :H]))(p)
            u, s = opt.update(g, s, p)
            return (optax.apply_updates(p, u), s), v

        (p, _), vs = jax.lax.scan(one, (params, opt.init(params)), jax.random.split(key, 20))
        return p, vs

    p_ref, l_ref = ref(params, jax.random.key(5))
    np.testing.assert_array_equal(np.asarray(losses), np.asarray(l_ref))
    for a, b in zip(jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_array)), jax.tree_util.tree_leaves(p_ref),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_old_keyword_names_warn(windows):
    X, Y = windows
    m0 = F.Linear(T, H, key=KEY)
    with pytest.warns(DeprecationWarning, match="'steps' is deprecated"):
        a = F.train_forecaster(KEY, m0, (X, Y), steps=3, batch=8, lr=1e-3)
    b = F.train_forecaster(KEY, m0, (X, Y), num_steps=3, batch_size=8, learning_rate=1e-3)
    np.testing.assert_array_equal(np.asarray(a.weight), np.asarray(b.weight))
    with pytest.warns(DeprecationWarning, match="'batch' is deprecated"):
        F.gradient_conflict(F.Linear(T, L, key=KEY), X[:64], Y[:64], H, batch=32)


@pytest.mark.slow
def test_truncation_anomaly_and_bounded_rollout_on_etth1_at_the_validation_optimum():
    # Fig. 1 of Ma et al. (arXiv:2601.23114) on ETTh1: MLPs trained to their validation optimum (250 steps), the
    # H = 720 model truncated to 96 steps is worse at 96 than the H = 96 model, and the H = 96 model rolled out
    # 2,880 steps stays within twice the variance of the span it forecasts
    T = 336
    tr, va, te = F.ett_splits(jnp.asarray(F.load_ett_csv(), jnp.result_type(float)), T)
    (tr, va, te), _ = F.standard_scale(tr, va, te)
    mlp = {H: F.train_forecaster(jax.random.key(1), F.MLPForecaster(T, H, key=jax.random.key(2)), tr, num_steps=250)
           for H in (96, 720)}
    mse96 = {H: F.evaluate_horizons(m, te, [96], window_stride=4)[96]["mse"] for H, m in mlp.items()}
    assert mse96[720] > mse96[96], mse96
    span = jnp.concatenate([va, te[T:]])
    ef = F.evaluate_horizons(mlp[96], span, [2880], window_stride=96)[2880]["mse"]
    assert np.isfinite(ef) and ef <= 2 * float(jnp.mean(jnp.var(span[T:], axis=0))), ef
