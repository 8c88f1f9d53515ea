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
    """Per-layer spikes ``s``, gates ``d`` and post-reset potentials ``v``, each ``(T, B, C, H, W)``."""

    s1: Array
    d1: Array
    v1: Array
    s2: Array
    d2: Array
    v2: Array


class DSNConvNet(eqx.Module):
    """conv -> BN -> DSN -> conv -> BN -> DSN -> linear, mean over T; call on one sample inside a ``vmap`` with
    ``axis_name="batch"`` (or use :func:`apply`).

    ``v_dormant`` (an untrained array leaf) is the dormancy threshold, ``-inf`` for the LIF network
    (``dormant=False``); ``neuron`` holds the other, static, neuron constants."""

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
    """``DSNConvNet(key, **kwargs)`` and its BatchNorm state (``eqx.nn.make_with_state``)."""
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
    """Batched forward pass: ``logits (B, K)``, the new BN state and the :class:`SpikeTrace` with time first
    ``(T, B, ...)``."""
    x = _check_batch_input(model, x)
    logits, state, tr = jax.vmap(
        lambda xi, st: model(xi, st, inference=inference), axis_name="batch", in_axes=(0, None), out_axes=(0, None, 0)
    )(x, state)
    return logits, state, SpikeTrace(*(jnp.swapaxes(a, 0, 1) for a in tr))


def _trainable(model: DSNConvNet):
    spec = jax.tree_util.tree_map(eqx.is_inexact_array, model)
    return eqx.tree_at(lambda m: m.v_dormant, spec, replace=False)


def trainable(model: DSNConvNet):
    """The trained leaves of ``model`` (every inexact array but ``v_dormant``), for ``optimizer.init``."""
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
            jnp.mean(jnp.argmax(logits, -1) == y),
            jnp.mean(1.0 - trace.d1),
            jnp.mean(1.0 - trace.d2),
        )
        return DSNTrainState(train, state.frozen, bn), metrics

    return Algorithm(init, step)


@cites(DSN)
def train_algorithm(
    model: DSNConvNet, optimizer: optax.GradientTransformation, *, label_smoothing: float = 0.1
) -> Algorithm:
    """Training of a :class:`DSNConvNet` by BPTT through the surrogate gradients, as a data-driven
    :class:`~jaxlab.core.Algorithm` built on the shared trainer :func:`jaxlab.core.train.make_train_step`.

    One step on a batch ``(x, y)`` is ``(loss, aux), g = value_and_grad(L)(theta)`` with ``L`` the
    label-smoothed cross-entropy of the time-averaged logits, then ``theta <- theta + optimizer.update(g)``;
    every inexact array leaf is trained except ``v_dormant``; the BatchNorm statistics are carried in the state.

    Args:
      model: a network of the structure to train (its non-array part is bound here).
      optimizer: any optax gradient transformation.
      label_smoothing: in [0, 1).

    Returns:
      ``Algorithm(init, step)``: ``init(model, bn) -> DSNTrainState``;
      ``step(key, state, (x, y)) -> (DSNTrainState, DSNTrainInfo)`` (the key is ignored). The trained network
      is :func:`trained_model` ``(model, state)``.

    Example:
      >>> algo = train_algorithm(model, optax.adam(1e-3))
      >>> state = algo.init(model, bn)
      >>> state, info = jax.jit(algo.step)(None, state, (x_batch, y_batch))
      >>> model, bn = trained_model(model, state)
    """
    label_smoothing = check_in_range(label_smoothing, "label_smoothing", 0.0, 1.0, hi_open=True)
    return _train_algorithm(eqx.filter(model, eqx.is_array, inverse=True), optimizer, label_smoothing)


def trained_model(model: DSNConvNet, state: DSNTrainState) -> tuple[DSNConvNet, eqx.nn.State]:
    """The network of ``model``'s structure with the parameters of a :class:`DSNTrainState`, and its BN state."""
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
    """Train for ``epochs`` passes over shuffled minibatches (the last incomplete batch is dropped; Adam 1e-3
    by default); the steps are those of :func:`train_algorithm`, and the batches of an epoch run in one
    :func:`jaxlab.core.run`.

    Args:
      key: PRNG key (the shuffles).
      model: the network, e.g. from :func:`make_model`.
      state: its BatchNorm state.
      x: images ``(N, C, H, W)`` or events ``(N, T, C, H, W)``.
      y: integer labels ``(N,)``.
      epochs: passes over the data.
      batch_size: samples per step (at most N).
      optimizer: any optax transformation (default Adam 1e-3).
      label_smoothing: in [0, 1).

    Returns:
      ``(model, state, losses)``: the trained network, its BN state and the per-step losses.

    Example:
      >>> model, bn = make_model(jax.random.key(0), channels=(8, 16), num_steps=4)
      >>> model, bn, losses = fit(jax.random.key(1), model, bn, x_train, y_train, epochs=3)
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

    Keys: ``sops``, ``sops_no_dormancy``, ``first_layer_flops``, ``energy_pj``, ``energy_no_dormancy_pj``,
    ``dormant1``, ``dormant2`` (dormancy ratios ``1 - mean D``), ``rate1``, ``rate2`` (firing rates).
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
    """Test accuracy (BN in inference mode), the deeply-inhibited fraction ``mean 1[V < inhibition_threshold]``
    over both layers (the paper's measure on LIF nets, V_D = -0.05 by default), and :func:`energy_report` on the
    whole set, as Python floats."""
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
