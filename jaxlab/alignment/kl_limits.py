r"""Limits of KL-regularised alignment: the reward–KL frontier, best-of-N, proxy rewards.

Paper: L. Monteiro Paes, N. Mackraz, B.-J. Theobald, F. Danieli, "Theoretical Limits of Language Model
Alignment", arXiv:2605.07105. Only its abstract was available; tags below say where each formula comes from:
**[paper]** stated in the abstract, **[prior]** from cited prior work, **[derived]** derived for jaxlab
and checked numerically, not taken from the paper's text.

Setting (one prompt): outputs ``y`` in a finite space of size ``V``, base policy ``π₀`` given as
log-probabilities ``log_pi0``, reward ``r``. With ``λ = 1/β`` and the reward cumulant generating function
``Λ(λ) = ln E_{π₀}[e^{λ r}]``:

- tilted optimum [prior: Korbak et al. arXiv:2205.11275, Rafailov et al. arXiv:2305.18290, Yang et al.
  arXiv:2404.01730]: ``argmax_π E_π[r] − β KL(π‖π₀) = π_β ∝ π₀ e^{r/β}``, with value ``β ln E_{π₀}[e^{r/β}]``;
  for every ``π``: ``R_β(π) := E_π[r] − β KL(π‖π₀) = β ln Z(β) − β KL(π‖π_β)``;
- frontier [derived]: ``gain(β) = E_{π_β}[r] − E_{π₀}[r] = Λ'(λ) − Λ'(0)``,
  ``KL(β) = KL(π_β‖π₀) = λΛ'(λ) − Λ(λ)``, ``rKL(β) = KL(π₀‖π_β) = Λ(λ) − λΛ'(0)``;
  the Jeffreys identity [paper] ``gain(β) = β (KL + rKL)``; the slope ``d gain / d KL = β``;
- Theorem A1 [derived]: for ``0 < ε < KL_max = −ln π₀(argmax r)``,
  ``max{E_π[r] − E_{π₀}[r] : KL(π‖π₀) ≤ ε} = gain(β_ε)`` where ``KL(β_ε) = ε``;
- covariance form [paper]: ``gain(β) = Cov_{π₀}(r, e^{r/β}) / E_{π₀}[e^{r/β}]``;
- estimator from base samples ``r_1..r_n`` [paper: covariance estimator; details derived]:
  ``w_i = softmax_i(r_i/β)``, ``ĝain = Σ w_i r_i − r̄``, ``K̂L = Σ w_i ln(n w_i) ∈ [0, ln n]``, ``Ĵ = ĝain/β``,
  ``ESS = 1/Σ w_i²``; data sets use one shared ``β`` and average over prompts;
- best-of-N [prior: Beirami et al. arXiv:2401.01879, Gao et al. arXiv:2210.10760]:
  ``KL(π_BoN‖π₀) = ln N − (N−1)/N`` for continuous rewards (an upper bound on finite spaces);
  on finite spaces, with reward levels of CDF ``F_j``, ``P_BoN(level j) = F_j^N − F_{j−1}^N``, split inside a
  level ∝ π₀; from samples, order-statistic weights ``w_(i) = (i/n)^N − ((i−1)/n)^N`` on the sorted rewards;
- proxy rewards ``r̂ = r + e`` [paper claim; quantities derived]: ``π̂_β ∝ π₀ e^{r̂/β}``,
  ``Δ_obj(β) = R_β(π_β) − R_β(π̂_β) = β KL(π̂_β‖π_β)``, ``Δ_true(β) = E_{π_β}[r] − E_{π̂_β}[r]``,
  and the Hoeffding bound ``0 ≤ Δ_obj ≤ (sup e − inf e)² / (8β)``; ensembles average the proxies.

Every per-prompt function takes 1-d arrays and is pure, so ``jax.vmap`` maps it over prompts and ``β`` grids.
All tilts use ``log_softmax``/``logsumexp``, so tiny ``β`` does not overflow. Exact ties between reward values
are treated as one reward level by :func:`best_of_n` (float equality).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, logsumexp
from jax.scipy.stats import norm
from jaxtyping import Array, Float

from jaxlab.alignment.papers import BEIRAMI, GAO, MONTEIRO_PAES, MROUEH, YANG
from jaxlab.alignment.policy import (
    check_count,
    check_penalty,
    check_problem,
    check_rewards,
    check_samples,
    kl_divergence,
)
from jaxlab.core.citations import cites
from jaxlab.core.sorting import argsort_floats, sort_floats
from jaxlab.core.validation import (
    as_array,
    check_in_range,
    check_int,
    check_ndim,
    error_if,
    is_concrete,
    value_check,
)

__all__ = [
    "FrontierPoint",
    "ProxyGap",
    "SampleFrontierPoint",
    "bernoulli_frontier",
    "best_of_n",
    "beta_for_kl",
    "bon_from_samples",
    "bon_kl_formula",
    "covariance_gain",
    "dataset_frontier",
    "default_betas",
    "ensemble_proxy",
    "exponential_bon_gain",
    "exponential_frontier",
    "frontier",
    "frontier_from_samples",
    "frontier_point",
    "gain_at_kl",
    "gain_from_samples",
    "gaussian_bon_gain",
    "gaussian_frontier",
    "kl_from_samples",
    "kl_max",
    "kl_regularized_objective",
    "max_gain_at_kl",
    "proxy_gaps",
    "tilted_log_policy",
    "uniform_bon_gain",
    "uniform_frontier",
]



class FrontierPoint(NamedTuple):
    """One point (or a grid) of the exact reward–KL frontier at penalty ``beta``.

    Every field is a float array of the shape of ``beta``: 0-d for one point, ``(B,)`` for a grid.

    Attributes:
      beta: the KL penalty ``β``.
      kl: ``KL(π_β‖π₀)``.
      reverse_kl: ``KL(π₀‖π_β)``.
      jeffreys: the Jeffreys divergence ``kl + reverse_kl``; ``gain = β·jeffreys`` [paper].
      gain: the reward gain ``E_{π_β}[r] − E_{π₀}[r]``.
      expected_reward: ``E_{π_β}[r]``.
    """

    beta: Array
    kl: Array
    reverse_kl: Array
    jeffreys: Array
    gain: Array
    expected_reward: Array


class SampleFrontierPoint(NamedTuple):
    """A :class:`FrontierPoint` estimated from base-model samples, with its effective sample size.

    With ``w_i = softmax_i(r_i/β)`` over the ``n`` samples [paper: covariance estimator; details derived]. Every field
    is a float array of shape ``(B,)`` (one frontier) or ``(prompts, B)``; ``reliable`` is boolean.

    Attributes:
      beta: the penalties ``β`` of the grid.
      kl: ``K̂L = Σ_i w_i ln(n w_i) ∈ [0, ln n]``, the KL of the tilted weights from uniform.
      reverse_kl: ``Ĵ − K̂L``, the reverse KL implied by the Jeffreys identity.
      jeffreys: ``Ĵ = ĝain/β``.
      gain: ``ĝain = Σ_i w_i r_i − r̄``.
      expected_reward: ``Σ_i w_i r_i``.
      ess: effective sample size ``1/Σ_i w_i²``.
      reliable: ``ess ≥ 100`` and ``kl ≤ ln(n)/2`` (**[chosen]** limits past which the self-normalised weights
        are too degenerate to trust).
    """

    beta: Array
    kl: Array
    reverse_kl: Array
    jeffreys: Array
    gain: Array
    expected_reward: Array
    ess: Array
    reliable: Array


class ProxyGap(NamedTuple):
    """Loss of aligning to a proxy ``r̂ = r + e`` instead of ``r`` at penalty ``β`` [paper claim; quantities derived].

    With ``π̂_β ∝ π₀ e^{(r+e)/β}``; every field is a float array (0-d for one problem).

    Attributes:
      objective_gap: ``Δ_obj = R_β(π_β) − R_β(π̂_β) = β KL(π̂_β‖π_β) ≥ 0``.
      true_reward_gap: ``Δ_true = E_{π_β}[r] − E_{π̂_β}[r]``.
      hoeffding_bound: ``(sup e − inf e)²/(8β) ≥ Δ_obj``, the range taken over the support of ``π₀``.
    """

    objective_gap: Array
    true_reward_gap: Array
    hoeffding_bound: Array


# ----------------------------------------------------------------------------------------------------------
# Exact frontier on a finite output space


@cites(YANG, MONTEIRO_PAES)
def tilted_log_policy(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> Float[Array, " V"]:
    """The tilted policy ``log π_β = log_softmax(log π₀ + r/β)``, the maximiser of ``E_π[r] − β KL(π‖π₀)`` [prior].

    The closed form is from prior work (Korbak et al., arXiv:2205.11275; Rafailov et al., arXiv:2305.18290; Yang et al.,
    "Asymptotics of Language Model Alignment", arXiv:2404.01730).

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      ``(V,)`` float array, the normalised log-probabilities ``log π_β``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``beta`` is not in ``(0, ∞)``. Under ``jit``, value checks of traced inputs raise at run time.
    """
    log_pi0, r = check_problem(log_pi0, r)
    beta = check_penalty(beta)
    return _tilt(log_pi0, r, beta)


# psi(x)/x^2 = sum_{k>=2} x^(k-2)/k!, for |x| < 1 (the remainder after 1/21! is below 2e-21 relative)
_PSI_SERIES = tuple(1.0 / math.factorial(k) for k in range(21, 1, -1))


def _kl_normalised(log_p, log_q):
    """KL(p‖q) of two normalised distributions as a sum of non-negative terms [derived].

    Adding ``Σ (q − p) = 0`` to ``Σ p ln(p/q)`` gives ``KL = Σ_y p_y ψ(x_y)``, ``x = ln q − ln p``,
    ``ψ(x) = eˣ − 1 − x ≥ 0``. Each term is ``~ p x²/2``, so a KL far below the rounding of ``ln p`` (the case
    ``p ≈ q``, which ``Σ p ln(p/q)`` loses to cancellation, in float32 below ~1e-6) keeps its relative accuracy.
    ``ψ`` is a series for ``|x| < 1`` and ``q − p − p x`` otherwise (no overflow); a ``p = 0`` term is ``q`` (also
    where ``p`` underflowed) and ``p > 0 = q`` gives ``+inf``.
    """
    p = jnp.exp(log_p)
    pos = p > 0
    x = jnp.where(pos, log_q - log_p, 0.0)
    small = jnp.abs(x) < 1.0
    xs = jnp.where(small, x, 0.0)
    series = jnp.zeros_like(xs)
    for c in _PSI_SERIES:
        series = series * xs + c
    q = jnp.exp(log_q)
    large = q - p - p * jnp.where(small, 0.0, x)
    return jnp.sum(jnp.where(pos, jnp.where(small, p * xs * xs * series, large), q))


@jax.jit
def _tilt(log_pi0, r, beta):
    return jax.nn.log_softmax(log_pi0 + r / beta)


@jax.jit
def _frontier_point(log_pi0, r, beta):
    log_pi = _tilt(log_pi0, r, beta)
    pi0, pi = jnp.exp(log_pi0), jnp.exp(log_pi)
    mean0 = jnp.sum(pi0 * r)
    gain = jnp.sum(pi * (r - mean0))
    kl = _kl_normalised(log_pi, log_pi0)
    rkl = _kl_normalised(log_pi0, log_pi)
    return FrontierPoint(beta, kl, rkl, kl + rkl, gain, mean0 + gain)


@cites(MONTEIRO_PAES, YANG)
def frontier_point(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> FrontierPoint:
    """Exact frontier point at ``β``, every quantity computed from the two policies ``π_β`` and ``π₀``.

    ``kl = Σ_y π_β (ln π_β − ln π₀)``, ``reverse_kl = Σ_y π₀ (ln π₀ − ln π_β)``, ``gain = Σ_y π_β r − Σ_y π₀ r``, so
    that the Jeffreys identity ``gain = β·(kl + reverse_kl)`` [paper] (Monteiro Paes, Mackraz, Theobald and Danieli,
    "Theoretical Limits of Language Model Alignment", arXiv:2605.07105) is a checkable identity, not a definition. Only
    the paper's abstract was available: the identity is stated there, the rest is derived.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      A :class:`FrontierPoint` of 0-d float fields.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``beta`` is not in ``(0, ∞)``. Under ``jit``, value checks of traced inputs raise at run time.
    """
    log_pi0, r = check_problem(log_pi0, r)
    beta = check_penalty(beta)
    return _frontier_point(log_pi0, r, beta)


def _tilt_sums(gap, log_w, inv_beta, *, squares: bool = False):
    """Sums over the last axis of ``gap`` for every β, from one stacked exp-and-sum [derived]:
    ``S = Σ s``, ``G = Σ s·gap`` and optionally ``Q = Σ s²``, with ``s = exp(ln w − gap/β)``; ``gap ≥ 0`` is the
    distance below the top reward and ``ln w = −inf`` marks outputs to leave out. Returns ``(..., K, B)``.

    Every sum is written as ``Σ exp(−m·gap/β + ln w_k)`` (``G`` through ``ln w + ln gap``): XLA's CPU backend
    keeps a single exp-and-sum over a broadcast in one vectorised loop, but takes a slow path (3.4x measured)
    for a product with a broadcast operand or for two reductions of one input. Outputs at the top (gap = 0)
    add nothing to ``G``, which keeps it exact as β → 0; a zero-valued term restores their ``gap`` factor's
    derivative, and the double ``where`` keeps ``ln 0`` out of gradients.
    """
    keep = log_w > -jnp.inf
    gap = jnp.where(keep, gap, 0.0)
    pos = keep & (gap > 0)
    log_gap = jnp.where(pos, jnp.log(jnp.where(pos, gap, 1.0)), -jnp.inf)
    terms = [(1.0, log_w), (1.0, log_w + log_gap)] + ([(2.0, 2.0 * log_w)] if squares else [])
    scale = jnp.array([m for m, _ in terms], gap.dtype)[:, None] * inv_beta  # (K, B)
    log_ws = jnp.stack([lw for _, lw in terms], axis=-1)  # (..., V, K)
    sums = jnp.sum(jnp.exp(log_ws[..., None] - gap[..., None, None] * scale), axis=-3)
    top = jnp.sum(jnp.where(keep & ~pos, jnp.exp(log_w) * gap, 0.0), axis=-1)  # value 0, see above
    return sums.at[..., 1, :].add(top[..., None])


@jax.jit
def _frontier(log_pi0, r, betas):
    # One pass over the outputs for all β (the hot path of large grids) [derived]: with centred rewards
    # c = r − E_π₀[r], gaps g = c_max − c, s_y = π₀(y) e^{−g_y/β}, S = Σ s and G = Σ s g:
    # E_{π_β}[c] = c_max − G/S, ln Z = ln E_π₀[e^{c/β}] = c_max/β + ln S, so KL = E_{π_β}[c]/β − ln Z = −G/(Sβ) − ln S
    # and rKL = ln Z − E_π₀[c]/β. These hold for any constant in place of c_max (its gradient is zero).
    pi0 = jnp.exp(log_pi0)
    mean0 = jnp.sum(pi0 * r)
    c = r - mean0
    c_max = jax.lax.stop_gradient(jnp.max(jnp.where(pi0 > 0, c, -jnp.inf)))
    m0 = jnp.sum(pi0 * c)  # zero up to rounding; kept so that the identities hold to rounding
    inv_beta = 1.0 / betas
    total, weighted_gap = _tilt_sums(c_max - c, jnp.where(pi0 > 0, log_pi0, -jnp.inf), inv_beta)
    mean_gap = weighted_gap / total
    kl = -mean_gap * inv_beta - jnp.log(total)
    rkl = (c_max - m0) * inv_beta + jnp.log(total)
    gain = c_max - mean_gap - m0
    return FrontierPoint(betas, kl, rkl, kl + rkl, gain, mean0 + gain)


@cites(MONTEIRO_PAES, YANG)
def frontier(log_pi0: Float[Array, " V"], r: Float[Array, " V"], betas: Float[Array, " B"]) -> FrontierPoint:
    """The exact reward–KL frontier over a grid of penalties, in one fused pass per ``β``.

    From the cumulant generating function ``Λ(λ) = ln E_{π₀}[e^{λ r}]``, ``λ = 1/β`` [derived]:
    ``gain = Λ'(λ) − Λ'(0)``, ``KL(π_β‖π₀) = λΛ'(λ) − Λ(λ)``, ``KL(π₀‖π_β) = Λ(λ) − λΛ'(0)``, evaluated as sums of
    ``π₀(y) e^{−(r_max − r(y))/β}`` so that small ``β`` neither overflows nor loses the top reward. It agrees with
    :func:`frontier_point` at every ``β`` (tested). Paper: Monteiro Paes, Mackraz, Theobald and Danieli, "Theoretical
    Limits of Language Model Alignment", arXiv:2605.07105 (only the abstract was available; the frontier formulas are
    derived here and checked numerically).

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      betas: ``(B,)`` float array of penalties, each in ``(0, ∞)``.

    Returns:
      A :class:`FrontierPoint` whose fields have shape ``(B,)``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``betas`` is not 1-d or has an entry outside ``(0, ∞)``. Under ``jit``, value checks of traced inputs raise
        at run time.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.alignment import frontier
      >>> log_pi0 = jnp.log(jnp.array([0.5, 0.3, 0.2]))
      >>> r = jnp.array([0.0, 0.5, 1.0])
      >>> pts = frontier(log_pi0, r, jnp.array([0.1, 1.0, 10.0]))
      >>> bool(jnp.allclose(pts.gain, pts.beta * pts.jeffreys, rtol=1e-4))
      True
    """
    log_pi0, r = check_problem(log_pi0, r)
    betas = check_penalty(betas, "betas", ndim=1)
    return _frontier(log_pi0, r, betas)


@cites(MONTEIRO_PAES)
def covariance_gain(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> Array:
    """The frontier gain in the covariance form [paper]: ``gain(β) = Cov_{π₀}(r, e^{r/β}) / E_{π₀}[e^{r/β}]``.

    Exact on a finite space. ``e^{r/β}`` is computed as ``e^{(r − max r)/β}``, which leaves the ratio unchanged and
    cannot overflow. Paper: Monteiro Paes et al., arXiv:2605.07105 (form stated in the abstract).

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      0-d float array, the gain ``E_{π_β}[r] − E_{π₀}[r]``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``beta`` is not in ``(0, ∞)``. Under ``jit``, value checks of traced inputs raise at run time.
    """
    log_pi0, r = check_problem(log_pi0, r)
    return _covariance_gain(log_pi0, r, check_penalty(beta))


@jax.jit
def _covariance_gain(log_pi0, r, beta):
    pi0 = jnp.exp(log_pi0)
    t = jnp.exp((r - jnp.max(r)) / beta)
    mean_r, mean_t = jnp.sum(pi0 * r), jnp.sum(pi0 * t)
    return jnp.sum(pi0 * (r - mean_r) * (t - mean_t)) / mean_t


@cites(MONTEIRO_PAES)
def kl_max(log_pi0: Float[Array, " V"], r: Float[Array, " V"]) -> Array:
    """The largest KL reachable by tilting: ``KL_max = −ln π₀({y : r(y) = max_{π₀} r})``.

    The maximum is over the support of ``π₀``; ``KL_max`` is the KL of the ``β → 0`` limit of ``π_β`` (``π₀`` restricted
    to the top reward level and renormalised), and 0 for rewards constant on the support.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.

    Returns:
      0-d float array ``KL_max ≥ 0``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``.
        Under ``jit``, value checks of traced inputs raise at run time.
    """
    log_pi0, r = check_problem(log_pi0, r)
    return _kl_max(log_pi0, r)


@jax.jit
def _kl_max(log_pi0, r):
    on_support = jnp.where(log_pi0 > -jnp.inf, r, -jnp.inf)
    top = on_support == jnp.max(on_support)
    return -logsumexp(jnp.where(top, log_pi0, -jnp.inf))


@jax.jit
def _bisect_log_beta(log_pi0, r, eps, lo, hi, iters):
    def kl_at(log_beta):
        log_pi = _tilt(log_pi0, r, jnp.exp(log_beta))
        return kl_divergence(log_pi, log_pi0)

    def body(_, ab):
        a, b = ab
        mid = 0.5 * (a + b)
        too_small_beta = kl_at(mid) > eps  # KL(β) decreases in β: move right
        return jnp.where(too_small_beta, mid, a), jnp.where(too_small_beta, b, mid)

    a, b = jax.lax.fori_loop(0, iters, body, (jnp.log(lo), jnp.log(hi)))
    return jnp.exp(0.5 * (a + b)).astype(r.dtype)  # the Python bracket is weakly typed: r's dtype


@cites(MONTEIRO_PAES)
def beta_for_kl(log_pi0: Float[Array, " V"], r: Float[Array, " V"], eps, *, lo: float = 1e-4, hi: float = 1e4,
                iters: int = 100) -> Array:
    """The penalty ``β_ε`` with ``KL(π_β‖π₀) = ε``, by bisection in ``ln β`` over ``[lo, hi]``.

    ``KL(β)`` is strictly decreasing for non-constant rewards [derived], so the root is unique. A budget ``ε ≥ KL_max``
    (:func:`kl_max`) has no root: the frontier ends at the ``β → 0`` limit. A budget below ``KL(hi)`` gives ``hi``.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      eps: the KL budget ``ε``, a float or 0-d float array in ``[0, KL_max)``.
      lo: lower end of the bracket, a float with ``0 < lo < hi``.
      hi: upper end of the bracket, a finite float.
      iters: number of bisection steps (int ``≥ 1``); the bracket in ``ln β`` shrinks by ``2^{-iters}``.

    Returns:
      0-d float array (dtype of ``r``), the geometric midpoint of the final bracket.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision; ``eps`` is not floating;
        ``iters`` is not an int.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``eps`` is negative, NaN or ``≥ KL_max`` (the message gives ``KL_max``); the rewards are constant on the
        support of ``π₀`` (``KL ≡ 0``); ``lo`` and ``hi`` do not satisfy ``0 < lo < hi < ∞``; ``iters < 1``. Under
        ``jit`` the ``eps`` and constant-reward checks raise at run time, without the numbers.
    """
    log_pi0, r = check_problem(log_pi0, r)
    eps = as_array(eps, "eps", ndim=0, kind="float")
    eps = check_in_range(eps, "eps", 0.0, math.inf, hi_open=True)
    lo, hi = float(lo), float(hi)
    if not 0.0 < lo < hi < math.inf:
        raise ValueError(f"lo and hi must satisfy 0 < lo < hi < inf, got lo={lo}, hi={hi}")
    iters = check_int(iters, "iters", min_value=1)
    constant = ("r must not be constant on the support of pi0 (KL(pi_beta || pi0) is 0 for every beta, so no "
                "beta reaches a KL budget)")
    unreachable = "eps must be < KL_max (the largest KL reachable by tilting, -ln pi0(argmax r))"
    if is_concrete((log_pi0, r, eps)):
        with jax.ensure_compile_time_eval():  # one scalar of each reaches the host, for the message
            kmax, eps_value = float(_kl_max(log_pi0, r)), float(eps)
        if kmax <= 0.0:
            raise ValueError(constant)
        if eps_value >= kmax:
            raise ValueError(f"eps must be < KL_max = {kmax:.6g} (the largest KL reachable by tilting, "
                             f"-ln pi0(argmax r)), got eps = {eps_value:.6g}")
    else:
        kmax = _kl_max(log_pi0, r)
        # exclusive conditions: run-time checks need not run in the order written, and a constant r makes
        # every eps unreachable too; its message is the one that names the cause
        eps = error_if(error_if(eps, kmax <= 0.0, constant), (kmax > 0.0) & (eps >= kmax), unreachable)
    return _bisect_log_beta(log_pi0, r, eps.astype(r.dtype), lo, hi, iters)


@cites(MONTEIRO_PAES)
def max_gain_at_kl(log_pi0: Float[Array, " V"], r: Float[Array, " V"], eps, **bisection) -> FrontierPoint:
    """Largest reward gain under a KL budget: Theorem A1 [derived], attained by the tilted policy ``π_{β_ε}``.

    ``max{E_π[r] − E_{π₀}[r] : KL(π‖π₀) ≤ ε} = gain(β_ε)`` where ``KL(π_{β_ε}‖π₀) = ε``, for ``0 < ε < KL_max``
    ("Theorem A1" is jaxlab's numbering). The maximal gain under a KL budget is the first result announced in the
    abstract of Monteiro Paes, Mackraz, Theobald and Danieli, "Theoretical Limits of Language Model Alignment",
    arXiv:2605.07105; only the abstract was available, so the statement and its proof were reconstructed: at ``β = β_ε``
    every feasible ``π`` has ``E_π[r] = E_{π_β}[r] − β(ε − KL(π‖π₀)) − β KL(π‖π_β) ≤ E_{π_β}[r]``. Checked numerically
    against random policies.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      eps: the KL budget ``ε``, a float or 0-d float array in ``[0, KL_max)``.
      **bisection: ``lo``, ``hi``, ``iters`` of :func:`beta_for_kl`.

    Returns:
      The :class:`FrontierPoint` (0-d fields) at ``β_ε``.

    Raises:
      TypeError: as :func:`beta_for_kl`.
      ValueError: as :func:`beta_for_kl` (in particular for ``eps ≥ KL_max``).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.alignment import kl_max, max_gain_at_kl
      >>> log_pi0 = jnp.log(jnp.array([0.5, 0.3, 0.2]))
      >>> r = jnp.array([0.0, 0.5, 1.0])
      >>> best = max_gain_at_kl(log_pi0, r, 0.5 * kl_max(log_pi0, r))
      >>> round(float(best.kl), 4)   # the budget, ε = -ln(0.2)/2
      0.8047
    """
    beta = beta_for_kl(log_pi0, r, eps, **bisection)
    return frontier_point(log_pi0, r, beta)


@cites(MONTEIRO_PAES)
def kl_regularized_objective(log_pi: Float[Array, " V"], log_pi0: Float[Array, " V"], r: Float[Array, " V"],
                             beta) -> Array:
    """The KL-regularised objective ``R_β(π) = E_π[r] − β KL(π‖π₀)`` of a policy given by log-probabilities.

    Its maximiser is :func:`tilted_log_policy`, with value ``β ln E_{π₀}[e^{r/β}]`` [prior].

    Args:
      log_pi: ``(V,)`` float array, the policy ``π`` as log-probabilities (not checked for normalisation).
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      0-d float array ``R_β(π)``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``log_pi`` is not of the shape of ``r``; ``beta`` is not in ``(0, ∞)``. Under ``jit``, value checks of
        traced inputs raise at run time.
    """
    log_pi0, r = check_problem(log_pi0, r)
    log_pi = as_array(log_pi, "log_pi", ndim=1, shape=r.shape, kind="float")
    return _objective(log_pi, log_pi0, r, check_penalty(beta))


@jax.jit
def _objective(log_pi, log_pi0, r, beta):
    return jnp.sum(jnp.exp(log_pi) * r) - beta * kl_divergence(log_pi, log_pi0)


# ----------------------------------------------------------------------------------------------------------
# Best-of-N


@cites(BEIRAMI, GAO)
def bon_kl_formula(n) -> Array:
    """``KL(π_BoN‖π₀) = ln N − (N−1)/N``: exact for continuous rewards, an upper bound on finite spaces [prior].

    From Beirami et al., "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv:2401.01879 (the formula is
    also used by Gao, Schulman and Hilton, arXiv:2210.10760).

    Args:
      n: the number of samples ``N ≥ 1``, a number, or a 0-d or ``(K,)`` array (int or float).

    Returns:
      Float array of the shape of ``n``.

    Raises:
      TypeError: ``n`` is not numeric.
      ValueError: ``n`` has more than one dimension, or an entry ``< 1``, infinite or NaN (under ``jit``: at run
        time).
    """
    n = check_count(n, "n", ndim=(0, 1))
    return jnp.log(n) - (n - 1.0) / n


def _log_cdf_pair(below, above):
    """``ln F`` from the mass at-or-below (``below``) and its complement (``above``), accurate near 0, 1."""
    safe_below = jnp.where(below > 0, below, 1.0)
    return jnp.where(below <= 0, -jnp.inf, jnp.where(below < 0.5, jnp.log(safe_below), jnp.log1p(-above)))


_SCAN_BLOCK = 32


def _block_prefix(x):
    """Inclusive prefix sums within each block of :data:`_SCAN_BLOCK` of the 1-d ``x`` (zero-padded to whole
    blocks), as ``(V / block, block)``: one matmul with an upper-triangular matrix of ones."""
    nb = -(-x.shape[0] // _SCAN_BLOCK)
    blocks = jnp.pad(x, (0, nb * _SCAN_BLOCK - x.shape[0])).reshape(nb, _SCAN_BLOCK)
    tri = jnp.triu(jnp.ones((_SCAN_BLOCK, _SCAN_BLOCK), x.dtype))
    return jnp.dot(blocks, tri, precision=jax.lax.Precision.HIGHEST)


def _add_block_offsets(inner, size: int):
    """The prefix sums of the whole array from :func:`_block_prefix`'s: each block plus the totals before it."""
    offsets = jnp.cumsum(inner[:, -1]) - inner[:, -1]
    return (inner + offsets[:, None]).reshape(-1)[:size]


def _prefix_sum(x, *, reverse: bool = False):
    """Inclusive prefix sums of a 1-d float array, ``jnp.cumsum(x)`` (suffix sums with ``reverse``).

    XLA-CPU runs ``jnp.cumsum`` as an associative scan, about 16 passes over the data at V = 50,000. Here each
    block of 32 is summed by one matmul and the block totals by a short cumsum: 1.4 against 2.6 ms on
    16 x 50,000 float32, with no larger rounding error.
    """
    if reverse:
        return _prefix_sum(x[::-1])[::-1]
    return _add_block_offsets(_block_prefix(x), x.shape[0])


def _prefix_count(flags, *, float_below: int = 2**24):
    """Inclusive prefix counts of a 1-d bool array as ``int32``, exactly.

    Below ``float_below`` entries every count is an integer that float32 holds exactly, and :func:`_prefix_sum`
    in float32 is the fast way (an int32 cumsum of the block totals made the whole best-of-N kernel 20 % slower).
    Longer arrays count each block in float32 (at most 32, exact) and add int32 block offsets.
    """
    if flags.shape[0] < float_below:
        return _prefix_sum(flags.astype(jnp.float32)).astype(jnp.int32)
    return _add_block_offsets(_block_prefix(flags.astype(jnp.float32)).astype(jnp.int32), flags.shape[0])


@jax.jit
def _best_of_n(log_pi0, r, n):
    V = r.shape[0]
    order = argsort_floats(r)  # jnp.argsort's permutation from an integer-key sort, several times faster on CPU
    r_s, lp_s = r[order], log_pi0[order]  # everything below is in ascending reward order
    p_s = jnp.exp(lp_s)
    zero = jnp.zeros(1, p_s.dtype)
    # ln F at the V + 1 cut points: F[k] = π₀-mass of the first k sorted outputs, from the mass above where F > 1/2
    log_f = _log_cdf_pair(jnp.concatenate([zero, _prefix_sum(p_s)]),
                          jnp.concatenate([_prefix_sum(p_s, reverse=True), zero]))
    # reward levels: level j of L starts at a cut where the sorted reward changes; the cut V closes the last one
    cut = jnp.concatenate([jnp.ones(1, bool), r_s[1:] != r_s[:-1], jnp.ones(1, bool)])
    level = _prefix_count(cut) - 1  # (V + 1,): the level each output belongs to (level L at the cut V)
    # ln F below each level, lined up by level (ln F is non-decreasing, so the max over a level is its first cut)
    log_f_lt = jax.ops.segment_max(jnp.where(cut, log_f, -jnp.inf), level, num_segments=V + 1,
                                   indices_are_sorted=True)
    log_f_le = log_f_lt[1:]  # at or below level j = below level j + 1
    # P(level) / q(level) with F_lt = F_le e^d, d = ln F_lt − ln F_le <= 0:
    # (F_le^N − F_lt^N) / (F_le − F_lt) = F_le^(N−1) expm1(N d) / expm1(d), → N F_le^(N−1) as d → 0. The level mass q
    # and the BoN mass come from the same two F values, so their ratio stays accurate for levels too small to
    # resolve as a difference F_le − F_lt (near F = 1/2, say): there it tends to N F^(N−1), the exact limit.
    d = jnp.minimum(log_f_lt[:-1] - log_f_le, 0.0)
    ratio = jnp.where(d < 0, jnp.expm1(n * d) / jnp.expm1(jnp.where(d < 0, d, -1.0)), n)
    log_rho = ((n - 1) * log_f_le + jnp.log(ratio))[level[:-1]]
    log_bon_s = jnp.where(p_s > 0, lp_s + log_rho, -jnp.inf)
    # materialise the policy before the two sums: fused into them, its exps and logs ran on one core
    log_bon_s, log_rho = jax.lax.optimization_barrier((log_bon_s, log_rho))
    kl = kl_divergence(log_bon_s, lp_s)
    gain = jnp.sum((jnp.exp(log_bon_s) - p_s) * r_s)
    # order is a permutation: unique, in-bounds indices let XLA skip the collision and bounds handling
    log_bon = jnp.empty_like(log_pi0).at[order].set(log_bon_s, unique_indices=True, mode="promise_in_bounds")
    return log_bon, kl, gain


@cites(BEIRAMI, MONTEIRO_PAES)
def best_of_n(log_pi0: Float[Array, " V"], r: Float[Array, " V"], n) -> tuple[Array, Array, Array]:
    """Exact best-of-N policy on a finite space, tie-aware [prior]: ``(log π_BoN, KL(π_BoN‖π₀), gain)``.

    The best of ``N`` i.i.d. draws from ``π₀`` lands on reward level ``j`` with probability ``F_j^N − F_{j−1}^N`` (``F``
    the ``π₀``-CDF of the sorted reward levels); inside a level the mass is split ∝ ``π₀`` (uniform tie-breaking).
    Outputs with exactly equal rewards form one level. Its KL is at most :func:`bon_kl_formula` (Beirami et al.,
    "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv:2401.01879).

    Each output's probability is ``π₀(y) ρ_j`` with the level's ratio ``ρ_j = (F_j^N − F_{j−1}^N) / (F_j − F_{j−1})``,
    evaluated as ``F_j^{N−1} expm1(N δ) / expm1(δ)``, ``δ = ln F_{j−1} − ln F_j`` (``ρ → N F_j^{N−1}`` as ``δ → 0``).
    Numerator and denominator then come from the same two CDF values, so a level whose mass is below the CDF's
    rounding (``F_j − F_{j−1} ≪ ε F_j``) still gets its BoN mass to working precision; ``ln F`` is taken from the
    mass above where ``F > 1/2``.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      n: the number of samples ``N ≥ 1``, a number or 0-d array (may be a traced float).

    Returns:
      A tuple ``(log_bon, kl, gain)``: the ``(V,)`` float array ``log π_BoN``, the 0-d ``KL(π_BoN‖π₀)`` and the
      0-d gain ``E_{π_BoN}[r] − E_{π₀}[r]``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``n`` is not 0-d, or is ``< 1``, infinite or NaN. Under ``jit``, value checks of traced inputs raise at run
        time.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.alignment import best_of_n, bon_kl_formula
      >>> log_pi0 = jnp.log(jnp.full(4, 0.25))
      >>> log_bon, kl, gain = best_of_n(log_pi0, jnp.array([0.0, 1.0, 2.0, 3.0]), 4)
      >>> bool(kl <= bon_kl_formula(4))
      True
    """
    log_pi0, r = check_problem(log_pi0, r)
    n = check_count(n, "n")
    return _best_of_n(log_pi0, r, n.astype(r.dtype))


_GRID = 4001  # trapezoid nodes on [−12, 12]: the integrand is smooth and decays like a Gaussian


@cites(BEIRAMI, GAO)
def gaussian_bon_gain(n, sigma=1.0) -> Array:
    """Best-of-N gain for ``r ~ N(μ, σ²)`` under ``π₀``: ``σ e_N`` [prior].

    ``e_N = E[max of N standard normals] = ∫ z N φ(z) Φ(z)^{N−1} dz``, by the trapezoid rule on 4001 nodes in
    ``[−12, 12]`` (Beirami et al., arXiv:2401.01879).

    Args:
      n: the number of samples ``N ≥ 1``, a number or 0-d array (may be traced; ``vmap`` for a grid).
      sigma: the reward standard deviation ``σ > 0``, a float or 0-d array.

    Returns:
      0-d float array ``σ e_N`` (the float dtype of ``n``).

    Raises:
      ValueError: ``n`` not 0-d, ``< 1`` or not finite; ``sigma`` not in ``(0, ∞)``.
    """
    n = check_count(n, "n")
    return _gaussian_bon_gain(n, check_penalty(sigma, "sigma").astype(n.dtype))


@jax.jit
def _gaussian_bon_gain(n, sigma):
    z = jnp.linspace(-12.0, 12.0, _GRID, dtype=n.dtype)
    log_density = jnp.log(n) + norm.logpdf(z) + (n - 1.0) * norm.logcdf(z)
    return sigma * jnp.trapezoid(z * jnp.exp(log_density), z)


@cites(BEIRAMI)
def uniform_bon_gain(n) -> Array:
    """Best-of-N gain for ``r ~ U(0, 1)`` under ``π₀``: ``N/(N+1) − 1/2`` [prior].

    The mean of the maximum of ``N`` uniforms minus the mean ``1/2`` (Beirami et al., arXiv:2401.01879).

    Args:
      n: the number of samples ``N ≥ 1``, a number, or a 0-d or ``(K,)`` array.

    Returns:
      Float array of the shape of ``n``.

    Raises:
      ValueError: ``n`` has more than one dimension, or an entry ``< 1``, infinite or NaN.
    """
    n = check_count(n, "n", ndim=(0, 1))
    return n / (n + 1.0) - 0.5


@cites(BEIRAMI)
def exponential_bon_gain(n) -> Array:
    """Best-of-N gain for ``r ~ Exp(1)`` under ``π₀``: ``H_N − 1 = ψ(N+1) + γ − 1`` [prior].

    ``H_N`` is the harmonic number (the mean of the maximum of ``N`` unit exponentials), ``ψ`` the digamma function and
    ``γ`` Euler's constant (Beirami et al., arXiv:2401.01879).

    Args:
      n: the number of samples ``N ≥ 1``, a number, or a 0-d or ``(K,)`` array.

    Returns:
      Float array of the shape of ``n``.

    Raises:
      ValueError: ``n`` has more than one dimension, or an entry ``< 1``, infinite or NaN.
    """
    n = check_count(n, "n", ndim=(0, 1))
    return digamma(n + 1.0) + np.euler_gamma - 1.0


# ----------------------------------------------------------------------------------------------------------
# Closed-form frontiers (oracles for tests and notebooks) [derived]


def _point(beta, kl, rkl, gain, expected):
    return FrontierPoint(beta, kl, rkl, kl + rkl, gain, expected)


@cites(MONTEIRO_PAES, MROUEH)
def gaussian_frontier(sigma, beta, *, mu=0.0) -> FrontierPoint:
    """Closed-form frontier for ``r ~ N(μ, σ²)`` under ``π₀`` [derived]: ``gain = σ²/β``, ``KL = rKL = σ²/(2β²)``.

    Hence ``gain = σ sqrt(2 KL)`` exactly, the Gaussian case also treated by Mroueh, "Information Theoretic Guarantees
    For Policy Alignment In Large Language Models", arXiv:2406.05883. An oracle for tests.

    Args:
      sigma: the reward standard deviation ``σ > 0``, a float or 0-d array.
      beta: the penalty ``β > 0``, a float, 0-d or ``(B,)`` array.
      mu: the reward mean ``μ`` (finite float), which only shifts ``expected_reward``.

    Returns:
      A :class:`FrontierPoint` whose fields have the shape of ``beta``.

    Raises:
      ValueError: ``sigma`` or an entry of ``beta`` not in ``(0, ∞)``; ``beta`` with more than one dimension;
        ``mu`` not a finite scalar.
    """
    sigma = check_penalty(sigma, "sigma")
    beta = check_penalty(beta, "beta", ndim=(0, 1))
    mu = as_array(mu, "mu", ndim=0, finite=True)
    return _gaussian_frontier(sigma, beta, mu)


@jax.jit
def _gaussian_frontier(sigma, beta, mu):
    gain = sigma**2 / beta
    kl = 0.5 * (sigma / beta) ** 2
    return _point(beta, kl, kl, gain, mu + gain)


@cites(MONTEIRO_PAES)
def bernoulli_frontier(p, beta) -> FrontierPoint:
    """Closed-form frontier for ``r ∈ {0, 1}`` with ``π₀(r = 1) = p`` [derived].

    With ``λ = 1/β``: ``q = π_β(r = 1) = p e^λ/(p e^λ + 1 − p)``, ``gain = q − p``, ``KL = kl_Bern(q‖p)``,
    ``rKL = kl_Bern(p‖q)`` and ``expected_reward = q``.

    Args:
      p: ``π₀(r = 1) ∈ (0, 1)``, a float or 0-d array.
      beta: the penalty ``β > 0``, a float, 0-d or ``(B,)`` array.

    Returns:
      A :class:`FrontierPoint` whose fields have the shape of ``beta``.

    Raises:
      ValueError: ``p`` not in ``(0, 1)`` or not a scalar; an entry of ``beta`` not in ``(0, ∞)``.
    """
    p = as_array(p, "p", ndim=0)
    p = check_in_range(p, "p", 0.0, 1.0, lo_open=True, hi_open=True)
    return _bernoulli_frontier(p, check_penalty(beta, "beta", ndim=(0, 1)))


@jax.jit
def _bernoulli_frontier(p, beta):
    logit_q = jnp.log(p) - jnp.log1p(-p) + 1.0 / beta
    q = jax.nn.sigmoid(logit_q)

    def kl_bern(a, b):
        return a * (jnp.log(a) - jnp.log(b)) + (1 - a) * (jnp.log1p(-a) - jnp.log1p(-b))

    return _point(beta, kl_bern(q, p), kl_bern(p, q), q - p, q)


@cites(MONTEIRO_PAES)
def exponential_frontier(beta) -> FrontierPoint:
    """Closed-form frontier for ``r ~ Exp(1)`` under ``π₀`` [derived], defined for ``β > 1`` (``λ = 1/β < 1``).

    ``gain = λ/(1−λ)``, ``KL = λ/(1−λ) + ln(1−λ)``, ``rKL = −ln(1−λ) − λ``, ``expected_reward = 1 + gain``.

    Args:
      beta: the penalty ``β > 1``, a float, 0-d or ``(B,)`` array.

    Returns:
      A :class:`FrontierPoint` whose fields have the shape of ``beta``.

    Raises:
      ValueError: an entry of ``beta`` not in ``(1, ∞)``, or ``beta`` with more than one dimension.
    """
    beta = as_array(beta, "beta", ndim=(0, 1))
    beta = check_in_range(beta, "beta", 1.0, math.inf, lo_open=True, hi_open=True)
    return _exponential_frontier(beta)


@jax.jit
def _exponential_frontier(beta):
    lam = 1.0 / beta
    gain = lam / (1.0 - lam)
    return _point(beta, gain + jnp.log1p(-lam), -jnp.log1p(-lam) - lam, gain, 1.0 + gain)


@cites(MONTEIRO_PAES)
def uniform_frontier(beta) -> FrontierPoint:
    """Closed-form frontier for ``r ~ U(0, 1)`` under ``π₀`` [derived].

    ``Λ(λ) = ln((e^λ − 1)/λ)``, ``Λ'(λ) = 1/(1 − e^{−λ}) − 1/λ`` (a series for ``λ < 10⁻³``), ``Λ'(0) = 1/2``; then
    ``gain = Λ'(λ) − 1/2``, ``KL = λΛ'(λ) − Λ(λ)``, ``rKL = Λ(λ) − λ/2`` with ``λ = 1/β``.

    Args:
      beta: the penalty ``β > 0``, a float, 0-d or ``(B,)`` array.

    Returns:
      A :class:`FrontierPoint` whose fields have the shape of ``beta``.

    Raises:
      ValueError: an entry of ``beta`` not in ``(0, ∞)``, or ``beta`` with more than one dimension.
    """
    return _uniform_frontier(check_penalty(beta, "beta", ndim=(0, 1)))


@jax.jit
def _uniform_frontier(beta):
    lam = 1.0 / beta
    small = lam < 1e-3
    lam_big = jnp.where(small, 1.0, lam)
    # series Λ'(λ) = 1/2 + λ/12 − λ³/720 + ... avoids the cancellation of 1/(1 − e^{−λ}) − 1/λ at small λ
    dlam = jnp.where(small, 0.5 + lam / 12.0 - lam**3 / 720.0, -1.0 / jnp.expm1(-lam_big) - 1.0 / lam_big)
    cgf = lam + jnp.log(-jnp.expm1(-lam)) - jnp.log(lam)
    return _point(beta, lam * dlam - cgf, cgf - 0.5 * lam, dlam - 0.5, dlam)


# ----------------------------------------------------------------------------------------------------------
# Estimators from base-model samples [paper: covariance estimator; details derived]


@jax.jit
def _sample_frontier(r, betas):
    # One pass over the samples for all β [derived]: with gaps g_i = max r − r_i, s = e^{−g/β}, S = Σ s,
    # G = Σ s g and Q = Σ s²: w = s/S, Σ w r = max r − G/S, K̂L = Σ w ln(n w) = −G/(Sβ) − ln S + ln n and
    # ESS = S²/Q (`_tilt_sums`; max r is a constant for the gradient, as every estimate is shift-invariant).
    n = r.shape[-1]
    r_bar = jnp.mean(r, axis=-1, keepdims=True)
    r_max = jax.lax.stop_gradient(jnp.max(r, axis=-1, keepdims=True))
    inv_beta = 1.0 / betas
    sums = _tilt_sums(r_max - r, jnp.zeros_like(r), inv_beta, squares=True)
    total, weighted_gap, square = sums[..., 0, :], sums[..., 1, :], sums[..., 2, :]
    mean_gap = weighted_gap / total
    gain = r_max - mean_gap - r_bar
    kl = -mean_gap * inv_beta - jnp.log(total) + math.log(n)
    ess = total**2 / square
    jeff = gain * inv_beta
    reliable = (ess >= 100.0) & (kl <= 0.5 * math.log(n))
    return SampleFrontierPoint(jnp.broadcast_to(betas, gain.shape), kl, jeff - kl, jeff, gain, r_bar + gain, ess,
                               reliable)


@jax.jit
def _sample_point(r, beta):
    return jax.tree.map(lambda a: a[..., 0], _sample_frontier(r, jnp.reshape(beta, (1,))))


@cites(MONTEIRO_PAES)
def gain_from_samples(r: Float[Array, "... n"], beta) -> Array:
    """Frontier gain estimated from base-model samples: ``ĝain(β) = Σ_i w_i r_i − r̄``, ``w = softmax(r/β)``.

    The sample version of the covariance form ``Cov(r, e^{r/β})/E[e^{r/β}]`` [paper: covariance estimator; details
    derived]; consistent as ``n → ∞``, biased low where the KL nears ``ln n``.

    Args:
      r: ``(n,)`` finite float array of the rewards of ``n ≥ 2`` base-model samples ``y_i ∼ π₀``, or
        ``(prompts, n)`` for one estimate per prompt.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      Float array of shape ``()`` or ``(prompts,)``.

    Raises:
      TypeError: ``r`` is not floating.
      ValueError: ``r`` is not 1-d or 2-d, not finite, or has fewer than 2 samples on its last axis; ``beta`` is not
        in ``(0, ∞)``.
    """
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    return _sample_point(r, check_penalty(beta)).gain


@cites(MONTEIRO_PAES)
def kl_from_samples(r: Float[Array, "... n"], beta) -> Array:
    """``K̂L(β) = Σ_i w_i ln(n w_i) ∈ [0, ln n]``, the KL of the tilted weights ``w = softmax(r/β)`` from uniform.

    The sample estimate of ``KL(π_β‖π₀)`` [paper: covariance estimator; details derived].

    Args:
      r: ``(n,)`` finite float array of the rewards of ``n ≥ 2`` base-model samples ``y_i ∼ π₀``, or
        ``(prompts, n)`` for one estimate per prompt.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      Float array of shape ``()`` or ``(prompts,)``.

    Raises:
      TypeError: ``r`` is not floating.
      ValueError: ``r`` is not 1-d or 2-d, not finite, or has fewer than 2 samples on its last axis; ``beta`` is not
        in ``(0, ∞)``.
    """
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    return _sample_point(r, check_penalty(beta)).kl


@cites(MONTEIRO_PAES)
def default_betas(r, num: int = 256) -> Array:
    """Log-spaced grid of ``num`` penalties in ``[10⁻³, 10³]·sd(r)`` **[chosen]**, ``sd`` over every entry of ``r``.

    Args:
      r: ``(n,)`` or ``(prompts, n)`` finite float array of sampled rewards.
      num: number of grid points (int ``≥ 2``).

    Returns:
      ``(num,)`` float array (dtype of ``r``), increasing.

    Raises:
      TypeError: ``r`` not floating, ``num`` not an int.
      ValueError: ``r`` not 1-d or 2-d, not finite, or constant (``sd = 0``); ``num < 2``.
    """
    r = check_rewards(r, ndim=(1, 2))
    num = check_int(num, "num", min_value=2)
    sd = value_check(jnp.std(r), lambda v: ~(v > 0),
                     "r must not be constant (its standard deviation sets the beta grid), got sd = 0")
    return sd * jnp.logspace(-3.0, 3.0, num, dtype=r.dtype)


@cites(MONTEIRO_PAES)
def frontier_from_samples(r: Float[Array, "... n"],
                          betas: Float[Array, " B"] | None = None) -> SampleFrontierPoint:
    """Sample-based frontier: the self-normalised estimates over a ``β`` grid (default :func:`default_betas`).

    With ``w_i = softmax_i(r_i/β)`` [paper: covariance estimator; details derived]: ``ĝain = Σ w_i r_i − r̄``,
    ``K̂L = Σ w_i ln(n w_i)``, ``Ĵ = ĝain/β``, reverse KL ``Ĵ − K̂L`` and ``ESS = 1/Σ w_i²``, all ``β`` in one pass.
    Consistent as ``n → ∞``; biased low for KL near ``ln n``, hence the ``ess`` and ``reliable`` fields. Paper: Monteiro
    Paes et al., arXiv:2605.07105 (only the abstract was available; it names the covariance estimator, the
    self-normalised weights and the diagnostics were worked out here).

    Args:
      r: ``(n,)`` finite float array of the rewards of ``n ≥ 2`` base-model samples ``y_i ∼ π₀``, or
        ``(prompts, n)`` for one estimate per prompt.
      betas: ``(B,)`` float array of penalties in ``(0, ∞)``, or ``None`` for :func:`default_betas` of ``r``.

    Returns:
      A :class:`SampleFrontierPoint` with fields of shape ``(B,)``, or ``(prompts, B)`` for a 2-d ``r``.

    Raises:
      TypeError: ``r`` is not floating.
      ValueError: ``r`` is not 1-d or 2-d, not finite, or has fewer than 2 samples on its last axis; ``betas`` is
        not 1-d or has an entry outside ``(0, ∞)``; ``betas`` is None and ``r`` is constant.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.alignment import frontier_from_samples
      >>> r = jax.random.normal(jax.random.key(0), (20_000,))
      >>> est = frontier_from_samples(r, jnp.array([1.0, 2.0]))
      >>> est.gain   # Gaussian rewards: gain = σ²/β = (1, 0.5)
    """
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    betas = default_betas(r) if betas is None else check_penalty(betas, "betas", ndim=1)
    return _sample_frontier(r, betas.astype(r.dtype))


@cites(MONTEIRO_PAES)
def dataset_frontier(r_by_prompt: Float[Array, "prompts n"],
                     betas: Float[Array, " B"] | None = None) -> SampleFrontierPoint:
    """Frontier of a data set of prompts under one shared ``β``, averaged over prompts.

    One ``β`` for every prompt is the Lagrangian-optimal split of a total KL budget [derived]:
    ``KL̄(β) = mean_x KL_x(β)``, ``gain̄(β) = mean_x gain_x(β)`` from :func:`frontier_from_samples`; ``ess`` is the
    smallest over prompts and ``reliable`` holds where every prompt is reliable.

    Args:
      r_by_prompt: ``(prompts, n)`` finite float array, the rewards of ``n ≥ 2`` base-model samples per prompt.
      betas: ``(B,)`` float array of penalties in ``(0, ∞)``, or ``None`` for :func:`default_betas` (from the
        spread of all rewards).

    Returns:
      A :class:`SampleFrontierPoint` with fields of shape ``(B,)``.

    Raises:
      TypeError: ``r_by_prompt`` not floating.
      ValueError: ``r_by_prompt`` not 2-d, not finite or with fewer than 2 samples; bad ``betas`` as in
        :func:`frontier_from_samples`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.alignment import dataset_frontier
      >>> r = jax.random.normal(jax.random.key(0), (8, 2_000)) * jnp.linspace(0.5, 1.5, 8)[:, None]
      >>> pts = dataset_frontier(r, jnp.array([0.5, 1.0, 2.0]))
      >>> pts.kl.shape
      (3,)
    """
    r = check_rewards(r_by_prompt, "r_by_prompt", ndim=2)
    check_samples(r, "r_by_prompt")
    pts = frontier_from_samples(r, betas)
    mean = lambda a: jnp.mean(a, axis=0)  # noqa: E731
    return SampleFrontierPoint(pts.beta[0], mean(pts.kl), mean(pts.reverse_kl), mean(pts.jeffreys),
                               mean(pts.gain), mean(pts.expected_reward), jnp.min(pts.ess, axis=0),
                               jnp.all(pts.reliable, axis=0))


@cites(MONTEIRO_PAES)
def gain_at_kl(points: FrontierPoint | SampleFrontierPoint, kl) -> Array:
    """Frontier gain at target KLs, interpolating a ``β`` grid monotonically in ``ln β``.

    First ``ln β`` at each target from the (decreasing) KL curve, then the gain at that ``ln β``, both by linear
    interpolation; targets outside the grid take the end values. Used to compare best-of-N with the frontier at the same
    KL.

    Args:
      points: a :class:`FrontierPoint` or :class:`SampleFrontierPoint` over a 1-d grid (fields of shape ``(B,)``,
        e.g. from :func:`frontier`).
      kl: float array (any shape) of target KLs.

    Returns:
      Float array of the shape of ``kl``, the interpolated gains.

    Raises:
      TypeError: ``kl`` not floating.
      ValueError: ``points.beta`` not 1-d or with an entry outside ``(0, ∞)``.
    """
    betas = check_penalty(points.beta, "points.beta", ndim=1)
    kl = as_array(kl, "kl", kind="float")
    return _gain_at_kl(betas, points.kl, points.gain, kl)


@jax.jit
def _gain_at_kl(betas, kls, gains, kl):
    order = jnp.argsort(kls)
    log_beta = jnp.interp(kl, kls[order], jnp.log(betas)[order])
    order_b = jnp.argsort(betas)
    return jnp.interp(log_beta, jnp.log(betas)[order_b], gains[order_b])


@jax.jit
def _bon_samples(r, n):
    m = r.shape[-1]
    i = jnp.arange(1, m + 1, dtype=r.dtype)
    w = jnp.exp(n * jnp.log(i / m)) - jnp.exp(n * jnp.log((i - 1) / m))
    r_sorted = sort_floats(r, -1)  # integer-key sort: several times faster than jnp.sort on CPU
    return jnp.sum(w * r_sorted, axis=-1) - jnp.mean(r, axis=-1)


@cites(BEIRAMI, GAO)
def bon_from_samples(r: Float[Array, "... n"], n_bon) -> tuple[Array, Array]:
    """Best-of-``n_bon`` from ``n ≫ n_bon`` base samples: ``(ln N − (N−1)/N, gain)``.

    The gain is exact best-of-N under the empirical distribution (a plug-in estimate): order-statistic weights
    ``w_(i) = (i/n)^N − ((i−1)/n)^N`` on the ascending sorted rewards, ``gain = Σ_i w_(i) r_(i) − r̄`` [prior: Beirami
    et al., arXiv:2401.01879; Gao et al., arXiv:2210.10760]. The KL is the continuous-reward formula
    :func:`bon_kl_formula`.

    Args:
      r: ``(n,)`` finite float array of the rewards of ``n ≥ 2`` base-model samples ``y_i ∼ π₀``, or
        ``(prompts, n)`` for one estimate per prompt.
      n_bon: the best-of count ``N ≥ 1``, a number or 0-d array.

    Returns:
      A tuple ``(kl, gain)``: the 0-d float ``ln N − (N−1)/N`` and the float gain of shape ``()`` or ``(prompts,)``.

    Raises:
      TypeError: ``r`` is not floating.
      ValueError: ``r`` is not 1-d or 2-d, not finite, or has fewer than 2 samples on its last axis; ``n_bon`` is
        not 0-d, or is ``< 1``, infinite or NaN.
    """
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    n_bon = check_count(n_bon, "n_bon")
    return bon_kl_formula(n_bon), _bon_samples(r, n_bon.astype(r.dtype))


# ----------------------------------------------------------------------------------------------------------
# Proxy rewards and ensembles [paper claim; quantities derived]


@jax.jit
def _proxy_gaps(log_pi0, r, e, beta):
    log_pi = _tilt(log_pi0, r, beta)
    log_hat = _tilt(log_pi0, r + e, beta)
    objective_gap = beta * _kl_normalised(log_hat, log_pi)
    true_gap = jnp.sum((jnp.exp(log_pi) - jnp.exp(log_hat)) * r)
    support = jnp.exp(log_pi0) > 0
    spread = jnp.max(jnp.where(support, e, -jnp.inf)) - jnp.min(jnp.where(support, e, jnp.inf))
    return ProxyGap(objective_gap, true_gap, spread**2 / (8.0 * beta))


@cites(MONTEIRO_PAES)
def proxy_gaps(log_pi0: Float[Array, " V"], r: Float[Array, " V"], e: Float[Array, " V"], beta) -> ProxyGap:
    """Gaps of the proxy-aligned ``π̂_β ∝ π₀ e^{(r+e)/β}`` against ``π_β`` [paper claim; quantities derived].

    ``Δ_obj = R_β(π_β) − R_β(π̂_β) = β KL(π̂_β‖π_β)`` (from ``R_β(π) = β ln Z(β) − β KL(π‖π_β)``),
    ``Δ_true = E_{π_β}[r] − E_{π̂_β}[r]``, and the Hoeffding bound ``0 ≤ Δ_obj ≤ (sup e − inf e)²/(8β)`` (range over the
    support of ``π₀``). The abstract of Monteiro Paes et al. (arXiv:2605.07105) relates the gap between ideal and proxy
    alignment to the KL penalty and the size of the reward error; these quantities and the bound were derived here.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities (``−inf`` off its
        support).
      r: ``(V,)`` finite float array of rewards ``r(y)``.
      e: ``(V,)`` finite float array, the proxy error ``e = r̂ − r``.
      beta: KL penalty ``β ∈ (0, ∞)``, a float or 0-d array (may be traced).

    Returns:
      A :class:`ProxyGap` of 0-d float fields.

    Raises:
      TypeError: ``log_pi0`` or ``r`` is not floating, or ``log_pi0`` is half precision.
      ValueError: ``log_pi0`` is not 1-d, has NaN or ``+inf`` entries or is not normalised
        (``|logsumexp(log_pi0)| > max(1e-6, 64 eps)``); ``r`` is not finite or not of the shape of ``log_pi0``;
        ``e`` is not finite or not of the shape of ``r``; ``beta`` is not in ``(0, ∞)``. Under ``jit``, value checks
        of traced inputs raise at run time.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.alignment import proxy_gaps
      >>> log_pi0 = jnp.log(jnp.array([0.1, 0.2, 0.3, 0.25, 0.15]))
      >>> r = jnp.linspace(0.0, 1.0, 5)
      >>> g = proxy_gaps(log_pi0, r, jnp.array([0.3, -0.1, 0.0, 0.2, -0.2]), 0.5)
      >>> bool(0 <= g.objective_gap <= g.hoeffding_bound)
      True
    """
    log_pi0, r = check_problem(log_pi0, r)
    e = check_rewards(e, "e")
    if e.shape != r.shape:
        raise ValueError(f"e must have the shape of r {tuple(r.shape)}, got shape {tuple(e.shape)}")
    return _proxy_gaps(log_pi0, r, e, check_penalty(beta))


@cites(MONTEIRO_PAES)
def ensemble_proxy(r: Float[Array, " V"], errors: Float[Array, "M V"]) -> Float[Array, " V"]:
    """Ensemble of ``M`` proxy rewards ``r + e_m``: their mean ``r̄ = r + mean_m e_m``.

    Averaging ``M`` independent errors divides their variance, and with it the expected proxy gap, by about ``M`` (a
    claim of this area).

    Args:
      r: ``(V,)`` finite float array of true rewards.
      errors: ``(M, V)`` finite float array, the error ``e_m`` of each proxy, ``M ≥ 1``.

    Returns:
      ``(V,)`` float array, the ensemble proxy reward.

    Raises:
      TypeError: ``r`` or ``errors`` not floating.
      ValueError: ``r`` not 1-d, ``errors`` not 2-d or not of shape ``(M ≥ 1, V)``, or non-finite entries.
    """
    r = check_rewards(r)
    errors = check_rewards(errors, "errors", ndim=2)
    check_ndim(errors, "errors", 2)
    if errors.shape[1] != r.shape[0] or errors.shape[0] < 1:
        raise ValueError(f"errors must have shape (M >= 1, {r.shape[0]}), got shape {tuple(errors.shape)}")
    return r + jnp.mean(errors, axis=0)
