"""sort_floats equals jnp.sort (values, every float width, any axis, under jit and vmap) and has its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import sort_floats


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_equals_numpy_sort_with_signs_zeros_ties_and_infinities(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 301)).astype(dtype) * 1e3
    x[:, :20] = np.round(x[:, :20])  # ties
    x[0, :4] = [-0.0, 0.0, np.inf, -np.inf]
    x[1, :3] = [np.finfo(dtype).tiny, -np.finfo(dtype).tiny, np.finfo(dtype).max]
    for axis in (-1, 0):
        got = np.asarray(sort_floats(jnp.asarray(x), axis))
        np.testing.assert_array_equal(got, np.sort(x, axis=axis))
        assert got.dtype == x.dtype


def test_jit_vmap_and_gradient_match_jnp_sort():
    x = jax.random.normal(jax.random.key(1), (4, 50))
    w = jnp.linspace(-1.0, 2.0, 50)
    f = jax.jit(jax.vmap(lambda r: jnp.sum(w * sort_floats(r))))
    ref = jax.vmap(lambda r: jnp.sum(w * jnp.sort(r)))
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(ref(x)))
    g = jax.grad(lambda r: jnp.sum(w * sort_floats(r)))(x[0])
    np.testing.assert_array_equal(np.asarray(g), np.asarray(jax.grad(lambda r: jnp.sum(w * jnp.sort(r)))(x[0])))


def test_rejects_integers():
    with pytest.raises(TypeError, match="real float"):
        sort_floats(jnp.arange(5))
