"""Integer-key sorting (jaxlab.core.sorting) against jnp.sort / jnp.argsort / np.sort, bit for
bit, on NaN-free floats with signed zeros, infinities, subnormals and ties, in every float width, with 64-bit
integers enabled (packed int64 keys) and disabled (key-position pairs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import sort_floats
from jaxlab.core.sorting import argsort_floats

DTYPES = [np.float16, np.float32, np.float64]


def _awkward(dtype, shape=(4, 257), seed=0):
    """Normal draws at several scales with ties, ±0, ±inf, ±max, ±tiny and subnormals planted in every row."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
    fi = np.finfo(dtype)
    special = np.array([-0.0, 0.0, -0.0, np.inf, -np.inf, fi.max, -fi.max, fi.tiny, -fi.tiny,
                        fi.smallest_subnormal, -fi.smallest_subnormal, 3 * fi.smallest_subnormal, 1.0, 1.0, -1.0],
                       dtype)
    rows = x.reshape(-1, shape[-1])
    for row in rows:
        row[rng.choice(shape[-1], special.size, replace=False)] = rng.permutation(special)
    rows[:, -30:] = np.round(rows[:, -30:])  # more ties, including new signed zeros
    return rows.reshape(shape)


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_argsort_floats_is_jnp_argsort_exactly(dtype, x64):
    if dtype == np.float64 and not x64:
        pytest.skip("float64 needs 64-bit mode")
    x = _awkward(dtype)
    assert np.isclose(x, 0.0).any() and np.signbit(x[x == 0]).any()  # signed zeros are present
    with jax.enable_x64(x64):
        for axis in (-1, 0, 1):
            got = argsort_floats(jnp.asarray(x), axis)
            ref = jnp.argsort(jnp.asarray(x), axis=axis, stable=True)
            assert got.dtype == jnp.int32
            np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
        # gathering with the permutation gives jnp.sort's array bit for bit (signed zeros in jnp.sort's order)
        perm = np.asarray(argsort_floats(jnp.asarray(x)))
        np.testing.assert_array_equal(_bits(np.take_along_axis(x, perm, -1)), _bits(jnp.sort(jnp.asarray(x), axis=-1)))


@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_floats_matches_jnp_sort(dtype, x64):
    if dtype == np.float64 and not x64:
        pytest.skip("float64 needs 64-bit mode")
    x = _awkward(dtype, seed=1)
    canonical = lambda a: _bits(np.where(a == 0, np.zeros_like(a), a))  # noqa: E731
    negative_zero = lambda a: (a == 0) & np.signbit(a)  # noqa: E731
    with jax.enable_x64(x64):
        for axis in (-1, 0):
            got = np.asarray(sort_floats(jnp.asarray(x), axis))
            assert got.dtype == x.dtype
            # IEEE order bit for bit, up to signed zeros (numpy's vectorised sort may swap -0.0 and +0.0, and
            # sort_floats puts every -0.0 of a slice before every +0.0); subnormals are ordered by value
            np.testing.assert_array_equal(canonical(got), canonical(np.sort(x, axis=axis)))
            np.testing.assert_array_equal(negative_zero(got).sum(axis), negative_zero(x).sum(axis))  # a permutation
            # jnp.sort on CPU compares with subnormals flushed to zero: without subnormals it is the same sort
            y = np.where(np.abs(x) < np.finfo(dtype).tiny, np.zeros_like(x), x)
            got_y = np.asarray(sort_floats(jnp.asarray(y), axis))
            ref_y = np.asarray(jnp.sort(jnp.asarray(y), axis=axis))
            np.testing.assert_array_equal(canonical(got_y), canonical(ref_y))
            np.testing.assert_array_equal(negative_zero(got_y).sum(axis), negative_zero(ref_y).sum(axis))
            y = np.abs(y)  # and with no signed zeros at all, bit for bit
            np.testing.assert_array_equal(_bits(sort_floats(jnp.asarray(y), axis)),
                                          _bits(jnp.sort(jnp.asarray(y), axis=axis)))


def test_argsort_floats_under_jit_and_vmap():
    x = jnp.asarray(_awkward(np.float32, (3, 5, 40), seed=2))
    f = jax.jit(jax.vmap(lambda a: argsort_floats(a, 0)))
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(jax.vmap(lambda a: jnp.argsort(a, axis=0))(x)))


def test_argsort_floats_rejects_bad_inputs():
    with pytest.raises(TypeError, match="real float"):
        argsort_floats(jnp.arange(5))
    with pytest.raises(TypeError, match="real float"):
        argsort_floats(jnp.ones(3, jnp.complex64))
    with pytest.raises(ValueError, match="at least one dimension"):
        argsort_floats(jnp.float32(1.0))
