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
    """State of ULA.

    Attributes:
      position: ``(d,)`` (one chain) or ``(P, d)`` (``P`` chains) float array of positions ``θ``.
    """

    position: Array


class ULAInfo(NamedTuple):
    """Diagnostics of one ULA step.

    Attributes:
      step_size: 0-d float array, the step size ``h`` used.
    """

    step_size: Array


def _batched(score_fn, theta, *args):
    return score_fn(theta, *args) if theta.ndim == 1 else jax.vmap(lambda th: score_fn(th, *args))(theta)


@cites(TOURON)
def ula_step(key, theta: Float[Array, "*P d"], score: Float[Array, "*P d"], h) -> Float[Array, "*P d"]:
    """One unadjusted Langevin step ``θ' = θ + h s + sqrt(2h) ξ``, ``ξ ~ N(0, I)``, from the score ``s`` at ``θ``.

    The building block of :func:`ula_algorithm` and of annealed Langevin (Touron, Cardoso, Arbel, Rodrigues,
    arXiv:2605.21253). ``h`` is not validated here (the factories check it).

    Args:
      key: PRNG key for the Gaussian noise ``ξ``.
      theta: ``(d,)`` or ``(P, d)`` float array of positions.
      score: float array of the shape of ``theta``, the score ``∇log π`` evaluated at ``theta``.
      h: positive float (or 0-d array), the step size.

    Returns:
      The new positions, shape and dtype of ``theta``.

    Raises:
      ValueError: ``score`` does not have the shape of ``theta``.
    """
    theta = jnp.asarray(theta)
    if jnp.shape(score) != theta.shape:
        raise ValueError(f"score must have the shape of theta {theta.shape}, got {jnp.shape(score)}")
    noise = jax.random.normal(key, theta.shape, dtype=theta.dtype)
    return theta + h * score + jnp.sqrt(2.0 * h) * noise


@cites(TOURON)
def ula_init(theta0: Float[Array, "*P d"]) -> ULAState:
    """Initial ULA state from positions ``(d,)`` (one chain) or ``(P, d)`` (``P`` chains).

    Args:
      theta0: ``(d,)`` or ``(P, d)`` float array of starting positions.

    Returns:
      :class:`ULAState`.

    Raises:
      TypeError: ``theta0`` is not a float array.
      ValueError: ``theta0`` is not 1- or 2-dimensional.
    """
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
    """``step(key, state) -> (state, info)`` of ULA: ``θ ← θ + h s(θ) + sqrt(2h) ξ`` on every chain.

    The ``step`` of :func:`ula_algorithm` with ``step_size = h``.

    Args:
      score_fn: ``score_fn(θ (d,)) -> (d,)``, the score ``∇log π`` (vmapped over chains).
      h: positive float (or 0-d array, may be traced), the step size.

    Returns:
      The step function, returning ``(ULAState, ULAInfo)``.

    Raises:
      TypeError: ``score_fn`` is not callable.
      ValueError: ``h`` is not positive and finite (under ``jit``: at run time).
    """
    return _ula_step_fn(score_fn, h, "h")


@cites(TOURON)
def ula_algorithm(score_fn: Callable[[Array], Array], step_size) -> Algorithm:
    """ULA with its score and step size bound once, as a :class:`jaxlab.core.Algorithm`.

    ``init(position)`` is :func:`ula_init` (positions ``(d,)`` or ``(P, d)``); ``step(key, state)`` moves every
    chain by ``θ ← θ + h s(θ) + sqrt(2h) ξ`` with ``h = step_size`` and returns ``(ULAState, ULAInfo)``. The
    inner sampler of annealed Langevin in Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for
    annealed Langevin dynamics in compositional simulation-based inference*, arXiv:2605.21253.

    Args:
      score_fn: ``score_fn(θ (d,)) -> (d,)``, the score ``∇log π`` (vmapped over chains).
      step_size: ``h > 0`` (may be traced).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``score_fn`` is not callable.
      ValueError: ``step_size`` is not positive and finite (under ``jit``: at run time).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import ula_algorithm
      >>> algo = ula_algorithm(lambda theta: -theta, step_size=0.1)
      >>> state, info = algo.step(jax.random.key(0), algo.init(jnp.zeros((100, 2))))
      >>> state.position.shape
      (100, 2)
    """
    return Algorithm(ula_init, _ula_step_fn(score_fn, step_size, "step_size"))


@cites(TOURON)
def ula_run(key, theta0, score_fn, h, num_steps: int, *, thin: int = 1, save_states: bool = False,
            shard: bool = False):
    """Run ULA (:func:`ula_algorithm` with ``step_size = h``) for ``num_steps`` with :func:`jaxlab.core.run`.

    ``θ ← θ + h s(θ) + sqrt(2h) ξ`` on every chain; on ``N(μ, 1/p)`` (1-d) the chains settle at the biased
    stationary variance ``1/(p (1 - hp/2))``.

    Args:
      key: PRNG key, split into one key per step.
      theta0: ``(d,)`` or ``(P, d)`` float array of initial positions.
      score_fn: ``score_fn(θ (d,)) -> (d,)``, the score ``∇log π`` (vmapped over chains).
      h: positive float, the step size.
      num_steps: number of steps, a static int ``>= 0``, a multiple of ``thin``.
      thin: record every ``thin``-th state and info.
      save_states: also record the thinned states (the trajectory) in ``trace.states``.
      shard: lay the chains out over all devices (``P`` must be a multiple of the device count).

    Returns:
      ``(final_state, trace)``: the final :class:`ULAState` and a :class:`jaxlab.core.RunTrace` whose
      ``infos`` are :class:`ULAInfo` with a leading axis ``num_steps // thin``.

    Raises:
      TypeError: ``score_fn`` is not callable, ``theta0`` is not a float array, or ``num_steps``/``thin`` is not
        an int.
      ValueError: ``h`` is not positive and finite, ``theta0`` is not 1- or 2-d, ``num_steps`` is negative or
        not a multiple of ``thin``, or (with ``shard``) ``P`` is not a multiple of the device count.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import ula_run
      >>> theta0 = jnp.zeros((2000, 1))
      >>> final, trace = ula_run(jax.random.key(0), theta0, lambda th: -2.0 * th, 0.1, 100)
      >>> round(float(final.position.var()), 2)  # 1/(p (1 - hp/2)) = 0.556 for p = 2, h = 0.1, up to MC error
      0.53
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
