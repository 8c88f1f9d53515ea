"""Fast drop-ins for ``jax.random.bits`` / ``uniform`` / ``normal``: the same numbers, bit for bit.

JAX lowers its Threefry-2x32 hash on CPU as a rolled five-iteration loop over whole arrays (to keep compile times
short), so every round reads and writes the full state: about 13 ns per 32-bit word on this project's 2-core
machine, slower than numpy's generator. Written as straight-line ``jnp`` integer ops, the same hash is fused by XLA
into one vectorised loop with its consumer (measured 3.2 ns per word standalone, 1.7 ns fused into a sum), so
Monte Carlo kernels that draw billions of Gaussians (the multiscale first-chaos estimator) stop being bound by the
generator.

The functions reproduce JAX's default (``jax_threefry_partitionable``) stream exactly: the hash of the 64-bit
flat index split into two 32-bit counters, ``bits = hash_hi ^ hash_lo`` for 32-bit words and
``(hash_hi << 32) | hash_lo`` for 64-bit words, then JAX's mantissa construction for uniforms and
``√2 · erfinv(u)`` on ``u ∈ (−1, 1)`` for normals. Anything else (other key implementations, the legacy
non-partitionable stream, half precision, more than 2³² draws) falls back to ``jax.random`` itself, so a call
never returns different numbers from the ``jax.random`` function it replaces; the tests assert equality.

:func:`normal_pairs` is the one function here with its own stream (not ``jax.random``'s): Box–Muller on both
32-bit words of one hash, so two Gaussians per hash instead of one, with no ``erfinv``. XLA's CPU loops compute
each output element on its own and run the 20 hash rounds as one dependency chain, so the hash is the cost of a
draw; returning the pair as one complex number keeps it to a single hash per pair (two real outputs would be two
fusions, each hashing again). Measured in the multiscale first-chaos estimator: 1.4 instead of 3.8 ns per
Gaussian on 2 cores, everything included.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["bits", "normal", "normal_pairs", "threefry2x32", "uniform"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotl(x, d: int):
    return lax.shift_left(x, np.uint32(d)) | lax.shift_right_logical(x, np.uint32(32 - d))


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011, the hash JAX's PRNG uses), unrolled: key words
    ``k0, k1`` (uint32 scalars or arrays broadcasting with the counters) and counter words ``x0, x1``."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _key_words(key):
    """The two uint32 key words of a Threefry key, or None where another PRNG implementation is in use."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if "threefry" not in str(jax.random.key_impl(key)):
            return None
        key = jax.random.key_data(key)
    elif not (key.dtype == jnp.uint32 and key.shape[-1:] == (2,)) or jax.config.jax_default_prng_impl != "threefry2x32":
        return None
    return key[..., 0], key[..., 1]


def _float_dtype(dtype):
    """JAX's default: the canonical float type (float64 only under ``jax_enable_x64``)."""
    return jnp.dtype(jax.dtypes.canonicalize_dtype(float if dtype is None else dtype))


def _fast_path(key, shape, *, jax_stream: bool = True) -> bool:
    """Whether the unrolled hash applies: one Threefry key, fewer than 2³² draws and, for the functions that
    reproduce ``jax.random`` (``jax_stream``), JAX's partitionable stream."""
    return ((jax.config.jax_threefry_partitionable or not jax_stream)
            and key.ndim == (1 if key.dtype == jnp.uint32 else 0)
            and math.prod(shape) < 2**32 and _key_words(key) is not None)


def _hash_words(key, shape):
    k0, k1 = _key_words(key)
    lo = lax.iota(np.uint32, max(math.prod(shape), 1))[: math.prod(shape)].reshape(shape)
    return threefry2x32(k0, k1, jnp.zeros_like(lo), lo)


def bits(key, shape=(), dtype=None):
    """``jax.random.bits(key, shape, dtype)`` for uint32 / uint64 (default: uint64 under ``jax_enable_x64``, as
    JAX), computed by the unrolled hash."""
    shape = tuple(shape)
    dtype = jnp.dtype(jax.dtypes.canonicalize_dtype(np.uint64 if dtype is None else dtype))
    if dtype not in (jnp.uint32, jnp.uint64) or not _fast_path(key, shape):
        return jax.random.bits(key, shape, dtype)
    hi, lo = _hash_words(key, shape)
    if dtype == jnp.uint32:
        return hi ^ lo
    return lax.shift_left(hi.astype(dtype), dtype.type(32)) | lo.astype(dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """``jax.random.uniform`` (float32 / float64) on the unrolled hash: random mantissa bits under the exponent of
    1.0, minus 1, scaled to ``[minval, maxval)`` and clipped below at ``minval``, as JAX does."""
    dtype = _float_dtype(dtype)
    shape = tuple(shape)
    if dtype not in (jnp.float32, jnp.float64) or not _fast_path(key, shape):
        return jax.random.uniform(key, shape, dtype, minval, maxval)
    return _uniform(key, shape, dtype, minval, maxval)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _uniform(key, shape, dtype, minval, maxval):
    finfo = jnp.finfo(dtype)
    uint = jnp.uint32 if dtype == jnp.float32 else jnp.uint64
    word = bits(key, shape, uint)
    one = np.array(1.0, dtype).view(uint)
    mantissa = lax.shift_right_logical(word, jnp.dtype(uint).type(finfo.bits - finfo.nmant)) | one
    floats = lax.bitcast_convert_type(mantissa, dtype) - jnp.array(1.0, dtype)
    minval, maxval = jnp.asarray(minval, dtype), jnp.asarray(maxval, dtype)
    return lax.max(minval, floats * (maxval - minval) + minval)


def normal(key, shape=(), dtype=None):
    """``jax.random.normal`` (float32 / float64): ``√2 · erfinv(u)`` with ``u`` uniform on ``(−1, 1)``."""
    dtype = _float_dtype(dtype)
    shape = tuple(shape)
    if dtype not in (jnp.float32, jnp.float64) or not _fast_path(key, shape):
        return jax.random.normal(key, shape, dtype)
    return _normal(key, shape, dtype)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform(key, shape, dtype, lo, np.array(1.0, dtype))
    return np.array(np.sqrt(2), dtype) * lax.erf_inv(u)


# sin and cos on [-pi/4, pi/4]: Taylor polynomials to x^9 and x^10, truncation error < 2e-9 (below float32 rounding)
_SIN = (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880)
_COS = (1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800)
_PAIRS_COUNTER = np.uint32(1)  # high counter word: JAX's stream uses 0 below 2^32 draws, so the streams differ


def _horner(x, coeffs, dtype):
    acc = np.array(coeffs[-1], dtype)
    for c in coeffs[-2::-1]:
        acc = acc * x + np.array(c, dtype)
    return acc


def _unit_circle(b, dtype):
    """``(cos θ, sin θ)`` for ``θ = 2π b / 2³² - π/4`` (uniform on the circle for uniform 32-bit ``b``): the
    quadrant from the top two bits, a polynomial on ``[-π/4, π/4)`` from the other 30 (XLA's CPU ``sin`` and
    ``cos`` take several times longer)."""
    quadrant = lax.shift_right_logical(b, np.uint32(30))
    frac = (b & np.uint32(0x3FFFFFFF)).astype(dtype) * np.array(2.0**-30, dtype)
    phi = (frac - np.array(0.5, dtype)) * np.array(np.pi / 2, dtype)
    if dtype == jnp.float64:
        c, s = jnp.cos(phi), jnp.sin(phi)
    else:
        p2 = phi * phi
        c, s = _horner(p2, _COS, dtype), phi * _horner(p2, _SIN, dtype)
    odd = (quadrant & np.uint32(1)) == 1  # rotate (c, s) by quadrant * pi/2
    c, s = jnp.where(odd, -s, c), jnp.where(odd, c, s)
    flip = quadrant >= 2
    return jnp.where(flip, -c, c), jnp.where(flip, -s, s)


def normal_pairs(key, shape=(), dtype=None):
    """Complex array of ``shape`` whose real and imaginary parts are ``2 · prod(shape)`` independent standard
    normals (each part has variance 1, unlike ``jax.random.normal`` with a complex dtype, whose parts have 1/2).

    Pair ``i`` (row-major flat index) is Box–Muller on the two output words ``(a, b)`` of the Threefry-2x32-20
    hash of the counter ``(1, i)`` under ``key``: ``r = sqrt(-2 ln((a + 1/2) 2⁻³²))``, ``θ = 2π b 2⁻³² - π/4``,
    ``(r cos θ, r sin θ)``. With 32-bit uniforms the radius is at most ``sqrt(66 ln 2) ≈ 6.76`` (a tail of
    probability ``2⁻³³`` is cut) and the angle has ``2⁻³²`` of a turn resolution. float32 draws the same pairs as
    float64 to float32 rounding (the float32 path uses a polynomial ``sin``/``cos``, tested against it), except
    that ``u`` rounded to float32 has spacing ``2⁻²⁴`` near 1, so radii ``r ≪ 1`` are off by up to ``2⁻²⁴/r``
    (the tail, computed from ``ln u`` of small ``u``, keeps full precision).

    This is its own stream, not ``jax.random``'s; where the key is not a Threefry key (or ``prod(shape) >= 2³²``)
    it falls back to ``jax.random.normal(key, (2, *shape))`` combined as ``real + i imag``.
    ``dtype`` is the real dtype of each part (float32 or float64; default: JAX's canonical float).
    """
    dtype = _float_dtype(dtype)
    if dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"normal_pairs: dtype must be float32 or float64, got {dtype}")
    shape = tuple(shape)
    if not _fast_path(key, shape, jax_stream=False):
        re, im = jax.random.normal(key, (2, *shape), dtype)
        return lax.complex(re, im)
    return _normal_pairs(key, shape, dtype)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _normal_pairs(key, shape, dtype):
    k0, k1 = _key_words(key)
    n = math.prod(shape)
    idx = lax.iota(np.uint32, max(n, 1))[:n].reshape(shape)
    a, b = threefry2x32(k0, k1, jnp.full_like(idx, _PAIRS_COUNTER), idx)
    u = (a.astype(dtype) + np.array(0.5, dtype)) * np.array(2.0**-32, dtype)  # in (0, 1]
    r = jnp.sqrt(np.array(-2.0, dtype) * jnp.log(u))
    c, s = _unit_circle(b, dtype)
    return lax.complex(r * c, r * s)
