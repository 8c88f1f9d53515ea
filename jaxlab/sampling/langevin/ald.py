r"""Annealed Langevin dynamics (ALD) over a decreasing sequence of diffusion levels.

Paper: Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253 (2026), for the composite scores of Geffner et al.
(arXiv:2209.14249) and Linhart et al. (arXiv:2404.07593).

Levels ``t_0 = t_max > ... > t_{L-1} = t_min``; at level ``l`` run ``k_l`` ULA steps of size ``h_l`` on the
(composite) score at ``t_l``::

    θ ← θ + h_l s(θ, t_l) + sqrt(2 h_l) ξ,     ξ ~ N(0, I),

and the output of a level starts the next one. One step of the :class:`jaxlab.core.Algorithm` runs one level.

Divergence: ALD on a Geffner bridging density whose precision is not positive definite diverges (the
composite score is then the score of no density);
:func:`jaxlab.sampling.langevin.gaussian.geffner_bridging_gaussian` names such levels.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.sharding import shard_batch
from jaxlab.core.validation import as_array, check_in_range, check_int, value_check
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART, TOURON
from jaxlab.sampling.langevin.scores import ScoreFn
from jaxlab.sampling.langevin.ula import _batched, ula_step

__all__ = ["ALDInfo", "ALDState", "ald_algorithm", "ald_init", "ald_kernel", "annealed_langevin"]


class ALDState(NamedTuple):
    """Particles ``(P, d)`` and the index of the next level."""

    particles: Array
    level: Array


class ALDInfo(NamedTuple):
    """The level just run: its time ``t``, step size ``h`` and number of steps ``k``."""

    t: Array
    h: Array
    k: Array


def _schedule(ts, hs, ks):
    ts = as_array(ts, "ts", ndim=1)
    L = ts.shape[0]
    if L < 1:
        raise ValueError("ts must hold at least one level, got an empty array")
    hs = as_array(hs, "hs", ndim=1)
    ks = as_array(ks, "ks", ndim=1, kind="any")
    if not jnp.issubdtype(ks.dtype, jnp.integer):
        raise TypeError(f"ks must have an integer dtype, got dtype {ks.dtype}")
    if hs.shape != (L,) or ks.shape != (L,):
        raise ValueError(f"ts, hs and ks must have the same length, got {L}, {hs.shape[0]} and {ks.shape[0]}")
    hs = check_in_range(hs, "hs", 0.0, lo_open=True)
    ks = check_in_range(ks, "ks", 1)
    ts = value_check(ts, lambda a: jnp.diff(a) >= 0,
                     "ts must be strictly decreasing (from the noisiest level to t_min)")
    ts = check_in_range(ts, "ts", 0.0, lo_open=True)
    return ts, hs, ks


@cites(TOURON)
def ald_init(theta0: Float[Array, "P d"]) -> ALDState:
    """Initial ALD state: particles ``(P, d)`` at level 0."""
    return ALDState(as_array(theta0, "theta0", ndim=2), jnp.zeros((), jnp.int32))


@cites(TOURON)
def ald_kernel(score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None):
    """``step(key, state) -> (state, info)`` running the ``k_l`` ULA steps of level ``state.level``.

    The inner loop is a ``fori_loop`` with a dynamic trip count (no reverse-mode gradient), or, with
    ``max_k``, a static scan of ``max_k`` steps where steps beyond ``k_l`` are masked (differentiable).
    """
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}")
    ts, hs, ks = _schedule(ts, hs, ks)
    if max_k is not None:
        max_k = check_int(max_k, "max_k", min_value=1)
        ks = value_check(ks, lambda a: a > max_k, f"max_k must be >= max(ks), got max_k = {max_k}")

    def step(key, state):
        lvl = state.level
        t, h, k = ts[lvl], hs[lvl], ks[lvl]

        def body(i, theta):
            s = _batched(score_fn, theta, t)
            return ula_step(jax.random.fold_in(key, i), theta, s, h)

        if max_k is None:
            theta = jax.lax.fori_loop(0, k, body, state.particles)
        else:
            def masked(theta, i):
                new = body(i, theta)
                return jnp.where(i < k, new, theta), None

            theta, _ = jax.lax.scan(masked, state.particles, jnp.arange(max_k))
        return ALDState(theta, lvl + 1), ALDInfo(t, h, k)

    return step


@cites(TOURON, GEFFNER, LINHART)
def annealed_langevin(
    key, theta0: Float[Array, "P d"], score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None,
    shard: bool = False,
) -> Float[Array, "P d"]:
    """Annealed Langevin over the levels ``ts`` (outer scan by :func:`jaxlab.core.run`), returns ``θ_final``.

    Args:
      key: PRNG key.
      theta0: initial particles ``(P, d)`` (e.g. ``N(0, I)`` draws).
      score_fn: ``(θ (d,), t) -> (d,)``, e.g. from :func:`make_composite_score`; vmapped over particles.
      ts: strictly decreasing levels ``(L,)``; ``hs``: step sizes ``(L,)``; ``ks``: integer steps ``(L,)``.
      max_k: static inner scan with masking (see :func:`ald_kernel`).
      shard: lay the particles out over all devices (P must be a multiple of the device count).

    Returns:
      The particles after the last level, ``(P, d)``; runs the step of :func:`ald_algorithm` once per level.
    """
    algo = ald_algorithm(score_fn, ts, hs, ks, max_k=max_k)
    state = algo.init(theta0)
    if shard:
        state = ALDState(shard_batch(state.particles), state.level)
    final, _ = run(algo.step, state, key, int(jnp.shape(ts)[0]))
    return final.particles


@cites(TOURON)
def ald_algorithm(score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None) -> Algorithm:
    """Annealed Langevin with its score and level schedule bound once, as a :class:`jaxlab.core.Algorithm`.

    ``init(particles (P, d))`` is :func:`ald_init` (level 0); ``step(key, state)`` is :func:`ald_kernel`: the
    ``k_l`` ULA steps of size ``h_l`` at level ``t_l``, ``l = state.level``, returning ``(ALDState, ALDInfo)``.
    ``L = len(ts)`` steps run the whole schedule.

    Args:
      score_fn: ``(θ (d,), t) -> (d,)``, e.g. from :func:`jaxlab.sampling.langevin.scores.make_composite_score`.
      ts: strictly decreasing levels ``(L,)``; hs: step sizes ``(L,)``; ks: integer steps per level ``(L,)``.
      max_k: static inner scan with masking (see :func:`ald_kernel`).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``score_fn`` is not callable or ``ks`` is not integer.
      ValueError: the schedule has mismatched lengths, non-decreasing ``ts``, non-positive ``ts`` or ``hs``,
        ``ks < 1`` or ``max(ks) > max_k`` (value checks raise at run time under ``jit``).

    Example::

        algo = ald_algorithm(score, *ald_default_schedule(L=100))
        final, _ = jaxlab.core.run(algo.step, algo.init(theta0), key, 100)
    """
    return Algorithm(ald_init, ald_kernel(score_fn, ts, hs, ks, max_k=max_k))


def _ald_example(key):
    ts = jnp.linspace(1.0, 0.1, 8)
    algo = ald_algorithm(lambda theta, t: -theta / (1.0 + t), ts, jnp.full((8,), 0.05), jnp.full((8,), 2, jnp.int32))
    return algo, algo.init(jax.random.normal(key, (4, 2))), None


register_algorithm("annealed_langevin", ald_algorithm, _ald_example, area="langevin")
