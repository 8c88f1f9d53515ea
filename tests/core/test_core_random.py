"""jaxlab.core.random draws the same numbers as jax.random, bit for bit, through an unrolled Threefry."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import random as fast_random

KEYS = [jax.random.key(0), jax.random.key(2**31 + 5), jax.random.PRNGKey(7)]
SHAPES = [(), (1,), (5,), (3, 7), (129, 33)]


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("shape", SHAPES)
def test_bits_uniform_normal_equal_jax_random(shape):
    for key in KEYS:
        _same(fast_random.bits(key, shape), jax.random.bits(key, shape))
        _same(fast_random.uniform(key, shape), jax.random.uniform(key, shape))
        _same(fast_random.uniform(key, shape, minval=-2.0, maxval=3.0),
              jax.random.uniform(key, shape, minval=-2.0, maxval=3.0))
        _same(fast_random.normal(key, shape), jax.random.normal(key, shape))


def test_float32_float64_and_both_word_sizes():
    assert jax.config.jax_enable_x64  # tests/conftest.py: the defaults are then float64 / uint64
    key = jax.random.key(11)
    for dtype in (jnp.float32, jnp.float64):
        _same(fast_random.normal(key, (4, 9), dtype), jax.random.normal(key, (4, 9), dtype))
        _same(fast_random.uniform(key, (17,), dtype, -1.0, 0.5), jax.random.uniform(key, (17,), dtype, -1.0, 0.5))
    for dtype in (jnp.uint32, jnp.uint64):
        _same(fast_random.bits(key, (6,), dtype), jax.random.bits(key, (6,), dtype))


def test_under_jit_and_vmap_and_inside_a_larger_program():
    keys = jax.random.split(jax.random.key(3), 4)
    _same(jax.vmap(lambda k: fast_random.normal(k, (100,)))(keys),
          jax.vmap(lambda k: jax.random.normal(k, (100,)))(keys))
    f = jax.jit(lambda k: jnp.sum(fast_random.normal(k, (64, 8)) * 2.0 + 1.0, axis=0))
    g = jax.jit(lambda k: jnp.sum(jax.random.normal(k, (64, 8)) * 2.0 + 1.0, axis=0))
    _same(f(keys[0]), g(keys[0]))


def test_threefry_known_answer():
    """Random123's known-answer vectors for Threefry-2x32-20 (also in JAX's own tests)."""
    x = fast_random.threefry2x32(np.uint32(0x13198A2E), np.uint32(0x03707344),
                                 np.uint32(0x243F6A88), np.uint32(0x85A308D3))
    assert [int(v) for v in x] == [0xC4923A9C, 0x483DF7A0]
    x = fast_random.threefry2x32(np.uint32(0), np.uint32(0), np.uint32(0), np.uint32(0))
    assert [int(v) for v in x] == [0x6B200159, 0x99BA4EFE]


def test_other_generators_fall_back_to_jax_random():
    key = jax.random.key(1, impl="rbg")
    _same(fast_random.normal(key, (8,)), jax.random.normal(key, (8,)))
    key = jax.random.key(1)
    _same(fast_random.normal(key, (8,), jnp.bfloat16), jax.random.normal(key, (8,), jnp.bfloat16))


# ---- normal_pairs: its own stream (Box–Muller on both words of one hash) ----

_PAIRS = jax.jit(lambda k: fast_random.normal_pairs(k, (256, 512), jnp.float32))


def test_normal_pairs_is_box_muller_on_the_two_hash_words():
    """Recompute pair (i) from the hash words in float64 numpy: r = sqrt(-2 ln((a + 1/2) 2^-32)),
    theta = 2 pi b 2^-32 - pi/4; the float64 path equals it to rounding, float32 to float32 precision."""
    key = jax.random.key(5)
    k0, k1 = (np.uint32(v) for v in jax.random.key_data(key))
    idx = np.arange(3 * 7, dtype=np.uint32)
    a, b = (np.asarray(v, np.float64) for v in fast_random.threefry2x32(k0, k1, np.uint32(1), idx))
    r = np.sqrt(-2.0 * np.log((a + 0.5) * 2.0**-32))
    theta = 2 * np.pi * b * 2.0**-32 - np.pi / 4
    expected = (r * np.exp(1j * theta)).reshape(3, 7)
    z64 = fast_random.normal_pairs(key, (3, 7), jnp.float64)
    assert z64.dtype == jnp.complex128 and z64.shape == (3, 7)
    np.testing.assert_allclose(np.asarray(z64), expected, rtol=1e-12, atol=1e-12)
    z32 = fast_random.normal_pairs(key, (3, 7), jnp.float32)
    assert z32.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(z32), expected, rtol=0, atol=4e-6 * np.abs(expected).max())


def test_normal_pairs_polynomial_sincos_matches_float64_on_many_draws():
    key = jax.random.key(9)
    z32 = np.asarray(_PAIRS(key))
    z64 = np.asarray(fast_random.normal_pairs(key, (256, 512), jnp.float64))
    r = np.abs(z64)
    # float32 relative precision, plus the float32 rounding of u = (a + 1/2) 2^-32 near 1 (spacing 2^-24 there):
    # r^2 = -2 ln u moves by up to 2^-24, so r by 2^-24 / r for the few draws with r << 1
    bound = 2e-6 * np.maximum(r, 1.0) + 2.0**-24 / r
    assert np.all(np.abs(z32 - z64) <= bound)


def test_normal_pairs_statistics():
    """2^18 pairs: both parts standard normal (KS against scipy), uncorrelated, and unrelated to jax.random's
    stream under the same key; moments within 5 standard errors."""
    from scipy import stats

    key = jax.random.key(2)
    z = np.asarray(_PAIRS(key)).astype(np.complex128).ravel()
    n = z.size
    for part in (z.real, z.imag):
        assert stats.kstest(part, "norm").pvalue > 1e-3
        assert abs(part.mean()) < 5 / np.sqrt(n)
        assert abs(part.var() - 1) < 5 * np.sqrt(2 / n)
        assert abs(np.mean(part**4) - 3) < 5 * np.sqrt(96 / n)
    assert abs(np.mean(z.real * z.imag)) < 5 / np.sqrt(n)
    # |z|^2 / 2 is Exp(1): the radius is right, independently of the angle
    assert stats.kstest(np.abs(z) ** 2 / 2, "expon").pvalue > 1e-3
    plain = np.asarray(jax.random.normal(key, (256, 512), jnp.float32)).ravel()
    assert abs(np.corrcoef(plain, z.real)[0, 1]) < 5 / np.sqrt(n)


def test_normal_pairs_under_vmap_and_fallback():
    keys = jax.random.split(jax.random.key(4), 3)
    batched = jax.vmap(lambda k: fast_random.normal_pairs(k, (5,), jnp.float32))(keys)
    for i in range(3):
        _same(batched[i], fast_random.normal_pairs(keys[i], (5,), jnp.float32))
    rbg = jax.random.key(1, impl="rbg")
    re, im = jax.random.normal(rbg, (2, 6), jnp.float32)
    _same(fast_random.normal_pairs(rbg, (6,), jnp.float32), jax.lax.complex(re, im))
    with pytest.raises(ValueError, match="float32 or float64"):
        fast_random.normal_pairs(jax.random.key(0), (3,), jnp.float16)
