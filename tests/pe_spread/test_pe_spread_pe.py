"""Positional spread: identities (P1), sinusoidal closed form (P2), separation bound (P3), knob (P6), RoPE/ALiBi."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import ortho_group

from jaxlab.attention.pe_spread.pe import (
    alibi_bias,
    alibi_slopes,
    center_pe,
    displacement_spread,
    learned_pe_init,
    min_separation,
    normalized_spread,
    rope,
    rope_displacement_spread,
    scale_spread,
    sinusoidal_pe,
    spread,
    spread_closed_form_sinusoidal,
    spread_lower_bound,
    spread_penalty,
)


def _E(seed=0, n=23, d=7):
    return jax.random.normal(jax.random.key(seed), (n, d), dtype=jnp.float64) * 1.7 + 0.4


def test_p1_three_forms_of_spread_agree():
    E = _E()
    En = np.asarray(E)
    n = En.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    frob = np.sum((H @ En) ** 2)
    rows = np.sum((En - En.mean(0)) ** 2)
    pairs = np.sum(pdist(En, "sqeuclidean")) / n  # (1/(2n)) Σ_{i,j} = (1/n) Σ_{i<j}
    s = float(spread(E))
    np.testing.assert_allclose([s, s, s], [frob, rows, pairs], rtol=1e-12)
    np.testing.assert_allclose(float(normalized_spread(E)), frob / n, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(center_pe(E)), H @ En, atol=1e-13)


def test_p1_invariances():
    E = _E(1)
    b = jax.random.normal(jax.random.key(2), (7,), dtype=jnp.float64) * 5
    Q = jnp.asarray(ortho_group.rvs(7, random_state=3))
    s = float(spread(E))
    assert abs(float(spread(E + b[None])) - s) <= 1e-10 * s
    assert abs(float(spread(E @ Q)) - s) <= 1e-10 * s
    assert abs(float(spread(-2.5 * E)) - 6.25 * s) <= 1e-10 * s


def test_p6_spread_knob_scales_quadratically_and_keeps_the_mean():
    E = _E(4)
    for alpha in (0.0, 0.3, 1.0, 3.0):
        Ea = scale_spread(E, alpha)
        np.testing.assert_allclose(float(spread(Ea)), alpha**2 * float(spread(E)), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(Ea.mean(0)), np.asarray(E.mean(0)), atol=1e-13)


def test_spread_penalty_value_and_gradient():
    E = _E(5)
    n = E.shape[0]
    lam = 0.37
    np.testing.assert_allclose(float(spread_penalty(E, lam)), lam * float(spread(E)) / n, rtol=1e-13)
    g = jax.grad(spread_penalty)(E, lam)
    np.testing.assert_allclose(np.asarray(g), 2 * lam / n * np.asarray(center_pe(E)), atol=1e-13)


def test_p2_sinusoidal_closed_form_reference_value():
    assert abs(float(spread_closed_form_sinusoidal(64, 16, 1e4)) - 213.16389761) <= 1e-9 * 213.16389761


@pytest.mark.parametrize("n,d,base,offset", [(64, 16, 1e4, 0), (100, 8, 100.0, 13), (7, 2, 3.0, 0),
                                              (33, 4, 1 / (4 * np.pi**2), 5)])
def test_p2_closed_form_matches_the_table(n, d, base, offset):
    # base = 1/(4π²), d = 4 makes ω_1 = 2π: that pair is constant, its term must be exactly 0.
    E = sinusoidal_pe(n, d, base, offset=offset, dtype=jnp.float64)
    np.testing.assert_allclose(float(spread(E)), float(spread_closed_form_sinusoidal(n, d, base)), rtol=1e-9,
                               atol=1e-9)


def test_sinusoidal_entries_match_definition():
    E = np.asarray(sinusoidal_pe(5, 6, 10.0, offset=2, dtype=jnp.float64))
    i = np.arange(2, 7)[:, None]
    w = 10.0 ** (-2 * np.arange(3) / 6)
    np.testing.assert_allclose(E[:, 0::2], np.sin(i * w), atol=1e-14)
    np.testing.assert_allclose(E[:, 1::2], np.cos(i * w), atol=1e-14)


@jax.jit
def _ratio_and_delta(Es):
    n = Es.shape[1]
    delta = jax.vmap(min_separation)(Es)
    return jax.vmap(spread)(Es) / jax.vmap(lambda dl: spread_lower_bound(n, dl))(delta), delta


@pytest.mark.parametrize("n,d", [(2, 1), (5, 3), (17, 20), (40, 1)])
def test_p3_separation_lower_bound_on_random_tables(n, d):
    # 4 shapes x 510 tables = 2040 random E, n in [2, 40], d in [1, 20].
    Es = jax.random.normal(jax.random.key(n * 100 + d), (510, n, d), dtype=jnp.float64)
    ratio, delta = _ratio_and_delta(Es)
    ref = np.array([pdist(np.asarray(e)).min() for e in Es[:20]])
    np.testing.assert_allclose(np.asarray(delta[:20]), ref, rtol=1e-10)
    assert float(ratio.min()) >= 1 - 1e-9
    if n == 2:
        np.testing.assert_allclose(np.asarray(ratio), 1.0, rtol=1e-12)


def test_p3_simplex_attains_the_bound():
    for n, delta in [(12, 2.0), (12, 1e-3)]:
        E = delta / np.sqrt(2) * jnp.eye(n, dtype=jnp.float64)
        np.testing.assert_allclose(float(min_separation(E)), delta, rtol=1e-12)
        np.testing.assert_allclose(float(spread(E)), float(spread_lower_bound(n, delta)), rtol=1e-12)


def test_evenly_spaced_line_spread_and_chunked_separation():
    n, delta = 50, 0.3
    E = delta * jnp.arange(n, dtype=jnp.float64)[:, None]
    np.testing.assert_allclose(float(spread(E)), delta**2 * n * (n**2 - 1) / 12, rtol=1e-12)
    perm = jax.random.permutation(jax.random.key(0), n)
    for c in (1, 7, 4096):
        np.testing.assert_allclose(float(min_separation(E[perm], chunk_size=c)), delta, rtol=1e-12)


def test_learned_init_statistics():
    E = learned_pe_init(jax.random.key(0), 400, 50, std=0.02)
    assert E.shape == (400, 50) and E.dtype == jnp.float32
    assert abs(float(jnp.std(E)) - 0.02) < 0.001


def test_alibi_slopes_and_bias():
    np.testing.assert_allclose(np.asarray(alibi_slopes(8)), 2.0 ** (-np.arange(1, 9)), rtol=1e-7)
    # non-power-of-two: 4-head slopes then the odd slopes of 8 heads
    np.testing.assert_allclose(np.asarray(alibi_slopes(6)), [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3])
    B = np.asarray(alibi_bias(5, 2, dtype=jnp.float64))
    np.testing.assert_allclose(B[1, 4, 1], -(2.0**-8) * 3)
    C = np.asarray(alibi_bias(5, 2, causal=True, dtype=jnp.float64))
    assert np.isneginf(C[0, 1, 3]) and C[0, 3, 1] == -(2.0**-4) * 2


def test_alibi_displacement_spread_closed_form():
    # S_disp = m² Var|i - j| over uniform i, j: E|i-j| = (n²-1)/(3n), E|i-j|² = (n²-1)/6.
    n = 37
    m = np.asarray(alibi_slopes(4, dtype=jnp.float64))
    var = (n**2 - 1) / 6 - ((n**2 - 1) / (3 * n)) ** 2
    np.testing.assert_allclose(np.asarray(displacement_spread(alibi_bias(n, 4, dtype=jnp.float64))), m**2 * var,
                               rtol=1e-12)
    np.testing.assert_allclose(float(displacement_spread(lambda r: -0.5 * jnp.abs(r), n=n)), 0.25 * var, rtol=1e-12)


def test_rope_matches_complex_rotation_and_is_relative():
    n, d = 9, 6
    x = _E(6, n, d)
    pos = jnp.arange(n) + 3
    r = np.asarray(rope(x, pos, base=50.0))
    theta = 50.0 ** (-2 * np.arange(d // 2) / d)
    z = (np.asarray(x)[:, 0::2] + 1j * np.asarray(x)[:, 1::2]) * np.exp(1j * np.asarray(pos)[:, None] * theta)
    np.testing.assert_allclose(r[:, 0::2], z.real, atol=1e-13)
    np.testing.assert_allclose(r[:, 1::2], z.imag, atol=1e-13)
    q, k = _E(7, n, d), _E(8, n, d)
    s0 = np.asarray(rope(q, jnp.arange(n)) @ rope(k, jnp.arange(n)).T)
    s1 = np.asarray(rope(q, jnp.arange(n) + 11) @ rope(k, jnp.arange(n) + 11).T)
    np.testing.assert_allclose(s0, s1, atol=1e-12)


def test_rope_displacement_spread_matches_direct_average():
    n, d, base = 20, 8, 30.0
    theta = base ** (-2 * np.arange(d // 2) / d)
    r = np.arange(n)[:, None] - np.arange(n)[None, :]
    direct = sum(1 - abs(np.mean(np.exp(1j * t * r))) ** 2 for t in theta)
    np.testing.assert_allclose(float(rope_displacement_spread(n, d, base)), direct, rtol=1e-12)


@pytest.mark.slow
def test_functions_jit_vmap_grad():
    Es = jax.random.normal(jax.random.key(0), (3, 6, 4))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(spread))(Es)), [float(spread(e)) for e in Es], rtol=1e-12)
    g = jax.jit(jax.grad(min_separation))(Es[0])
    assert np.all(np.isfinite(np.asarray(g)))


# ---- bad inputs ----

def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="d must be even"):
        sinusoidal_pe(8, 5)
    with pytest.raises(ValueError, match="must be even"):
        rope(jnp.ones((4, 3)), jnp.arange(4))
    with pytest.raises(ValueError, match="positions must have length n=4"):
        rope(jnp.ones((4, 2)), jnp.arange(5))
    with pytest.raises(ValueError, match="n must be >= 1"):
        sinusoidal_pe(0, 4)
    with pytest.raises(ValueError, match="base must be > 0"):
        spread_closed_form_sinusoidal(8, 4, base=-1.0)
    with pytest.raises(ValueError, match="E must be 2-dimensional"):
        spread(jnp.ones(5))
    with pytest.raises(ValueError, match="E must be finite"):
        spread(jnp.array([[0.0, 1.0], [jnp.nan, 2.0]]))
    with pytest.raises(ValueError, match="at least 2 rows"):
        min_separation(jnp.ones((1, 3)))
    with pytest.raises(ValueError, match="n must be >= 2"):
        spread_lower_bound(1, 0.5)
    with pytest.raises(ValueError, match="delta must be > 0"):
        spread_lower_bound(4, 0.0)
    with pytest.raises(ValueError, match="delta must be > 0"):
        spread_lower_bound(4, -1.0)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        spread_penalty(jnp.ones((3, 2)), -0.1)
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        scale_spread(jnp.ones((3, 2)), -1.0)
    with pytest.raises(ValueError, match="num_heads must be >= 1"):
        alibi_slopes(0)
    with pytest.raises(ValueError, match="bias must be finite"):
        displacement_spread(alibi_bias(4, 1, causal=True))
    with pytest.raises(ValueError, match="n must be given"):
        displacement_spread(lambda r: r)


def _raises_under_jit(fn, *args, match):
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_value_checks_hold_under_jit():
    _raises_under_jit(spread, jnp.array([[0.0, 1.0], [jnp.nan, 2.0]]), match="E must be finite")
    _raises_under_jit(lambda b: spread_closed_form_sinusoidal(8, 4, base=b), -1.0, match="base must be > 0")
    _raises_under_jit(lambda d: spread_lower_bound(4, d), 0.0, match="delta must be > 0")
    _raises_under_jit(lambda lam: spread_penalty(jnp.ones((3, 2)), lam), -0.1, match="lam must be >= 0")
    _raises_under_jit(lambda a: scale_spread(jnp.ones((3, 2)), a), -1.0, match="alpha must be >= 0")
    _raises_under_jit(displacement_spread, alibi_bias(4, 1, causal=True), match="bias must be finite")
    _raises_under_jit(lambda s: learned_pe_init(jax.random.key(0), 4, 2, std=s), -1.0, match="std must be > 0")
    with pytest.raises(ValueError, match="std must be > 0"):
        learned_pe_init(jax.random.key(0), 4, 2, std=0.0)


def test_dtype_none_follows_the_inputs():
    assert sinusoidal_pe(4, 4).dtype == jnp.float32  # no floating input: float32, as before
    assert sinusoidal_pe(4, 4, offset=jnp.array(2.0, jnp.float64)).dtype == jnp.float64
    np.testing.assert_array_equal(sinusoidal_pe(4, 4, offset=jnp.array(2.0, jnp.float32)),
                                  sinusoidal_pe(4, 4, offset=2))
    assert learned_pe_init(jax.random.key(0), 4, 2).dtype == jnp.float32
    assert learned_pe_init(jax.random.key(0), 4, 2, std=jnp.array(0.1, jnp.float64)).dtype == jnp.float64
    assert alibi_slopes(4).dtype == jnp.float32 and alibi_bias(4, 2).dtype == jnp.float32
    np.testing.assert_array_equal(alibi_bias(5, 2), alibi_bias(5, 2, dtype=jnp.float32))
