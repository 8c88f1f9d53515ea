"""One trainer for every area that fits a model with optax.

A training step is gradient descent through an optax optimiser on the model's parameters θ:

    (ℓ, aux), g = value_and_grad(loss_fn)(θ, *args),   (u, s') = optimizer.update(g, s, θ),   θ' = θ + u.

:func:`make_train_step` builds that step once for a loss and an optimiser; :func:`trainer` wraps it as an
:class:`~jaxlab.core.Algorithm` so :func:`jaxlab.core.run` drives it over a stream of batches (``xs=``) or of
keys. Everything else (clipping, schedules, weight decay, masking) goes into the optax chain, and extra metrics
into the loss's ``aux``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxlab.core.algorithm import Algorithm

__all__ = ["TrainInfo", "TrainState", "make_train_step", "train_init", "trainer"]


class TrainState(NamedTuple):
    """Parameters, optimiser state and the number of steps taken.

    Attributes:
      params: the model's parameter pytree θ.
      opt_state: the optax optimiser's state.
      step: number of updates applied so far (int32 scalar).
    """

    params: Any
    opt_state: Any
    step: jax.Array


class TrainInfo(NamedTuple):
    """Diagnostics of one training step.

    Attributes:
      loss: the loss at the parameters before the update (scalar).
      aux: the loss's auxiliary output when ``has_aux=True``, else ``None``.
    """

    loss: jax.Array
    aux: Any


def train_init(params: Any, optimizer: optax.GradientTransformation) -> TrainState:
    """Initial :class:`TrainState`: ``opt_state = optimizer.init(params)`` and ``step = 0``.

    Args:
      params: parameter pytree of floating arrays.
      optimizer: any optax gradient transformation.

    Returns:
      The :class:`TrainState` before the first update.

    Raises:
      TypeError: ``optimizer`` is not an optax gradient transformation.
    """
    _check_optimizer(optimizer)
    return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))


def make_train_step(
    loss_fn: Callable[..., Any], optimizer: optax.GradientTransformation, *, has_aux: bool = False
) -> Callable[..., tuple[TrainState, TrainInfo]]:
    """Build ``train_step(state, *args, **kwargs) -> (state, TrainInfo)`` for ``loss_fn(params, *args, **kwargs)``.

    One step computes ``(loss[, aux]), grads = value_and_grad(loss_fn, has_aux)(params, *args, **kwargs)``,
    then ``updates, opt_state = optimizer.update(grads, opt_state, params)`` and
    ``params = optax.apply_updates(params, updates)``. The step is pure; ``jax.jit`` it (or run it under
    :func:`jaxlab.core.run`).

    Args:
      loss_fn: scalar loss of the parameters (first argument) and of whatever the step is called with.
      optimizer: any optax gradient transformation.
      has_aux: ``loss_fn`` returns ``(loss, aux)``; ``aux`` is reported in :class:`TrainInfo`.

    Returns:
      The training step.

    Raises:
      TypeError: ``loss_fn`` is not callable or ``optimizer`` is not an optax gradient transformation.

    Example:
      >>> import jax.numpy as jnp, optax
      >>> from jaxlab.core import make_train_step, train_init
      >>> loss = lambda w, x, y: jnp.mean((x @ w - y) ** 2)
      >>> opt = optax.sgd(0.1)
      >>> step = make_train_step(loss, opt)
      >>> state = train_init(jnp.zeros(2), opt)
      >>> state, info = step(state, jnp.eye(2), jnp.ones(2))
    """
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    _check_optimizer(optimizer)
    grad_fn = jax.value_and_grad(loss_fn, has_aux=has_aux)

    def train_step(state: TrainState, *args: Any, **kwargs: Any) -> tuple[TrainState, TrainInfo]:
        value, grads = grad_fn(state.params, *args, **kwargs)
        loss, aux = value if has_aux else (value, None)
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        return TrainState(params, opt_state, state.step + 1), TrainInfo(loss, aux)

    return train_step


def trainer(
    loss_fn: Callable[[Any, Any, Any], Any], optimizer: optax.GradientTransformation, *, has_aux: bool = False
) -> Algorithm:
    """The training loop as an :class:`~jaxlab.core.Algorithm`.

    ``init(params)`` is :func:`train_init`; ``step(key, state, batch=None)`` takes one optimiser step on
    ``loss_fn(params, key, batch)``: drive it with ``run(algo.step, state, key, xs=batches)`` over a stream of
    batches, or with ``run(algo.step, state, key, num_steps)`` when the loss draws its own data from ``key``.

    Args:
      loss_fn: ``loss_fn(params, key, batch)`` returning the scalar loss (or ``(loss, aux)``).
      optimizer: any optax gradient transformation.
      has_aux: ``loss_fn`` returns ``(loss, aux)``.

    Returns:
      ``Algorithm(init, step)`` over :class:`TrainState` with :class:`TrainInfo` diagnostics.

    Raises:
      TypeError: as :func:`make_train_step`.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.core import run, trainer
      >>> def loss(w, key, batch):
      ...     x, y = batch
      ...     return jnp.mean((x @ w - y) ** 2)
      >>> algo = trainer(loss, optax.sgd(0.1))
      >>> xs = jax.random.normal(jax.random.key(0), (20, 8, 2))
      >>> batches = (xs, xs @ jnp.array([1.0, -2.0]))
      >>> state, trace = run(algo.step, algo.init(jnp.zeros(2)), jax.random.key(1), xs=batches)
      >>> trace.infos.loss.shape
      (20,)
    """
    train_step = make_train_step(loss_fn, optimizer, has_aux=has_aux)

    def init(params: Any) -> TrainState:
        return train_init(params, optimizer)

    def step(key: Any, state: TrainState, batch: Any = None) -> tuple[TrainState, TrainInfo]:
        return train_step(state, key, batch)

    return Algorithm(init, step)


def _check_optimizer(optimizer: Any) -> None:
    if not (callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))):
        raise TypeError(f"optimizer must be an optax GradientTransformation, got {type(optimizer).__name__}")
