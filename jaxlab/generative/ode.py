r"""One ODE integrator for the flow samplers of :mod:`jaxlab.generative.semantic_flow` (rectified flow, noise level
``sigma`` from 1 to 0) and :mod:`jaxlab.generative.flow_agent` (conditional flow matching, time ``t`` from 0 to 1).

Both integrate ``dx/ds = v(x, s, cond)`` along a grid ``s_0, ..., s_N`` (increasing or decreasing), with

    Euler:     x_{i+1} = x_i + h_i v(x_i, s_i, c),                               h_i = s_{i+1} - s_i,
    midpoint:  x_{i+1} = x_i + h_i v(x_i + (h_i / 2) v(x_i, s_i, c), s_i + h_i / 2, c),

or adaptively with diffrax (Tsit5 and a PID step-size controller). A guidance map ``x <- g(x, s_i, i)`` may be
applied before each grid step (training-free guidance, e.g. SemanticFlow's energy rectification).

Papers: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
Flow", arXiv:2209.03003; Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative
Modeling", arXiv:2210.02747.

The grid sampler is an :class:`~jaxlab.core.Algorithm`: :func:`grid_ode_algorithm` binds the velocity, the grid
and the condition; ``init(x)`` starts at ``s_0`` and ``step(key, state)`` (deterministic: ``key`` is ignored)
takes one grid step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import diffrax
import jax
import jax.numpy as jnp

from jaxlab.core.algorithm import Algorithm
from jaxlab.core.loop import run

__all__ = [
    "EulerInfo",
    "EulerState",
    "check_velocity",
    "diffrax_ode_sample",
    "grid_ode_algorithm",
    "grid_ode_sample",
]

_METHODS = ("euler", "midpoint")


class EulerState(NamedTuple):
    """Grid sampler state: the current ``x`` and the grid index ``i`` (``x`` sits at ``grid[i]``).

    Attributes:
      x: the current point, any shape.
      i: int32 scalar, the number of grid steps taken.
    """

    x: jax.Array
    i: jax.Array


class EulerInfo(NamedTuple):
    """Diagnostics of one grid step.

    Attributes:
      s: the grid level ``s_i`` at which the step started.
      h: the step ``h_i = s_{i+1} - s_i``.
    """

    s: jax.Array
    h: jax.Array


def check_velocity(velocity_fn: Callable, x: Any, s: Any, cond: Any, name: str = "velocity_fn") -> None:
    """Check at trace time that ``velocity_fn(x, s, cond)`` returns an array of ``x``'s shape.

    Args:
      velocity_fn: the velocity callable ``v(x, s, cond)``.
      x: a point (array); only its shape and dtype are used.
      s: a time or noise level (scalar).
      cond: the condition passed to ``velocity_fn``.
      name: the argument's name in the error message.

    Raises:
      TypeError: ``velocity_fn`` is not callable.
      ValueError: its output's shape differs from ``x``'s.
    """
    if not callable(velocity_fn):
        raise TypeError(f"{name} must be callable v(x, t, cond), got {type(velocity_fn).__name__}")
    out = jax.eval_shape(velocity_fn, x, s, cond)
    shape = getattr(out, "shape", None)
    if shape != jnp.shape(x):
        raise ValueError(f"{name} must return an array of the shape of x {tuple(jnp.shape(x))}, got "
                         f"{'a ' + type(out).__name__ if shape is None else 'shape ' + str(tuple(shape))}")


def grid_ode_algorithm(velocity_fn: Callable, grid: jax.Array, cond: Any = None, *, method: str = "euler",
                       guidance_fn: Callable | None = None) -> Algorithm:
    """Fixed-grid ODE sampler as an :class:`~jaxlab.core.Algorithm` (module docstring).

    Args:
      velocity_fn: ``v(x, s, cond)``, returning an array of ``x``'s shape.
      grid: ``(N + 1,)`` float array of levels ``s_0..s_N`` (validated by the callers).
      cond: condition pytree passed to ``velocity_fn``.
      method: ``"euler"`` or ``"midpoint"``.
      guidance_fn: optional ``g(x, s_i, i) -> x'`` applied before each step.

    Returns:
      ``Algorithm(init, step)``: ``init(x) -> EulerState(x, 0)``; ``step(key, state) -> (EulerState, EulerInfo)``
      (``key`` ignored).

    Raises:
      ValueError: unknown ``method``.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")

    def init(x) -> EulerState:
        return EulerState(x, jnp.zeros((), jnp.int32))

    def step(key, state: EulerState) -> tuple[EulerState, EulerInfo]:
        del key
        s, s_next = grid[state.i], grid[state.i + 1]
        dtype = state.x.dtype
        # every user function's output is cast to the carry's dtype: a float32 sample stays float32 even when
        # the velocity (or guidance) computes in float64 under x64
        x = state.x if guidance_fn is None else guidance_fn(state.x, s, state.i).astype(dtype)
        h = (s_next - s).astype(dtype)

        def v(y, level):
            return velocity_fn(y, level, cond).astype(dtype)

        if method == "euler":
            x = x + h * v(x, s)
        else:
            x = x + h * v(x + 0.5 * h * v(x, s), s + 0.5 * h)
        return EulerState(x, state.i + 1), EulerInfo(s, h)

    return Algorithm(init, step)


def grid_ode_sample(velocity_fn: Callable, x_init: jax.Array, grid: jax.Array, cond: Any = None, *,
                    method: str = "euler", guidance_fn: Callable | None = None,
                    return_traj: bool = False) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Integrate along ``grid`` with :func:`grid_ode_algorithm`, driven by :func:`jaxlab.core.run`.

    Args:
      velocity_fn: ``v(x, s, cond)``, returning an array of ``x_init``'s shape.
      x_init: float array, the start point at ``grid[0]``.
      grid: ``(N + 1,)`` float array of levels.
      cond: condition pytree passed to ``velocity_fn``.
      method: ``"euler"`` or ``"midpoint"``.
      guidance_fn: optional ``g(x, s_i, i) -> x'`` applied before each step.
      return_traj: also return the points at every grid level.

    Returns:
      ``x_N`` (``x_init``'s shape), or ``(x_N, trajectory)`` with the trajectory of shape ``(N + 1, *x_init.shape)``.

    Raises:
      ValueError: unknown ``method``.
    """
    algo = grid_ode_algorithm(velocity_fn, grid, cond, method=method, guidance_fn=guidance_fn)
    state = algo.init(x_init)
    final, trace = run(algo.step, state, jax.random.key(0), grid.shape[0] - 1, save_states=return_traj)
    if return_traj:
        return final.x, jnp.concatenate([x_init[None], trace.states.x])
    return final.x


def diffrax_ode_sample(velocity_fn: Callable, x_init: jax.Array, cond: Any = None, *, t0: float, t1: float,
                       dt0: float, rtol: float, atol: float, max_steps: int | None = 4096,
                       ts: jax.Array | None = None, solver: Any = None) -> jax.Array | tuple[jax.Array, jax.Array]:
    """Integrate ``dx/ds = v(x, s, cond)`` from ``t0`` to ``t1`` with a diffrax solver and a PID controller.

    The levels and the velocity's output are taken in ``x_init``'s dtype, so a float32 start gives a float32
    result under x64 too.

    Args:
      velocity_fn: ``v(x, s, cond)``, returning an array of ``x_init``'s shape.
      x_init: float array, the start point at ``t0``.
      cond: condition pytree (diffrax's ``args``).
      t0: float, the start level.
      t1: float, the end level.
      dt0: float, the first step (signed, towards ``t1``).
      rtol: positive float, the controller's relative tolerance.
      atol: positive float, the controller's absolute tolerance.
      max_steps: int or None, diffrax's step budget.
      ts: optional ``(M,)`` float array of levels at which to also return the solution.
      solver: a diffrax solver; None means ``diffrax.Tsit5()``.

    Returns:
      ``x(t1)`` (``x_init``'s shape), or, when ``ts`` is given, ``(x(ts[-1]), x(ts))`` with ``x(ts)`` of shape
      ``(M, *x_init.shape)`` (pass ``ts`` ending at ``t1``).
    """
    # times in the state's dtype: diffrax promotes the state to the time dtype, so float64 levels under x64 would
    # turn a float32 sample into float64
    dtype = jnp.result_type(x_init)
    t0, t1, dt0 = (jnp.asarray(t, dtype) for t in (t0, t1, dt0))
    save = diffrax.SaveAt(ts=jnp.asarray(ts, dtype)) if ts is not None else diffrax.SaveAt(t1=True)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda s, x, c: velocity_fn(x, s, c).astype(dtype)),
                              diffrax.Tsit5() if solver is None else solver, t0, t1, dt0, x_init, args=cond,
                              saveat=save, max_steps=max_steps,
                              stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol))
    return (sol.ys[-1], sol.ys) if ts is not None else sol.ys[-1]
