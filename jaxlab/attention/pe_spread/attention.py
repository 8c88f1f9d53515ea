r"""Softmax attention with mean pooling, and the estimators of its equivariance breaking.

Paper: "Positional spread of additive positional encodings" (2026; title, authors and arXiv id not retrieved).
The model is **[recommended]** (consistent with the abstract's "softmax attention with mean pooling"):

    Z = X + E,    A = softmax_row( (Z W_Q)(Z W_K)ᵀ / √d_k + B ),    g(X; E) = (1/n) 1ᵀ A (Z W_V),

one such head per ``h`` (heads concatenated before pooling), then a linear readout ``f = W_oᵀ g``. ``B`` is
an optional additive score bias (ALiBi); RoPE rotates ``Z W_Q`` and ``Z W_K`` per head by position; a padding
mask removes keys from the softmax and queries from the mean.

**[verified]** Invariance lemma: for a constant PE ``E = 1bᵀ``, ``g(ΠX; E) = g(X; E)`` for every permutation
``Π``, so ``g`` depends on position only through ``Ẽ = HE``. **[recommended]** estimators of the symmetry
breaking:

    D(E) = E_X ‖g(X; E) - g(X; 1ēᵀ)‖²          (invariant deviation; D(E) ≤ C ‖Ẽ‖_F², the paper's bound)
    V(E) = E_{X,π} ‖g(πX; E) - g(X; E)‖²       (equivariance gap)

``D(1ēᵀ + tẼ)`` grows as ``t²`` for small ``t`` (a log-log slope of 2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.attention.pe_spread.papers import ROPE, SPREAD, VASWANI
from jaxlab.attention.pe_spread.pe import rope as rope_rotate
from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int, error_if, value_check

__all__ = ["MeanPoolAttention", "attention_heads", "attention_mean_pool", "equivariance_gap",
           "invariant_deviation"]


_SCORES_PER_CHUNK = 2**24  # 64 MiB of float32 scores per chunk of a batch


def _field(params: Any, name: str):
    return params[name] if isinstance(params, dict) else getattr(params, name)


def _check_inputs(x, pe, bias, mask, d_in: int):
    """Validate one sequence ``x`` (n, d) with its PE (n, d), bias (n, n) or (H, n, n) and mask (n,).

    Shapes are checked at trace time; the values (a finite PE, a mask keeping a token) eagerly or, under
    ``jit``, at run time: use the returned arrays.
    """
    x = as_array(x, "x", ndim=2, shape=(None, d_in))
    n = x.shape[0]
    if pe is not None:
        pe = as_array(pe, "pe", ndim=2, finite=True)
        if pe.shape != x.shape:
            raise ValueError(f"pe must have the shape of x {x.shape} (slice a longer table as "
                             f"pe[offset:offset + n]), got shape {pe.shape}")
    if bias is not None:
        bias = as_array(bias, "bias", ndim=(2, 3))
        if bias.shape[-2:] != (n, n):
            raise ValueError(f"bias must have trailing shape ({n}, {n}), got shape {bias.shape}")
    if mask is not None:
        mask = as_array(mask, "mask", kind="bool", ndim=1, shape=(n,))
        mask = value_check(mask, lambda m: ~jnp.any(m),
                           "mask must keep at least one token (an all-masked row has no mean), got all False")
    return x, pe, bias, mask


def _scores_and_values(params: Any, x, pe, bias, mask, rope: bool, rope_base: float):
    """Validated inputs -> the attention scores (H, n, n; masked keys at -inf) and the values ``Z W_V``."""
    wq, wk, wv = (_field(params, k) for k in ("wq", "wk", "wv"))
    H = check_int(_field(params, "num_heads"), "num_heads", min_value=1)
    x, pe, bias, mask = _check_inputs(x, pe, bias, mask, wq.shape[0])
    n = x.shape[0]
    z = x if pe is None else x + pe
    q = (z @ wq).reshape(n, H, -1).transpose(1, 0, 2)
    k = (z @ wk).reshape(n, H, -1).transpose(1, 0, 2)
    v = (z @ wv).reshape(n, H, -1).transpose(1, 0, 2)
    if rope:
        pos = jnp.arange(n)
        q, k = rope_rotate(q, pos, rope_base), rope_rotate(k, pos, rope_base)
    s = jnp.einsum("hik,hjk->hij", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = jnp.where(mask[None, None, :], s, -jnp.inf)
    return s, v, mask


@cites(VASWANI, ROPE)
def attention_heads(params: Any, x: Float[Array, "n d"], pe=None, bias=None, mask=None, rope: bool = False,
                    rope_base: float = 10000.0) -> Float[Array, "n hv"]:
    """Per-token multi-head softmax attention outputs, heads concatenated, before pooling.

    ``Z = X + E``, ``A_h = softmax_row((Z W_Q^h)(Z W_K^h)ᵀ/√d_k + B_h)``, output row ``i`` is
    ``concat_h (A_h Z W_V^h)_i`` (Vaswani et al., arXiv:1706.03762). With ``rope`` the per-head queries and keys are
    rotated by :func:`~jaxlab.attention.pe_spread.pe.rope` at positions ``0..n−1``; masked keys get score ``−∞``.

    Args:
      params: the weights, a :class:`MeanPoolAttention` or a dict with ``wq``, ``wk`` ``(d, H·d_k)``, ``wv``
        ``(d, H·d_v)`` and ``num_heads`` ``H``.
      x: ``(n, d)`` float array, the token vectors ``X``.
      pe: optional ``(n, d)`` finite float array ``E`` added to ``x`` (slice a longer table).
      bias: optional additive score bias, ``(n, n)`` or ``(H, n, n)`` (e.g.
        :func:`~jaxlab.attention.pe_spread.pe.alibi_bias`).
      mask: optional ``(n,)`` bool array, True for the tokens to keep as keys (at least one).
      rope: apply RoPE to queries and keys.
      rope_base: the RoPE frequency base.

    Returns:
      ``(n, H·d_v)`` float array (rows of masked tokens are computed too, attending to the kept keys).

    Raises:
      TypeError: ``x`` or ``pe`` not floating; ``mask`` not boolean; ``num_heads`` not an int.
      ValueError: ``x`` not ``(n, d)``; ``pe`` not of the shape of ``x`` or not finite; ``bias`` not 2-d/3-d with
        trailing shape ``(n, n)``; ``mask`` not ``(n,)`` or all False (under ``jit``: at run time).
    """
    s, v, _ = _scores_and_values(params, x, pe, bias, mask, rope, rope_base)
    return jnp.einsum("hij,hjv->ihv", jax.nn.softmax(s, axis=-1), v).reshape(x.shape[0], -1)


@cites(SPREAD, VASWANI)
def attention_mean_pool(params: Any, x: Float[Array, "*b n d"], pe=None, bias=None, mask=None,
                        rope: bool = False) -> Float[Array, "*b hv"]:
    """Mean-pooled attention ``g(X; E) = (1/n) 1ᵀ A (Z W_V)``, heads concatenated, the mean over the kept tokens.

    ``Z = X + E`` and ``A`` as in :func:`attention_heads` (RoPE base 10000); with a mask the mean runs over the
    kept queries and the softmax over the kept keys. The model **[recommended]** of "Positional spread of additive
    positional encodings" (2026; authors and arXiv id unknown), whose abstract names softmax attention with mean
    pooling. A batch is mapped in chunks of at most ``2**24`` attention scores (``vmap`` inside a chunk, a loop
    over chunks), so memory stays bounded for long sequences.

    Args:
      params: the weights, a :class:`MeanPoolAttention` or a dict with ``wq``, ``wk`` ``(d, H·d_k)``, ``wv``
        ``(d, H·d_v)`` and ``num_heads`` ``H``.
      x: float array, one sequence ``(n, d)`` or a batch ``(B, n, d)``.
      pe: optional ``(n, d)`` finite float PE shared by the batch.
      bias: optional ``(n, n)`` or ``(H, n, n)`` additive score bias shared by the batch.
      mask: optional bool array, ``(n,)`` for one sequence or ``(B, n)`` for a batch; True keeps a token.
      rope: apply RoPE to queries and keys.

    Returns:
      Float array ``(H·d_v,)``, or ``(B, H·d_v)`` for a batch.

    Raises:
      TypeError: as :func:`attention_heads`.
      ValueError: ``x`` not 2-d or 3-d; a batch ``mask`` not ``(B, n)``; otherwise as :func:`attention_heads`.
    """
    x = as_array(x, "x", ndim=(2, 3))
    if x.ndim == 3:
        if mask is not None:
            mask = as_array(mask, "mask", kind="bool", ndim=2, shape=x.shape[:2])
        n, H = x.shape[1], check_int(_field(params, "num_heads"), "num_heads", min_value=1)
        chunk = max(1, min(x.shape[0], _SCORES_PER_CHUNK // (H * n * n)))
        if mask is None:
            return jax.lax.map(lambda xi: attention_mean_pool(params, xi, pe, bias, None, rope), x,
                               batch_size=chunk)
        return jax.lax.map(lambda xm: attention_mean_pool(params, xm[0], pe, bias, xm[1], rope), (x, mask),
                           batch_size=chunk)
    # Pool before multiplying by the values: (1/n) 1ᵀ (A V) = ((1/n) 1ᵀ A) V costs n² + n d_v per head
    # instead of the n² d_v of the per-token outputs (half the flops of the forward pass and of its gradient).
    # With P = exp(S - max_j S) and r_i = 1 / Σ_j P_ij, the mean attention each key receives is rᵀP / n: one
    # matrix-vector product, where a column reduction of the normalised softmax lowers poorly on CPU.
    s, v, mask = _scores_and_values(params, x, pe, bias, mask, rope, 10000.0)
    p = jnp.exp(s - jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True)))
    r = 1.0 / jnp.sum(p, axis=-1)  # (H, n)
    if mask is None:
        r = r / x.shape[0]
    else:
        count = jnp.sum(mask)
        count = error_if(count, count == 0, "mask must keep at least one token (all-masked row)")
        r = jnp.where(mask[None, :], r, 0.0) / count
    col = jnp.einsum("hi,hij->hj", r, p)  # (H, n): the mean attention each key receives
    return jnp.einsum("hj,hjv->hv", col, v).reshape(-1)


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _init_weights(key, d_in: int, hk: int, d_out: int, dtype):
    # One compiled call instead of a dozen eager ops (model construction is otherwise dispatch-bound).
    kq, kk, kv, ko = jax.random.split(key, 4)
    s_in = 1.0 / math.sqrt(d_in)
    return (s_in * jax.random.normal(kq, (d_in, hk), dtype), s_in * jax.random.normal(kk, (d_in, hk), dtype),
            s_in * jax.random.normal(kv, (d_in, hk), dtype), jax.random.normal(ko, (hk, d_out), dtype) / math.sqrt(hk))


@cites(SPREAD, VASWANI)
class MeanPoolAttention(eqx.Module):
    """Multi-head softmax attention, mean pooling and a linear readout: ``f(X; E) = W_oᵀ g(X; E)``.

    ``g`` is :func:`attention_mean_pool`; weights are ``N(0, 1/d_in)`` for ``W_Q, W_K, W_V`` and ``N(0, 1/(H d_v))``
    for ``W_o`` **[recommended]**. Call it as ``module(x, pe=None, bias=None, mask=None, rope=False)``
    (``(d_out,)`` per sequence, ``(B, d_out)`` per batch); ``module.pooled(...)`` gives ``g`` before the readout.

    Args:
      d_in: model (input) dimension ``d``.
      d_out: readout dimension.
      num_heads: number of heads ``H``; without ``d_head``, ``d_in`` must be divisible by it.
      d_head: per-head dimension ``d_k = d_v`` (default ``d_in / H``).
      key: PRNG key of the weights.
      dtype: dtype of the weights (``None``: float32; the constructor has no floating input to follow).

    Attributes:
      wq: ``(d, H·d_k)`` query weights ``W_Q``.
      wk: ``(d, H·d_k)`` key weights ``W_K``.
      wv: ``(d, H·d_v)`` value weights ``W_V``.
      wo: ``(H·d_v, d_out)`` readout ``W_o``.
      num_heads: ``H`` (static).

    Raises:
      TypeError: a size is not an int.
      ValueError: ``d_in`` is not divisible by ``num_heads`` (without ``d_head``), naming both; a size < 1.

    Example:
      >>> import jax
      >>> from jaxlab.attention.pe_spread import MeanPoolAttention, sinusoidal_pe
      >>> att = MeanPoolAttention(8, 4, key=jax.random.key(0))
      >>> x = jax.random.normal(jax.random.key(1), (5, 8))
      >>> att(x, pe=sinusoidal_pe(5, 8)).shape
      (4,)
    """

    wq: Float[Array, "d hk"]
    wk: Float[Array, "d hk"]
    wv: Float[Array, "d hv"]
    wo: Float[Array, "hv o"]
    num_heads: int = eqx.field(static=True)

    def __init__(self, d_in: int, d_out: int, *, num_heads: int = 1, d_head: int | None = None, key,
                 dtype=None):
        d_in = check_int(d_in, "d_in", min_value=1)
        d_out = check_int(d_out, "d_out", min_value=1)
        self.num_heads = check_int(num_heads, "num_heads", min_value=1)
        if d_head is None:
            if d_in % num_heads:
                raise ValueError(f"d_in must be divisible by num_heads (each head gets d_in / num_heads "
                                 f"dimensions), got d_in={d_in} and num_heads={num_heads}; pass d_head to choose "
                                 "the head size")
            d_head = d_in // num_heads
        d_head = check_int(d_head, "d_head", min_value=1)
        dtype = jnp.float32 if dtype is None else dtype
        self.wq, self.wk, self.wv, self.wo = _init_weights(key, d_in, num_heads * d_head, d_out, jnp.dtype(dtype))

    def pooled(self, x, pe=None, bias=None, mask=None, rope: bool = False) -> Array:
        """``g(X; E)`` before the readout."""
        return attention_mean_pool(self, x, pe, bias, mask, rope)

    def __call__(self, x, pe=None, bias=None, mask=None, rope: bool = False) -> Array:
        return self.pooled(x, pe, bias, mask, rope) @ self.wo


def _apply_batch(apply_fn, params, xs, E):
    return jax.vmap(lambda x: apply_fn(params, x, E))(xs)


@cites(SPREAD)
def equivariance_gap(apply_fn: Callable[[Any, Array, Array], Array], params: Any, x: Float[Array, "*b n d"],
                     E: Float[Array, "n d"], key, num_perms: int = 8) -> Float[Array, ""]:
    """Estimate the equivariance gap ``V(E) = E_{X,π} ‖f(πX; E) − f(X; E)‖²`` **[recommended]**.

    ``num_perms`` uniform random row permutations ``π`` of the tokens, the PE staying in place; the mean over the
    permutations and the sequences of ``x``. Zero for a constant PE ``E = 1bᵀ`` (the invariance lemma).

    Args:
      apply_fn: ``apply_fn(params, x, E)`` mapping one sequence ``(n, d)`` to a vector (e.g.
        :func:`attention_mean_pool`).
      params: the first argument of ``apply_fn``.
      x: float array, one sequence ``(n, d)`` or a batch ``(B, n, d)``.
      E: ``(n, d)`` finite float PE table.
      key: PRNG key of the permutations.
      num_perms: number of permutations (int ``≥ 1``).

    Returns:
      0-d float array.

    Raises:
      TypeError: ``x`` or ``E`` not floating; ``num_perms`` not an int.
      ValueError: ``x`` not 2-d or 3-d; ``E`` not of shape ``(n, d)`` or not finite; ``num_perms < 1``.

    Example:
      >>> import jax
      >>> from jaxlab.attention.pe_spread import (MeanPoolAttention, attention_mean_pool, equivariance_gap,
      ...                                         sinusoidal_pe)
      >>> att = MeanPoolAttention(8, 4, key=jax.random.key(0))
      >>> x = jax.random.normal(jax.random.key(1), (4, 5, 8))
      >>> gap = equivariance_gap(attention_mean_pool, att, x, sinusoidal_pe(5, 8), jax.random.key(2), num_perms=4)
      >>> gap.shape
      ()
    """
    xs = as_array(x, "x", ndim=(2, 3))
    xs = xs[None] if xs.ndim == 2 else xs
    E = as_array(E, "E", ndim=2, shape=xs.shape[1:], finite=True)
    num_perms = check_int(num_perms, "num_perms", min_value=1)
    base = _apply_batch(apply_fn, params, xs, E)

    def one(k):
        perm = jax.random.permutation(k, xs.shape[1])
        return jnp.mean(jnp.sum((_apply_batch(apply_fn, params, xs[:, perm], E) - base) ** 2, axis=-1))

    return jnp.mean(jax.lax.map(one, jax.random.split(key, num_perms)))


@cites(SPREAD)
def invariant_deviation(apply_fn: Callable[[Any, Array, Array], Array], params: Any,
                        xs: Float[Array, "b n d"], E: Float[Array, "n d"]) -> Float[Array, ""]:
    """Estimate the invariant deviation ``D(E) = E_X ‖f(X; E) − f(X; 1ēᵀ)‖²`` over a sample **[recommended]**.

    The distance of ``f`` from its permutation-invariant version with the constant PE ``1ēᵀ``; the abstract of
    "Positional spread of additive positional encodings" (2026) bounds it by ``C ‖Ẽ‖_F²``, so
    ``D(1ēᵀ + tẼ)`` grows as ``t²`` for small ``t``.

    Args:
      apply_fn: ``apply_fn(params, x, E)`` mapping one sequence ``(n, d)`` to a vector.
      params: the first argument of ``apply_fn``.
      xs: ``(B, n, d)`` float array of sequences.
      E: ``(n, d)`` finite float PE table.

    Returns:
      0-d float array.

    Raises:
      TypeError: ``xs`` or ``E`` not floating.
      ValueError: ``xs`` not 3-d; ``E`` not of shape ``(n, d)`` or not finite.
    """
    xs = as_array(xs, "xs", ndim=3)
    E = as_array(E, "E", ndim=2, shape=xs.shape[1:], finite=True)
    flat = jnp.broadcast_to(jnp.mean(E, axis=0, keepdims=True), E.shape)
    diff = _apply_batch(apply_fn, params, xs, E) - _apply_batch(apply_fn, params, xs, flat)
    return jnp.mean(jnp.sum(diff**2, axis=-1))

