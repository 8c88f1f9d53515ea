r"""A tiny decoder-only transformer with a preallocated KV cache, the stand-in LLM of the TokenRouter experiments.

Randomly initialised (no weights are ever downloaded; S = 2 layers, d 64, 2 heads;
L = 6 layers, d 256, 4 heads; vocabulary 256, max length 256). Pre-norm blocks with RMSNorm, learned absolute
positions, GELU MLP of width 4d, untied read-out; the layer weights are stacked and run by ``lax.scan`` (compile
time independent of depth)::

    x_0 = E[tok] + P[pos],   x += Attn(rms(x) g_1),   x += W_2 gelu(W_1 rms(x) g_2),   h = rms(x) g_f,   logits = h U

Attention of the token at position ``p`` reads the cached keys/values at positions ``0..p`` of its own row.
:func:`decode_step` processes ``n`` new tokens per row starting at ``pos`` (one decode token, or a KV catch-up
chunk), writes their keys/values into the cache and returns the logits and final hidden state of each row's last
valid token. :func:`forward` is the cache-free causal pass over whole sequences (the reference).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool, Float, Int, Key
from jaxlab.core.validation import as_array, check_int, is_concrete
from jaxlab.serving.token_router.papers import TOKEN_ROUTER

__all__ = ["KVCache", "TinyDecoder", "decode_step", "decode_step_flat", "forward", "init_cache"]


class KVCache(NamedTuple):
    """Preallocated keys and values of a :class:`TinyDecoder`.

    Attributes:
      k: ``(layers, batch, max_len, heads, d_head)`` float array of keys.
      v: ``(layers, batch, max_len, heads, d_head)`` float array of values.
    """

    k: Float[Array, "layers batch max_len heads dh"]
    v: Float[Array, "layers batch max_len heads dh"]


class TinyDecoder(eqx.Module):
    """Randomly initialised decoder-only transformer (module docstring; **[chosen]** stand-in LLM).

    Weights: ``E, P ~ N(0, 1)``, ``W_qkv, W_o, W_1 ~ N(0, 1/d)``, ``W_2 ~ N(0, 1/(4d))``, ``U ~ N(0, 1/d)``,
    RMSNorm gains 1; per-layer weights stacked along a leading ``layers`` axis. ``max_len`` and ``vocab`` are
    properties read from the embeddings.

    Args:
      key: PRNG key of the initialisation.
      num_layers: number of blocks, an int ``>= 1``.
      d_model: width ``d``, an int divisible by ``num_heads``.
      num_heads: attention heads, an int ``>= 1``.
      vocab: vocabulary size ``V``, an int ``>= 2``.
      max_len: longest sequence ``T``, an int ``>= 1``.
      dtype: parameter dtype (default float32).

    Attributes:
      embed: ``(V, d)`` token embedding ``E``.
      pos_embed: ``(T, d)`` learned absolute positions ``P``.
      g1: ``(layers, d)`` RMSNorm gains before attention.
      wqkv: ``(layers, d, 3d)`` query, key and value projections.
      wo: ``(layers, d, d)`` attention output projection.
      g2: ``(layers, d)`` RMSNorm gains before the MLP.
      w1: ``(layers, d, 4d)`` MLP input weights.
      w2: ``(layers, 4d, d)`` MLP output weights.
      gf: ``(d,)`` final RMSNorm gain.
      unembed: ``(d, V)`` read-out ``U``.
      num_heads: attention heads (static).

    Raises:
      TypeError: an integer argument is not an int.
      ValueError: an integer argument below its minimum, or ``d_model`` not divisible by ``num_heads``.
    """

    embed: Float[Array, "V d"]
    pos_embed: Float[Array, "T d"]
    g1: Float[Array, "layers d"]
    wqkv: Float[Array, "layers d 3d"]
    wo: Float[Array, "layers d d"]
    g2: Float[Array, "layers d"]
    w1: Float[Array, "layers d f"]
    w2: Float[Array, "layers f d"]
    gf: Float[Array, " d"]
    unembed: Float[Array, "d V"]
    num_heads: int = eqx.field(static=True)

    def __init__(self, key: Key, *, num_layers: int = 2, d_model: int = 64, num_heads: int = 2, vocab: int = 256,
                 max_len: int = 256, dtype=jnp.float32):
        num_layers = check_int(num_layers, "num_layers", min_value=1)
        d = check_int(d_model, "d_model", min_value=1)
        self.num_heads = check_int(num_heads, "num_heads", min_value=1)
        if d % num_heads:
            raise ValueError(f"d_model must be divisible by num_heads, got d_model={d}, num_heads={num_heads}")
        vocab = check_int(vocab, "vocab", min_value=2)
        max_len = check_int(max_len, "max_len", min_value=1)
        ks = jax.random.split(key, 7)
        dt = jnp.dtype(dtype)

        def normal(k, shape, scale):
            return scale * jax.random.normal(k, shape, dt)

        self.embed = normal(ks[0], (vocab, d), 1.0)
        self.pos_embed = normal(ks[1], (max_len, d), 1.0)
        self.g1 = jnp.ones((num_layers, d), dt)
        self.wqkv = normal(ks[2], (num_layers, d, 3 * d), 1 / math.sqrt(d))
        self.wo = normal(ks[3], (num_layers, d, d), 1 / math.sqrt(d))
        self.g2 = jnp.ones((num_layers, d), dt)
        self.w1 = normal(ks[4], (num_layers, d, 4 * d), 1 / math.sqrt(d))
        self.w2 = normal(ks[5], (num_layers, 4 * d, d), 1 / math.sqrt(4 * d))
        self.gf = jnp.ones((d,), dt)
        self.unembed = normal(ks[6], (d, vocab), 1 / math.sqrt(d))

    @property
    def max_len(self) -> int:
        return self.pos_embed.shape[0]

    @property
    def vocab(self) -> int:
        return self.embed.shape[0]

    def init_cache(self, batch: int, max_len: int | None = None) -> KVCache:
        """Zero KV cache for ``batch`` rows of ``max_len`` positions (default: the model's max length)."""
        return init_cache(self, batch, max_len)


@cites(TOKEN_ROUTER)
def init_cache(model: TinyDecoder, batch: int, max_len: int | None = None) -> KVCache:
    """Zero :class:`KVCache` of ``batch`` rows and ``max_len`` positions for ``model``.

    Args:
      model: the :class:`TinyDecoder`.
      batch: rows (requests or slots), an int ``>= 1``.
      max_len: positions per row, an int in ``[1, model.max_len]``; default ``model.max_len``.

    Returns:
      The :class:`KVCache`, arrays of shape ``(layers, batch, max_len, heads, d // heads)`` in the model's dtype.

    Raises:
      TypeError: ``batch`` or ``max_len`` is not an int.
      ValueError: ``batch < 1`` or ``max_len`` outside ``[1, model.max_len]``.
    """
    batch = check_int(batch, "batch", min_value=1)
    max_len = model.max_len if max_len is None else check_int(max_len, "max_len", min_value=1,
                                                              max_value=model.max_len)
    layers, d = model.wqkv.shape[0], model.wqkv.shape[1]
    shape = (layers, batch, max_len, model.num_heads, d // model.num_heads)
    return KVCache(jnp.zeros(shape, model.embed.dtype), jnp.zeros(shape, model.embed.dtype))


def _rms(x, g):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def _mlp(x, g2, w1, w2):
    return x + jax.nn.gelu(_rms(x, g2) @ w1) @ w2


def _heads(x, h):
    return x.reshape(*x.shape[:-1], h, x.shape[-1] // h)


def _flat_core(model, cache, slots, tokens, posn, valid, ctx):
    """A packed step: token ``t`` of row ``slots[t]`` at position ``posn[t]`` (ignored where ``valid`` is False).

    Keys/values of the valid tokens are written first, then token ``t`` attends to positions ``0..posn[t]`` of its
    row (so chunks of one row see each other causally). Rows are selected by a one-hot matrix product rather than a
    gather (XLA's CPU gather is slow). Returns the final hidden state of every token and the cache."""
    h = model.num_heads
    nslots, max_len = cache.k.shape[1], cache.k.shape[2]
    x = model.embed[tokens] + model.pos_embed[jnp.clip(posn, 0, model.max_len - 1)]
    write_pos = jnp.where(valid, posn, max_len)  # out of range: dropped by the scatter
    keymask = jnp.arange(ctx)[None, :] <= posn[:, None]  # (T, ctx)
    onehot = (slots[:, None] == jnp.arange(nslots)[None, :]).astype(x.dtype)  # (T, slots)

    def layer(carry, params):
        x, kall, vall, i = carry
        g1, wqkv, wo, g2, w1, w2 = params
        q, k, v = (_heads(z, h) for z in jnp.split(_rms(x, g1) @ wqkv, 3, axis=-1))  # (T, h, dh)
        kall = kall.at[i, slots, write_pos].set(k, mode="drop")
        vall = vall.at[i, slots, write_pos].set(v, mode="drop")
        krow = jnp.einsum("ts,sche->tche", onehot, jax.lax.dynamic_index_in_dim(kall, i, 0, False)[:, :ctx])
        vrow = jnp.einsum("ts,sche->tche", onehot, jax.lax.dynamic_index_in_dim(vall, i, 0, False)[:, :ctx])
        s = jnp.einsum("the,tche->thc", q, krow) / math.sqrt(q.shape[-1])
        s = jnp.where(keymask[:, None], s, -jnp.inf)
        a = jnp.einsum("thc,tche->the", jax.nn.softmax(s, axis=-1), vrow).reshape(x.shape)
        return (_mlp(x + a @ wo, g2, w1, w2), kall, vall, i + 1), None

    xs = (model.g1, model.wqkv, model.wo, model.g2, model.w1, model.w2)
    (x, kc, vc, _), _ = jax.lax.scan(layer, (x, cache.k, cache.v, 0), xs)
    return _rms(x, model.gf), KVCache(kc, vc)


def _check_step(model, cache, tokens, pos, lengths):
    tokens = as_array(tokens, "tokens", ndim=2, kind="int")
    b, n = tokens.shape
    pos = as_array(pos, "pos", ndim=1, shape=(b,), kind="int")
    lengths = (jnp.full((b,), n, jnp.int32) if lengths is None
               else as_array(lengths, "lengths", ndim=1, shape=(b,), kind="int"))
    if is_concrete((pos, lengths)):
        if bool(jnp.any(lengths < 1)) or bool(jnp.any(lengths > n)):
            raise ValueError(f"lengths must lie in [1, {n}] (tokens per row), got {lengths}")
        if bool(jnp.any(pos < 0)) or bool(jnp.any(pos + lengths > cache.k.shape[2])):
            raise ValueError(f"pos + lengths must lie in [1, {cache.k.shape[2]}] (the cache length), got pos {pos}")
    return tokens, pos, lengths


@cites(TOKEN_ROUTER)
def decode_step(model: TinyDecoder, cache: KVCache, tokens: Int[Array, "b n"], pos: Int[Array, " b"],
                lengths: Int[Array, " b"] | None = None):
    """Process ``tokens[r, :lengths[r]]`` at positions ``pos[r] + i`` of row ``r`` of ``cache`` (a decode token
    or a KV catch-up chunk; padding columns are neither cached nor read). jit/vmap-compatible.

    Args:
      model: the :class:`TinyDecoder`.
      cache: the :class:`KVCache`, with ``b`` rows.
      tokens: ``(b, n)`` int array of token ids.
      pos: ``(b,)`` int array, the position of each row's first token.
      lengths: optional ``(b,)`` int array of valid tokens per row, in ``[1, n]`` (default ``n``).

    Returns:
      A tuple ``(logits, hidden, cache)``: ``(b, V)`` logits and ``(b, d)`` final hidden states of each row's
      last valid token, and the updated :class:`KVCache`.

    Raises:
      TypeError: ``tokens``, ``pos`` or ``lengths`` is not an int array.
      ValueError: wrong ranks or shapes, a cache with other than ``b`` rows, or (concrete inputs) ``lengths``
        outside ``[1, n]`` or ``pos + lengths`` beyond the cache length.
    """
    tokens, pos, lengths = _check_step(model, cache, tokens, pos, lengths)
    if cache.k.shape[1] != tokens.shape[0]:
        raise ValueError(f"cache has {cache.k.shape[1]} rows but tokens has {tokens.shape[0]}")
    b, n = tokens.shape
    posn = pos[:, None] + jnp.arange(n)[None, :]
    valid = jnp.arange(n)[None, :] < lengths[:, None]
    slots = jnp.repeat(jnp.arange(b), n)
    hid, cache = _flat_core(model, cache, slots, tokens.reshape(-1), posn.reshape(-1), valid.reshape(-1),
                            cache.k.shape[2])
    last = hid.reshape(b, n, -1)[jnp.arange(b), lengths - 1]
    return last @ model.unembed, last, cache


@cites(TOKEN_ROUTER)
def decode_step_flat(model: TinyDecoder, cache: KVCache, slots: Int[Array, " T"], tokens: Int[Array, " T"],
                     posn: Int[Array, " T"], valid: Bool[Array, " T"], ctx: int):
    """Packed (ragged) step on a cache shared by many requests (a subserver's cache).

    Token ``t`` belongs to row ``slots[t]`` at position ``posn[t]``; the keys and values of the valid tokens are
    written first, then token ``t`` attends to positions ``0..posn[t]`` of its row (so chunks of one row see
    each other causally). Compute grows with the number of tokens only, so rows with different catch-up lengths
    pad nothing. Inputs are not validated (a hot path).

    Args:
      model: the :class:`TinyDecoder`.
      cache: the :class:`KVCache` (rows = request slots).
      slots: ``(T,)`` int array, the cache row of each token.
      tokens: ``(T,)`` int array of token ids.
      posn: ``(T,)`` int array, the position of each token.
      valid: ``(T,)`` bool array, false for padding (neither cached nor meaningful).
      ctx: static int, positions attended to; every valid ``posn < ctx <= cache length``.

    Returns:
      A tuple ``(logits, hidden, cache)``: ``(T, V)`` logits and ``(T, d)`` final hidden states of every token,
      and the updated :class:`KVCache`.
    """
    hid, cache = _flat_core(model, cache, slots, tokens, posn, valid, ctx)
    return hid @ model.unembed, hid, cache


@cites(TOKEN_ROUTER)
def forward(model: TinyDecoder, tokens: Int[Array, " T"]):
    """Cache-free causal forward pass of one sequence (the reference of the cached steps).

    Args:
      model: the :class:`TinyDecoder`.
      tokens: ``(T,)`` int array of token ids, ``T <= model.max_len``.

    Returns:
      A tuple ``(logits, hidden)``: ``(T, V)`` logits and ``(T, d)`` final hidden states at every position.

    Raises:
      TypeError: ``tokens`` is not an int array.
      ValueError: ``tokens`` is not 1-d or longer than ``model.max_len``.
    """
    tokens = as_array(tokens, "tokens", ndim=1, kind="int")
    t = tokens.shape[0]
    if t > model.max_len:
        raise ValueError(f"tokens has length {t}, longer than the model's max_len {model.max_len}")
    h = model.num_heads
    x = model.embed[tokens] + model.pos_embed[:t]
    causal = jnp.tril(jnp.ones((t, t), bool))

    def layer(x, p):
        g1, wqkv, wo, g2, w1, w2 = p
        q, k, v = (_heads(z, h) for z in jnp.split(_rms(x, g1) @ wqkv, 3, axis=-1))
        s = jnp.where(causal[None], jnp.einsum("qhe,khe->hqk", q, k) / math.sqrt(q.shape[-1]), -jnp.inf)
        a = jnp.einsum("hqk,khe->qhe", jax.nn.softmax(s, axis=-1), v).reshape(t, -1)
        return _mlp(x + a @ wo, g2, w1, w2), None

    x, _ = jax.lax.scan(layer, x, (model.g1, model.wqkv, model.wo, model.g2, model.w1, model.w2))
    hid = _rms(x, model.gf)
    return hid @ model.unembed, hid
