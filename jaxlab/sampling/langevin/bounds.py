r"""Wasserstein bounds for annealed Langevin and the tuning rules R0-R3 (Touron et al., arXiv:2605.21253).

Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253. Only the abstract of that paper was available: the bound below
is **reconstructed** from the per-level bound of Dalalyan & Karagulyan, *User-friendly guarantees for the
Langevin Monte Carlo with inaccurate gradient*, SPA 2019 (arXiv:1710.00095), and the rules R0-R3 are
**derived** by inverting it (they are not the paper's own statements).

Per level ``l`` (target ``π_l``, ``m_l``-strongly log-concave, ``M_l``-smooth, ``h_l <= 2/(m_l + M_l)``, score
bias ``ε_l`` in L2, ``k_l`` steps):

    W2(ρ_l, π_l) <= c_l W2(ρ_{l-1}, π_l) + B_l,   c_l = (1 - m_l h_l)^{k_l},
    B_l = 1.65 (M_l/m_l) sqrt(h_l d) + ε_l / m_l.

Chained with ``W_0 = W2(ρ_init, π_0)``, ``W_l = W2(π_{l-1}, π_l)``:

    W2(ρ_final, π_{L-1}) <= Σ_l (Π_{j>=l} c_j) W_l + Σ_l (Π_{j>l} c_j) B_l.

Composite-score errors: Geffner ``ε <= (n-1) ε_λ + Σ_j ε_j``; Linhart
``ε <= ||Λ_t^{-1}||₂ [(n-1) ||Σ_{λ,t}^{-1}||₂ ε_λ + Σ_j ||Σ_{j,t}^{-1}||₂ ε_j]``.

Rules, for a target accuracy ``ε* = ε_path + ε_disc + ε_score`` (``split``):

- R1: ``h_l = min(2/(m_l + M_l), (η m_l / (1.65 M_l))² / d)``, discretisation budget ``η`` (start ``ε_disc``;
  shrunk by fixed-point rescaling until the contracted discretisation sum is ``<= ε_disc``; this last step is
  ours: with ``η = ε_disc`` alone the sum over many weakly contracting levels can exceed the budget);
- R2: ``k_l = max(1, ⌈log ρ_l / log(1 - m_l h_l)⌉)`` with ``ρ_0 = ε_path / (L max_l W_l)`` and
  ``ρ_l = ε_path / (L W_l)``, capped at 1, so that the path term is ``<= ε_path``;
- R0: the score term ``Σ_l (Π_{j>l} c_j) ε_l / m_l`` cannot be tuned away: ``feasible`` is False when it
  exceeds ``ε_score`` (or when the bound misses the target);
- R3: on a uniform grid, double the number of levels while ``Σ_l W_l`` still drops by more than 5 % and the
  total number of steps ``Σ_l k_l`` keeps decreasing (:func:`tune`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.validation import (
    as_array,
    check_in_range,
    check_int,
    check_positive,
    error_if,
    is_concrete,
    value_check,
)
from jaxlab.sampling.langevin.papers import DALALYAN, GEFFNER, LINHART, TOURON

__all__ = [
    "DK_CONSTANT",
    "TuneResult",
    "ald_bound_terms",
    "ald_w2_bound",
    "dk_level_term",
    "geffner_score_error",
    "level_constants",
    "linhart_score_error",
    "stability_cap",
    "tune",
    "tune_ald",
]

DK_CONSTANT = 1.65
"""Constant of the Dalalyan-Karagulyan discretisation term ``1.65 (M/m) sqrt(h d)``."""


class TuneResult(NamedTuple):
    """Output of the tuning rules :func:`tune_ald` and :func:`tune`.

    Attributes:
      hs: ``(L,)`` float array of step sizes.
      ks: ``(L,)`` int32 array of steps per level.
      bound: 0-d float array, the predicted W2 bound (:func:`ald_w2_bound`) with these ``hs``, ``ks``.
      total_steps: 0-d int array, the total number of Langevin steps ``Σ_l k_l``.
      score_evals: 0-d int array, the score evaluations ``Σ_l k_l (n+1)`` (prior plus ``n`` posteriors).
      feasible: 0-d bool array: the score term is within its share of ``ε*`` and the bound meets ``ε*``.
    """

    hs: Float[Array, " L"]
    ks: Int[Array, " L"]
    bound: Float[Array, ""]
    total_steps: Int[Array, ""]
    score_evals: Int[Array, ""]
    feasible: Array


@cites(TOURON)
def level_constants(precs: Float[Array, "*L d d"]) -> tuple[Array, Array]:
    """Strong log-concavity ``m = λ_min(P)`` and smoothness ``M = λ_max(P)`` of Gaussian levels ``N(·, P⁻¹)``.

    Args:
      precs: ``(d, d)`` or ``(L, d, d)`` float array of precisions ``P`` (symmetrised before ``eigvalsh``).

    Returns:
      ``(m, M)``: 0-d or ``(L,)`` float arrays.

    Raises:
      TypeError: ``precs`` is not a float array.
      ValueError: ``precs`` is not 2- or 3-d or not square in its last two axes.
    """
    precs = as_array(precs, "precs", ndim=(2, 3))
    if precs.shape[-1] != precs.shape[-2]:
        raise ValueError(f"precs must be square in the last two axes, got shape {precs.shape}")
    lam = jnp.linalg.eigvalsh(0.5 * (precs + jnp.swapaxes(precs, -1, -2)))
    return lam[..., 0], lam[..., -1]


@cites(TOURON)
def stability_cap(m, M):
    """Largest step size covered by the per-level Dalalyan-Karagulyan bound: ``2 / (m + M)``.

    Args:
      m: float or float array, strong log-concavity constants.
      M: float or float array (broadcastable with ``m``), smoothness constants.

    Returns:
      ``2 / (m + M)``, a float array of the broadcast shape (no validation).
    """
    return 2.0 / (jnp.asarray(m) + jnp.asarray(M))


@cites(DALALYAN, TOURON)
def dk_level_term(m, M, h, d: int, eps=0.0):
    """Per-level Dalalyan-Karagulyan bias ``B = 1.65 (M/m) sqrt(h d) + ε/m`` (elementwise over levels).

    The additive term of the bound ``W2(ρ_l, π_l) <= (1 - m h)^k W2(ρ_{l-1}, π_l) + B`` of Dalalyan &
    Karagulyan, *User-friendly guarantees for the Langevin Monte Carlo with inaccurate gradient*, SPA 2019,
    arXiv:1710.00095, valid for ``h <= 2/(m + M)``.

    Args:
      m: float or float array, the strong log-concavity constants ``m > 0``.
      M: float or float array, the smoothness constants ``M``.
      h: float or float array, the step sizes.
      d: the dimension, int ``>= 1``.
      eps: float or float array, the score errors ``ε`` in L2.

    Returns:
      Float array of the broadcast shape of ``m, M, h, eps`` (only ``d`` is validated).

    Raises:
      TypeError: ``d`` is not an int.
      ValueError: ``d < 1``.
    """
    d = check_int(d, "d", min_value=1)
    m, M, h, eps = (jnp.asarray(a) for a in (m, M, h, eps))
    return DK_CONSTANT * (M / m) * jnp.sqrt(h * d) + eps / m


def _levels(W, m, M, hs, ks, eps):
    W = as_array(W, "W", ndim=1)
    L = W.shape[0]
    m = as_array(m, "m", shape=(L,))
    M = as_array(M, "M", shape=(L,))
    m = check_in_range(m, "m", 0.0, lo_open=True)
    M = value_check(M, lambda a: ~(a - m >= 0), "M - m must lie in [0.0, inf]: M_l >= m_l at every level")
    if hs is not None:
        hs = as_array(hs, "hs", shape=(L,))
        hs = check_in_range(hs, "hs", 0.0, lo_open=True)
    if ks is not None:
        ks = as_array(ks, "ks", shape=(L,), kind="int")
        ks = check_in_range(ks, "ks", 1)
    eps = jnp.broadcast_to(as_array(eps, "eps", ndim=(0, 1)), (L,))
    eps = check_in_range(eps, "eps", 0.0)
    return W, m, M, hs, ks, eps


def _suffix_prod(c):
    """``(Π_{j>=l} c_j, Π_{j>l} c_j)`` for every l."""
    incl = jnp.cumprod(c[::-1])[::-1]
    excl = jnp.concatenate([incl[1:], jnp.ones_like(c[:1])])
    return incl, excl


def _terms(W, m, M, hs, ks, d, eps):
    c = jnp.power(1.0 - m * hs, ks)
    incl, excl = _suffix_prod(c)
    path = jnp.sum(incl * W)
    disc = jnp.sum(excl * DK_CONSTANT * (M / m) * jnp.sqrt(hs * d))
    score = jnp.sum(excl * eps / m)
    return path, disc, score


@cites(DALALYAN, TOURON)
def ald_bound_terms(W, m, M, hs, ks, d: int, eps=0.0) -> tuple[Array, Array, Array]:
    """The three parts of the chained bound of :func:`ald_w2_bound`, with ``c_l = (1 - m_l h_l)^{k_l}``::

        path  = Σ_l (Π_{j>=l} c_j) W_l,
        disc  = Σ_l (Π_{j>l} c_j) 1.65 (M_l/m_l) sqrt(h_l d),
        score = Σ_l (Π_{j>l} c_j) ε_l / m_l.

    The stability cap ``h_l <= 2/(m_l + M_l)`` is not checked here.

    Args:
      W: ``(L,)`` float array of path lengths (``W_0 = W2(ρ_init, π_0)``, then ``W2(π_{l-1}, π_l)``).
      m: ``(L,)`` float array, the strong log-concavity constants ``m_l > 0``.
      M: ``(L,)`` float array, the smoothness constants ``M_l >= m_l``.
      hs: ``(L,)`` float array of positive step sizes.
      ks: ``(L,)`` integer array of steps per level, each ``>= 1``.
      d: the dimension, int ``>= 1``.
      eps: the score error per level in L2, ``>= 0``: a float or an ``(L,)`` array.

    Returns:
      ``(path, disc, score)``: 0-d float arrays.

    Raises:
      TypeError: ``d`` is not an int, ``ks`` is not integer, or another input is not a float array.
      ValueError: ``d < 1``; a shape does not match ``(L,)``; some ``m_l <= 0``, ``M_l < m_l``, ``h_l <= 0``,
        ``k_l < 1`` or ``ε_l < 0`` (under ``jit``: at run time).
    """
    d = check_int(d, "d", min_value=1)
    W, m, M, hs, ks, eps = _levels(W, m, M, hs, ks, eps)
    return _terms(W, m, M, hs, ks, d, eps)


@cites(DALALYAN, TOURON)
def ald_w2_bound(W, m, M, hs, ks, d: int, eps=0.0):
    """Chained W2 bound ``Σ_l (Π_{j>=l} c_j) W_l + Σ_l (Π_{j>l} c_j) B_l`` for annealed Langevin.

    ``c_l = (1 - m_l h_l)^{k_l}`` and ``B_l`` is :func:`dk_level_term`: the per-level bound of Dalalyan &
    Karagulyan (arXiv:1710.00095) chained over the levels. Only the abstract of Touron, Cardoso, Arbel,
    Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional simulation-based
    inference* (arXiv:2605.21253) was available: this bound is reconstructed from it and from the per-level
    bound, not copied from the paper. Levels where ``h_l > 2/(m_l + M_l)`` are outside the theorem: a
    ``RuntimeWarning`` names them (concrete inputs) and the bound is ``inf``.

    Args:
      W: ``(L,)`` float array of path lengths (``W_0 = W2(ρ_init, π_0)``, then ``W2(π_{l-1}, π_l)``).
      m: ``(L,)`` float array, the strong log-concavity constants ``m_l > 0``.
      M: ``(L,)`` float array, the smoothness constants ``M_l >= m_l``.
      hs: ``(L,)`` float array of positive step sizes.
      ks: ``(L,)`` integer array of steps per level, each ``>= 1``.
      d: the dimension, int ``>= 1``.
      eps: the score error per level in L2, ``>= 0``: a float or an ``(L,)`` array.

    Returns:
      0-d float array, the bound on ``W2(ρ_final, π_{L-1})`` (``inf`` past the stability cap).

    Raises:
      TypeError: ``d`` is not an int, ``ks`` is not integer, or another input is not a float array.
      ValueError: ``d < 1``; a shape does not match ``(L,)``; some ``m_l <= 0``, ``M_l < m_l``, ``h_l <= 0``,
        ``k_l < 1`` or ``ε_l < 0`` (under ``jit``: at run time).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import ald_w2_bound
      >>> L = 4
      >>> W, m, M = jnp.full(L, 0.5), jnp.ones(L), jnp.full(L, 2.0)
      >>> bound = ald_w2_bound(W, m, M, jnp.full(L, 0.01), jnp.full(L, 50), d=2)
      >>> round(float(bound), 3)
      1.686
    """
    d = check_int(d, "d", min_value=1)
    W, m, M, hs, ks, eps = _levels(W, m, M, hs, ks, eps)
    unstable = hs > stability_cap(m, M) * (1 + 1e-12)
    if is_concrete(unstable) and bool(unstable.any()):
        bad = [int(i) for i in jnp.nonzero(unstable)[0][:5]]
        warnings.warn(
            f"step sizes above the stability cap 2/(m+M) at levels {bad}: the bound does not apply (inf)",
            RuntimeWarning,
            stacklevel=2,
        )
    total = sum(_terms(W, m, M, hs, ks, d, eps))
    return jnp.where(jnp.any(unstable), jnp.inf, total)


@cites(GEFFNER, TOURON)
def geffner_score_error(eps_prior, eps_posts, n: int | None = None):
    """Error of Geffner's composite score from the individual errors: ``(n-1) ε_λ + Σ_j ε_j``.

    The triangle inequality on ``(1-n) s_λ + Σ_j s_j`` (derived here; Geffner et al., arXiv:2209.14249).

    Args:
      eps_prior: float or float array, the prior score's error ``ε_λ`` (broadcast against the levels).
      eps_posts: ``(n,)`` float array (or ``(..., n)`` over levels) of the posterior scores' errors, or a
        scalar shared by ``n`` posteriors.
      n: the number of observations; required with a scalar ``eps_posts`` and ignored otherwise.

    Returns:
      Float array of shape ``broadcast(eps_prior, eps_posts[..., 0])``: the composite error.

    Raises:
      ValueError: ``eps_posts`` is a scalar and ``n`` is missing or below 1.
      TypeError: ``eps_posts`` is a scalar and ``n`` is not an int.
    """
    eps_prior = jnp.asarray(eps_prior)
    eps_posts = jnp.asarray(eps_posts)
    if eps_posts.ndim == 0:
        if n is None:
            raise ValueError("n is required when eps_posts is a scalar shared by the n posteriors")
        n = check_int(n, "n", min_value=1)
        total = n * eps_posts
    else:
        n = eps_posts.shape[-1]
        total = eps_posts.sum(-1)
    return (n - 1) * eps_prior + total


@cites(LINHART, TOURON)
def linhart_score_error(Lambda_t, prior_prec_t, post_precs_t, eps_prior, eps_posts, n: int):
    """Error of Linhart's composite score at one level (triangle inequality, derived here)::

        ε <= ||Λ_t^{-1}||₂ [(n-1) ||Σ_{λ,t}^{-1}||₂ ε_λ + Σ_j ||Σ_{j,t}^{-1}||₂ ε_j],

    with the precisions of :func:`jaxlab.sampling.langevin.linhart_weights` (Linhart et al., arXiv:2404.07593).
    ``||Λ_t^{-1}||₂`` is ``1 / min |eig(Λ_t)|`` (``Λ_t`` symmetric).

    Args:
      Lambda_t: ``(d, d)`` float array ``Λ_t``.
      prior_prec_t: ``(d, d)`` float array ``Σ_{λ,t}^{-1}``.
      post_precs_t: ``(n, d, d)`` float array of ``Σ_{j,t}^{-1}``, or one shared ``(d, d)`` matrix.
      eps_prior: float, the prior score's error ``ε_λ``.
      eps_posts: float or ``(n,)`` float array, the posterior scores' errors ``ε_j``.
      n: the number of observations, int ``>= 1``.

    Returns:
      0-d float array, the bound on the composite score's error.

    Raises:
      TypeError: ``n`` is not an int or a matrix is not a float array.
      ValueError: ``n < 1``, a matrix has the wrong shape, or ``eps_posts`` does not broadcast to ``(n,)``.
    """
    n = check_int(n, "n", min_value=1)
    Lambda_t = as_array(Lambda_t, "Lambda_t", ndim=2)
    d = Lambda_t.shape[0]
    prior_prec_t = as_array(prior_prec_t, "prior_prec_t", shape=(d, d))
    post_precs_t = as_array(post_precs_t, "post_precs_t", ndim=(2, 3))
    inv_norm = 1.0 / jnp.min(jnp.abs(jnp.linalg.eigvalsh(Lambda_t)))
    post_norms = jnp.linalg.norm(post_precs_t, ord=2, axis=(-2, -1))
    eps_posts = jnp.broadcast_to(jnp.asarray(eps_posts, dtype=Lambda_t.dtype), (n,))
    post_term = jnp.sum(post_norms * eps_posts) if post_precs_t.ndim == 3 else post_norms * eps_posts.sum()
    return inv_norm * ((n - 1) * jnp.linalg.norm(prior_prec_t, ord=2) * eps_prior + post_term)


def _split(target, split):
    if len(split) != 3:
        raise ValueError(f"split must have 3 entries (path, discretisation, score), got {len(split)}")
    for name, s in zip(("split[0]", "split[1]", "split[2]"), split, strict=True):
        s = check_positive(s, name)
    tot = sum(float(s) for s in split)
    return tuple(target * float(s) / tot for s in split)


@cites(DALALYAN, TOURON)
def tune_ald(
    W, m, M, d: int, eps, target: float, *, split=(1 / 3, 1 / 3, 1 / 3), n: int = 1, hs=None,
    iterations: int = 30,
) -> TuneResult:
    """Rules R0-R2 on a fixed grid of levels: step sizes and steps per level meeting ``W2 <= target``.

    The rules of the module docstring (R1 step sizes, R2 steps per level, R0 feasibility), derived here by
    inverting the reconstructed bound of :func:`ald_w2_bound`: only the abstract of Touron et al.
    (arXiv:2605.21253) was available, so these are not the paper's own statements.

    Args:
      W: ``(L,)`` float array of path lengths (``W_0 = W2(ρ_init, π_0)``, then ``W2(π_{l-1}, π_l)``).
      m: ``(L,)`` float array, per-level strong log-concavity ``m_l > 0``.
      M: ``(L,)`` float array, per-level smoothness ``M_l >= m_l``.
      d: dimension, int ``>= 1``.
      eps: score error per level, ``>= 0``: a float or an ``(L,)`` array.
      target: the accuracy ``ε* > 0``.
      split: three positive relative shares of ``ε*`` for the path, discretisation and score terms.
      n: number of observations, int ``>= 1`` (only for ``score_evals = Σ k_l (n + 1)``).
      hs: optional ``(L,)`` user step sizes; then only R2 runs, and a step above ``2/(m+M)`` raises
        ``ValueError`` naming the level.
      iterations: fixed-point rescalings of the discretisation budget (R1), int ``>= 1``.

    Returns:
      :class:`TuneResult`. An infeasible target (the score floor R0) gives ``feasible=False``, not an error.

    Raises:
      TypeError: ``d``, ``n`` or ``iterations`` is not an int, or an array input has the wrong dtype.
      ValueError: an int is below 1; ``target`` or a share of ``split`` is not positive; ``split`` does not
        have 3 entries; a shape does not match ``(L,)``; ``m``, ``M``, ``hs`` or ``eps`` is out of range; or a
        user step exceeds the stability cap (under ``jit`` the value checks raise at run time).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import tune_ald
      >>> L = 10
      >>> res = tune_ald(jnp.full(L, 0.3), jnp.ones(L), jnp.full(L, 3.0), 2, 0.0, target=0.5)
      >>> res.hs.shape, bool(res.feasible)
      ((10,), True)
    """
    d = check_int(d, "d", min_value=1)
    n = check_int(n, "n", min_value=1)
    iterations = check_int(iterations, "iterations", min_value=1)
    target = check_positive(target, "target")
    W, m, M, hs, _, eps = _levels(W, m, M, hs, None, eps)
    eps_path, eps_disc, eps_score = _split(target, split)
    cap = stability_cap(m, M)
    over = None if hs is None else hs > cap * (1 + 1e-12)
    if over is not None and is_concrete(over):
        if bool(over.any()):
            lvl = int(jnp.argmax(over))
            raise ValueError(
                f"hs[{lvl}] = {float(hs[lvl]):.4g} exceeds the stability cap 2/(m+M) = {float(cap[lvl]):.4g} "
                f"at level {lvl}; the Dalalyan-Karagulyan bound needs h <= 2/(m+M)"
            )
    elif over is not None:
        hs = error_if(hs, jnp.any(over), "hs exceeds the stability cap 2/(m+M) at some level; the "
                      "Dalalyan-Karagulyan bound needs h <= 2/(m+M)")
    h, k, bound, score = _tune_core(W, m, M, eps, hs, eps_path, eps_disc, d=d, iterations=iterations)
    total = jnp.sum(k)
    feasible = (score <= eps_score) & (bound <= target * (1 + 1e-12))
    return TuneResult(h, k, bound, total, total * (n + 1), feasible)


@functools.partial(jax.jit, static_argnames=("d", "iterations"))
def _tune_core(W, m, M, eps, hs, eps_path, eps_disc, *, d, iterations):
    L = W.shape[0]
    cap = stability_cap(m, M)
    rho = jnp.minimum(1.0, eps_path / (L * jnp.maximum(W, 1e-300)))
    rho = rho.at[0].set(jnp.minimum(1.0, eps_path / (L * jnp.maximum(W.max(), 1e-300))))

    def rules(eta):
        h = jnp.minimum(cap, (eta * m / (DK_CONSTANT * M)) ** 2 / d) if hs is None else hs
        k = jnp.ceil(jnp.log(rho) / jnp.log1p(-m * h))
        k = jnp.maximum(1, jnp.nan_to_num(k, nan=1.0, posinf=1.0)).astype(jnp.int32)
        return h, k

    def refine(_, eta):
        h, k = rules(eta)
        _, disc, _ = _terms(W, m, M, h, k, d, eps)
        return jnp.where(disc > eps_disc, eta * 0.999 * eps_disc / disc, eta)

    eta = jax.lax.fori_loop(0, iterations if hs is None else 0, refine,
                            jnp.asarray(eps_disc, dtype=jnp.result_type(W, m, M, eps)))
    h, k = rules(eta)
    path, disc, score = _terms(W, m, M, h, k, d, eps)
    return h, k, path + disc + score, score


@cites(DALALYAN, TOURON)
def tune(
    problem: Callable[[int], tuple], d: int, target: float, *, num_levels: int = 25, max_doublings: int = 6,
    split=(1 / 3, 1 / 3, 1 / 3), n: int = 1,
) -> tuple[int, TuneResult]:
    """Rules R0-R3: the number of levels ``L`` (by doubling) and the per-level ``h``, ``k`` for it.

    R3 (derived here from the reconstructed bound, as the other rules: see :func:`tune_ald`): starting from
    ``num_levels``, double ``L`` while ``Σ_l W_l`` still drops by more than 5 % and the total number of steps
    keeps decreasing, running :func:`tune_ald` on each grid.

    Args:
      problem: ``L -> (W (L,), m (L,), M (L,), eps)`` for a uniform grid of ``L`` levels (for Gaussian
        bridging densities see :func:`jaxlab.sampling.langevin.gaussian.gaussian_problem`).
      d: dimension, int ``>= 1``.
      target: the accuracy ``ε* > 0``.
      num_levels: the first ``L`` tried, int ``>= 1``.
      max_doublings: at most this many doublings, int ``>= 0``.
      split: relative shares of ``ε*`` for the path, discretisation and score terms (as :func:`tune_ald`).
      n: number of observations (as :func:`tune_ald`).

    Returns:
      ``(L, TuneResult)``: R3 stops doubling when ``Σ_l W_l`` drops by less than 5 % or the total number of
      steps stops decreasing, and keeps the cheapest grid seen.

    Raises:
      TypeError: ``num_levels`` or ``max_doublings`` is not an int; as :func:`tune_ald`.
      ValueError: ``num_levels < 1`` or ``max_doublings < 0``; as :func:`tune_ald`.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import tune
      >>> def problem(L):  # path length 1 split evenly; m = 1, M = 3 at every level; exact scores
      ...     return jnp.full(L, 1.0 / L), jnp.ones(L), jnp.full(L, 3.0), 0.0
      >>> L, res = tune(problem, 2, 0.5, num_levels=8, max_doublings=2)
      >>> res.hs.shape == (L,)
      True
    """
    L = check_int(num_levels, "num_levels", min_value=1)
    max_doublings = check_int(max_doublings, "max_doublings", min_value=0)
    best = None
    prev_len = math.inf
    for _ in range(max_doublings + 1):
        W, m, M, eps = problem(L)
        res = tune_ald(W, m, M, d, eps, target, split=split, n=n)
        length = float(jnp.sum(W))
        if best is not None and int(res.total_steps) >= int(best[1].total_steps):
            break
        best = (L, res)
        if length > 0.95 * prev_len:
            break
        prev_len = length
        L *= 2
    return best
