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
    """State of annealed Langevin.

    Attributes:
      particles: ``(P, d)`` float array of particles.
      level: 0-d int32 array, the index of the next level to run (``L`` once the schedule is done).
    """

    particles: Array
    level: Array


class ALDInfo(NamedTuple):
    """The level just run.

    Attributes:
      t: 0-d float array, the level's diffusion time ``t_l``.
      h: 0-d float array, its step size ``h_l``.
      k: 0-d int array, its number of ULA steps ``k_l``.
    """

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
    """Initial ALD state: particles ``(P, d)`` at level 0.

    Args:
      theta0: ``(P, d)`` float array of initial particles (e.g. ``N(0, I)`` draws).

    Returns:
      :class:`ALDState` with ``level = 0``.

    Raises:
      TypeError: ``theta0`` is not a float array.
      ValueError: ``theta0`` is not 2-dimensional.
    """
    return ALDState(as_array(theta0, "theta0", ndim=2), jnp.zeros((), jnp.int32))


@cites(TOURON)
def ald_kernel(score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None):
    """``step(key, state) -> (state, info)`` running the ``k_l`` ULA steps of level ``l = state.level``.

    Each inner step is ``θ ← θ + h_l s(θ, t_l) + sqrt(2 h_l) ξ`` with the noise key ``fold_in(key, i)``. The
    inner loop is a ``fori_loop`` with a dynamic trip count (no reverse-mode gradient), or, with ``max_k``, a
    static scan of ``max_k`` steps where steps beyond ``k_l`` are masked (differentiable).

    Args:
      score_fn: ``score_fn(θ (d,), t) -> (d,)``, the (composite) score at level ``t`` (vmapped over particles).
      ts: ``(L,)`` float array of levels ``t_0 > ... > t_{L-1} > 0``.
      hs: ``(L,)`` float array of positive step sizes.
      ks: ``(L,)`` integer array of steps per level, each ``>= 1``.
      max_k: optional static bound ``>= max(ks)`` for the masked scan; ``None`` uses the ``fori_loop``.

    Returns:
      The step function, returning ``(ALDState, ALDInfo)``. Run it ``L`` times; stepping past the last level
      is not checked.

    Raises:
      TypeError: ``score_fn`` is not callable, ``ts`` or ``hs`` is not a float array, ``ks`` is not an integer
        array, or ``max_k`` is not an int.
      ValueError: ``ts``, ``hs``, ``ks`` are not 1-d arrays of one length ``L >= 1``; ``ts`` is not strictly
        decreasing or not positive; an ``hs`` entry is not positive; a ``ks`` entry is below 1; or
        ``max(ks) > max_k`` (value checks raise at run time under ``jit``).
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

    At each level ``l = 0 .. L-1``, ``k_l`` ULA steps ``θ ← θ + h_l s(θ, t_l) + sqrt(2 h_l) ξ`` on the
    (composite) score, the output of a level starting the next (Touron, Cardoso, Arbel, Rodrigues, *Theoretical
    guidelines for annealed Langevin dynamics in compositional simulation-based inference*, arXiv:2605.21253,
    for the composite scores of Geffner et al., arXiv:2209.14249, and Linhart et al., arXiv:2404.07593). Runs
    the step of :func:`ald_algorithm` once per level.

    Args:
      key: PRNG key, split into one key per level.
      theta0: ``(P, d)`` float array of initial particles (e.g. ``N(0, I)`` draws).
      score_fn: ``(θ (d,), t) -> (d,)``, e.g. from :func:`make_composite_score`; vmapped over particles.
      ts: ``(L,)`` float array of strictly decreasing positive levels.
      hs: ``(L,)`` float array of positive step sizes.
      ks: ``(L,)`` integer array of steps per level, each ``>= 1``.
      max_k: static inner scan with masking (see :func:`ald_kernel`).
      shard: lay the particles out over all devices (``P`` must be a multiple of the device count).

    Returns:
      ``(P, d)`` float array, the particles after the last level.

    Raises:
      TypeError: ``score_fn`` is not callable, ``theta0``, ``ts`` or ``hs`` is not a float array, ``ks`` is not
        an integer array, or ``max_k`` is not an int.
      ValueError: ``theta0`` is not 2-d; ``ts``, ``hs``, ``ks`` are not 1-d arrays of one length ``L >= 1``;
        ``ts`` is not strictly decreasing or not positive; an ``hs`` entry is not positive; a ``ks`` entry is
        below 1; or ``max(ks) > max_k`` (value checks raise at run time under ``jit``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import ald_default_schedule, annealed_langevin
      >>> ts, hs, ks = ald_default_schedule(L=20, k=2)
      >>> score = lambda theta, t: -theta  # N(0, I) at every level
      >>> theta0 = jax.random.normal(jax.random.key(0), (100, 2))
      >>> annealed_langevin(jax.random.key(1), theta0, score, ts, hs, ks).shape
      (100, 2)
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
    ``L = len(ts)`` steps run the whole schedule. Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for
    annealed Langevin dynamics in compositional simulation-based inference*, arXiv:2605.21253.

    Args:
      score_fn: ``(θ (d,), t) -> (d,)``, e.g. from :func:`jaxlab.sampling.langevin.scores.make_composite_score`.
      ts: ``(L,)`` float array of strictly decreasing positive levels.
      hs: ``(L,)`` float array of positive step sizes.
      ks: ``(L,)`` integer array of steps per level, each ``>= 1``.
      max_k: static inner scan with masking (see :func:`ald_kernel`).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``score_fn`` is not callable or ``ks`` is not integer.
      ValueError: the schedule has mismatched lengths, non-decreasing ``ts``, non-positive ``ts`` or ``hs``,
        ``ks < 1`` or ``max(ks) > max_k`` (value checks raise at run time under ``jit``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.sampling.langevin import ald_algorithm, ald_default_schedule
      >>> algo = ald_algorithm(lambda theta, t: -theta, *ald_default_schedule(L=20, k=2))
      >>> theta0 = jax.random.normal(jax.random.key(0), (100, 2))
      >>> final, trace = run(algo.step, algo.init(theta0), jax.random.key(1), 20)
      >>> final.particles.shape, trace.infos.t.shape
      ((100, 2), (20,))
    """
    return Algorithm(ald_init, ald_kernel(score_fn, ts, hs, ks, max_k=max_k))


def _ald_example(key):
    ts = jnp.linspace(1.0, 0.1, 8)
    algo = ald_algorithm(lambda theta, t: -theta / (1.0 + t), ts, jnp.full((8,), 0.05), jnp.full((8,), 2, jnp.int32))
    return algo, algo.init(jax.random.normal(key, (4, 2))), None


register_algorithm("annealed_langevin", ald_algorithm, _ald_example, area="langevin")
