r"""Joint online spherical SGD for the two-layer (``K = 2``) multiscale single-index model.

Reconstructed after Ben Arous, Gheissari & Jagannath, "Online
stochastic gradient descent on non-convex losses from high-dimensional inference" (arXiv:2003.10409).

Student ``f(x; u_1, u_2) = σ_2(⟨u_2, σ_1(X u_1)⟩)`` with ``X = reshape(x, (d, d))``, loss
``ℓ = ½ (f - y)²`` on one fresh sample per step. With ``z = X u_1``, ``h = σ_1(z)``, ``a = ⟨u_2, h⟩``,
``e = σ_2(a) - y``::

    ∇_{u_2} ℓ = e σ_2'(a) h,      ∇_{u_1} ℓ = e σ_2'(a) Xᵀ (u_2 ∘ σ_1'(z)),
    g_k = ∇_{u_k} ℓ - ⟨∇_{u_k} ℓ, u_k⟩ u_k,      u_k ← (u_k - η_t g_k) / ||u_k - η_t g_k||.

Two-phase schedule: ``η = c_w / (d log d)`` for ``T_w`` steps (weak recovery, ``O(d log² d)`` steps), then
``η = c_s / d`` (linear convergence, ``O(d log(1/ε))`` steps). For linear links the population loss is
``1 - Π_k ⟨u_k, w_k⟩`` (:func:`population_loss_linear`).

Iteration protocol (:class:`jaxlab.core.Algorithm`): :func:`spherical_sgd_algorithm` steps on a given stream of
samples (``step(key, state, (x, y))``, driven by ``jaxlab.core.run(..., xs=(X, Y))``);
:func:`online_sgd_algorithm` draws one fresh sample of the teacher per step from its key
(``step(key, state)``), which is what :func:`run_online_sgd` runs; :func:`shallow_sgd_algorithm` is the
single-index baseline of :func:`run_shallow_sgd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, Int

from jaxlab.core import random as fast_random
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_int, check_positive
from jaxlab.multiscale.model import MSIMConfig, _check_ws, _forward, check_config, link_fns
from jaxlab.multiscale.papers import BEN_AROUS, MSIM

__all__ = [
    "OnlineSGDInfo",
    "ShallowSGDInfo",
    "ShallowSGDState",
    "SphericalSGDInfo",
    "SphericalSGDState",
    "kronecker_direction",
    "lr_schedule",
    "online_sgd_algorithm",
    "population_loss_linear",
    "run_online_sgd",
    "run_shallow_sgd",
    "sgd_init",
    "shallow_sgd_algorithm",
    "spherical_sgd_algorithm",
    "spherical_step",
]


class SphericalSGDState(NamedTuple):
    """State of the two-layer spherical SGD.

    Attributes:
      u: ``(2, d)`` float array of the student's unit features (row ``k-1`` is ``u_k``).
      step: 0-d int32 array, the number of steps taken (the schedule's argument).
    """

    u: Float[Array, "2 d"]
    step: Int[Array, ""]


class SphericalSGDInfo(NamedTuple):
    """Record of one spherical SGD step.

    Attributes:
      loss: 0-d float array, ``½ (f(x; u) - y)²`` on the step's sample, before the update.
      learning_rate: 0-d float array, the step size ``η_t`` used.
    """

    loss: Float[Array, ""]
    learning_rate: Float[Array, ""]


class OnlineSGDInfo(NamedTuple):
    """Record of one teacher-student step of :func:`online_sgd_algorithm`.

    Attributes:
      loss: 0-d float array, ``½ (f(x; u) - y)²`` on the fresh sample, before the update.
      learning_rate: 0-d float array, the step size ``η_t`` used.
      overlaps: ``(2,)`` float array, the signed overlaps ``⟨u_k, w_k⟩`` after the step.
    """

    loss: Float[Array, ""]
    learning_rate: Float[Array, ""]
    overlaps: Float[Array, " 2"]


class ShallowSGDState(NamedTuple):
    """State of the shallow single-index baseline.

    Attributes:
      u: ``(d^K,)`` float array, the unit vector ``u``.
      step: 0-d int32 array, the number of steps taken.
    """

    u: Float[Array, " D"]
    step: Int[Array, ""]


class ShallowSGDInfo(NamedTuple):
    """Record of one step of the shallow baseline.

    Attributes:
      overlap: 0-d float array, ``|⟨u, w_K ⊗ ... ⊗ w_1⟩|`` after the step.
    """

    overlap: Float[Array, ""]


@cites(BEN_AROUS)
def sgd_init(key, d: int) -> SphericalSGDState:
    """Two independent uniform unit vectors (initial overlaps of order ``d^{-1/2}``).

    Args:
      key: PRNG key.
      d: block size (>= 2).

    Returns:
      :class:`SphericalSGDState` with ``u`` of shape ``(2, d)`` (default float dtype) and ``step = 0``.
    """
    d = check_int(d, "d", min_value=2)
    g = jax.random.normal(key, (2, d))
    return SphericalSGDState(g / jnp.linalg.norm(g, axis=1, keepdims=True), jnp.zeros((), jnp.int32))


def _check_k2(cfg: MSIMConfig) -> None:
    check_config(cfg)
    if cfg.K != 2:
        raise ValueError(f"online spherical SGD is implemented for the two-layer model (cfg.K = 2), got K = {cfg.K}; "
                         "the paper's SGD result is for two layers")


def _step(state: SphericalSGDState, x: Array, y: Array, eta: Array, cfg: MSIMConfig
          ) -> tuple[SphericalSGDState, SphericalSGDInfo]:
    s1, ds1 = link_fns(cfg.links[0])
    s2, ds2 = link_fns(cfg.links[1])
    u1, u2 = state.u[0], state.u[1]
    X = x.reshape(cfg.d, cfg.d)
    z = X @ u1
    h = s1(z)
    a = u2 @ h
    e = s2(a) - y
    c = e * ds2(a)
    grads = jnp.stack([c * (X.T @ (u2 * ds1(z))), c * h])
    g = grads - jnp.sum(grads * state.u, axis=1, keepdims=True) * state.u
    u = state.u - eta * g
    u = u / jnp.linalg.norm(u, axis=1, keepdims=True)
    return SphericalSGDState(u, state.step + 1), SphericalSGDInfo(0.5 * e**2, eta)


@cites(BEN_AROUS)
@renamed_kwargs(eta="learning_rate")
def spherical_step(state: SphericalSGDState, x: Float[Array, " D"], y, learning_rate, cfg: MSIMConfig
                   ) -> tuple[SphericalSGDState, SphericalSGDInfo]:
    """One projected-gradient step on the sphere for both features on the sample ``(x, y)``.

    ``g_k = ∇_{u_k} ℓ - ⟨∇_{u_k} ℓ, u_k⟩ u_k`` and ``u_k ← (u_k - η g_k) / ||u_k - η g_k||`` with
    ``ℓ = ½ (f(x; u) - y)²`` (module docstring).

    Args:
      state: current :class:`SphericalSGDState`.
      x: one input, shape ``(d²,)``.
      y: its response (scalar).
      learning_rate: the step size ``η > 0`` (scalar; ``eta`` is its deprecated name).
      cfg: the model's configuration (``K = 2``).

    Returns:
      ``(state, SphericalSGDInfo(loss, learning_rate))``, the loss taken before the update.

    Raises:
      ValueError: ``cfg.K != 2``, ``x`` of the wrong shape, or ``learning_rate`` not finite and > 0.
    """
    _check_k2(cfg)
    x = as_array(x, "x", ndim=1, shape=(cfg.d**2,))
    learning_rate = check_positive(learning_rate, "learning_rate")
    return _step(state, x, jnp.asarray(y, x.dtype), jnp.asarray(learning_rate, x.dtype), cfg)


@cites(BEN_AROUS)
def lr_schedule(d: int, c_w: float, T_w: int, c_s: float) -> optax.Schedule:
    """Two-phase step size ``η_t = c_w / (d log d)`` for ``t < T_w``, then ``c_s / d``, as an optax schedule.

    Part of the reconstruction after Ben Arous, Gheissari and Jagannath, *Online stochastic gradient descent on
    non-convex losses from high-dimensional inference* (arXiv:2003.10409): ``η ∝ 1/(d log d)`` for weak recovery
    (``O(d log² d)`` steps), then ``η ∝ 1/d`` for the linear-convergence phase; the constants are the caller's.

    Args:
      d: block size ``>= 2``.
      c_w: weak-recovery constant ``> 0``.
      T_w: length of the first phase in steps ``>= 0``.
      c_s: strong-recovery constant ``> 0``.

    Returns:
      An ``optax.Schedule``, ``t -> η_t`` (0-d float array).

    Raises:
      TypeError: ``d`` or ``T_w`` is not an int.
      ValueError: ``d < 2``, ``T_w < 0``, or ``c_w``/``c_s`` not finite and > 0.
    """
    d = check_int(d, "d", min_value=2)
    T_w = check_int(T_w, "T_w", min_value=0)
    c_w = check_positive(c_w, "c_w")
    c_s = check_positive(c_s, "c_s")
    return optax.join_schedules(
        [optax.constant_schedule(c_w / (d * math.log(d))), optax.constant_schedule(c_s / d)], [T_w]
    )


def _as_schedule(learning_rate, name: str, last_step: int = 0) -> Callable[[Array], Array]:
    """``learning_rate`` (a number > 0 or a schedule of the step count) as a function of the step, checked at
    the steps 0 and ``last_step`` for a schedule."""
    if not callable(learning_rate):
        check_positive(learning_rate, name)
        return lambda t: jnp.asarray(learning_rate)
    with jax.ensure_compile_time_eval():  # the probe must stay concrete even when traced under jit
        probe = np.asarray([float(learning_rate(0)), float(learning_rate(last_step))])
    if not np.all(np.isfinite(probe)) or np.any(probe <= 0):
        raise ValueError(f"{name} must return finite step sizes > 0, got {probe.tolist()} "
                         "at the first and last steps")
    return learning_rate


@cites(BEN_AROUS)
def spherical_sgd_algorithm(cfg: MSIMConfig, learning_rate: Callable[[Array], Array] | float) -> Algorithm:
    """Spherical SGD of the two-layer student on a given stream of samples, as a :class:`~jaxlab.core.Algorithm`.

    ``init(key, dtype=None)`` is :func:`sgd_init` (cast to ``dtype`` when given); ``step(key, state, (x, y)) ->
    (state, SphericalSGDInfo)`` is one :func:`spherical_step` on the sample ``(x, y)`` with ``η_t =
    learning_rate(state.step)``, in the state's dtype (``key`` is ignored). Drive it over a data set with
    ``jaxlab.core.run(algo.step, state, None, xs=(X, Y))``.
    Reconstructed (the paper's text was not available): the joint spherical SGD and its two-phase schedule follow
    the online SGD analysis of Ben Arous, Gheissari and Jagannath (arXiv:2003.10409), applied to the
    reconstructed two-layer model.

    Args:
      cfg: the model's configuration (``K = 2``).
      learning_rate: a step size > 0 or a schedule ``t -> η_t`` (e.g. :func:`lr_schedule`).

    Returns:
      ``Algorithm(init, step)`` over :class:`SphericalSGDState`.

    Raises:
      ValueError: ``cfg.K != 2`` or a learning rate that is not finite and > 0.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.multiscale import MSIMConfig, lr_schedule, sample_data, spherical_sgd_algorithm
      >>> cfg = MSIMConfig(4, 2, ("tanh", "linear"))
      >>> ws = jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])  # the teacher's w_1, w_2
      >>> X, Y = sample_data(jax.random.key(1), ws, 200, cfg)
      >>> algo = spherical_sgd_algorithm(cfg, lr_schedule(4, 0.3, 100, 0.2))
      >>> state, trace = run(algo.step, algo.init(jax.random.key(2)), None, xs=(X, Y))
      >>> trace.infos.loss.shape
      (200,)
    """
    _check_k2(cfg)
    sched = _as_schedule(learning_rate, "learning_rate")

    def init(key, dtype=None) -> SphericalSGDState:
        state = sgd_init(key, cfg.d)
        return state if dtype is None else SphericalSGDState(state.u.astype(dtype), state.step)

    def step(key, state: SphericalSGDState, sample) -> tuple[SphericalSGDState, SphericalSGDInfo]:
        del key
        x, y = sample
        x = as_array(x, "x", ndim=1, shape=(cfg.d**2,)).astype(state.u.dtype)  # the step keeps the state's dtype
        return _step(state, x, jnp.asarray(y, x.dtype), jnp.asarray(sched(state.step), x.dtype), cfg)

    return Algorithm(init, step)


@cites(BEN_AROUS)
def online_sgd_algorithm(ws: Float[Array, "2 d"], cfg: MSIMConfig,
                         learning_rate: Callable[[Array], Array] | float) -> Algorithm:
    """Teacher-student online spherical SGD: each step draws one fresh sample of the model with features ``ws``
    from its key and takes one :func:`spherical_step` on it (never a data set).

    ``init(key)`` is :func:`sgd_init` in the dtype of ``ws``; ``step(key, state) -> (state, OnlineSGDInfo)``
    reports the loss, ``η_t = learning_rate(state.step)`` and the signed overlaps ``⟨u_k, w_k⟩`` after the step.
    Reconstructed (the paper's text was not available): the joint spherical SGD and its two-phase schedule follow
    the online SGD analysis of Ben Arous, Gheissari and Jagannath (arXiv:2003.10409), applied to the
    reconstructed two-layer model.

    Args:
      ws: the teacher's unit features, shape ``(2, d)``.
      cfg: the model's configuration (``K = 2``).
      learning_rate: a step size > 0 or a schedule ``t -> η_t`` (e.g. :func:`lr_schedule`).

    Returns:
      ``Algorithm(init, step)`` over :class:`SphericalSGDState`.

    Raises:
      ValueError: ``cfg.K != 2``, ``ws`` of the wrong shape, or a learning rate that is not finite and > 0.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.multiscale import MSIMConfig, online_sgd_algorithm
      >>> cfg = MSIMConfig(4, 2, ("tanh", "linear"))
      >>> ws = jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])  # the teacher's w_1, w_2
      >>> algo = online_sgd_algorithm(ws, cfg, 0.05)
      >>> state, trace = run(algo.step, algo.init(jax.random.key(1)), jax.random.key(2), 200)
      >>> trace.infos.overlaps.shape
      (200, 2)
    """
    _check_k2(cfg)
    ws = _check_ws(ws, cfg)
    sched = _as_schedule(learning_rate, "learning_rate")

    def init(key) -> SphericalSGDState:
        state = sgd_init(key, cfg.d)
        return SphericalSGDState(state.u.astype(ws.dtype), state.step)

    def step(key, state: SphericalSGDState) -> tuple[SphericalSGDState, OnlineSGDInfo]:
        x, y = _fresh_sample(key, ws, cfg)
        eta = jnp.asarray(sched(state.step), ws.dtype)
        state, info = _step(state, x, y, eta, cfg)
        return state, OnlineSGDInfo(info.loss, info.learning_rate, jnp.sum(state.u * ws, axis=1))

    return Algorithm(init, step)


@cites(BEN_AROUS)
@renamed_kwargs(n_steps="num_steps")
def run_online_sgd(
    key,
    ws: Float[Array, "2 d"],
    cfg: MSIMConfig,
    num_steps: int,
    schedule: Callable[[Array], Array] | float,
    record_every: int = 1,
    *,
    init: SphericalSGDState | None = None,
) -> tuple[SphericalSGDState, Float[Array, "T 2"]]:
    """Online SGD from a random start (or ``init``) with one fresh sample per step (never a data set).

    Runs :func:`online_sgd_algorithm` with :func:`jaxlab.core.run`. Vmappable over ``key`` (seeds).
    Reconstructed (the paper's text was not available): the joint spherical SGD and its two-phase schedule follow
    the online SGD analysis of Ben Arous, Gheissari and Jagannath (arXiv:2003.10409), applied to the
    reconstructed two-layer model.

    Args:
      key: PRNG key (split into the start and the samples).
      ws: the teacher's unit features, shape ``(2, d)``.
      cfg: the model's configuration (``K = 2``).
      num_steps: number of SGD steps (``n_steps`` is its deprecated name), a multiple of ``record_every``.
      schedule: a step size > 0 or a schedule ``t -> η_t``.
      record_every: record the overlaps after every ``record_every``-th step.
      init: optional starting state (default: :func:`sgd_init`).

    Returns:
      The final state and the signed overlaps ``(⟨u_1, w_1⟩, ⟨u_2, w_2⟩)`` after every ``record_every``-th step,
      shape ``(num_steps // record_every, 2)``.

    Raises:
      TypeError: an invalid ``cfg``, or non-int ``num_steps``/``record_every``.
      ValueError: ``cfg.K != 2``, ``ws`` of the wrong shape or non-finite, ``num_steps < 0``,
        ``record_every < 1``, ``num_steps`` not a multiple of ``record_every``, or a step size (a schedule's
        value at the first and last steps) that is not finite and > 0.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.multiscale import MSIMConfig, lr_schedule, run_online_sgd
      >>> cfg = MSIMConfig(4, 2, ("tanh", "linear"))
      >>> ws = jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])  # the teacher's w_1, w_2
      >>> state, traj = run_online_sgd(jax.random.key(1), ws, cfg, 400, lr_schedule(4, 0.3, 200, 0.2),
      ...                              record_every=20)
      >>> traj.shape
      (20, 2)
    """
    _check_k2(cfg)
    ws = _check_ws(ws, cfg)
    num_steps, record_every, sched = _run_args(num_steps, record_every, schedule)
    algo = online_sgd_algorithm(ws, cfg, sched)
    k_init, k_run = jax.random.split(key)
    state = algo.init(k_init) if init is None else SphericalSGDState(init.u.astype(ws.dtype), init.step)
    final, trace = run(algo.step, state, k_run, num_steps, thin=record_every)
    return final, trace.infos.overlaps


def _fresh_sample(key, ws: Array, cfg: MSIMConfig) -> tuple[Array, Array]:
    """One sample ``(x (d^K,), y)`` of the model for the online runners (noise from the second half of ``key``)."""
    kx, kn = jax.random.split(key)
    x = fast_random.normal(kx, (cfg.d**cfg.K,), dtype=ws.dtype)  # = jax.random.normal, bit for bit
    y = _forward(ws, x, cfg)
    if cfg.noise_std:
        y = y + cfg.noise_std * jax.random.normal(kn, (), dtype=ws.dtype)
    return x, y


def _run_args(num_steps, record_every, schedule):
    """Validated ``(num_steps, record_every, schedule as a function of the step)`` of the SGD runners."""
    num_steps = check_int(num_steps, "num_steps", min_value=0)
    record_every = check_int(record_every, "record_every", min_value=1)
    if num_steps % record_every:
        raise ValueError(f"num_steps must be a multiple of record_every={record_every}, got {num_steps}")
    return num_steps, record_every, _as_schedule(schedule, "schedule", max(num_steps - 1, 0))


def kronecker_direction(ws: Float[Array, "K d"]) -> Float[Array, " D"]:
    """The Kronecker product ``w_K ⊗ ... ⊗ w_1`` (``w_1`` on the fastest index of ``x``).

    With linear links the model's response is ``y = ⟨w_K ⊗ ... ⊗ w_1, x⟩``.

    Args:
      ws: ``(K, d)`` float array of features, finest first.

    Returns:
      ``(d^K,)`` array in the dtype of ``ws``.

    Raises:
      TypeError: non-float ``ws``.
      ValueError: ``ws`` not 2-D.
    """
    ws = as_array(ws, "ws", ndim=2)
    out = ws[-1]
    for w in ws[-2::-1]:
        out = jnp.kron(out, w)
    return out


@cites(MSIM)
def shallow_sgd_algorithm(ws: Float[Array, "K d"], cfg: MSIMConfig,
                          learning_rate: Callable[[Array], Array] | float) -> Algorithm:
    """The "shallow" single-index baseline as a :class:`~jaxlab.core.Algorithm` [reconstructed].

    One unit vector ``u`` in ``R^{d^K}`` fitted by online spherical SGD to ``y`` with the composite link
    ``g = σ_K ∘ ... ∘ σ_1`` (``ŷ = g(⟨u, x⟩)``), ignoring the hierarchy::

        ∇ = (g(⟨u, x⟩) - y) g'(⟨u, x⟩) x,    u ← normalise(u - η_t (∇ - ⟨∇, u⟩ u)).

    ``init(key)`` draws ``u`` uniformly on the sphere (dtype of ``ws``); ``step(key, state)`` draws one fresh
    sample from its key (the stream of :func:`online_sgd_algorithm`) and reports
    ``ShallowSGDInfo(|⟨u, w_K ⊗ ... ⊗ w_1⟩|)``.

    Args:
      ws: the teacher's unit features, shape ``(K, d)``.
      cfg: the model's configuration.
      learning_rate: a step size > 0 or a schedule ``t -> η_t``.

    Returns:
      ``Algorithm(init, step)`` over :class:`ShallowSGDState`; ``step`` returns ``(ShallowSGDState,
      ShallowSGDInfo)``.

    Raises:
      TypeError: an invalid ``cfg``.
      ValueError: an invalid ``cfg``, ``ws`` of the wrong shape or non-finite, or a learning rate that is not
        finite and > 0.
    """
    check_config(cfg)
    ws = _check_ws(ws, cfg)
    sched = _as_schedule(learning_rate, "learning_rate")
    links = [link_fns(name) for name in cfg.links]
    target = kronecker_direction(ws)
    D = target.shape[0]

    def link(a):  # the composite link and its derivative by the chain rule
        g, dg = a, jnp.ones_like(a)
        for sigma, dsigma in links:
            g, dg = sigma(g), dg * dsigma(g)
        return g, dg

    def init(key) -> ShallowSGDState:
        u0 = jax.random.normal(key, (D,), ws.dtype)
        return ShallowSGDState(u0 / jnp.linalg.norm(u0), jnp.zeros((), jnp.int32))

    def step(key, state: ShallowSGDState) -> tuple[ShallowSGDState, ShallowSGDInfo]:
        u, t = state
        x, y = _fresh_sample(key, ws, cfg)
        g, dg = link(u @ x)
        grad = (g - y) * dg * x
        u = u - jnp.asarray(sched(t), ws.dtype) * (grad - (grad @ u) * u)
        u = u / jnp.linalg.norm(u)
        return ShallowSGDState(u, t + 1), ShallowSGDInfo(jnp.abs(u @ target))

    return Algorithm(init, step)


@cites(MSIM)
@renamed_kwargs(n_steps="num_steps")
def run_shallow_sgd(
    key,
    ws: Float[Array, "K d"],
    cfg: MSIMConfig,
    num_steps: int,
    schedule: Callable[[Array], Array] | float,
    record_every: int = 1,
) -> tuple[Float[Array, " D"], Float[Array, " T"]]:
    """Run :func:`shallow_sgd_algorithm` (the baseline of the comparison with the hierarchical SGD) with
    :func:`jaxlab.core.run`, one fresh sample per step (the same stream as :func:`run_online_sgd`).

    It has ``d^K`` unknowns instead of ``K d``, so it needs of order ``d^K`` samples. Vmappable over ``key``.

    Args:
      key: PRNG key (split into the start and the samples).
      ws: the teacher's unit features, shape ``(K, d)``.
      cfg: the model's configuration.
      num_steps: number of SGD steps (``n_steps`` is its deprecated name), a multiple of ``record_every``.
      schedule: a step size > 0 or a schedule ``t -> η_t``.
      record_every: record the overlap after every ``record_every``-th step.

    Returns:
      ``(u, overlaps)``: the final ``(d^K,)`` unit vector and ``|⟨u, w_K ⊗ ... ⊗ w_1⟩|`` after every
      ``record_every``-th step, shape ``(num_steps // record_every,)``.

    Raises:
      TypeError: an invalid ``cfg``, or non-int ``num_steps``/``record_every``.
      ValueError: an invalid ``cfg``, ``ws`` of the wrong shape or non-finite, ``num_steps < 0``,
        ``record_every < 1``, ``num_steps`` not a multiple of ``record_every``, or a step size that is not finite
        and > 0.
    """
    check_config(cfg)
    ws = _check_ws(ws, cfg)
    num_steps, record_every, sched = _run_args(num_steps, record_every, schedule)
    algo = shallow_sgd_algorithm(ws, cfg, sched)
    k_init, k_run = jax.random.split(key)
    final, trace = run(algo.step, algo.init(k_init), k_run, num_steps, thin=record_every)
    return final.u, trace.infos.overlap


def population_loss_linear(us: Float[Array, "K d"], ws: Float[Array, "K d"]) -> Float[Array, ""]:
    """Population loss for linear links: ``E ½ (y - f(x; u))² = 1 - Π_k ⟨u_k, w_k⟩`` (unit rows, no noise, any K).

    With linear links ``y = ⟨⊗_k w_k, x⟩`` and ``f = ⟨⊗_k u_k, x⟩``, so the loss is
    ``½ ||⊗_k w_k - ⊗_k u_k||² = 1 - Π_k ⟨u_k, w_k⟩`` for unit rows (add ``τ²/2`` for label noise).

    Args:
      us: ``(K, d)`` float array of the student's unit features.
      ws: ``(K, d)`` float array of the teacher's unit features.

    Returns:
      0-d float array.

    Raises:
      TypeError: non-float arrays.
      ValueError: ``us`` not 2-D, or ``ws`` not of its shape.
    """
    us = as_array(us, "us", ndim=2)
    ws = as_array(ws, "ws", shape=us.shape)
    return 1.0 - jnp.prod(jnp.sum(us * ws, axis=1))


def _spherical_example(key) -> tuple[Algorithm, SphericalSGDState, tuple[Array, Array]]:
    cfg = MSIMConfig(4, 2, ("tanh", "linear"))
    k_ws, k_data, k_init = jax.random.split(key, 3)
    ws = jax.random.normal(k_ws, (2, 4))
    ws = ws / jnp.linalg.norm(ws, axis=1, keepdims=True)
    X = jax.random.normal(k_data, (8, 16))
    Y = jax.vmap(lambda x: _forward(ws, x, cfg))(X)
    algo = spherical_sgd_algorithm(cfg, 0.05)
    return algo, algo.init(k_init), (X, Y)


def _teacher_example(key):
    ws = jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])
    return ws, MSIMConfig(4, 2, ("tanh", "linear"))


def _online_example(key) -> tuple[Algorithm, SphericalSGDState, None]:
    ws, cfg = _teacher_example(key)
    algo = online_sgd_algorithm(ws, cfg, 0.05)
    return algo, algo.init(key), None


def _shallow_example(key) -> tuple[Algorithm, ShallowSGDState, None]:
    ws, cfg = _teacher_example(key)
    algo = shallow_sgd_algorithm(ws, cfg, 0.05)
    return algo, algo.init(key), None


register_algorithm("multiscale_spherical_sgd", spherical_sgd_algorithm, _spherical_example, area="multiscale")
register_algorithm("multiscale_online_sgd", online_sgd_algorithm, _online_example, area="multiscale")
register_algorithm("multiscale_shallow_sgd", shallow_sgd_algorithm, _shallow_example, area="multiscale")
