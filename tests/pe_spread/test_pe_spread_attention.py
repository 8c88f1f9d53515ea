"""Mean-pooled attention: invariance lemma (P4), deviation scaling (P5), peers (equinox, numpy), bad inputs."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.attention.pe_spread.attention import (
    MeanPoolAttention,
    attention_heads,
    attention_mean_pool,
    equivariance_gap,
    invariant_deviation,
)
from jaxlab.attention.pe_spread.pe import alibi_bias, spread

N, D = 12, 8
pool = jax.jit(attention_mean_pool, static_argnames="rope")  # one compile per input signature
gap = jax.jit(equivariance_gap, static_argnums=0, static_argnames="num_perms")


@pytest.fixture(scope="module")
def model64():
    return MeanPoolAttention(D, 3, num_heads=2, key=jax.random.key(0), dtype=jnp.float64)


@pytest.fixture(scope="module")
def model32():
    return MeanPoolAttention(D, 3, num_heads=2, d_head=4, key=jax.random.key(3))


def _pool(p, x, E):
    return attention_mean_pool(p, x, E)


def _numpy_pool(m, x, pe, bias=None, mask=None):
    """Reference: per head softmax((ZWq)(ZWk)ᵀ/√dk + B) ZWv, concatenated, masked mean over queries."""
    z = np.asarray(x) + (0 if pe is None else np.asarray(pe))
    n = z.shape[0]
    H = m.num_heads
    q, k, v = (np.asarray(z @ np.asarray(w)).reshape(n, H, -1) for w in (m.wq, m.wk, m.wv))
    outs = []
    for h in range(H):
        s = q[:, h] @ k[:, h].T / np.sqrt(q.shape[-1])
        if bias is not None:
            s = s + np.asarray(bias)[h]
        if mask is not None:
            s = np.where(np.asarray(mask)[None, :], s, -np.inf)
        a = np.exp(s - s.max(1, keepdims=True))
        a /= a.sum(1, keepdims=True)
        outs.append(a @ v[:, h])
    o = np.concatenate(outs, axis=1)
    keep = np.ones(n, bool) if mask is None else np.asarray(mask)
    return o[keep].mean(0)


def test_matches_numpy_reference_with_bias_and_mask(model64):
    x = jax.random.normal(jax.random.key(1), (N, D), dtype=jnp.float64)
    E = jax.random.normal(jax.random.key(2), (N, D), dtype=jnp.float64)
    B = alibi_bias(N, 2, dtype=jnp.float64)
    mask = jnp.arange(N) < 9
    got = np.asarray(pool(model64, x, E, B, mask))
    np.testing.assert_allclose(got, _numpy_pool(model64, x, E, B, mask), rtol=1e-12, atol=1e-13)
    # padding must not change the answer: the masked sequence equals the truncated one
    np.testing.assert_allclose(got, np.asarray(pool(model64, x[:9], E[:9], B[:, :9, :9])), atol=1e-13)
    np.testing.assert_allclose(np.asarray(model64(x, pe=E)), _numpy_pool(model64, x, E) @ np.asarray(model64.wo),
                               atol=1e-12)


def test_matches_equinox_multihead_attention_f32(model32):
    m = model32
    mha = eqx.nn.MultiheadAttention(2, D, key=jax.random.key(4))
    # equinox stores (out, in) weights; its output projection is set to the identity.
    mha = eqx.tree_at(lambda a: (a.query_proj.weight, a.key_proj.weight, a.value_proj.weight, a.output_proj.weight),
                      mha, (m.wq.T, m.wk.T, m.wv.T, jnp.eye(D, dtype=jnp.float32)))
    x = jax.random.normal(jax.random.key(5), (N, D), dtype=jnp.float32)
    ref = eqx.filter_jit(lambda a, z: a(z, z, z))(mha, x)
    ours = jax.jit(attention_heads)(m, x)
    assert ours.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), atol=1e-5)
    np.testing.assert_allclose(np.asarray(pool(m, x)), np.asarray(ref.mean(0)), atol=1e-5)


def test_p4_constant_pe_keeps_mean_pool_invariant(model64, model32):
    x = jax.random.normal(jax.random.key(6), (N, D), dtype=jnp.float64)
    b = jax.random.normal(jax.random.key(7), (D,), dtype=jnp.float64) * 3
    E = jnp.broadcast_to(b, (N, D))
    perms = jax.vmap(lambda k: jax.random.permutation(k, N))(jax.random.split(jax.random.key(8), 5))
    out = pool(model64, jnp.concatenate([x[None], x[perms]]), E)
    assert float(jnp.max(jnp.abs(out[1:] - out[0]))) < 1e-12
    m32 = model32
    x32, E32 = x.astype(jnp.float32), E.astype(jnp.float32)
    gap32 = gap(_pool, m32, x32, E32, jax.random.key(9), num_perms=4)
    assert float(gap32) < 1e-10  # a squared norm: max abs diff < 1e-5
    # a non-constant PE does break the symmetry
    Er = jax.random.normal(jax.random.key(10), (N, D), dtype=jnp.float64)
    assert float(gap(_pool, model64, x, Er, jax.random.key(9), num_perms=4)) > 1e-3


def test_p5_invariant_deviation_grows_quadratically(model64):
    xs = jax.random.normal(jax.random.key(11), (200, N, D), dtype=jnp.float64)
    E0 = jax.random.normal(jax.random.key(12), (N, D), dtype=jnp.float64)
    b = E0.mean(0, keepdims=True)
    ts = np.array([1e-3, 3e-3, 1e-2, 3e-2, 1e-1])
    dev = jax.jit(lambda E: invariant_deviation(_pool, model64, xs, E))
    Ds = np.array([float(dev(b + t * (E0 - b))) for t in ts])
    slope = np.polyfit(np.log(ts), np.log(Ds), 1)[0]
    assert abs(slope - 2.0) < 0.05
    ratio = Ds / (ts**2 * float(spread(E0)))
    assert ratio.min() > 0  # the lower bound: the ratio stays away from 0


def test_p5_deviation_ratio_tends_to_its_first_order_limit(model64):
    """D(1ēᵀ + tẼ)/t² = A + B t + O(t²) with A = E‖g_1‖², B = E⟨g_1, g_2⟩ (g_k = ∂_t^k g at t = 0, forward mode):
    at t ≤ 1e-3, |D/t² - A| is at most twice the next-order term |B| t, a 3 % error in D 10² to 10³ times it."""
    xs = jax.random.normal(jax.random.key(11), (200, N, D), dtype=jnp.float64)
    E0 = jax.random.normal(jax.random.key(12), (N, D), dtype=jnp.float64)
    b = E0.mean(0, keepdims=True)

    def g(t):
        return jax.vmap(lambda x: _pool(model64, x, b + t * (E0 - b)))(xs)

    def g1(t):
        return jax.jvp(g, (t,), (jnp.ones_like(t),))[1]

    d1, d2 = jax.jit(lambda t: (g1(t), jax.jvp(g1, (t,), (jnp.ones_like(t),))[1]))(jnp.zeros((), jnp.float64))
    A, B = float(jnp.mean(jnp.sum(d1 * d1, -1))), float(jnp.mean(jnp.sum(d1 * d2, -1)))
    assert A > 0
    ts = np.array([1e-4, 1e-3])
    dev = jax.jit(lambda E: invariant_deviation(_pool, model64, xs, E))
    Ds = np.array([float(dev(b + t * (E0 - b))) for t in ts])
    # float64 rounding of D/t²: ≲ 2 √(8 A) 1e-14 / t ≈ 4e-10 at t = 1e-4, 3e-5 of the bound 2|B| t ≈ 1.2e-5
    np.testing.assert_array_less(np.abs(Ds / ts**2 - A), 2 * abs(B) * ts)


@pytest.mark.slow
def test_batched_and_jitted_calls_agree(model64):
    xs = jax.random.normal(jax.random.key(13), (3, N, D), dtype=jnp.float64)
    mask = jnp.arange(N)[None, :] < jnp.array([[4], [12], [7]])
    batched = pool(model64, xs, None, None, mask)
    single = jnp.stack([attention_mean_pool(model64, xs[i], None, None, mask[i]) for i in (0, 1)])
    batched = batched[:2]
    np.testing.assert_allclose(np.asarray(batched), np.asarray(single), atol=1e-13)
    g = jax.jit(jax.grad(lambda E: jnp.sum(attention_mean_pool(model64, xs[0], E, rope=True) ** 2)))(xs[1])
    assert np.all(np.isfinite(np.asarray(g)))


def test_bad_inputs_raise(model64):
    x = jnp.ones((N, D))
    with pytest.raises(ValueError, match=r"pe must have the shape of x"):
        attention_mean_pool(model64, x, jnp.ones((N - 2, D)))
    with pytest.raises(ValueError, match="pe must be finite"):
        attention_mean_pool(model64, x, jnp.full((N, D), jnp.nan))
    with pytest.raises(ValueError, match=r"mask must have shape \(12\)"):
        attention_mean_pool(model64, x, mask=jnp.ones(N + 1, bool))
    with pytest.raises(ValueError, match=r"mask must have shape \(2, 12\)"):
        attention_mean_pool(model64, jnp.ones((2, N, D)), mask=jnp.ones((3, N), bool))
    with pytest.raises(ValueError, match="mask must keep at least one token"):
        attention_mean_pool(model64, x, mask=jnp.zeros(N, bool))
    with pytest.raises(ValueError, match="bias must have trailing shape"):
        attention_mean_pool(model64, x, bias=jnp.zeros((2, N, N - 1)))
    with pytest.raises(ValueError, match=r"x must have shape \(\*, 8\)"):
        attention_mean_pool(model64, jnp.ones((N, D + 1)))
    with pytest.raises(ValueError, match="must be even"):
        MeanPoolAttention(D, 2, num_heads=1, d_head=3, key=jax.random.key(0))(x, rope=True)
    with pytest.raises(ValueError, match="num_heads must be >= 1"):
        MeanPoolAttention(D, 2, num_heads=0, key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"E must have shape \(12, 8\)"):
        invariant_deviation(_pool, model64, jnp.ones((2, N, D)), jnp.ones((N + 1, D)))


def test_heads_must_divide_the_model_dimension():
    with pytest.raises(ValueError, match=r"d_in must be divisible by num_heads.*d_in=16 and num_heads=3"):
        MeanPoolAttention(16, 10, num_heads=3, key=jax.random.key(0))
    m = MeanPoolAttention(16, 10, num_heads=3, d_head=5, key=jax.random.key(0))  # an explicit head size is kept
    assert m.wq.shape == (16, 15) and m.wq.dtype == jnp.float32


def test_value_checks_hold_under_jit(model64):
    x = jax.random.normal(jax.random.key(1), (N, D), dtype=jnp.float64)
    with pytest.raises(Exception, match="pe must be finite"):
        jax.block_until_ready(jax.jit(lambda e: attention_mean_pool(model64, x, e))(jnp.full((N, D), jnp.nan)))
    with pytest.raises(Exception, match="mask must keep at least one token"):
        jax.block_until_ready(jax.jit(lambda m: attention_mean_pool(model64, x, mask=m))(jnp.zeros(N, bool)))
    with pytest.raises(Exception, match="E must be finite"):
        jax.block_until_ready(jax.jit(lambda e: invariant_deviation(_pool, model64, x[None], e))(
            jnp.full((N, D), jnp.inf)))
