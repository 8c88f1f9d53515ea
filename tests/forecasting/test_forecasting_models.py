"""RevIN, the five backbones against NumPy and their invariances."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import forecasting as F
from jaxlab.forecasting.models import _moving_average_adjoint, moving_average

T, H, C = 48, 12, 3
KEY = jax.random.key(0)


@pytest.fixture(scope="module")
def x():
    return jnp.asarray(np.random.default_rng(0).normal(size=(T, C)).cumsum(0))


def test_revin_matches_numpy_and_inverts(x):
    xn, stats = F.revin_norm(x)
    a = np.asarray(x)
    np.testing.assert_allclose(xn, (a - a.mean(0)) / (a.std(0) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(F.revin_denorm(xn, stats), a, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="y must have 3 channels like the stats"):
        F.revin_denorm(jnp.zeros((4, 2)), stats)


def test_linear_matches_numpy(x):
    m = F.Linear(T, H, key=KEY, revin=False)
    np.testing.assert_allclose(m(x), np.asarray(m.weight) @ np.asarray(x) + np.asarray(m.bias)[:, None],
                               rtol=1e-12)
    r = F.Linear(T, H, key=KEY)
    a = np.asarray(x)
    mu, sc = a.mean(0), a.std(0) + 1e-5
    want = (np.asarray(r.weight) @ ((a - mu) / sc) + np.asarray(r.bias)[:, None]) * sc + mu
    np.testing.assert_allclose(r(x), want, rtol=1e-10)


def test_dlinear_moving_average_and_forward(x):
    a = np.asarray(x[:, 0])
    k = 25
    padded = np.concatenate([np.full(12, a[0]), a, np.full(12, a[-1])])
    ma = np.array([padded[i:i + k].mean() for i in range(T)])
    np.testing.assert_allclose(moving_average(x[:, 0], k), ma, rtol=1e-12)
    m = F.DLinear(T, H, key=KEY, revin=False)
    trend = np.stack([np.asarray(moving_average(x[:, c], k)) for c in range(C)], 1)
    ws, bs = np.asarray(m.seasonal.weight), np.asarray(m.seasonal.bias)
    wt, bt = np.asarray(m.trend.weight), np.asarray(m.trend.bias)
    want = ws @ (np.asarray(x) - trend) + bs[:, None] + wt @ trend + bt[:, None]
    np.testing.assert_allclose(m(x), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="kernel must be odd"):
        F.DLinear(T, H, key=KEY, kernel=4)


@pytest.mark.parametrize("T_, k", [(40, 25), (7, 25), (9, 1), (30, 3)])
def test_moving_average_adjoint_is_the_transpose(T_, k):
    # MA_k as a matrix, one column per unit vector; the adjoint must be its transpose (DLinear folds through it)
    eye = jnp.eye(T_, dtype=jnp.float64)
    M = np.stack([np.asarray(moving_average(eye[j], k)) for j in range(T_)], 1)  # (T, T): column j = MA(e_j)
    np.testing.assert_allclose(M.sum(1), 1.0, rtol=1e-13)  # an average: rows sum to 1
    d = np.random.default_rng(T_ + k).standard_normal((5, T_))
    np.testing.assert_allclose(_moving_average_adjoint(jnp.asarray(d), k), d @ M, rtol=1e-12, atol=1e-13)


def test_dlinear_float32_matches_float64():
    m64 = F.DLinear(T, H, key=KEY, revin=False, dtype=jnp.float64)
    m32 = jax.tree.map(lambda a: a.astype(jnp.float32) if eqx.is_inexact_array(a) else a, m64)
    xs = jax.random.normal(jax.random.key(3), (T, C), jnp.float64).cumsum(0)
    y64, y32 = m64(xs), m32(xs.astype(jnp.float32))
    assert y32.dtype == jnp.float32
    np.testing.assert_allclose(y32, y64, rtol=2e-5, atol=2e-5 * float(jnp.max(jnp.abs(y64))))


def test_mlp_matches_numpy(x):
    m = F.MLPForecaster(T, H, key=KEY, width=16, revin=False)
    h = np.asarray(x).T
    for i, lin in enumerate(m.mlp.layers):
        h = h @ np.asarray(lin.weight).T + np.asarray(lin.bias)
        if i < len(m.mlp.layers) - 1:
            h = np.asarray(jax.nn.gelu(h))
    np.testing.assert_allclose(m(x), h.T, rtol=1e-10)


@pytest.mark.parametrize("cls", [F.Linear, F.DLinear, F.MLPForecaster, F.TinyPatchTST, F.TinyITransformer])
def test_shift_equivariance_with_revin(cls, x):
    """RevIN makes every model equivariant to adding a per-channel constant: f(x + b) = f(x) + b."""
    m = cls(T, H, key=KEY)
    b = jnp.asarray([3.0, -1.0, 0.5])
    y = m(x)
    assert y.shape == (H, C)
    np.testing.assert_allclose(m(x + b), y + b, rtol=1e-9, atol=1e-9)


def test_channel_independence_and_permutation_equivariance(x):
    perm = jnp.asarray([2, 0, 1])
    pt = F.TinyPatchTST(T, H, key=KEY)
    it = F.TinyITransformer(T, H, key=KEY)
    for m in (pt, it):  # permuting the channels permutes the outputs (no channel position anywhere)
        np.testing.assert_allclose(m(x[:, perm]), m(x)[:, perm], rtol=1e-9, atol=1e-12)
    # PatchTST is channel independent: a change in channel 0 leaves channel 1's forecast unchanged ...
    x2 = x.at[:, 0].add(jnp.linspace(0.0, 5.0, T))
    np.testing.assert_allclose(pt(x2)[:, 1:], pt(x)[:, 1:], rtol=1e-12)
    # ... while iTransformer attends across channels
    assert float(jnp.max(jnp.abs(it(x2)[:, 1:] - it(x)[:, 1:]))) > 1e-4


def test_patch_count_and_parameter_groups():
    m = F.TinyPatchTST(336, 96, key=KEY)
    assert m.pos.shape == (42, 32)  # (336 - 16) / 8 + 2 patches, as PatchTST
    assert m.head.weight.shape == (96, 42 * 32)
    n = sum(a.size for a in jax.tree_util.tree_leaves(eqx.filter(F.MLPForecaster(336, 96, key=KEY), eqx.is_array)))
    assert n == 336 * 256 + 256 + 256 * 256 + 256 + 256 * 96 + 96


def test_model_bad_inputs(x):
    m = F.Linear(T, H, key=KEY, channels=C)
    with pytest.raises(ValueError, match="x must have T = in_len = 48 rows"):
        m(x[:-1])
    with pytest.raises(ValueError, match="x must have the model's 3 channels"):
        m(x[:, :2])
    with pytest.raises(ValueError, match="in_len must be >= 1"):
        F.MLPForecaster(0, H, key=KEY)
    with pytest.raises(ValueError, match="out_len must be >= 1"):
        F.DLinear(T, 0, key=KEY)
    with pytest.raises(ValueError, match="d_model must be a multiple of num_heads"):
        F.TinyITransformer(T, H, key=KEY, d_model=30)
