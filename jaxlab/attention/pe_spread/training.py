r"""Spread-regularised training of attention classifiers on synthetic length-generalisation tasks.

Paper: "Positional spread of additive positional encodings" (2026; title, authors and arXiv id not retrieved;
tasks in the spirit of Kazemnejad et al., arXiv:2305.19466). Everything here is **[recommended]** (the paper's
settings are unknown):

* Tasks on tokens from ``{0..V-1}``: ``"majority"`` (the most frequent token; permutation invariant, low
  positional sensitivity), ``"position"`` (the token at absolute position ``k``; needs absolute position) and
  ``"needle"`` (retrieval in noise, the scaled-down passkey task: one needle token from the first half of the
  vocabulary hidden at a uniform position among noise tokens from the second half; the label is the needle).
  Training lengths are drawn uniformly from ``[n_min, n_max]`` and padded to ``n_max`` with a mask; test
  sequences are longer.
* Model :class:`PEClassifier`: token embedding, additive PE ``E`` (fixed, e.g. a sinusoidal table scaled by the
  spread knob, or learned), optional residual attention blocks, then softmax attention with mean pooling and a
  linear readout (:class:`jaxlab.attention.pe_spread.attention.MeanPoolAttention`); RoPE and ALiBi as alternatives.
* Objective ``L_task(θ, E) + λ S(E)/n_E`` (the spread penalty on the whole learned table of ``n_E`` rows),
  trained with an optax optimiser by the one trainer (:func:`jaxlab.core.train.trainer`):
  :func:`pe_classifier_algorithm` is its ``Algorithm(init, step)``, :func:`train` drives it with
  :func:`jaxlab.core.run`.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Bool, Int

from jaxlab.attention.pe_spread.attention import MeanPoolAttention, attention_heads
from jaxlab.attention.pe_spread.papers import NOPE, SPREAD
from jaxlab.attention.pe_spread.pe import alibi_bias, spread_penalty
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.train import TrainState, train_init, trainer
from jaxlab.core.validation import check_int, check_positive, is_concrete, value_check

__all__ = ["TASKS", "Block", "PEClassifier", "PEClassifierMetrics", "accuracy", "init", "make_step",
           "pe_classifier_algorithm", "sample_batch", "train"]

TASKS = ("majority", "position", "needle")


class Block(eqx.Module):
    """Pre-norm residual block **[recommended]**: ``z ← z + Attn(LN z) W_o``, then ``z ← z + MLP(LN z)``.

    ``Attn`` is the per-token multi-head attention :func:`~jaxlab.attention.pe_spread.attention.attention_heads` with
    the weights of a :class:`MeanPoolAttention` ``d → d``; the MLP is ``d → 2d → d`` with GELU. Call it as
    ``block(z, bias, mask, rope)`` on ``z`` ``(n, d)``.

    Args:
      d: model dimension (divisible by ``num_heads``).
      num_heads: number of attention heads.
      key: PRNG key of the weights.

    Attributes:
      attn: the attention weights (:class:`MeanPoolAttention`, readout ``W_o`` ``(d, d)``).
      mlp: the ``eqx.nn.MLP`` ``d → 2d → d``.
      ln1: the ``eqx.nn.LayerNorm`` before the attention.
      ln2: the ``eqx.nn.LayerNorm`` before the MLP.
    """

    attn: MeanPoolAttention
    mlp: eqx.nn.MLP
    ln1: eqx.nn.LayerNorm
    ln2: eqx.nn.LayerNorm

    def __init__(self, d: int, num_heads: int, *, key):
        ka, km = jax.random.split(key)
        self.attn = MeanPoolAttention(d, d, num_heads=num_heads, key=ka)
        self.mlp = eqx.nn.MLP(d, d, 2 * d, 1, activation=jax.nn.gelu, key=km)
        self.ln1 = eqx.nn.LayerNorm(d)
        self.ln2 = eqx.nn.LayerNorm(d)

    def __call__(self, z, bias, mask, rope: bool):
        h = jax.vmap(self.ln1)(z)
        z = z + attention_heads(self.attn, h, None, bias, mask, rope) @ self.attn.wo
        return z + jax.vmap(self.mlp)(jax.vmap(self.ln2)(z))


@cites(SPREAD, NOPE)
class PEClassifier(eqx.Module):
    """Token embedding + additive PE rows ``[offset, offset + n)`` + blocks + mean-pooled attention readout.

    ``logits = W_oᵀ g(Z; ·)`` with ``Z = embed[tokens] + pe[offset : offset + n]`` passed through the residual blocks
    (:class:`Block`) and pooled by :class:`MeanPoolAttention` (RoPE and ALiBi act on the scores of every attention layer
    instead). The design is **[recommended]** (the paper's models are unknown: only the abstract of "Positional spread
    of additive positional encodings" was available). Call it as
    ``model(tokens (n,) int, mask (n,) bool | None = None, offset=0) -> (num_classes,)`` logits. A table with
    ``n_E < n`` rows fails at trace time; an ``offset`` with ``offset + n > n_E`` is clamped by ``lax.dynamic_slice``
    (the last ``n`` rows are used).

    Args:
      key: PRNG key of the weights.
      vocab: vocabulary size ``V`` (int ``≥ 1``).
      d: model dimension (divisible by ``num_heads``).
      num_classes: number of output classes.
      num_heads: attention heads per layer.
      num_layers: number of residual blocks (:class:`Block`) before the readout (int ``≥ 0``).
      pe: ``None`` (NoPE, RoPE or ALiBi arms) or a ``(n_E, d)`` float PE table.
      pe_trainable: train the table (else its gradient is stopped).
      rope: apply RoPE in every attention layer.
      alibi: add the bidirectional ALiBi bias in every attention layer.

    Attributes:
      embed: ``(V, d)`` token embedding, initialised ``N(0, 1)``.
      pe: the PE table ``(n_E, d)`` or ``None``.
      blocks: tuple of ``num_layers`` :class:`Block` modules.
      head: the :class:`MeanPoolAttention` readout ``d → num_classes``.
      pe_trainable: whether the table is trained (static).
      rope: RoPE on (static).
      alibi: ALiBi on (static).

    Raises:
      TypeError: ``vocab``, ``num_layers`` or a size is not an int.
      ValueError: ``pe`` not of shape ``(n_E, d)``; ``vocab < 1``; ``num_layers < 0``; ``d`` not divisible by
        ``num_heads``.
    """

    embed: Array
    pe: Array | None
    blocks: tuple[Block, ...]
    head: MeanPoolAttention
    pe_trainable: bool = eqx.field(static=True)
    rope: bool = eqx.field(static=True)
    alibi: bool = eqx.field(static=True)

    def __init__(self, key, *, vocab: int, d: int, num_classes: int, num_heads: int = 1, num_layers: int = 0,
                 pe: Array | None = None, pe_trainable: bool = False, rope: bool = False, alibi: bool = False):
        vocab = check_int(vocab, "vocab", min_value=1)
        num_layers = check_int(num_layers, "num_layers", min_value=0)
        if pe is not None and pe.shape[1:] != (d,):
            raise ValueError(f"pe must have shape (n_E, {d}), got shape {pe.shape}")
        ke, kh, *kb = jax.random.split(key, 2 + num_layers)
        self.embed = jax.random.normal(ke, (vocab, d))
        self.pe = pe
        self.blocks = tuple(Block(d, num_heads, key=k) for k in kb)
        self.head = MeanPoolAttention(d, num_classes, num_heads=num_heads, key=kh)
        self.pe_trainable, self.rope, self.alibi = pe_trainable, rope, alibi

    def __call__(self, tokens: Int[Array, " n"], mask: Bool[Array, " n"] | None = None, offset=0) -> Array:
        n = tokens.shape[0]
        z = self.embed[tokens]
        if self.pe is not None:
            table = self.pe if self.pe_trainable else jax.lax.stop_gradient(self.pe)
            z = z + jax.lax.dynamic_slice_in_dim(table, offset, n)
        bias = alibi_bias(n, self.head.num_heads, dtype=z.dtype) if self.alibi else None
        for blk in self.blocks:
            z = blk(z, bias, mask, self.rope)
        return self.head(z, None, bias, mask, self.rope)


@renamed_kwargs(batch="batch_size")
def sample_batch(key, task: str | int | Array, batch_size: int, n_min: int, n_max: int, vocab: int, k: int = 3,
                 p_plant: float = 0.25):
    """A padded batch of a synthetic task **[recommended]**, lengths uniform in ``[n_min, n_max]``.

    ``"majority"``: one token is planted with probability ``p_plant`` per position (the rest uniform) and the label is
    the most frequent valid token (ties to the smaller id). ``"position"``: uniform tokens, the label is the token at
    position ``k``. ``"needle"``: noise tokens uniform in ``[V//2, V)``, one needle uniform in ``[0, V//2)`` at a
    uniform valid position; the label is the needle (a scaled-down passkey retrieval, after Kazemnejad et al.,
    arXiv:2305.19466).

    ``task`` may also be an integer index into :data:`TASKS`, possibly traced: then every task's batch is drawn from the
    same key and the index selects one (``lax.switch``), so one compiled training step serves all tasks (e.g. ``vmap``
    over tasks).

    Args:
      key: PRNG key.
      task: a name in :data:`TASKS` or a scalar integer index into it.
      batch_size: number of sequences ``B`` (int ``≥ 1``).
      n_min: shortest length (int ``≥ 1``).
      n_max: longest length, also the padded length (int ``≥ n_min``).
      vocab: vocabulary size ``V`` (int ``≥ 2``).
      k: the read-out position of ``"position"`` (int in ``[0, n_min)``).
      p_plant: per-position planting probability of ``"majority"`` (a float in ``[0, 1]``, not checked).

    Returns:
      A tuple ``(tokens, mask, labels)``: ``(B, n_max)`` int array of tokens, ``(B, n_max)`` bool array (True on
      the valid prefix) and ``(B,)`` int array of labels.

    Raises:
      TypeError: a size is not an int.
      ValueError: an unknown task name; an index that is not a scalar integer or is out of range (under ``jit``:
        at run time); ``n_min`` not in ``[1, n_max]``; ``vocab < 2``; ``k`` not in ``[0, n_min)``.
    """
    if isinstance(task, str):
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    else:
        task = jnp.asarray(task)
        if task.shape != () or not jnp.issubdtype(task.dtype, jnp.integer):
            raise ValueError(f"task must be a name in {TASKS} or a scalar integer index, got {task!r}")
        # lax.switch would clamp an index out of range: reject it, eagerly or at run time
        task = value_check(task, lambda t: (t < 0) | (t >= len(TASKS)),
                           f"task index must be in [0, {len(TASKS)})" + (f", got {task}" if is_concrete(task) else ""))
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    n_max = check_int(n_max, "n_max", min_value=1)
    n_min = check_int(n_min, "n_min", min_value=1, max_value=n_max)
    vocab = check_int(vocab, "vocab", min_value=2)
    k = check_int(k, "k", min_value=0, max_value=n_min - 1)
    if not isinstance(task, str):
        return jax.lax.switch(task, [lambda kk, t=t: _sample(kk, t, batch_size, n_min, n_max, vocab, k, p_plant)
                                     for t in TASKS], key)
    return _sample(key, task, batch_size, n_min, n_max, vocab, k, p_plant)


def _sample(key, task: str, batch: int, n_min: int, n_max: int, vocab: int, k: int, p_plant: float):
    kl, kt, kc, kp = jax.random.split(key, 4)
    length = jax.random.randint(kl, (batch, 1), n_min, n_max + 1)
    mask = jnp.arange(n_max)[None, :] < length
    tokens = jax.random.randint(kt, (batch, n_max), 0, vocab)
    if task == "position":
        return tokens, mask, tokens[:, k]
    if task == "needle":
        half = vocab // 2
        needle = jax.random.randint(kc, (batch,), 0, half)
        where = jax.random.randint(kp, (batch, 1), 0, length)
        noise = half + jax.random.randint(kt, (batch, n_max), 0, vocab - half)
        return jnp.where(jnp.arange(n_max)[None, :] == where, needle[:, None], noise), mask, needle
    planted = jax.random.randint(kc, (batch, 1), 0, vocab)
    tokens = jnp.where(jax.random.uniform(kp, (batch, n_max)) < p_plant, planted, tokens)
    counts = jnp.sum(jax.nn.one_hot(tokens, vocab) * mask[..., None], axis=1)
    return tokens, mask, jnp.argmax(counts, axis=-1)


class PEClassifierMetrics(NamedTuple):
    """Metrics of one training step on a batch (the ``aux`` of :class:`jaxlab.core.train.TrainInfo`).

    Attributes:
      task_loss: mean softmax cross-entropy ``L_task`` of the batch.
      penalty: the spread penalty ``λ S(E)/n_E`` of a trainable table (0 for a fixed or absent one).
      accuracy: fraction of the batch classified correctly.
    """

    task_loss: Array
    penalty: Array
    accuracy: Array


def _logits(model: PEClassifier, tokens, mask):
    return jax.vmap(model)(tokens, mask)


@cites(SPREAD)
def pe_classifier_algorithm(model: PEClassifier, optimizer: optax.GradientTransformation, *, task: str | Array,
                            lam=0.0, batch_size: int = 64, n_min: int = 8, n_max: int = 32, vocab: int = 16,
                            k: int = 3) -> Algorithm:
    """Spread-regularised training of ``model`` as an :class:`~jaxlab.core.Algorithm` (the one trainer).

    The loss of the parameters ``θ`` (the model's arrays; the static parts are closed over) on a batch is
    ``L_task(θ, E) + λ S(E)/n_E``: the mean softmax cross-entropy plus :func:`spread_penalty` on the whole table (only
    for a trainable table), minimised by ``optimizer`` through :func:`jaxlab.core.train.trainer`. The objective is
    **[recommended]** (only the abstract of "Positional spread of additive positional encodings" was available; it
    proposes regularising the spread).

    Args:
      model: the :class:`PEClassifier` to train (its arrays are the initial parameters).
      optimizer: any optax optimizer.
      task: a name in :data:`TASKS` or an integer index into it (may be traced, see :func:`sample_batch`).
      lam: spread-penalty weight ``λ ≥ 0`` (may be traced).
      batch_size: sequences per step (static int).
      n_min: shortest training length (static int ``≥ 1``).
      n_max: longest training length and the padded length (static int ``≥ n_min``).
      vocab: vocabulary size ``V`` of the task (static int ``≥ 2``).
      k: the read-out position of the ``"position"`` task (static int ``< n_min``).

    Returns:
      ``Algorithm(init, step)``: ``init(model) -> TrainState`` over the model's arrays, and
      ``step(key, state, batch=None) -> (TrainState, TrainInfo)`` with ``TrainInfo.aux`` a
      :class:`PEClassifierMetrics`; without ``batch`` the step draws a fresh batch of the task from ``key``,
      otherwise ``batch = (tokens, mask, labels)`` as :func:`sample_batch` returns it.

    Raises:
      ValueError: ``lam`` negative or not finite. The task arguments are checked by :func:`sample_batch` when
        the first step is traced.

    Example:
      >>> import jax, optax
      >>> from jaxlab.attention.pe_spread import PEClassifier, learned_pe_init, pe_classifier_algorithm
      >>> pe = learned_pe_init(jax.random.key(0), 8, 8)
      >>> model = PEClassifier(jax.random.key(1), vocab=4, d=8, num_classes=4, pe=pe, pe_trainable=True)
      >>> algo = pe_classifier_algorithm(model, optax.adam(1e-2), task="majority", lam=0.1, batch_size=4,
      ...                                n_min=4, n_max=8, vocab=4)
      >>> state, info = jax.jit(algo.step)(jax.random.key(2), algo.init())
      >>> info.aux.penalty.shape
      ()
    """
    static = eqx.filter(model, eqx.is_array, inverse=True)
    lam = check_positive(lam, "lam", strict=False)

    def loss_fn(params, key, batch):
        tokens, mask, labels = (sample_batch(key, task, batch_size, n_min, n_max, vocab, k) if batch is None
                                else batch)
        m = eqx.combine(params, static)
        logits = _logits(m, tokens, mask)
        ce = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))
        pen = (spread_penalty(m.pe, lam) if (m.pe is not None and m.pe_trainable)
               else jnp.zeros((), logits.dtype))
        acc = jnp.mean(jnp.argmax(logits, axis=-1) == labels, dtype=logits.dtype)  # bool means are float32
        return ce + pen, PEClassifierMetrics(ce, pen, acc)

    base = trainer(loss_fn, optimizer, has_aux=True)

    def init(model: PEClassifier = model) -> TrainState:
        return base.init(eqx.filter(model, eqx.is_array))

    return Algorithm(init, base.step)


def init(model: PEClassifier, optimizer: optax.GradientTransformation) -> TrainState:
    """Initial :class:`jaxlab.core.train.TrainState` of a model: its arrays and the optimiser state.

    Args:
      model: the :class:`PEClassifier`.
      optimizer: any optax optimizer.

    Returns:
      ``TrainState(params, optimizer.init(params), 0)`` with ``params`` the model's arrays.
    """
    return train_init(eqx.filter(model, eqx.is_array), optimizer)


@cites(SPREAD)
@renamed_kwargs(batch="batch_size")
def make_step(model: PEClassifier, optimizer: optax.GradientTransformation, *, task: str | Array, lam=0.0,
              batch_size: int = 64, n_min: int = 8, n_max: int = 32, vocab: int = 16, k: int = 3):
    """The training step of :func:`pe_classifier_algorithm`: one optimiser step on a fresh batch of the task.

    Args:
      model: the :class:`PEClassifier` (its static parts are closed over).
      optimizer: any optax optimizer.
      task: a name in :data:`TASKS` or an integer index into it (may be traced, see :func:`sample_batch`).
      lam: spread-penalty weight ``λ ≥ 0`` (may be traced).
      batch_size: sequences per step (static int).
      n_min: shortest training length (static int ``≥ 1``).
      n_max: longest training length and the padded length (static int ``≥ n_min``).
      vocab: vocabulary size ``V`` of the task (static int ``≥ 2``).
      k: the read-out position of the ``"position"`` task (static int ``< n_min``).

    Returns:
      ``step(key, state, batch=None) -> (TrainState, TrainInfo)``, the ``step`` of
      :func:`pe_classifier_algorithm`.

    Raises:
      ValueError: as :func:`pe_classifier_algorithm`.
    """
    return pe_classifier_algorithm(model, optimizer, task=task, lam=lam, batch_size=batch_size, n_min=n_min,
                                   n_max=n_max, vocab=vocab, k=k).step


@cites(SPREAD)
@renamed_kwargs(batch="batch_size")
def train(key, model: PEClassifier, optimizer: optax.GradientTransformation, num_steps: int, *, thin: int = 1,
          **task_kwargs) -> tuple[PEClassifier, RunTrace]:
    """Train ``model`` for ``num_steps`` steps of :func:`pe_classifier_algorithm` with :func:`jaxlab.core.run`.

    Args:
      key: PRNG key, split into one key per step (each step draws its batch).
      model: the :class:`PEClassifier` to train.
      optimizer: any optax optimizer.
      num_steps: number of steps (static int).
      thin: record the info every ``thin`` steps (``num_steps`` must be a multiple of it).
      **task_kwargs: ``task`` (required), ``lam``, ``batch_size``, ``n_min``, ``n_max``, ``vocab``, ``k`` of
        :func:`pe_classifier_algorithm` (old name ``batch`` for ``batch_size``).

    Returns:
      A tuple ``(model, trace)``: the trained :class:`PEClassifier` and the :class:`jaxlab.core.RunTrace` whose
      ``infos`` is the thinned :class:`jaxlab.core.train.TrainInfo` (``infos.aux`` a
      :class:`PEClassifierMetrics`), with a leading axis ``num_steps // thin``.

    Raises:
      TypeError: as :func:`jaxlab.core.run`; ``task`` missing.
      ValueError: as :func:`pe_classifier_algorithm` and :func:`jaxlab.core.run`.

    Example:
      >>> import jax, optax
      >>> from jaxlab.attention.pe_spread import PEClassifier, train
      >>> model = PEClassifier(jax.random.key(0), vocab=4, d=8, num_classes=4)
      >>> model, trace = train(jax.random.key(1), model, optax.adam(1e-2), 10, task="majority", batch_size=4,
      ...                      n_min=4, n_max=8, vocab=4)
      >>> trace.infos.loss.shape
      (10,)
    """
    algo = pe_classifier_algorithm(model, optimizer, **task_kwargs)
    final, trace = run(algo.step, algo.init(model), key, num_steps, thin=thin)
    return eqx.combine(final.params, eqx.filter(model, eqx.is_array, inverse=True)), trace


@cites(SPREAD)
def accuracy(model: PEClassifier, key, *, task: str | Array, n: int, num: int = 512, vocab: int = 16,
             k: int = 3) -> Array:
    """Accuracy of ``model`` on ``num`` fresh sequences of exactly length ``n`` (no padding).

    Longer ``n`` than the training lengths measures length generalisation.

    Args:
      model: a :class:`PEClassifier` (a PE table needs at least ``n`` rows).
      key: PRNG key of the sequences.
      task: a name in :data:`TASKS` or an integer index into it.
      n: the test length (int ``≥ 1``).
      num: number of sequences.
      vocab: vocabulary size ``V`` of the task (int ``≥ 2``).
      k: the read-out position of ``"position"`` (int ``< n``).

    Returns:
      0-d float array, the fraction classified correctly.

    Raises:
      TypeError: as :func:`sample_batch`.
      ValueError: as :func:`sample_batch`.
    """
    tokens, mask, labels = sample_batch(key, task, num, n, n, vocab, k)
    return jnp.mean(jnp.argmax(_logits(model, tokens, mask), axis=-1) == labels)


def _example(key):
    model = PEClassifier(key, vocab=4, d=4, num_classes=4)
    algo = pe_classifier_algorithm(model, optax.sgd(0.1), task="majority", batch_size=4, n_min=4, n_max=6, vocab=4)
    return algo, algo.init(model), None


register_algorithm("pe_classifier_training", pe_classifier_algorithm, _example, area="pe_spread")
