r"""Conditional risk of a CwR surrogate and its first-order minimisation with optax.

For a loss L(u, y) and a class distribution p in the simplex, the conditional risk is

    R_L(u; p) = sum_y p_y L(u, y),

and calibration compares inf_u R_L(u; p) with the infimum over the link cells of wrong decisions. For
smooth losses (``ce``) the infimum is found here by optax (Adam or L-BFGS) from several random starts; for
polyhedral losses the exact LP of :mod:`jaxlab.losses.cwr.check` is preferred.

Paper: H. G. Ramaswamy, A. Tewari, S. Agarwal, "Consistent algorithms for multiclass classification with an
abstain option", Electronic Journal of Statistics 12 (2018), arXiv:1505.04137.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float

from jaxlab.core import Algorithm, register_algorithm, run
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.validation import as_array, check_int, check_simplex
from jaxlab.losses.cwr.papers import RAMASWAMY

__all__ = [
    "MinimizerInfo",
    "MinimizerState",
    "conditional_risk",
    "minimize",
    "minimize_conditional_risk",
    "minimizer_algorithm",
    "minimizer_init",
    "minimizer_step",
]


def conditional_risk(loss_fn: Callable[..., jax.Array], u: Float[Array, "... d"], p: Float[Array, " K"],
                     **kw: Any) -> Float[Array, "..."]:
    """Conditional risk R_L(u; p) = sum_y p_y L(u, y), with the loss vmapped over the K labels.

    Args:
      loss_fn: ``loss_fn(u, y, **kw)`` for an integer label y.
      u: scores, shape ``(..., d)``.
      p: class distribution, shape ``(K,)`` (on the simplex).
      **kw: passed to ``loss_fn``.

    Returns:
      The risk, shape ``u.shape[:-1]``.

    Raises:
      ValueError: ``p`` is not a probability vector (eagerly; under ``jit`` a run-time error).
    """
    p = as_array(p, "p", kind="float", ndim=1)
    p = check_simplex(p, "p")
    losses = jax.vmap(lambda y: loss_fn(u, y, **kw))(jnp.arange(p.shape[0], dtype=jnp.int32))
    return jnp.tensordot(p.astype(losses.dtype), losses, axes=1)


class MinimizerState(NamedTuple):
    """State of the first-order minimiser.

    Attributes:
      u: the current point, shape ``(..., d)``.
      opt_state: the optax optimiser's state.
      value: the objective at the previous point (``inf`` before the first step).
    """

    u: jax.Array
    opt_state: Any
    value: jax.Array


class MinimizerInfo(NamedTuple):
    """Diagnostics of one minimiser step.

    Attributes:
      value: the objective at the point before the step (scalar).
    """

    value: jax.Array


def minimizer_init(u0: Float[Array, "..."], optimizer: optax.GradientTransformation) -> MinimizerState:
    """Initial state at ``u0``: ``MinimizerState(u0, optimizer.init(u0), inf)``.

    Args:
      u0: ``(..., d)`` float array, the starting point.
      optimizer: the optax gradient transformation that will be stepped.

    Returns:
      :class:`MinimizerState` with ``value = inf`` in the dtype of ``u0``.
    """
    return MinimizerState(u0, optimizer.init(u0), jnp.asarray(jnp.inf, u0.dtype))


def minimizer_step(key: Any, state: MinimizerState, objective: Callable[[jax.Array], jax.Array],
                   optimizer: optax.GradientTransformation) -> tuple[MinimizerState, jax.Array]:
    """One optax step ``u <- u + optimizer.update(grad objective(u))`` on ``objective``.

    The objective's value, gradient and ``value_fn`` are passed to the optimizer as extra arguments, so
    line-search methods such as ``optax.lbfgs()`` work as well as ``optax.adam``. :func:`minimizer_algorithm`
    binds ``objective`` and ``optimizer`` once.

    Args:
      key: ignored (the method is deterministic); kept for the ``step(key, state)`` protocol.
      state: the current :class:`MinimizerState`.
      objective: scalar function of ``u``.
      optimizer: the optax transformation the state was built with.

    Returns:
      ``(state, value)``: the new state (its ``value`` is the objective before the step) and that value, a 0-d
      array.
    """
    del key
    value, grad = jax.value_and_grad(objective)(state.u)
    opt = optax.with_extra_args_support(optimizer)
    updates, opt_state = opt.update(grad, state.opt_state, state.u, value=value, grad=grad,
                                    value_fn=objective)
    return MinimizerState(optax.apply_updates(state.u, updates), opt_state, value), value


def minimizer_algorithm(objective: Callable[[jax.Array], jax.Array],
                        optimizer: optax.GradientTransformation) -> Algorithm:
    """The first-order minimiser of ``objective`` as an :class:`~jaxlab.core.Algorithm`.

    ``init(u0) -> MinimizerState``; ``step(key, state) -> (MinimizerState, MinimizerInfo)`` is one
    ``optimizer`` update u <- u + optimizer.update(grad objective(u)) (the key is ignored: the method is
    deterministic). The objective's value, gradient and ``value_fn`` reach the optimizer as extra arguments,
    so line-search methods such as ``optax.lbfgs()`` work as well as ``optax.adam``.

    Args:
      objective: scalar function of ``u``, e.g. ``lambda u: conditional_risk(loss, u, p)``.
      optimizer: any optax gradient transformation.

    Returns:
      ``Algorithm(init, step)``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.core import run
      >>> from jaxlab.losses.cwr import minimizer_algorithm
      >>> algo = minimizer_algorithm(lambda u: jnp.sum((u - 1.0) ** 2), optax.adam(0.1))
      >>> final, trace = run(algo.step, algo.init(jnp.zeros(2)), jax.random.key(0), 200)
      >>> trace.infos.value.shape
      (200,)
    """

    def init(u0: Float[Array, "..."]) -> MinimizerState:
        return minimizer_init(u0, optimizer)

    def step(key: Any, state: MinimizerState) -> tuple[MinimizerState, MinimizerInfo]:
        state, value = minimizer_step(key, state, objective, optimizer)
        return state, MinimizerInfo(value)

    return Algorithm(init, step)


@renamed_kwargs(steps="num_steps")
def minimize(objective: Callable[[jax.Array], jax.Array], u0: Float[Array, "..."], key: Any, num_steps: int,
             optimizer: optax.GradientTransformation) -> MinimizerState:
    """Run :func:`minimizer_algorithm` ``num_steps`` times with :func:`jaxlab.core.run`; the final state.

    The final state's ``value`` is the objective at the final point. ``key`` is passed to the (deterministic)
    steps only; it comes third for compatibility with earlier releases.

    Args:
      objective: scalar function of ``u``.
      u0: ``(..., d)`` float array, the starting point.
      key: PRNG key (split per step, unused by the steps).
      num_steps: number of steps ``>= 1`` (``steps`` is its deprecated name).
      optimizer: any optax gradient transformation.

    Returns:
      The final :class:`MinimizerState`, with ``value = objective(u)`` at the final point.
    """
    algo = minimizer_algorithm(objective, optimizer)
    final, _ = run(algo.step, algo.init(u0), key, num_steps, thin=num_steps)
    return final._replace(value=objective(final.u))


@cites(RAMASWAMY)
@renamed_kwargs(steps="num_steps")
def minimize_conditional_risk(loss_fn: Callable[..., jax.Array], p: Float[Array, " K"], d: int, key: Any,
                              num_steps: int = 5000, restarts: int = 8, learning_rate: float = 0.05,
                              method: str = "adam", **kw: Any) -> Float[Array, " d"]:
    """Minimise R_L(u; p) over u in R^d from ``restarts`` random starts with optax.

    ``method="adam"``: Adam with a cosine-decayed step from ``learning_rate``; ``"lbfgs"``: ``optax.lbfgs``
    with its zoom line search (for smooth losses; a few hundred steps suffice). The starts run as one vmapped
    batch; the best final point is returned. Jit- and vmap-able over ``p`` and ``key``. For polyhedral losses
    prefer the exact LP of :mod:`jaxlab.losses.cwr.check`.

    Args:
      loss_fn: ``loss_fn(u, y, **kw)``.
      p: class distribution, shape ``(K,)``.
      d: score dimension.
      key: PRNG key (the starts); it comes fourth for compatibility with earlier releases.
      num_steps: optimiser steps per start.
      restarts: number of random starts N(0, I_d).
      learning_rate: Adam's initial step size (``method="adam"``).
      method: ``"adam"`` or ``"lbfgs"``.
      **kw: passed to ``loss_fn``.

    Returns:
      The best final point, shape ``(d,)``.

    Raises:
      TypeError: a count that is not an int, or a non-float ``p``.
      ValueError: ``p`` is not a probability vector, an unknown ``method``, or a count below 1.
    """
    d = check_int(d, "d", min_value=1)
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    restarts = check_int(restarts, "restarts", min_value=1)
    p = as_array(p, "p", kind="float", ndim=1)
    p = check_simplex(p, "p")
    if method not in ("adam", "lbfgs"):
        raise ValueError(f"method must be 'adam' or 'lbfgs', got {method!r}")
    opt = (optax.lbfgs() if method == "lbfgs"
           else optax.adam(optax.cosine_decay_schedule(learning_rate, num_steps, alpha=1e-3)))
    k0, k1 = jax.random.split(key)
    u0 = jax.random.normal(k0, (restarts, d), dtype=p.dtype)

    def one(u_start, k):
        return minimize(lambda u: conditional_risk(loss_fn, u, p, **kw), u_start, k, num_steps, opt)

    states = jax.vmap(one)(u0, jax.random.split(k1, restarts))
    return states.u[jnp.argmin(states.value)]


def _minimizer_example(key: Any) -> tuple[Algorithm, MinimizerState, None]:
    """Adam on the CE conditional risk of a 3-class distribution, from a random start."""
    p = jnp.array([0.5, 0.3, 0.2])
    algo = minimizer_algorithm(lambda u: conditional_risk(lambda v, y: jax.nn.logsumexp(v) - v[y], u, p),
                               optax.adam(0.05))
    return algo, algo.init(jax.random.normal(key, (3,))), None


register_algorithm("cwr_minimizer", minimizer_algorithm, _minimizer_example, area="cwr")
