r"""The unadjusted Langevin algorithm (ULA) on a score, one chain ``(d,)`` or ``P`` chains ``(P, d)``.

Paper: Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253 (2026). One step of size ``h`` on the score ``s = ∇log π``::

    θ ← θ + h s(θ) + sqrt(2h) ξ,     ξ ~ N(0, I).

Its stationary law is biased: on ``N(μ, 1/p)`` (1-d) the stationary variance is ``1/(p (1 - hp/2))``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.sharding import shard_batch
from jaxlab.core.validation import as_array, check_positive
from jaxlab.sampling.langevin.papers import TOURON

__all__ = ["ULAInfo", "ULAState", "ula_algorithm", "ula_init", "ula_kernel", "ula_run", "ula_step"]


class ULAState(NamedTuple):
    """Positions of the chains, ``(d,)`` or ``(P, d)``."""

    position: Array


class ULAInfo(NamedTuple):
    """Diagnostics of one ULA step: the step size used."""

    step_size: Array


def _batched(score_fn, theta, *args):
    return score_fn(theta, *args) if theta.ndim == 1 else jax.vmap(lambda th: score_fn(th, *args))(theta)


@cites(TOURON)
def ula_step(key, theta: Float[Array, "*P d"], score: Float[Array, "*P d"], h) -> Float[Array, "*P d"]:
    """One unadjusted Langevin step ``θ + h s + sqrt(2h) ξ`` from the score ``s`` evaluated at ``θ``."""
    theta = jnp.asarray(theta)
    if jnp.shape(score) != theta.shape:
        raise ValueError(f"score must have the shape of theta {theta.shape}, got {jnp.shape(score)}")
    noise = jax.random.normal(key, theta.shape, dtype=theta.dtype)
    return theta + h * score + jnp.sqrt(2.0 * h) * noise


@cites(TOURON)
def ula_init(theta0: Float[Array, "*P d"]) -> ULAState:
    """Initial ULA state from positions ``(d,)`` (one chain) or ``(P, d)`` (P chains)."""
    return ULAState(as_array(theta0, "theta0", ndim=(1, 2)))


def _ula_step_fn(score_fn, h, name):
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}")
    h = check_positive(h, name)

    def step(key, state):
        theta = state.position
        s = _batched(score_fn, theta)
        return ULAState(ula_step(key, theta, s, h)), ULAInfo(jnp.asarray(h))

    return step


@cites(TOURON)
def ula_kernel(score_fn: Callable[[Array], Array], h) -> Callable[[Any, ULAState], tuple[ULAState, ULAInfo]]:
    """``step(key, state) -> (state, info)`` of ULA on ``score_fn(θ (d,)) -> (d,)`` (vmapped over chains).

    The ``step`` of :func:`ula_algorithm` with ``step_size = h``.
    """
    return _ula_step_fn(score_fn, h, "h")


@cites(TOURON)
def ula_algorithm(score_fn: Callable[[Array], Array], step_size) -> Algorithm:
    """ULA with its score and step size bound once, as a :class:`jaxlab.core.Algorithm`.

    ``init(position)`` is :func:`ula_init` (positions ``(d,)`` or ``(P, d)``); ``step(key, state)`` moves every
    chain by ``θ ← θ + h s(θ) + sqrt(2h) ξ`` with ``h = step_size`` and returns ``(ULAState, ULAInfo)``.

    Args:
      score_fn: ``score_fn(θ (d,)) -> (d,)``, the score ``∇log π`` (vmapped over chains).
      step_size: ``h > 0`` (may be traced).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``score_fn`` is not callable.
      ValueError: ``step_size`` is not positive and finite (under ``jit``: at run time).

    Example::

        algo = ula_algorithm(lambda theta: -theta, step_size=0.1)
        state, info = algo.step(key, algo.init(jnp.zeros((100, 2))))
    """
    return Algorithm(ula_init, _ula_step_fn(score_fn, step_size, "step_size"))


@cites(TOURON)
def ula_run(key, theta0, score_fn, h, num_steps: int, *, thin: int = 1, save_states: bool = False,
            shard: bool = False):
    """Run ULA (:func:`ula_algorithm` with ``step_size = h``) for ``num_steps`` with :func:`jaxlab.core.run`;
    ``shard`` splits the chains over devices.

    Args:
      key: PRNG key, split into one key per step.
      theta0: initial positions ``(d,)`` or ``(P, d)``.
      score_fn: ``score_fn(θ (d,)) -> (d,)``.
      h: step size ``> 0``.
      num_steps: number of steps (static).
      thin, save_states: as in :func:`jaxlab.core.run`.
      shard: lay the chains out over all devices.

    Returns:
      ``(final ULAState, RunTrace)``.
    """
    algo = ula_algorithm(score_fn, check_positive(h, "h"))
    state = algo.init(theta0)
    if shard:
        state = shard_batch(state)
    return run(algo.step, state, key, num_steps, thin=thin, save_states=save_states)


def _ula_example(key):
    algo = ula_algorithm(lambda theta: -theta, 0.1)
    return algo, algo.init(jax.random.normal(key, (4, 2))), None


register_algorithm("ula", ula_algorithm, _ula_example, area="langevin")
