r"""Full-batch training of a QNN (or any ``apply(params, x)`` model) with an optax optimiser, recording the
residual spectrum (spec ``qnn.md`` sections 3.4, 3.6).

Loss ``ℒ(θ) = (1/2M) Σ_m (f_θ(x_m) − y_m)²`` on the training grid. Every step records the loss and
``r̂_ω = (1/M) Σ_m r_m e^{−iωx_m}`` at the chosen frequencies (the Fourier coefficient of the residual when the
grid is equispaced, ``x_m = x_0 + 2πm/M``). ``train_init``/``train_step`` are the pure pair; :func:`fit` drives
them with :func:`jaxlab.core.run` (``lax.scan``), so a batch of seeds is one ``jax.vmap``.

Paper: Xu, Zhang, Yan, "The Spectral Amplitude Principle for Dynamics of Quantum Neural Networks"
(arXiv:2409.06682).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Complex, Float

from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_int
from jaxlab.quantum._papers import SAP
from jaxlab.quantum.fourier import _check_grid
from jaxlab.quantum.qnn import QNNConfig, _check_config, qnn_apply

__all__ = ["TrainInfo", "TrainState", "Trajectory", "fit", "mse_loss", "train_init", "train_step"]


class TrainState(NamedTuple):
    params: Any
    opt_state: Any
    step: jax.Array


class TrainInfo(NamedTuple):
    """Loss and residual coefficients at ``freqs``, both at the parameters *before* the step's update."""

    loss: Float[Array, ""]
    r_hat: Complex[Array, " k"]


class Trajectory(NamedTuple):
    """What :func:`fit` records every ``record_every`` steps: ``steps`` (updates applied so far), loss, r̂."""

    steps: jax.Array
    loss: jax.Array
    r_hat: jax.Array


def _model(cfg) -> Callable:
    if isinstance(cfg, QNNConfig):
        _check_config(cfg)
        return lambda p, x: qnn_apply(p, x, cfg)
    if callable(cfg):
        return cfg
    raise TypeError(f"cfg must be a QNNConfig or a callable apply(params, x), got {type(cfg).__name__}")


def _data(x, y) -> tuple[jax.Array, jax.Array]:
    x = as_array(x, "x", ndim=1, finite=True)
    y = as_array(y, "y", ndim=1, finite=True)
    if y.shape != x.shape:
        raise ValueError(f"y must have the length of x ({x.shape[0]}), got {y.shape[0]}")
    return x, y


def mse_loss(params, x, y, cfg) -> Float[Array, ""]:
    """``(1/2M) Σ_m (f(x_m) − y_m)²``."""
    f = _model(cfg)
    x, y = _data(x, y)
    r = jax.vmap(lambda xi: f(params, xi))(x) - y
    return 0.5 * jnp.mean(r**2)


def train_init(params, optimizer: optax.GradientTransformation) -> TrainState:
    """``TrainState(params, optimizer.init(params), 0)``."""
    return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))


@cites(SAP)
def train_step(
    state: TrainState, x, y, cfg, optimizer: optax.GradientTransformation, freqs: tuple[int, ...] = ()
) -> tuple[TrainState, TrainInfo]:
    """One optimiser step on the full batch; returns the new state and the pre-update loss and ``r̂_freqs``."""
    f = _model(cfg)
    x, y = _data(x, y)

    def loss_fn(p):
        r = jax.vmap(lambda xi: f(p, xi))(x) - y
        return 0.5 * jnp.mean(r**2), r

    (loss, r), g = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    omega = jnp.asarray(freqs, dtype=x.dtype)
    r_hat = jnp.exp(-1j * omega[:, None] * x[None, :]) @ r.astype(jnp.result_type(r.dtype, jnp.complex64)) / x.size
    updates, opt_state = optimizer.update(g, state.opt_state, state.params)
    new = TrainState(optax.apply_updates(state.params, updates), opt_state, state.step + 1)
    return new, TrainInfo(loss, r_hat)


@cites(SAP)
def fit(
    state: TrainState,
    x,
    y,
    cfg,
    optimizer: optax.GradientTransformation,
    n_steps: int,
    record_every: int = 1,
    freqs: tuple[int, ...] = (),
) -> tuple[TrainState, Trajectory]:
    """Run ``n_steps`` of :func:`train_step` under ``lax.scan``, recording loss and ``r̂_ω`` (ω in ``freqs``,
    non-negative integers) every ``record_every`` steps. ``x`` must be an equispaced grid when ``freqs`` is
    given. ``n_steps`` must be a multiple of ``record_every``."""
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    record_every = check_int(record_every, "record_every", min_value=1)
    freqs = tuple(check_int(w, "freqs", min_value=0) for w in freqs)
    x, y = _data(x, y)
    if freqs:
        _check_grid(x)

    def step(key, s):
        del key
        return train_step(s, x, y, cfg, optimizer, freqs)

    final, trace = run(step, state, jax.random.key(0), n_steps, thin=record_every)
    steps = jnp.arange(record_every - 1, n_steps, record_every)
    return final, Trajectory(steps, trace.infos.loss, trace.infos.r_hat)
