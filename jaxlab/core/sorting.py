"""Sorting floats fast on CPU.

XLA's CPU sort compares floating-point keys with a total-order comparator that costs several times an integer
comparison (sorting 64 x 100,000 float32 took 4.2 s against 0.95 s for the same sort on integer keys, and
0.16 s in numpy). :func:`sort_floats` sorts the order-preserving integer image of the floats instead::

    key(x) = bits(x)                    if the sign bit is clear,
    key(x) = bits(x) XOR 0x7FF...F      if it is set (negative floats: reverse the magnitude order),

a bijection that is monotone on the non-NaN floats (``-0.0`` sorts just before ``+0.0``; the values are equal,
so the sorted values are those of ``jnp.sort``). NaNs are not ordered like ``jnp.sort`` (which puts them last):
pass finite or infinite values only. The result is differentiable: the tangent rule is ``jnp.sort``'s (the slow
path, taken only under ``jvp``/``grad``).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxlab.core.types import Array

__all__ = ["argsort_floats", "sort_floats"]

_INT_OF = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}


def _key(x: Array) -> Array:
    it = _INT_OF[x.dtype.itemsize]
    i = jax.lax.bitcast_convert_type(x, it)
    return jnp.where(i < 0, i ^ jnp.iinfo(it).max, i)


def _from_key(k: Array, dtype) -> Array:
    it = k.dtype
    return jax.lax.bitcast_convert_type(jnp.where(k < 0, k ^ jnp.iinfo(it).max, k), dtype)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def sort_floats(x: Array, axis: int = -1) -> Array:
    """``jnp.sort(x, axis)`` for real floating ``x`` without NaNs, by sorting integer keys (see module).

    Args:
      x: real float array (16, 32 or 64 bits) of any shape, with no NaN entries (infinities are fine).
      axis: the axis to sort along (static); negative values count from the end.

    Returns:
      The sorted array, same shape and dtype as ``x`` (a 0-d ``x`` is returned as is).

    Raises:
      TypeError: ``x`` is not a real float array of 16, 32 or 64 bits.
    """
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.dtype.itemsize not in _INT_OF:
        raise TypeError(f"x must be a real float array of 16, 32 or 64 bits, got dtype {x.dtype}")
    axis = axis % x.ndim if x.ndim else 0
    if x.ndim == 0:
        return x
    # equal integer keys are equal floats, so stability changes nothing, but XLA's CPU stable sort is the faster
    # one on unordered data (64 x 100,000 int32: 0.24 against 0.33 s)
    return _from_key(jax.lax.sort(_key(x), dimension=axis, is_stable=True), x.dtype)


@sort_floats.defjvp
def _sort_floats_jvp(axis, primals, tangents):
    return jax.jvp(lambda v: jnp.sort(v, axis=axis), primals, tangents)


def argsort_floats(x: Array, axis: int = -1) -> Array:
    """``jnp.argsort(x, axis, stable=True)`` for real floating ``x`` without NaNs, by sorting integer keys.

    ``jnp.argsort`` sorts the pair ``(x, iota)`` with XLA's generic multi-operand sort, whose comparator is a
    compiled float total order: the slowest way XLA sorts on CPU. This sorts the integer image of the floats
    (the key of :func:`sort_floats`) instead, with every entry equal to zero mapped to ``+0.0`` first, so that
    ties are exactly those of ``jnp.argsort`` (``-0.0`` and ``+0.0``, and on CPU, which compares with subnormals
    flushed to zero, the subnormals too). Where 64-bit integers are enabled and the floats have at most 32 bits,
    key and position are packed into one ``int64``, ``(key(x) << 32) | position``, and one single-operand
    integer sort (XLA's fastest CPU path) gives the stable order in the low 32 bits; otherwise the pair
    ``(key, position)`` is sorted on the key, stably. Measured on 16 x 50,000 float32 (2-core CPU):
    ``jnp.argsort`` 0.23 s, the integer pair 0.14 s, the packed key 0.06 s.

    Args:
      x: real float array (16, 32 or 64 bits) with at least one dimension and no NaN entries (infinities,
        signed zeros and subnormals are fine; entries equal to zero tie, as in ``jnp.argsort``).
      axis: the axis to sort along (static); negative values count from the end.

    Returns:
      ``int32`` array of the shape of ``x``: along ``axis``, the positions of the entries in ascending order,
      equal entries in their original order (the permutation ``jnp.argsort`` returns).

    Raises:
      TypeError: ``x`` is not a real float array of 16, 32 or 64 bits.
      ValueError: ``x`` is 0-d, or its ``axis`` has ``2³¹`` entries or more.
    """
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.dtype.itemsize not in (2, 4, 8):
        raise TypeError(f"x must be a real float array of 16, 32 or 64 bits, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension, got a 0-d array")
    axis = axis % x.ndim
    n = x.shape[axis]
    if n >= 2**31:
        raise ValueError(f"x must have fewer than 2**31 entries along axis {axis}, got {n}")
    key = _key(jnp.where(x == 0, jnp.zeros_like(x), x))  # -0.0 -> +0.0: ties as in jnp.argsort
    if jax.dtypes.canonicalize_dtype(jnp.int64) == jnp.int64 and x.dtype.itemsize <= 4:  # x64 enabled
        position = jax.lax.broadcasted_iota(jnp.int64, x.shape, axis)
        # the packed keys are distinct, so any sort is stable; XLA's CPU stable sort is the faster one on unordered
        # data (16 x 50,000 int64: 29 against 42 ms)
        packed = jax.lax.sort((key.astype(jnp.int64) << 32) | position, dimension=axis, is_stable=True)
        return (packed & 0xFFFFFFFF).astype(jnp.int32)
    position = jax.lax.broadcasted_iota(jnp.int32, x.shape, axis)
    return jax.lax.sort((key, position), dimension=axis, is_stable=True, num_keys=1)[1]
