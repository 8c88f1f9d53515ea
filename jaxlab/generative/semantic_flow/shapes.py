r"""SemanticFlow's toy customization task: data, metrics and the training of a tiny MM-DiT on it.

Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification" (2026),
known only through its abstract; the task is a **[chosen]** reconstruction (the method is in
:mod:`jaxlab.generative.semantic_flow.guidance`).

Toy customization task **[chosen]** (sized for a 2-core CPU): 16x16x3 images in [-1, 1] on a grey (0) background; a
"concept" is a 5x5 two-colour texture (horizontal/vertical stripes or checker, colours uniform in [-1, 1]^3, so every
test concept is an unseen combination) that no word describes; prompts ``<concept> POS [and COLOR SHAPE POS2]`` (8
tokens), the reference shows the texture at the centre anchor, the target at anchor POS of a 3x3 grid (5x5 windows at
offsets 1, 6, 11); second objects are 5x5 squares, disks or crosses in one of 6 palette colours. Metrics: prompt
alignment (concept window at POS is the best match among the 9 anchors, and the second object's foreground mean colour
is nearest to COLOR) and concept fidelity ``1 - MSE(window at POS, texture)/4``.
"""

from __future__ import annotations

import functools
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import run
from jaxlab.core.train import train_init
from jaxlab.core.validation import check_in_range, check_int
from jaxlab.generative.semantic_flow import rectified_flow as rf

__all__ = [
    "ANCHORS",
    "PALETTE",
    "anchor_token_mask",
    "anchor_windows",
    "concept_fidelity",
    "make_shapes_batch",
    "prompt_alignment",
    "train_tiny_mmdit",
]

# toy vocabulary
PAD, CONCEPT, AND = 0, 1, 2
COLOR0, SHAPE0, POS0 = 3, 9, 12
VOCAB = POS0 + 9
PALETTE = np.array([[1, -1, -1], [-1, 1, -1], [-1, -1, 1], [1, 1, -1], [-1, 1, 1], [1, -1, 1]], np.float32)
ANCHORS = (1, 6, 11)
WIN = 5
SIDE = 16


def _shape_masks() -> np.ndarray:
    r, c = np.mgrid[0:WIN, 0:WIN]
    square = np.ones((WIN, WIN))
    disk = ((r - 2) ** 2 + (c - 2) ** 2 <= 5).astype(float)
    cross = ((r == 2) | (c == 2)).astype(float)
    return np.stack([square, disk, cross]).astype(np.float32)


def _texture(key):
    k1, k2 = jax.random.split(key)
    kind = jax.random.randint(k1, (), 0, 3)
    r, c = jnp.mgrid[0:WIN, 0:WIN]
    pat = jnp.stack([r % 2, c % 2, (r + c) % 2])[kind].astype(bool)
    cols = jax.random.uniform(k2, (2, 3), jnp.float32, minval=-1.0, maxval=1.0)
    return jnp.where(pat[..., None], cols[0], cols[1])


def _place(img, patch, pos):
    r, c = jnp.asarray(ANCHORS)[pos // 3], jnp.asarray(ANCHORS)[pos % 3]
    return jax.lax.dynamic_update_slice(img, patch, (r, c, 0))


def _one_example(key, concept: bool, p_second: float):
    k = jax.random.split(key, 8)
    pos = jax.random.randint(k[0], (), 0, 9)
    pos2 = (pos + 1 + jax.random.randint(k[1], (), 0, 8)) % 9
    has2 = jax.random.uniform(k[2]) < p_second
    color2, shape2 = jax.random.randint(k[3], (), 0, 6), jax.random.randint(k[4], (), 0, 3)
    masks = jnp.asarray(_shape_masks())
    pal = jnp.asarray(PALETTE)
    if concept:
        tex = _texture(k[5])
    else:
        c1, s1 = jax.random.randint(k[6], (), 0, 6), jax.random.randint(k[7], (), 0, 3)
        tex = masks[s1][..., None] * pal[c1]
    obj2 = masks[shape2][..., None] * pal[color2]
    blank = jnp.zeros((SIDE, SIDE, 3), jnp.float32)
    img = _place(blank, tex, pos)
    img = jnp.where(has2, _place(img, obj2, pos2), img)
    ref = _place(blank, tex, 4) if concept else blank
    head = [CONCEPT, POS0 + pos] if concept else [COLOR0 + c1, SHAPE0 + s1, POS0 + pos]
    tail = [AND, COLOR0 + color2, SHAPE0 + shape2, POS0 + pos2]
    pad = [PAD] * 8

    def words(ws):
        return jnp.stack([jnp.asarray(w, jnp.int32) for w in (ws + pad)[:8]])

    tokens = jnp.where(has2, words(head + tail), words(head))
    meta = {"pos": pos, "has2": has2, "color2": color2, "shape2": shape2, "pos2": pos2, "texture": tex}
    return img, tokens, ref, meta


def make_shapes_batch(key, n: int, *, concept: bool = True, p_second: float = 0.5) -> dict:
    """``n`` examples of the toy customization task **[chosen]** (module docstring).

    With ``concept=True`` the first object is an undescribed 5x5 texture shown in the reference; with
    ``concept=False`` it is a described ``COLOR SHAPE`` and the reference is blank. Each example has a second
    object with probability ``p_second``. jit-compiled once per ``(n, concept, p_second)``.

    Args:
      key: PRNG key.
      n: int >= 1, the number of examples.
      concept: concept prompts (True) or described-shape prompts (False).
      p_second: float in [0, 1], the probability of a second object.

    Returns:
      A dict: ``"images"`` ``(n, 16, 16, 3)`` float32 in [-1, 1], ``"tokens"`` ``(n, 8)`` int32, ``"ref"``
      ``(n, 16, 16, 3)`` float32, ``"pos"`` ``(n,)`` int32 (the anchor of the first object) and ``"meta"``, a dict
      of ``(n,)`` arrays ``pos``, ``has2``, ``color2``, ``shape2``, ``pos2`` and the ``(n, 5, 5, 3)`` ``texture``.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1`` or ``p_second`` outside [0, 1].
    """
    n = check_int(n, "n", min_value=1)
    check_in_range(p_second, "p_second", 0.0, 1.0)
    return _shapes_batch(key, n, bool(concept), float(p_second))


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _shapes_batch(key, n: int, concept: bool, p_second: float) -> dict:
    img, tok, ref, meta = jax.vmap(lambda k: _one_example(k, concept, p_second))(jax.random.split(key, n))
    return {"images": img, "tokens": tok, "ref": ref, "pos": meta["pos"], "meta": meta}


def anchor_token_mask(pos, patch: int = 4):
    """The image tokens of a 16x16 image (``patch x patch`` tokens) that overlap the 5x5 window of anchor ``pos``: a
    2x2 block for patch 4, so a uniformly random token lands in it with probability 4/16.

    Args:
      pos: int scalar in ``[0, 9)``, the anchor (row-major over the 3x3 grid; not checked).
      patch: int, the patch side (dividing 16).

    Returns:
      ``(Nx,)`` bool array, ``Nx = (16 / patch)^2``.
    """
    g = SIDE // patch
    lo = jnp.arange(g) * patch
    a = jnp.asarray(ANCHORS)
    rows = (lo < a[pos // 3] + WIN) & (lo + patch > a[pos // 3])
    cols = (lo < a[pos % 3] + WIN) & (lo + patch > a[pos % 3])
    return (rows[:, None] & cols[None, :]).reshape(-1)


def anchor_windows(images):
    """The nine 5x5 anchor windows (offsets 1, 6, 11 per axis, row-major) of a batch of 16x16 images.

    Args:
      images: ``(B, 16, 16, 3)`` array.

    Returns:
      ``(B, 9, 5, 5, 3)`` array.

    Raises:
      ValueError: ``images`` not of shape ``(B, 16, 16, 3)``.
    """
    images = jnp.asarray(images)
    if images.ndim != 4 or images.shape[1:] != (SIDE, SIDE, 3):
        raise ValueError(f"images must have shape (B, {SIDE}, {SIDE}, 3), got {images.shape}")
    return jnp.stack([images[:, r:r + WIN, c:c + WIN] for r in ANCHORS for c in ANCHORS], axis=1)


def concept_fidelity(images, ref, pos, *, metric: str = "mse"):
    """Concept fidelity **[chosen]** per image: ``1 - MSE(window at POS, reference texture) / 4`` (``metric="mse"``; 1
    for a perfect copy, 0 at the largest error on [-1, 1]) or the cosine similarity of the two flattened windows
    (``"cosine"``). The texture is the reference's centre window.

    Args:
      images: ``(B, 16, 16, 3)`` float array of generated images.
      ref: ``(B, 16, 16, 3)`` float array of references.
      pos: ``(B,)`` int array of anchors of the concept.
      metric: ``"mse"`` or ``"cosine"``.

    Returns:
      ``(B,)`` float array.

    Raises:
      ValueError: ``images`` or ``ref`` of the wrong shape, or an unknown ``metric``.
    """
    win = jnp.take_along_axis(anchor_windows(images), jnp.asarray(pos)[:, None, None, None, None], 1)[:, 0]
    tex = anchor_windows(ref)[:, 4]
    a, b = win.reshape(win.shape[0], -1), tex.reshape(tex.shape[0], -1)
    if metric == "mse":
        return 1 - jnp.mean((a - b) ** 2, axis=1) / 4
    if metric == "cosine":
        return jnp.sum(a * b, 1) / jnp.maximum(jnp.linalg.norm(a, axis=1) * jnp.linalg.norm(b, axis=1), 1e-12)
    raise ValueError(f"metric must be 'mse' or 'cosine', got {metric!r}")


def prompt_alignment(images, meta):
    """Prompt alignment **[chosen]** per prompt: 1.0 when every clause holds, else 0.0.

    The concept window at ``POS`` has the smallest MSE to the texture among the 9 anchors, and (when there is a
    second object) its foreground mean colour at ``POS2`` (pixels of norm > 0.5) is nearest to ``COLOR`` among the
    palette colours.

    Args:
      images: ``(B, 16, 16, 3)`` float array of generated images.
      meta: the ``"meta"`` dict of :func:`make_shapes_batch` for these prompts.

    Returns:
      ``(B,)`` float32 array of 0.0 / 1.0.

    Raises:
      ValueError: ``images`` of the wrong shape.
    """
    wins = anchor_windows(images)
    b = wins.shape[0]
    mse = jnp.mean((wins - meta["texture"][:, None]) ** 2, axis=(2, 3, 4))
    ok1 = jnp.argmin(mse, axis=1) == meta["pos"]
    w2 = jnp.take_along_axis(wins, meta["pos2"][:, None, None, None, None], 1)[:, 0].reshape(b, -1, 3)
    fg = (jnp.linalg.norm(w2, axis=-1) > 0.5).astype(w2.dtype)
    mean_c = jnp.sum(w2 * fg[..., None], 1) / jnp.maximum(jnp.sum(fg, 1), 1.0)[:, None]
    nearest = jnp.argmin(jnp.sum((mean_c[:, None] - jnp.asarray(PALETTE)) ** 2, -1), axis=1)
    ok2 = (jnp.sum(fg, 1) > 0) & (nearest == meta["color2"])
    return (ok1 & (~meta["has2"] | ok2)).astype(jnp.float32)


@renamed_kwargs(n_steps="num_steps", batch="batch_size", lr="learning_rate")
def train_tiny_mmdit(key, num_steps: int = 3000, batch_size: int = 128, *, model: rf.TinyMMDiT | None = None,
                     learning_rate: float = 1e-3, p_drop_ref: float = 0.3, p_drop_text: float = 0.1,
                     sigma_kind: str = "logit_normal", return_losses: bool = False, **model_kwargs: Any):
    """Train a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` on the toy customization task with the RF loss.

    :func:`~jaxlab.generative.semantic_flow.rf_loss` with ``sigma_kind`` noise levels (default logit-normal),
    :func:`~jaxlab.generative.semantic_flow.rf_optimizer` (global-norm clipping 1.0, AdamW with weight decay 1e-4);
    one ``lax.scan`` over the steps (:func:`jaxlab.core.run` of ``rf_train_step``). Each batch is half concept
    prompts and half described-shape prompts (:func:`make_shapes_batch`); the reference is zeroed with probability
    ``p_drop_ref`` and the prompt with ``p_drop_text`` (for classifier-free guidance) **[chosen]**.

    Args:
      key: PRNG key (model initialisation and training).
      num_steps: int >= 1, the optimiser steps (``n_steps`` is its deprecated name).
      batch_size: int >= 2, examples per step (``batch`` is its deprecated name).
      model: a model to start from (default: a fresh ``TinyMMDiT(vocab=24, **model_kwargs)``).
      learning_rate: AdamW's learning rate (``lr`` is its deprecated name).
      p_drop_ref: float in [0, 1], the probability of dropping the reference.
      p_drop_text: float in [0, 1], the probability of dropping the prompt.
      sigma_kind: the training noise-level distribution, ``"logit_normal"`` or ``"uniform"``.
      return_losses: also return the per-step losses.
      **model_kwargs: keyword arguments of the fresh :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` (ignored
        when ``model`` is given; ``vocab`` is fixed to 24).

    Returns:
      The trained model, or ``(model, losses)`` with ``losses`` of shape ``(num_steps,)``.

    Raises:
      TypeError: ``num_steps`` or ``batch_size`` is not an int.
      ValueError: ``num_steps < 1`` or ``batch_size < 2``; an unknown ``sigma_kind``.
    """
    n_steps = check_int(num_steps, "num_steps", min_value=1)
    batch = check_int(batch_size, "batch_size", min_value=2)
    k_model, k_train = jax.random.split(key)
    model = rf.TinyMMDiT(k_model, vocab=24, **model_kwargs) if model is None else model
    params, static = eqx.partition(model, eqx.is_inexact_array)
    opt = rf.rf_optimizer(learning_rate)

    def loss_fn(m, k, data):
        return rf.rf_loss(m, k, data["images"], (data["tokens"], data["ref"]), sigma_kind=sigma_kind)

    step = rf.rf_train_step(opt, static, loss_fn)

    def body(k, state):
        k1, k2, k3, k4, k5 = jax.random.split(k, 5)
        half = batch // 2
        a = make_shapes_batch(k1, half)
        b = make_shapes_batch(k2, batch - half, concept=False)
        data = jax.tree.map(lambda u, w: jnp.concatenate([u, w]), a, b)
        keep_ref = jax.random.uniform(k3, (batch, 1, 1, 1)) >= p_drop_ref
        keep_txt = jax.random.uniform(k4, (batch, 1)) >= p_drop_text
        data = {**data, "ref": data["ref"] * keep_ref, "tokens": data["tokens"] * keep_txt}
        return step(k5, state, data)

    state0 = train_init(params, opt)
    state, trace = jax.jit(lambda s, k: run(body, s, k, n_steps))(state0, k_train)
    losses = trace.infos.loss
    trained = eqx.combine(state.params, static)
    return (trained, losses) if return_losses else trained
