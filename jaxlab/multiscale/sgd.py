r"""Joint online spherical SGD for the two-layer (``K = 2``) multiscale single-index model.

Reconstructed in ``specs/multiscale.md`` section 3.4 after Ben Arous, Gheissari & Jagannath, "Online
stochastic gradient descent on non-convex losses from high-dimensional inference" (arXiv:2003.10409).

Student ``f(x; u_1, u_2) = σ_2(⟨u_2, σ_1(X u_1)⟩)`` with ``X = reshape(x, (d, d))``, loss
``ℓ = ½ (f - y)²`` on one fresh sample per step. With ``z = X u_1``, ``h = σ_1(z)``, ``a = ⟨u_2, h⟩``,
``e = σ_2(a) - y``::

    ∇_{u_2} ℓ = e σ_2'(a) h,      ∇_{u_1} ℓ = e σ_2'(a) Xᵀ (u_2 ∘ σ_1'(z)),
    g_k = ∇_{u_k} ℓ - ⟨∇_{u_k} ℓ, u_k⟩ u_k,      u_k ← (u_k - η_t g_k) / ||u_k - η_t g_k||.

Two-phase schedule: ``η = c_w / (d log d)`` for ``T_w`` steps (weak recovery, ``O(d log² d)`` steps), then
``η = c_s / d`` (linear convergence, ``O(d log(1/ε))`` steps). For linear links the population loss is
``1 - Π_k ⟨u_k, w_k⟩`` (:func:`population_loss_linear`).
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
from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_int, check_positive
from jaxlab.multiscale.model import MSIMConfig, _check_ws, _forward, check_config, link_fns

__all__ = ["SGDInfo", "SGDState", "kronecker_direction", "lr_schedule", "population_loss_linear", "run_online_sgd",
           "run_shallow_sgd", "sgd_init", "spherical_step"]


class SGDState(NamedTuple):
    """Student features ``u`` (row ``k-1`` is ``u_k``) and the step counter."""

    u: Float[Array, "2 d"]
    step: Int[Array, ""]


class SGDInfo(NamedTuple):
    loss: Float[Array, ""]
    eta: Float[Array, ""]


@cites("benarous2021online")
def sgd_init(key, d: int) -> SGDState:
    """Two independent uniform unit vectors (initial overlaps of order ``d^{-1/2}``)."""
    d = check_int(d, "d", min_value=2)
    g = jax.random.normal(key, (2, d))
    return SGDState(g / jnp.linalg.norm(g, axis=1, keepdims=True), jnp.zeros((), jnp.int32))


def _check_k2(cfg: MSIMConfig) -> None:
    check_config(cfg)
    if cfg.K != 2:
        raise ValueError(f"online spherical SGD is implemented for the two-layer model (cfg.K = 2), got K = {cfg.K}; "
                         "the paper's SGD result is for two layers")


def _step(state: SGDState, x: Array, y: Array, eta: Array, cfg: MSIMConfig) -> tuple[SGDState, SGDInfo]:
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
    return SGDState(u, state.step + 1), SGDInfo(0.5 * e**2, eta)


@cites("benarous2021online")
def spherical_step(state: SGDState, x: Float[Array, " D"], y, eta, cfg: MSIMConfig) -> tuple[SGDState, SGDInfo]:
    """One projected-gradient step on the sphere for both features on the sample ``(x, y)``."""
    _check_k2(cfg)
    x = as_array(x, "x", ndim=1, shape=(cfg.d**2,))
    check_positive(eta, "eta")
    return _step(state, x, jnp.asarray(y, x.dtype), jnp.asarray(eta, x.dtype), cfg)


@cites("benarous2021online")
def lr_schedule(d: int, c_w: float, T_w: int, c_s: float) -> optax.Schedule:
    """``η_t = c_w / (d log d)`` for ``t < T_w``, then ``c_s / d`` (an optax schedule)."""
    d = check_int(d, "d", min_value=2)
    T_w = check_int(T_w, "T_w", min_value=0)
    check_positive(c_w, "c_w")
    check_positive(c_s, "c_s")
    return optax.join_schedules(
        [optax.constant_schedule(c_w / (d * math.log(d))), optax.constant_schedule(c_s / d)], [T_w]
    )


@cites("benarous2021online")
def run_online_sgd(
    key,
    ws: Float[Array, "2 d"],
    cfg: MSIMConfig,
    n_steps: int,
    schedule: Callable[[Array], Array] | float,
    record_every: int = 1,
    *,
    init: SGDState | None = None,
) -> tuple[SGDState, Float[Array, "T 2"]]:
    """Online SGD from a random start (or ``init``) with one fresh sample per step (never a data set).

    Returns the final state and the signed overlaps ``(⟨u_1, w_1⟩, ⟨u_2, w_2⟩)`` after every
    ``record_every``-th step (``n_steps`` must be a multiple of it). Vmappable over ``key`` (seeds).
    """
    _check_k2(cfg)
    ws = _check_ws(ws, cfg)
    n_steps, record_every, sched = _run_args(n_steps, record_every, schedule)
    k_init, k_run = jax.random.split(key)
    state = sgd_init(k_init, cfg.d) if init is None else init
    state = SGDState(state.u.astype(ws.dtype), state.step)

    def step(k, st):
        x, y = _fresh_sample(k, ws, cfg)
        eta = jnp.asarray(sched(st.step), ws.dtype)
        st, _ = _step(st, x, y, eta, cfg)
        return st, jnp.sum(st.u * ws, axis=1)

    final, trace = run(step, state, k_run, n_steps, thin=record_every)
    return final, trace.infos


def _fresh_sample(key, ws: Array, cfg: MSIMConfig) -> tuple[Array, Array]:
    """One sample ``(x (d^K,), y)`` of the model for the online runners (noise from the second half of ``key``)."""
    kx, kn = jax.random.split(key)
    x = fast_random.normal(kx, (cfg.d**cfg.K,), dtype=ws.dtype)  # = jax.random.normal, bit for bit
    y = _forward(ws, x, cfg)
    if cfg.noise_std:
        y = y + cfg.noise_std * jax.random.normal(kn, (), dtype=ws.dtype)
    return x, y


def _run_args(n_steps, record_every, schedule):
    """Validated ``(n_steps, record_every, schedule as a function of the step)`` of the SGD runners."""
    n_steps = check_int(n_steps, "n_steps", min_value=0)
    record_every = check_int(record_every, "record_every", min_value=1)
    if n_steps % record_every:
        raise ValueError(f"n_steps must be a multiple of record_every={record_every}, got {n_steps}")
    if not callable(schedule):
        check_positive(schedule, "schedule")
        return n_steps, record_every, lambda t: jnp.asarray(schedule)
    with jax.ensure_compile_time_eval():  # the probe must stay concrete even when traced under jit
        probe = np.asarray([float(schedule(0)), float(schedule(max(n_steps - 1, 0)))])
    if not np.all(np.isfinite(probe)) or np.any(probe <= 0):
        raise ValueError(f"schedule must return finite step sizes > 0, got {probe.tolist()} "
                         "at the first and last steps")
    return n_steps, record_every, schedule


def kronecker_direction(ws: Float[Array, "K d"]) -> Float[Array, " D"]:
    """``w_K ⊗ ... ⊗ w_1`` (``w_1`` on the fastest index of ``x``): for linear links ``y = ⟨this, x⟩``."""
    ws = as_array(ws, "ws", ndim=2)
    out = ws[-1]
    for w in ws[-2::-1]:
        out = jnp.kron(out, w)
    return out


@cites("msim2026")
def run_shallow_sgd(
    key,
    ws: Float[Array, "K d"],
    cfg: MSIMConfig,
    n_steps: int,
    schedule: Callable[[Array], Array] | float,
    record_every: int = 1,
) -> tuple[Float[Array, " D"], Float[Array, " T"]]:
    """The "shallow" baseline of spec section 5 [reconstructed]: one unit vector ``u`` in ``R^{d^K}`` fitted by
    online spherical SGD to ``y`` with the composite link ``g = σ_K ∘ ... ∘ σ_1`` (``ŷ = g(⟨u, x⟩)``), ignoring
    the hierarchy; one fresh sample per step (the same stream as :func:`run_online_sgd`). Returns the final
    ``u`` and ``|⟨u, w_K ⊗ ... ⊗ w_1⟩|`` after every ``record_every``-th step. It has ``d^K`` unknowns instead
    of ``K d``, so it needs of order ``d^K`` samples. Vmappable over ``key``."""
    check_config(cfg)
    ws = _check_ws(ws, cfg)
    n_steps, record_every, sched = _run_args(n_steps, record_every, schedule)
    links = [link_fns(name) for name in cfg.links]
    target = kronecker_direction(ws)
    D = target.shape[0]

    def link(a):  # the composite link and its derivative by the chain rule
        g, dg = a, jnp.ones_like(a)
        for sigma, dsigma in links:
            g, dg = sigma(g), dg * dsigma(g)
        return g, dg

    def step(k, carry):
        u, t = carry
        x, y = _fresh_sample(k, ws, cfg)
        g, dg = link(u @ x)
        grad = (g - y) * dg * x
        u = u - jnp.asarray(sched(t), ws.dtype) * (grad - (grad @ u) * u)
        u = u / jnp.linalg.norm(u)
        return (u, t + 1), jnp.abs(u @ target)

    k_init, k_run = jax.random.split(key)
    u0 = jax.random.normal(k_init, (D,), ws.dtype)
    (u, _), trace = run(step, (u0 / jnp.linalg.norm(u0), jnp.zeros((), jnp.int32)), k_run, n_steps,
                        thin=record_every)
    return u, trace.infos


def population_loss_linear(us: Float[Array, "K d"], ws: Float[Array, "K d"]) -> Float[Array, ""]:
    """``E ½ (y - f(x; u))² = 1 - Π_k ⟨u_k, w_k⟩`` for linear links and unit rows (any K)."""
    us = as_array(us, "us", ndim=2)
    ws = as_array(ws, "ws", shape=us.shape)
    return 1.0 - jnp.prod(jnp.sum(us * ws, axis=1))
