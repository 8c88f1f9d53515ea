"""MM-DiT joint attention and a tiny three-stream MM-DiT (Esser et al., "Scaling Rectified Flow Transformers for
High-Resolution Image Synthesis", arXiv:2403.03206), the network half of :mod:`.rectified_flow`.

Joint attention: every stream ``s`` (text ``c``, image ``x``, optionally reference ``r``) has its own Q/K/V
projections; attention is computed once over the concatenation,

    O = softmax([Q_c; Q_x] [K_c; K_x]^T / sqrt(d_h)) [V_c; V_x],

softmax over all ``Nc + Nx`` keys, and ``O`` is split back to the streams. An MM-DiT block gives every stream its
own adaLN modulation ``(shift1, scale1, gate1, shift2, scale2, gate2) = W_s SiLU(y)`` with
``y = emb(sigma) + pooled_text``, its own output projection and MLP:

    h <- h + gate1 * W_o Attn(LN(h) (1 + scale1) + shift1),   h <- h + gate2 * MLP(LN(h) (1 + scale2) + shift2).

Read-only probe tokens (SemanticFlow, :mod:`jaxlab.generative.semantic_flow`) ride along: each probe is processed
with the weights of the stream it was copied from, attends to all real keys and to the probes, but no real query
sees a probe key. The real tokens' attention is computed exactly as without probes (the probes' attention is a
separate softmax), so the velocity is unchanged bit for bit. The probe response map of block ``b``, head ``h``:
``R_p = softmax_i(q_p . k_{x,i} / sqrt(d_h))`` over the image tokens only.

TinyMMDiT defaults **[chosen]** (sized for a 2-core CPU): 16x16x3 images, patch 4 (Nx = 16 tokens of 48 values), 8
prompt tokens from a 24-word vocabulary (pooled = mean of the non-pad embeddings), a clean reference image
patchified into its own stream (Nr = 16, own positional embedding), width 64, 4 heads, 3 double-stream blocks,
learned positional embeddings, adaLN-zero initialisation (DiT; ``zero_init=False`` gives a random, non-trivial
network for tests and timing), no positional rotation (so joint attention is permutation equivariant within a stream
apart from the learned positional embeddings).

The token projections are one bilinear primitive (see ``_dense``) whose transpose rules choose the orientation
of the weight-gradient product; every transformation (grad, jvp, vmap in either order, remat) equals plain
autodiff of ``x @ W^T`` (tested).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxlab.core.validation import check_int

__all__ = ["MMDiTBlock", "TinyMMDiT", "joint_attention", "patchify", "unpatchify"]


def _check_heads(name: str, arrays: Sequence[Any]) -> None:
    for a in arrays:
        if jnp.ndim(a) != 3:
            raise ValueError(f"{name} must be 3-dimensional (tokens, heads, head_dim), got shape {jnp.shape(a)}")
        if not jnp.issubdtype(jnp.result_type(a), jnp.floating):
            raise ValueError(f"{name} must have a floating dtype, got {jnp.result_type(a)}")
    h, dh = arrays[0].shape[1:]
    for a in arrays[1:]:
        if a.shape[1:] != (h, dh):
            raise ValueError(f"{name}: mismatched heads/head dims between streams, got {(h, dh)} and {a.shape[1:]}")


def _attend(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_h)) v per head; q (Nq,H,dh), k/v (Nk,H,dh); mask (Nq,Nk) True = visible."""
    logits = jnp.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        logits = jnp.where(mask[None], logits, -jnp.inf)
    p = jax.nn.softmax(logits, axis=-1)
    return jnp.einsum("hqk,khd->qhd", p, v), p


def joint_attention(q_c, k_c, v_c, q_x, k_x, v_x, *, key_mask=None):
    """MM-DiT joint attention of a text stream (``Nc`` tokens) and an image stream (``Nx`` tokens).

    Paper: P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis",
    arXiv:2403.03206.

    ``O = softmax([Q_c; Q_x] [K_c; K_x]^T / sqrt(d_h)) [V_c; V_x]`` per head, over all ``N = Nc + Nx`` keys, split
    back to the streams. With ``Nc = 0`` it is ordinary self-attention of the image stream. A query whose keys are
    all masked gets NaN.

    Args:
      q_c: ``(Nc, H, d_h)`` float array, the text queries.
      k_c: ``(Nc, H, d_h)`` float array, the text keys.
      v_c: ``(Nc, H, d_h)`` float array, the text values.
      q_x: ``(Nx, H, d_h)`` float array, the image queries.
      k_x: ``(Nx, H, d_h)`` float array, the image keys.
      v_x: ``(Nx, H, d_h)`` float array, the image values.
      key_mask: optional bool array, ``(N,)`` (keys visible to every query) or ``(N, N)`` (query x key); True =
        visible.

    Returns:
      ``(o_c, o_x, probs)``: ``(Nc, H, d_h)`` and ``(Nx, H, d_h)`` float outputs and the ``(H, N, N)`` attention
      probabilities.

    Raises:
      ValueError: an input not 3-d or not floating, mismatched heads or head dimensions, different token counts
        within a stream, or a ``key_mask`` that is not bool of shape ``(N,)`` or ``(N, N)``.
    """
    _check_heads("joint_attention inputs", [q_c, k_c, v_c, q_x, k_x, v_x])
    nc, nx = q_c.shape[0], q_x.shape[0]
    if k_c.shape[0] != nc or v_c.shape[0] != nc or k_x.shape[0] != nx or v_x.shape[0] != nx:
        raise ValueError("joint_attention: q, k, v of a stream must have the same number of tokens")
    n = nc + nx
    if key_mask is not None:
        key_mask = jnp.asarray(key_mask)
        if key_mask.dtype != jnp.bool_ or key_mask.shape not in ((n,), (n, n)):
            raise ValueError(f"key_mask must be a boolean array of shape ({n},) or ({n}, {n}), got "
                             f"{key_mask.dtype} {key_mask.shape}")
        key_mask = jnp.broadcast_to(key_mask, (n, n))
    o, p = _attend(jnp.concatenate([q_c, q_x]), jnp.concatenate([k_c, k_x]), jnp.concatenate([v_c, v_x]), key_mask)
    return o[:nc], o[nc:], p


def patchify(img, patch: int):
    """Split an image into non-overlapping ``patch x patch`` tokens, row-major over the patches.

    Args:
      img: ``(H, W, C)`` array.
      patch: int, the patch side (dividing ``H`` and ``W``).

    Returns:
      ``(H/p W/p, p p C)`` array of ``img``'s dtype.

    Raises:
      ValueError: ``H`` or ``W`` not divisible by ``patch``.
    """
    h, w, c = img.shape
    if h % patch or w % patch:
        raise ValueError(f"image side must be divisible by the patch size {patch}, got image shape {img.shape}")
    t = img.reshape(h // patch, patch, w // patch, patch, c).transpose(0, 2, 1, 3, 4)
    return t.reshape((h // patch) * (w // patch), patch * patch * c)


def unpatchify(tokens, patch: int, side: int, channels: int):
    """The inverse of :func:`patchify` for a square ``side x side`` image.

    Args:
      tokens: ``((side/p)^2, p p channels)`` array.
      patch: int, the patch side ``p``.
      side: int, the image side.
      channels: int, the number of channels.

    Returns:
      ``(side, side, channels)`` array of ``tokens``' dtype.
    """
    g = side // patch
    t = tokens.reshape(g, g, patch, patch, channels).transpose(0, 2, 1, 3, 4)
    return t.reshape(side, side, channels)


def _linear(key, n_in: int, n_out: int, zero: bool = False) -> eqx.nn.Linear:
    lin = eqx.nn.Linear(n_in, n_out, key=key)
    if zero:
        lin = eqx.tree_at(lambda m: (m.weight, m.bias), lin, (jnp.zeros_like(lin.weight), jnp.zeros_like(lin.bias)))
    return lin


def _matmul_wt_impl(x, w):
    return x @ w.T


def _x_cotangent(ct, x, w):
    return ct @ w


def _w_cotangent(ct, x, w):
    lead = tuple(range(x.ndim - 1))
    return jax.lax.dot_general(x, ct, ((lead, lead), ((), ()))).T  # (x^T g)^T: activations transposed, not g


def _matmul_wt_batch(args, dims):
    (x, w), (bx, bw) = args, dims
    if bw is None:  # a shared weight: the batch is one more row dimension
        return _matmul_wt_p.bind(jnp.moveaxis(x, bx, 0), w), 0
    w = jnp.moveaxis(w, bw, 0)
    x = jnp.moveaxis(x, bx, 0) if bx is not None else jnp.broadcast_to(x, (w.shape[0], *x.shape))
    return jax.vmap(_matmul_wt_impl)(x, w), 0


_matmul_wt_p = Primitive("jaxlab_token_matmul")
_matmul_wt_p.def_impl(_matmul_wt_impl)
_matmul_wt_p.def_abstract_eval(
    lambda x, w: jax.core.ShapedArray((*x.shape[:-1], w.shape[0]), jnp.result_type(x.dtype, w.dtype)))
mlir.register_lowering(_matmul_wt_p, mlir.lower_fun(_matmul_wt_impl, multiple_results=False))
ad.defbilinear(_matmul_wt_p, _x_cotangent, _w_cotangent)
batching.primitive_batchers[_matmul_wt_p] = _matmul_wt_batch


def _token_matmul(x, w):
    """``x @ w.T`` for token states ``x (..., in)`` and a shared weight ``w (out, in)``, as a bilinear primitive
    whose weight cotangent is ``(x^T g)^T`` contracted over every leading dimension. Under ``vmap`` with an
    unbatched weight the batch is just one more leading dimension, so ``grad(vmap(...))`` takes the weight
    gradient as one matrix product over all ``B N`` tokens; per-sample weights fall back to a vmapped product.
    Forward and reverse mode, and their compositions, are the bilinear rules of ``x @ w.T``."""
    return _matmul_wt_p.bind(x, w)


def _dense(lin: eqx.nn.Linear, x):
    """``x @ W^T + b``. Token states (``x`` of rank 2) go through :func:`_token_matmul`. JAX transposes a dense
    layer into ``g^T x``, with the cotangent ``g`` as the operand that XLA's CPU matmul needs transposed; XLA
    then fuses the whole cotangent chain (layer-norm backward, residual sums) into that transposing copy,
    evaluated in column order and once per consumer (40 % of the training step's gradient in the profile).
    With the activations as the transposed operand the cotangent is computed once, in row order: RF training
    step at batch 64, depth 3, 2 cores 0.10 s -> 0.06 s. Per-sample vectors (adaLN, time embedding) keep plain
    autodiff, where the batch contraction under ``vmap`` is already one matrix product (routing them through
    the primitive measured 30 % slower)."""
    if jnp.ndim(x) == 2:
        return _token_matmul(x, lin.weight) + lin.bias
    return x @ lin.weight.T + lin.bias


def _layer_norm(h, eps: float = 1e-6):
    mu = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean((h - mu) ** 2, axis=-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(var + eps)


def _rms_norm(h, w, eps: float = 1e-6):
    return h * jax.lax.rsqrt(jnp.mean(h * h, axis=-1, keepdims=True) + eps) * w


class _Stream(eqx.Module):
    """One stream's weights inside an MM-DiT block: adaLN modulation, QKV, output projection, MLP."""

    mod: eqx.nn.Linear
    qkv: eqx.nn.Linear
    out: eqx.nn.Linear
    fc1: eqx.nn.Linear
    fc2: eqx.nn.Linear
    q_norm: jax.Array | None
    k_norm: jax.Array | None

    def __init__(self, key, width: int, heads: int, mlp_ratio: int, qk_norm: bool, zero_init: bool = True):
        k = jax.random.split(key, 5)
        self.mod = _linear(k[0], width, 6 * width, zero=zero_init)
        self.qkv = _linear(k[1], width, 3 * width)
        self.out = _linear(k[2], width, width)
        self.fc1 = _linear(k[3], width, mlp_ratio * width)
        self.fc2 = _linear(k[4], mlp_ratio * width, width)
        dh = width // heads
        self.q_norm = jnp.ones(dh) if qk_norm else None
        self.k_norm = jnp.ones(dh) if qk_norm else None

    def pre(self, h, y, heads: int):
        m = jnp.split(_dense(self.mod, jax.nn.silu(y)), 6, axis=-1)
        hn = _layer_norm(h) * (1 + m[1]) + m[0]
        q, k, v = jnp.split(_dense(self.qkv, hn), 3, axis=-1)
        q, k, v = (a.reshape(a.shape[0], heads, -1) for a in (q, k, v))
        if self.q_norm is not None:
            q, k = _rms_norm(q, self.q_norm), _rms_norm(k, self.k_norm)
        return q, k, v, m

    def post(self, h, o, m):
        h = h + m[2] * _dense(self.out, o.reshape(o.shape[0], -1))
        z = _layer_norm(h) * (1 + m[4]) + m[3]
        return h + m[5] * _dense(self.fc2, jax.nn.gelu(_dense(self.fc1, z)))


class MMDiTBlock(eqx.Module):
    """A double-stream MM-DiT block over ``n_streams`` token streams: joint attention with per-stream weights.

    Paper: P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis",
    arXiv:2403.03206 (module docstring).

    Every stream ``s`` has its own adaLN modulation ``(shift1, scale1, gate1, shift2, scale2, gate2) = W_s SiLU(y)``,
    QKV and output projections and GELU MLP; ``h <- h + gate1 W_o Attn(LN(h)(1 + scale1) + shift1)``,
    ``h <- h + gate2 MLP(LN(h)(1 + scale2) + shift2)``.

    Args:
      key: PRNG key (initialisation).
      width: int, the token width (divisible by ``heads``).
      heads: int, the number of attention heads.
      n_streams: int, the number of streams.
      mlp_ratio: int, the MLP hidden width as a multiple of ``width``.
      qk_norm: RMS-normalise queries and keys per head (learned scale).
      zero_init: adaLN-zero initialisation (the modulation starts at 0, so the block starts as the identity).

    Attributes:
      streams: the per-stream weights, one per stream.
      heads: int, the number of attention heads (static).

    Raises:
      ValueError: ``width`` not divisible by ``heads``.
    """

    streams: tuple[_Stream, ...]
    heads: int = eqx.field(static=True)

    def __init__(self, key, width: int = 64, heads: int = 4, n_streams: int = 2, mlp_ratio: int = 2,
                 qk_norm: bool = False, zero_init: bool = True):
        if width % heads:
            raise ValueError(f"width must be divisible by heads, got width={width}, heads={heads}")
        self.streams = tuple(_Stream(k, width, heads, mlp_ratio, qk_norm, zero_init)
                             for k in jax.random.split(key, n_streams))
        self.heads = heads

    def __call__(self, hs, y, probes=None, probe_stream=None, image_stream: int = 1):
        """Apply the block to the streams, with optional read-only probes.

        A probe ``p`` is processed with the weights of stream ``probe_stream[p]``; it attends to every real key and to
        the probes, and no real query sees a probe key, so the real outputs equal those without probes.

        Args:
          hs: tuple of ``(N_s, width)`` float arrays, the stream states.
          y: ``(width,)`` float array, the conditioning vector.
          probes: optional ``(P, width)`` float array of probe states.
          probe_stream: ``(P,)`` int array, the stream index of each probe (with ``probes``).
          image_stream: int, the index of the image stream (the keys of the probe responses).

        Returns:
          ``(hs, probes, responses)``: the new stream states, the new probe states and the ``(H, P, N_image)`` probe
          responses ``softmax_i(q_p . k_{image,i} / sqrt(d_h))`` (both None without probes).
        """
        pre = [s.pre(h, y, self.heads) for s, h in zip(self.streams, hs, strict=True)]
        sizes = [h.shape[0] for h in hs]
        q, k, v = (jnp.concatenate([p[j] for p in pre]) for j in range(3))
        o, _ = _attend(q, k, v)
        outs = jnp.split(o, list(itertools.accumulate(sizes))[:-1])
        new = tuple(s.post(h, oo, p[3]) for s, h, oo, p in zip(self.streams, hs, outs, pre, strict=True))
        if probes is None:
            return new, None, None
        # probes: computed with every stream's weights, the right one selected per probe (P is tiny).
        cand = [s.pre(probes, y, self.heads) for s in self.streams]

        def pick(j):
            return sum(jnp.where((probe_stream == si).reshape((-1,) + (1,) * (cand[0][j].ndim - 1)),
                                 cand[si][j], 0.0) for si in range(len(self.streams)))

        qp, kp, vp = pick(0), pick(1), pick(2)
        op, _ = _attend(qp, jnp.concatenate([k, kp]), jnp.concatenate([v, vp]))
        mods = [jnp.stack([c[3][i] for c in cand]) for i in range(6)]
        sel = [m[probe_stream] for m in mods]  # (P, width) per modulation chunk
        upd = [s.post(probes, op, sel) for s in self.streams]
        new_probes = sum(jnp.where((probe_stream == si)[:, None], upd[si], 0.0) for si in range(len(self.streams)))
        off = sum(sizes[:image_stream])
        k_img = k[off:off + sizes[image_stream]]
        resp = jax.nn.softmax(jnp.einsum("phd,ihd->hpi", qp, k_img) / math.sqrt(qp.shape[-1]), axis=-1)
        return new, new_probes, resp


def _sincos(sigma, dim: int):
    half = dim // 2
    freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half) / half)
    a = 1000.0 * sigma * freqs
    return jnp.concatenate([jnp.cos(a), jnp.sin(a)])


class TinyMMDiT(eqx.Module):
    """A tiny MM-DiT velocity model ``v_theta(x, sigma, cond)`` with text, image and (optional) reference streams.

    MM-DiT at toy size (module docstring). Paper: P. Esser et al., "Scaling Rectified Flow Transformers for
    High-Resolution Image Synthesis", arXiv:2403.03206.

    ``model(x, sigma, cond)``: ``x`` of shape ``(side, side, channels)``, scalar ``sigma``, ``cond`` the int tokens
    ``(text_len,)`` or, with ``use_ref``, ``(tokens, ref (side, side, channels))``; returns the velocity of ``x``'s
    shape. :meth:`forward` also carries read-only probes and can stop after ``n_blocks`` blocks. The conditioning
    vector is ``y = MLP(sincos(1000 sigma)) + W_pool mean(non-pad token embeddings)``.

    Args:
      key: PRNG key (initialisation).
      side: int >= 1, the image side (divisible by ``patch``).
      channels: int >= 1, the image channels.
      patch: int >= 1, the patch side.
      width: int >= 1, the token width.
      heads: int >= 1, the attention heads (dividing ``width``).
      depth: int >= 1, the number of MM-DiT blocks.
      vocab: int >= 1, the vocabulary size (token 0 is padding).
      text_len: int >= 1, the prompt length.
      use_ref: add a reference-image stream.
      mlp_ratio: int, the MLP width as a multiple of ``width``.
      qk_norm: RMS-normalise queries and keys.
      zero_init: adaLN-zero initialisation (``False``: a random, non-trivial network for tests and timing).

    Attributes:
      img_in: the image patch embedding ``p p C -> width``.
      ref_in: the reference patch embedding (None without ``use_ref``).
      tok_emb: ``(vocab, width)`` float array of token embeddings.
      pos_txt: ``(text_len, width)`` float array of text positions.
      pos_img: ``(Nx, width)`` float array of image positions.
      pos_ref: ``(Nx, width)`` float array of reference positions (None without ``use_ref``).
      t_mlp1: the first layer of the noise-level MLP.
      t_mlp2: the second layer of the noise-level MLP.
      pool: the projection of the pooled prompt embedding.
      blocks: the ``depth`` :class:`MMDiTBlock` s.
      final_mod: the final adaLN modulation ``width -> 2 width``.
      final: the output projection ``width -> p p C``.
      side: int, the image side (static).
      channels: int, the image channels (static).
      patch: int, the patch side (static).
      width: int, the token width (static).
      text_len: int, the prompt length (static).
      vocab: int, the vocabulary size (static).

    Raises:
      TypeError: an int argument that is not an int.
      ValueError: an int argument < 1, or ``side`` not divisible by ``patch``.
    """

    img_in: eqx.nn.Linear
    ref_in: eqx.nn.Linear | None
    tok_emb: jax.Array
    pos_txt: jax.Array
    pos_img: jax.Array
    pos_ref: jax.Array | None
    t_mlp1: eqx.nn.Linear
    t_mlp2: eqx.nn.Linear
    pool: eqx.nn.Linear
    blocks: tuple[MMDiTBlock, ...]
    final_mod: eqx.nn.Linear
    final: eqx.nn.Linear
    side: int = eqx.field(static=True)
    channels: int = eqx.field(static=True)
    patch: int = eqx.field(static=True)
    width: int = eqx.field(static=True)
    text_len: int = eqx.field(static=True)
    vocab: int = eqx.field(static=True)

    def __init__(self, key, *, side: int = 16, channels: int = 3, patch: int = 4, width: int = 64, heads: int = 4,
                 depth: int = 3, vocab: int = 24, text_len: int = 8, use_ref: bool = True, mlp_ratio: int = 2,
                 qk_norm: bool = False, zero_init: bool = True):
        for name, v in (("side", side), ("channels", channels), ("patch", patch), ("width", width),
                        ("heads", heads), ("depth", depth), ("vocab", vocab), ("text_len", text_len)):
            check_int(v, name, min_value=1)
        if side % patch:
            raise ValueError(f"side must be divisible by patch, got side={side}, patch={patch}")
        k = jax.random.split(key, 12)
        n_img, pdim = (side // patch) ** 2, patch * patch * channels
        self.img_in = _linear(k[0], pdim, width)
        self.ref_in = _linear(k[1], pdim, width) if use_ref else None
        self.tok_emb = 0.5 * jax.random.normal(k[2], (vocab, width))
        self.pos_txt = 0.5 * jax.random.normal(k[3], (text_len, width))
        self.pos_img = 0.5 * jax.random.normal(k[4], (n_img, width))
        self.pos_ref = 0.5 * jax.random.normal(k[5], (n_img, width)) if use_ref else None
        self.t_mlp1 = _linear(k[6], width, width)
        self.t_mlp2 = _linear(k[7], width, width)
        self.pool = _linear(k[8], width, width)
        self.blocks = tuple(MMDiTBlock(kb, width, heads, 3 if use_ref else 2, mlp_ratio, qk_norm, zero_init)
                            for kb in jax.random.split(k[9], depth))
        self.final_mod = _linear(k[10], width, 2 * width, zero=zero_init)
        self.final = _linear(k[11], width, pdim, zero=zero_init)
        self.side, self.channels, self.patch, self.width = side, channels, patch, width
        self.text_len, self.vocab = text_len, vocab

    @property
    def use_ref(self) -> bool:
        """Whether the model has a reference-image stream.

        Returns:
          bool.
        """
        return self.ref_in is not None

    @property
    def n_img(self) -> int:
        """The number of image tokens ``Nx = (side / patch)^2``.

        Returns:
          int.
        """
        return (self.side // self.patch) ** 2

    def _split_cond(self, cond):
        if self.use_ref:
            if not isinstance(cond, (tuple, list)) or len(cond) != 2:
                raise ValueError("cond must be a pair (tokens, ref) for a TinyMMDiT with a reference stream")
            tokens, ref = cond
        else:
            tokens, ref = cond, None
        if jnp.shape(tokens) != (self.text_len,) or not jnp.issubdtype(jnp.result_type(tokens), jnp.integer):
            raise ValueError(f"tokens must be an integer array of shape ({self.text_len},), got "
                             f"{jnp.result_type(tokens)} {jnp.shape(tokens)}")
        if ref is not None and jnp.shape(ref) != (self.side, self.side, self.channels):
            raise ValueError(f"ref must have shape {(self.side, self.side, self.channels)}, got {jnp.shape(ref)}")
        return tokens, ref

    def embed(self, x, sigma, tokens, ref=None):
        """Initial stream states and the conditioning vector.

        Args:
          x: ``(side, side, channels)`` float array, the noisy image.
          sigma: float scalar, the noise level.
          tokens: ``(text_len,)`` int array, the prompt.
          ref: ``(side, side, channels)`` float array, the reference image (with ``use_ref``).

        Returns:
          ``(hs, y)``: the tuple of ``(N_s, width)`` stream states (text, image[, reference]) and the ``(width,)``
          conditioning vector.

        Raises:
          ValueError: ``x`` of the wrong shape.
        """
        if jnp.shape(x) != (self.side, self.side, self.channels):
            raise ValueError(f"x must have shape {(self.side, self.side, self.channels)}, got {jnp.shape(x)}")
        tok = self.tok_emb[tokens]
        nonpad = (tokens != 0).astype(tok.dtype)[:, None]
        pooled = jnp.sum(tok * nonpad, axis=0) / jnp.maximum(jnp.sum(nonpad), 1.0)
        y = _dense(self.t_mlp2, jax.nn.silu(_dense(self.t_mlp1, _sincos(sigma, self.width)))) + _dense(self.pool,
                                                                                                     pooled)
        hs = [tok + self.pos_txt, _dense(self.img_in, patchify(x, self.patch)) + self.pos_img]
        if self.use_ref:
            hs.append(self.ref_token_states(ref))
        return tuple(hs), y

    def ref_token_states(self, ref):
        """Initial reference-stream states of a reference image (patch embedding plus reference positions).

        Args:
          ref: ``(side, side, channels)`` float array.

        Returns:
          ``(Nx, width)`` float array.
        """
        return _dense(self.ref_in, patchify(ref, self.patch)) + self.pos_ref

    def forward(self, x, sigma, cond, probes=None, probe_stream=None, n_blocks: int | None = None):
        """Run the model with optional read-only probes.

        Args:
          x: ``(side, side, channels)`` float array, the noisy image.
          sigma: float scalar, the noise level.
          cond: the int tokens ``(text_len,)``, or ``(tokens, ref)`` with ``use_ref``.
          probes: optional ``(P, width)`` float array of probe states.
          probe_stream: ``(P,)`` int array, the model stream of each probe (0 = text, 2 = reference).
          n_blocks: run only the first ``n_blocks`` blocks (None: all).

        Returns:
          ``(v, responses)``: the ``(side, side, channels)`` velocity (None when ``n_blocks`` < depth) and the
          ``(n_blocks, H, P, Nx)`` probe responses (None without probes).

        Raises:
          ValueError: ``cond`` of the wrong structure, tokens not ``(text_len,)`` ints, or ``x``/``ref`` of the wrong
            shape.
        """
        tokens, ref = self._split_cond(cond)
        hs, y = self.embed(x, sigma, tokens, ref)
        depth = len(self.blocks) if n_blocks is None else n_blocks
        resps = []
        for blk in self.blocks[:depth]:
            hs, probes, r = blk(hs, y, probes, probe_stream)
            resps.append(r)
        responses = jnp.stack(resps) if probes is not None else None
        if depth < len(self.blocks):
            return None, responses
        shift, scale = jnp.split(_dense(self.final_mod, jax.nn.silu(y)), 2)
        out = _dense(self.final, _layer_norm(hs[1]) * (1 + scale) + shift)
        return unpatchify(out, self.patch, self.side, self.channels), responses

    def __call__(self, x, sigma, cond):
        """The velocity ``v_theta(x, sigma, cond)`` (:meth:`forward` without probes).

        Args:
          x: ``(side, side, channels)`` float array, the noisy image.
          sigma: float scalar, the noise level.
          cond: the int tokens ``(text_len,)``, or ``(tokens, ref)`` with ``use_ref``.

        Returns:
          ``(side, side, channels)`` float array.

        Raises:
          ValueError: as :meth:`forward`.
        """
        return self.forward(x, sigma, cond)[0]
