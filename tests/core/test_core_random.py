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
