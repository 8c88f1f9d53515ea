r"""A small convolutional DSN network (equinox), its optax training step and its energy bookkeeping.

Architecture (the reference MS-ResNet stem and block order, reduced to two convolutions for a small-scale
experiment)::

    x -> conv3x3 -> BN -> DSN -> conv3x3 (stride s) -> BN -> DSN -> linear -> mean over T

A static image is encoded once by the first convolution and BN and the result repeated over the T steps (no
neuron before the first conv); an event input ``(T, C, H, W)`` is convolved step by step. BatchNorm
(``eqx.nn.BatchNorm``, batch statistics in training) normalises over batch, time and space, as SpikingJelly's
multi-step BN does. The loss is cross-entropy with label smoothing (0.1 in the reference configs) on the
time-averaged logits.

``dormant=False`` builds the plain LIF network (same layers, ``D = 1``).

Energy (see :mod:`jaxlab.snn.energy`): static input -> ``E_MAC`` x the first conv's MACs x T; event input -> the
first conv is synaptic (``E_AC`` x SOPs with the first DSN layer's gates); then ``E_AC`` x SOPs of conv 2
(dormant targets of the second DSN layer skipped) and of the readout (no gate on the readout).

Training is :func:`train_algorithm`, the shared trainer (:mod:`jaxlab.core.train`, optax) wrapped so that the
BatchNorm statistics (``eqx.nn.State``) are threaded through the steps; no randomness is used in a step.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core import Algorithm, register_algorithm, run
from jaxlab.core.citations import cites
from jaxlab.core.train import TrainState, make_train_step, train_init
from jaxlab.core.types import Array, Float, Int, Key
from jaxlab.core.validation import as_array, check_in_range, check_int
from jaxlab.snn.energy import energy_pj, sop_conv, sop_dense
from jaxlab.snn.neuron import DSNParams, check_params
from jaxlab.snn.papers import DSN
from jaxlab.snn.scan import dsn_scan

__all__ = [
    "DSNConvNet",
    "DSNTrainInfo",
    "DSNTrainState",
    "SpikeTrace",
    "apply",
    "energy_report",
    "evaluate",
    "fit",
    "make_model",
    "train_algorithm",
    "trainable",
    "trained_model",
]


class SpikeTrace(NamedTuple):
    """Per-layer spikes, gates and post-reset potentials of a forward pass of :class:`DSNConvNet`.

    From :func:`apply` every array is float ``(T, B, C_l, H_l, W_l)`` (time first; layer 1 at the input resolution,
    layer 2 after the stride); from a call on one sample, ``(T, C_l, H_l, W_l)``.

    Attributes:
      s1: spikes ``S`` of the first DSN layer.
      d1: dormancy gates ``D`` of the first DSN layer.
      v1: post-reset potentials ``V`` of the first DSN layer.
      s2: spikes of the second DSN layer.
      d2: gates of the second DSN layer.
      v2: potentials of the second DSN layer.
    """

    s1: Array
    d1: Array
    v1: Array
    s2: Array
    d2: Array
    v2: Array


class DSNConvNet(eqx.Module):
    """conv → BN → DSN → conv → BN → DSN → linear, mean over ``T``: a small convolutional DSN network (equinox).

    The reference MS-ResNet stem and block order reduced to two 3×3 convolutions **[chosen]** for a small-scale
    experiment (see the module docstring). Call it on one sample inside a ``vmap`` with ``axis_name="batch"`` (or use
    :func:`apply`): ``model(x, state, *, inference=False) -> (logits (K,), state, SpikeTrace)``, ``x`` an image
    ``(C, H, W)`` or events ``(T, C, H, W)``. Build it with :func:`make_model`, which also returns the BatchNorm state.

    Args:
      key: PRNG key of the weights.
      in_channels: input channels ``C`` (int ``≥ 1``).
      image_size: side ``H = W`` of the square input (int ``≥ 1``).
      channels: output channels ``(c1, c2)`` of the two convolutions (ints ``≥ 1``).
      num_classes: number of classes ``K`` (int ``≥ 2``).
      num_steps: number of time steps ``T`` (int ``≥ 1``).
      stride2: stride of the second convolution (int ``≥ 1``).
      params: the neuron constants (default :class:`~jaxlab.snn.neuron.DSNParams`).
      dormant: DSN neurons (True) or plain LIF (False, ``v_dormant = −inf``).

    Attributes:
      conv1: the first ``eqx.nn.Conv2d`` (3×3, padding 1).
      bn1: its ``eqx.nn.BatchNorm`` (momentum 0.9, batch statistics in training).
      conv2: the second ``eqx.nn.Conv2d`` (3×3, stride ``stride2``, padding 1).
      bn2: its ``eqx.nn.BatchNorm``.
      fc: the ``eqx.nn.Linear`` readout from the flattened second-layer spikes to ``K`` logits.
      v_dormant: 0-d float array, the dormancy threshold ``V_D`` (``−inf`` for LIF); an array leaf that is not
        trained, so that DSN and LIF networks share one compiled program.
      neuron: the other neuron constants (static), with ``v_dormant = −inf``.
      num_steps: ``T`` (static).
      stride2: the stride of the second convolution (static).

    Raises:
      TypeError: a size is not an int; ``params`` not a :class:`~jaxlab.snn.neuron.DSNParams`.
      ValueError: a size below its minimum; bad ``params`` (see :func:`~jaxlab.snn.neuron.check_params`).
    """

    conv1: eqx.nn.Conv2d
    bn1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    bn2: eqx.nn.BatchNorm
    fc: eqx.nn.Linear
    v_dormant: Array
    neuron: DSNParams = eqx.field(static=True)
    num_steps: int = eqx.field(static=True)
    stride2: int = eqx.field(static=True)

    def __init__(
        self,
        key: Key,
        *,
        in_channels: int = 1,
        image_size: int = 8,
        channels: tuple[int, int] = (16, 16),
        num_classes: int = 10,
        num_steps: int = 4,
        stride2: int = 2,
        params: DSNParams | None = None,
        dormant: bool = True,
    ):
        in_channels = check_int(in_channels, "in_channels", min_value=1)
        image_size = check_int(image_size, "image_size", min_value=1)
        c1, c2 = (check_int(c, "channels", min_value=1) for c in channels)
        num_classes = check_int(num_classes, "num_classes", min_value=2)
        self.num_steps = check_int(num_steps, "num_steps", min_value=1)
        self.stride2 = check_int(stride2, "stride2", min_value=1)
        params = check_params(DSNParams() if params is None else params)
        # The dormancy threshold is an array leaf (not trained, see train_algorithm) so that DSN and LIF networks
        # share one compiled program; the static constants carry v_dormant = -inf.
        self.v_dormant = jnp.asarray(params.v_dormant if dormant else -jnp.inf, jnp.result_type(float))
        self.neuron = params._replace(v_dormant=-float("inf"))
        k1, k2, k3 = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(in_channels, c1, 3, padding=1, key=k1)
        self.bn1 = eqx.nn.BatchNorm(c1, "batch", momentum=0.9, mode="batch")
        self.conv2 = eqx.nn.Conv2d(c1, c2, 3, stride=self.stride2, padding=1, key=k2)
        self.bn2 = eqx.nn.BatchNorm(c2, "batch", momentum=0.9, mode="batch")
        side = (image_size - 1) // self.stride2 + 1
        self.fc = eqx.nn.Linear(c2 * side * side, num_classes, key=k3)

    @property
    def params(self) -> DSNParams:
        """The neuron constants with this network's dormancy threshold (``-inf``: plain LIF)."""
        return self.neuron._replace(v_dormant=jax.lax.stop_gradient(self.v_dormant))

    def _neurons(self, x_seq: Array):
        # With v_dormant = -inf the gate is identically 1 and dsn_scan equals lif_scan exactly (a tested claim).
        s, _, aux = dsn_scan(self.params, x_seq)
        return s, aux["d_seq"], aux["v_seq"]

    def _bn_seq(self, bn: eqx.nn.BatchNorm, h: Array, state: eqx.nn.State, inference: bool):
        # (T, C, H, W) -> (C, T, H, W): statistics over batch, time and space.
        out, state = bn(jnp.swapaxes(h, 0, 1), state, inference=inference)
        return jnp.swapaxes(out, 0, 1), state

    def __call__(self, x: Float[Array, "..."], state: eqx.nn.State, *, inference: bool = False):
        """``x``: a static image ``(C, H, W)`` or events ``(T, C, H, W)``; returns ``(logits, state, trace)``."""
        if x.ndim == 3:
            h1, state = self.bn1(self.conv1(x), state, inference=inference)
            h1 = jnp.broadcast_to(h1, (self.num_steps, *h1.shape))
        else:
            h1, state = self._bn_seq(self.bn1, jax.vmap(self.conv1)(x), state, inference)
        s1, d1, v1 = self._neurons(h1)
        h2, state = self._bn_seq(self.bn2, jax.vmap(self.conv2)(s1), state, inference)
        s2, d2, v2 = self._neurons(h2)
        logits = jax.vmap(self.fc)(s2.reshape(s2.shape[0], -1)).mean(0)
        return logits, state, SpikeTrace(s1, d1, v1, s2, d2, v2)


@cites(DSN)
def make_model(key: Key, **kwargs: Any) -> tuple[DSNConvNet, eqx.nn.State]:
    """A :class:`DSNConvNet` and its BatchNorm state: ``eqx.nn.make_with_state(DSNConvNet)(key, **kwargs)``.

    Args:
      key: PRNG key of the weights.
      **kwargs: the keyword arguments of :class:`DSNConvNet` (``in_channels``, ``image_size``, ``channels``,
        ``num_classes``, ``num_steps``, ``stride2``, ``params``, ``dormant``).

    Returns:
      A tuple ``(model, state)``: the :class:`DSNConvNet` and its ``eqx.nn.State``.

    Raises:
      TypeError: as :class:`DSNConvNet`; an unknown keyword.
      ValueError: as :class:`DSNConvNet`.
    """
    return eqx.nn.make_with_state(DSNConvNet)(key, **kwargs)


def _check_batch_input(model: DSNConvNet, x: Any) -> Array:
    x = as_array(x, "x")
    if x.ndim == 5 and x.shape[1] != model.num_steps:
        raise ValueError(f"event input x must be (B, T={model.num_steps}, C, H, W), got {tuple(x.shape)}")
    if x.ndim not in (4, 5) or x.shape[-3] != model.conv1.in_channels:
        raise ValueError(
            f"x must be images (B, {model.conv1.in_channels}, H, W) or events (B, T, {model.conv1.in_channels}, H, W),"
            f" got {tuple(x.shape)}"
        )
    # computed in the parameters' dtype (float32 images meet float64 weights when x64 is on)
    return x.astype(model.conv1.weight.dtype)


def apply(model: DSNConvNet, state: eqx.nn.State, x: Float[Array, "B ..."], *, inference: bool = False):
    """Batched forward pass of a :class:`DSNConvNet` (BatchNorm over batch, time and space).

    Args:
      model: the network.
      state: its BatchNorm state (``eqx.nn.State``).
      x: float array of a batch, images ``(B, C, H, W)`` (encoded once and repeated over the ``T`` steps) or
        events ``(B, T, C, H, W)``; cast to the parameters' dtype.
      inference: use the running BatchNorm statistics instead of the batch's.

    Returns:
      A tuple ``(logits, state, trace)``: ``(B, K)`` float logits (time-averaged), the new BatchNorm state and the
      :class:`SpikeTrace` with time first ``(T, B, ...)``.

    Raises:
      TypeError: ``x`` not floating.
      ValueError: ``x`` not ``(B, C, H, W)`` or ``(B, T, C, H, W)`` with the model's ``C`` (and ``T`` for events).
    """
    x = _check_batch_input(model, x)
    logits, state, tr = jax.vmap(
        lambda xi, st: model(xi, st, inference=inference), axis_name="batch", in_axes=(0, None), out_axes=(0, None, 0)
    )(x, state)
    return logits, state, SpikeTrace(*(jnp.swapaxes(a, 0, 1) for a in tr))


def _trainable(model: DSNConvNet):
    spec = jax.tree_util.tree_map(eqx.is_inexact_array, model)
    return eqx.tree_at(lambda m: m.v_dormant, spec, replace=False)


def trainable(model: DSNConvNet):
    """The trained leaves of ``model``: every inexact array but ``v_dormant``, for ``optimizer.init``.

    Args:
      model: the :class:`DSNConvNet`.

    Returns:
      The model pytree with the non-trained leaves replaced by ``None`` (``eqx.filter``).
    """
    return eqx.filter(model, _trainable(model))


def _loss(diff, rest, state, x, y, label_smoothing):
    model = eqx.combine(diff, rest)
    logits, state, trace = apply(model, state, x)
    targets = optax.smooth_labels(jax.nn.one_hot(y, logits.shape[-1], dtype=logits.dtype), label_smoothing)
    loss = optax.softmax_cross_entropy(logits, targets).mean()
    return loss, (state, logits, trace)


class DSNTrainState(NamedTuple):
    """State of the network's training.

    Attributes:
      train: the shared trainer's :class:`jaxlab.core.train.TrainState` over the trained leaves.
      frozen: the array leaves that are not trained (the dormancy threshold ``v_dormant``).
      bn: the BatchNorm statistics (``eqx.nn.State``), threaded through every forward pass.
    """

    train: TrainState
    frozen: Any
    bn: eqx.nn.State


class DSNTrainInfo(NamedTuple):
    """Diagnostics of one training step (on the batch, before the update).

    Attributes:
      loss: the label-smoothed cross-entropy.
      accuracy: the fraction of correct argmax predictions.
      dormant1: the dormancy ratio ``1 - mean D`` of the first DSN layer.
      dormant2: the same for the second DSN layer.
    """

    loss: Array
    accuracy: Array
    dormant1: Array
    dormant2: Array


def _train_algorithm(static: Any, optimizer: optax.GradientTransformation, label_smoothing: float) -> Algorithm:
    train_step = make_train_step(_loss, optimizer, has_aux=True)

    def init(model: DSNConvNet, bn: eqx.nn.State) -> DSNTrainState:
        frozen = eqx.filter(eqx.filter(model, eqx.is_array), _trainable(model), inverse=True)
        return DSNTrainState(train_init(trainable(model), optimizer), frozen, bn)

    def step(key: Any, state: DSNTrainState, batch: tuple[Array, Array]) -> tuple[DSNTrainState, DSNTrainInfo]:
        del key  # no randomness in a step
        x, y = batch
        rest = eqx.combine(state.frozen, static)
        train, info = train_step(state.train, rest, state.bn, x, y, label_smoothing)
        bn, logits, trace = info.aux
        metrics = DSNTrainInfo(
            info.loss,
            jnp.mean(jnp.argmax(logits, -1) == y, dtype=logits.dtype),  # a bool mean is float32
            jnp.mean(1.0 - trace.d1),
            jnp.mean(1.0 - trace.d2),
        )
        return DSNTrainState(train, state.frozen, bn), metrics

    return Algorithm(init, step)


@cites(DSN)
def train_algorithm(
    model: DSNConvNet, optimizer: optax.GradientTransformation, *, label_smoothing: float = 0.1
) -> Algorithm:
    """Training of a :class:`DSNConvNet` by BPTT through the surrogate gradients, as a data-driven ``Algorithm``.

    Built on the shared trainer :func:`jaxlab.core.train.make_train_step`. One step on a batch ``(x, y)`` is
    ``(loss, aux), g = value_and_grad(L)(θ)`` with ``L`` the label-smoothed cross-entropy of the time-averaged logits,
    then ``θ ← θ + optimizer.update(g)``; every inexact array leaf is trained except ``v_dormant``; the BatchNorm
    statistics are carried in the state. Label smoothing 0.1 is the reference configs' value.

    Args:
      model: a network of the structure to train (its non-array part is bound here).
      optimizer: any optax gradient transformation.
      label_smoothing: in [0, 1).

    Returns:
      ``Algorithm(init, step)``: ``init(model, bn) -> DSNTrainState``;
      ``step(key, state, (x, y)) -> (DSNTrainState, DSNTrainInfo)`` (the key is ignored). The trained network
      is :func:`trained_model` ``(model, state)``.

    Raises:
      ValueError: ``label_smoothing`` not in ``[0, 1)``.

    Example:
      >>> import jax, optax
      >>> from jaxlab.snn import make_model, train_algorithm, trained_model
      >>> model, bn = make_model(jax.random.key(0), image_size=4, channels=(2, 2), num_steps=2)
      >>> x = jax.random.uniform(jax.random.key(1), (4, 1, 4, 4))         # 4 images (B, C, H, W)
      >>> y = jax.numpy.array([0, 1, 2, 3])
      >>> algo = train_algorithm(model, optax.adam(1e-2))
      >>> state, info = jax.jit(algo.step)(None, algo.init(model, bn), (x, y))
      >>> model, bn = trained_model(model, state)
    """
    label_smoothing = check_in_range(label_smoothing, "label_smoothing", 0.0, 1.0, hi_open=True)
    return _train_algorithm(eqx.filter(model, eqx.is_array, inverse=True), optimizer, label_smoothing)


def trained_model(model: DSNConvNet, state: DSNTrainState) -> tuple[DSNConvNet, eqx.nn.State]:
    """The network of ``model``'s structure with the parameters of a training state, and its BatchNorm state.

    Args:
      model: a network of the trained structure (its non-array part is used).
      state: the :class:`DSNTrainState` of :func:`train_algorithm`.

    Returns:
      A tuple ``(model, bn)``: the trained :class:`DSNConvNet` and its ``eqx.nn.State``.
    """
    static = eqx.filter(model, eqx.is_array, inverse=True)
    return eqx.combine(state.train.params, state.frozen, static), state.bn


_ADAM = optax.adam(1e-3)  # one object, so that fit's default optimizer does not recompile the epoch


@eqx.filter_jit
def _epoch(state, static, x, y, idx, optimizer, label_smoothing):
    # Module level, so that networks of one structure (DSN and LIF alike) share one compiled epoch.
    algo = _train_algorithm(static, optimizer, label_smoothing)
    state, trace = run(lambda k, s, i: algo.step(k, s, (x[i], y[i])), state, None, xs=idx)
    return state, trace.infos.loss


@cites(DSN)
def fit(
    key: Key,
    model: DSNConvNet,
    state: eqx.nn.State,
    x: Float[Array, "N ..."],
    y: Int[Array, " N"],
    *,
    epochs: int = 5,
    batch_size: int = 64,
    optimizer: optax.GradientTransformation | None = None,
    label_smoothing: float = 0.1,
):
    """Train a :class:`DSNConvNet` for ``epochs`` passes over shuffled minibatches.

    The last incomplete batch of an epoch is dropped; the optimizer is Adam 1e-3 by default. The steps are those of
    :func:`train_algorithm`, and the batches of an epoch run in one :func:`jaxlab.core.run`.

    Args:
      key: PRNG key (the shuffles).
      model: the network, e.g. from :func:`make_model`.
      state: its BatchNorm state.
      x: float images ``(N, C, H, W)`` or events ``(N, T, C, H, W)``.
      y: integer labels ``(N,)``.
      epochs: passes over the data (int ``≥ 1``).
      batch_size: samples per step (int in ``[1, N]``).
      optimizer: any optax transformation (default Adam 1e-3).
      label_smoothing: in [0, 1).

    Returns:
      ``(model, state, losses)``: the trained network, its BN state and the per-step losses
      ``(epochs · ⌊N / batch_size⌋,)``.

    Raises:
      TypeError: ``x`` not floating; ``y`` not an int array; ``epochs`` or ``batch_size`` not an int.
      ValueError: ``x`` of the wrong shape for the model; ``y`` not ``(N,)``; ``epochs < 1``; ``batch_size``
        not in ``[1, N]``; ``label_smoothing`` not in ``[0, 1)``.

    Example:
      >>> import jax
      >>> from jaxlab.snn import fit, make_model
      >>> model, bn = make_model(jax.random.key(0), image_size=4, channels=(2, 2), num_steps=2)
      >>> x = jax.random.uniform(jax.random.key(1), (8, 1, 4, 4))
      >>> y = jax.numpy.arange(8) % 10
      >>> model, bn, losses = fit(jax.random.key(2), model, bn, x, y, epochs=1, batch_size=4)
      >>> losses.shape
      (2,)
    """
    epochs = check_int(epochs, "epochs", min_value=1)
    x = _check_batch_input(model, x)
    y = as_array(y, "y", kind="int", ndim=1, shape=(x.shape[0],))
    batch_size = check_int(batch_size, "batch_size", min_value=1, max_value=x.shape[0])
    label_smoothing = check_in_range(label_smoothing, "label_smoothing", 0.0, 1.0, hi_open=True)
    optimizer = _ADAM if optimizer is None else optimizer
    static = eqx.filter(model, eqx.is_array, inverse=True)
    train_state = _train_algorithm(static, optimizer, label_smoothing).init(model, state)
    nb = x.shape[0] // batch_size
    losses = []
    for k in jax.random.split(key, epochs):
        idx = jax.random.permutation(k, x.shape[0])[: nb * batch_size].reshape(nb, batch_size)
        train_state, ls = _epoch(train_state, static, x, y, idx, optimizer, label_smoothing)
        losses.append(ls)
    model, state = trained_model(model, train_state)
    return model, state, jnp.concatenate(losses)


@cites(DSN)
def energy_report(model: DSNConvNet, x: Float[Array, "B ..."], trace: SpikeTrace) -> dict[str, Array]:
    """SOPs and energy (pJ per sample) of a forward pass, with dormancy and with every ``D = 1``.

    Static input: ``E = E_MAC · MACs(conv1) · T + E_AC · (SOP(conv2) + SOP(fc))``; event input: the first convolution is
    synaptic too (``E_AC`` × its SOPs with the first DSN layer's gates). Dormant targets of a DSN layer are skipped
    (:func:`~jaxlab.snn.energy.sop_conv`, :func:`~jaxlab.snn.energy.sop_dense`); the readout has no gate. Constants of
    Horowitz (ISSCC 2014), see :mod:`jaxlab.snn.energy`.

    Args:
      model: the :class:`DSNConvNet`.
      x: float array of a batch, images ``(B, C, H, W)`` (encoded once and repeated over the ``T`` steps) or
        events ``(B, T, C, H, W)``; cast to the parameters' dtype.
      trace: the :class:`SpikeTrace` of :func:`apply` on ``x``.

    Returns:
      dict of 0-d float arrays: ``sops``, ``sops_no_dormancy``, ``first_layer_flops`` (per sample),
      ``energy_pj``, ``energy_no_dormancy_pj`` (pJ per sample), ``dormant1``, ``dormant2`` (dormancy ratios
      ``1 − mean D``), ``rate1``, ``rate2`` (firing rates).

    Raises:
      TypeError: ``x`` not floating.
      ValueError: ``x`` not ``(B, C, H, W)`` or ``(B, T, C, H, W)`` with the model's ``C`` (and ``T`` for events);
        a trace whose spikes or gates are not binary.
    """
    x = _check_batch_input(model, x)
    t, b = trace.s1.shape[:2]
    stride2 = model.stride2
    readout = jnp.ones((t, b, model.fc.out_features), trace.s2.dtype)

    def sops(d1, d2):
        total = sop_conv(trace.s1, d2, 3, stride2, 1) + sop_dense(trace.s2.reshape(t, b, -1), readout)
        if x.ndim == 5:
            total = total + sop_conv(jnp.swapaxes(x, 0, 1), d1, 3, 1, 1)
        return total

    if x.ndim == 5:
        flops = jnp.zeros(())
    else:
        c1, h, w = trace.s1.shape[2:]
        flops = jnp.asarray(float(t * b * c1 * h * w * model.conv1.in_channels * 9))
    with_d = sops(trace.d1, trace.d2)
    without = sops(jnp.ones_like(trace.d1), jnp.ones_like(trace.d2))
    return {
        "sops": with_d / b,
        "sops_no_dormancy": without / b,
        "first_layer_flops": flops / b,
        "energy_pj": energy_pj(flops, with_d) / b,
        "energy_no_dormancy_pj": energy_pj(flops, without) / b,
        "dormant1": jnp.mean(1.0 - trace.d1),
        "dormant2": jnp.mean(1.0 - trace.d2),
        "rate1": trace.s1.mean(),
        "rate2": trace.s2.mean(),
    }


_energy_jit = eqx.filter_jit(energy_report)  # the trace holds spikes by construction; one compiled program


@eqx.filter_jit
def _infer(model, state, x):
    return apply(model, state, x, inference=True)


@cites(DSN)
def evaluate(
    model: DSNConvNet,
    state: eqx.nn.State,
    x: Float[Array, "N ..."],
    y: Int[Array, " N"],
    *,
    inhibition_threshold: float = DSNParams().v_dormant,
):
    """Test accuracy, deep inhibition and energy of a :class:`DSNConvNet` on a whole set, as Python floats.

    BatchNorm in inference mode. ``deep_inhibition`` is ``mean 1[V < inhibition_threshold]`` over both layers (the
    "deeply inhibited" measure on LIF networks, ``V_D = −0.05`` by default); the other keys are those of
    :func:`energy_report`.

    Args:
      model: the network.
      state: its BatchNorm state.
      x: float images ``(N, C, H, W)`` or events ``(N, T, C, H, W)`` (one batch: mind the memory).
      y: integer labels ``(N,)``.
      inhibition_threshold: the potential below which a neuron counts as deeply inhibited.

    Returns:
      dict of Python floats: ``accuracy``, ``deep_inhibition`` and the keys of :func:`energy_report`.

    Raises:
      TypeError: ``x`` not floating; ``y`` not an int array.
      ValueError: ``x`` not ``(B, C, H, W)`` or ``(B, T, C, H, W)`` with the model's ``C`` (and ``T`` for events);
        ``y`` not ``(N,)``.
    """
    x = _check_batch_input(model, x)
    y = as_array(y, "y", kind="int", ndim=1, shape=(x.shape[0],))
    logits, _, trace = _infer(model, state, x)
    vd = inhibition_threshold
    inhibited = (jnp.sum(trace.v1 < vd) + jnp.sum(trace.v2 < vd)) / (trace.v1.size + trace.v2.size)
    out = {"accuracy": jnp.mean(jnp.argmax(logits, -1) == y), "deep_inhibition": inhibited}
    out.update(_energy_jit(model, x, trace))
    return {k: float(np.asarray(v)) for k, v in out.items()}


def _train_example(key: Any) -> tuple[Algorithm, DSNTrainState, tuple[Array, Array]]:
    """A 2-channel network on 4x4 images, three batches of four."""
    k_model, k_x, k_y = jax.random.split(key, 3)
    model, bn = make_model(k_model, image_size=4, channels=(2, 2), num_steps=2)
    x = jax.random.uniform(k_x, (3, 4, 1, 4, 4))
    y = jax.random.randint(k_y, (3, 4), 0, 10)
    algo = train_algorithm(model, optax.adam(1e-2))
    return algo, algo.init(model, bn), (x, y)


register_algorithm("dsn_convnet_train", train_algorithm, _train_example, area="snn")
