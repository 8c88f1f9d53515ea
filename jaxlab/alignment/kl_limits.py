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
from jaxlab.core.sorting import sort_floats
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
    """One point (or a grid) of the reward–KL frontier at penalty ``beta``.

    ``kl = KL(π_β‖π₀)``, ``reverse_kl = KL(π₀‖π_β)``, ``jeffreys = kl + reverse_kl``,
    ``gain = E_{π_β}[r] − E_{π₀}[r]``, ``expected_reward = E_{π_β}[r]``.
    """

    beta: Array
    kl: Array
    reverse_kl: Array
    jeffreys: Array
    gain: Array
    expected_reward: Array


class SampleFrontierPoint(NamedTuple):
    """A :class:`FrontierPoint` estimated from base-model samples, with its effective sample size.

    ``reliable`` is False where ``ess < 100`` or ``kl > 0.5 ln n`` (self-normalised weights too degenerate).
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
    """Loss of aligning to a proxy ``r + e`` instead of ``r`` at penalty ``beta`` (module docstring)."""

    objective_gap: Array
    true_reward_gap: Array
    hoeffding_bound: Array


# ----------------------------------------------------------------------------------------------------------
# Exact frontier on a finite output space


@cites(YANG, MONTEIRO_PAES)
def tilted_log_policy(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> Float[Array, " V"]:
    """``log π_β = log_softmax(log π₀ + r/β)``, the maximiser of ``E_π[r] − β KL(π‖π₀)`` [prior]."""
    log_pi0, r = check_problem(log_pi0, r)
    beta = check_penalty(beta)
    return _tilt(log_pi0, r, beta)


@jax.jit
def _tilt(log_pi0, r, beta):
    return jax.nn.log_softmax(log_pi0 + r / beta)


@jax.jit
def _frontier_point(log_pi0, r, beta):
    log_pi = _tilt(log_pi0, r, beta)
    pi0, pi = jnp.exp(log_pi0), jnp.exp(log_pi)
    mean0 = jnp.sum(pi0 * r)
    gain = jnp.sum(pi * (r - mean0))
    kl = kl_divergence(log_pi, log_pi0)
    rkl = kl_divergence(log_pi0, log_pi)
    return FrontierPoint(beta, kl, rkl, kl + rkl, gain, mean0 + gain)


@cites(MONTEIRO_PAES, YANG)
def frontier_point(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> FrontierPoint:
    """Exact frontier point at ``beta``: KL, reverse KL and Jeffreys divergence between ``π_β`` and ``π₀`` and
    the reward gain, each computed from the two policies (so that ``gain = β·jeffreys`` [paper] is a checkable
    identity, not a definition)."""
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
    """:func:`frontier_point` over a grid of penalties (fields of shape ``(B,)``), computed in one fused pass
    per β from the cumulant form of the module docstring (tests check it against :func:`frontier_point`)."""
    log_pi0, r = check_problem(log_pi0, r)
    betas = check_penalty(betas, "betas", ndim=1)
    return _frontier(log_pi0, r, betas)


@cites(MONTEIRO_PAES)
def covariance_gain(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta) -> Array:
    """Gain in the covariance form [paper] ``Cov_{π₀}(r, e^{r/β}) / E_{π₀}[e^{r/β}]`` (exact, finite space).

    ``e^{r/β}`` is computed as ``e^{(r − max r)/β}``, which leaves the ratio unchanged and cannot overflow."""
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
    """``KL_max = −ln π₀({y : r(y) = max_{π₀} r})`` (max over the support of π₀): the KL of the β → 0 limit of ``π_β``
    (0 for constant rewards)."""
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
    return jnp.exp(0.5 * (a + b))


@cites(MONTEIRO_PAES)
def beta_for_kl(log_pi0: Float[Array, " V"], r: Float[Array, " V"], eps, *, lo: float = 1e-4, hi: float = 1e4,
                iters: int = 100) -> Array:
    """The penalty ``β_ε`` with ``KL(π_β‖π₀) = ε``, by bisection in ``ln β`` over ``[lo, hi]``.

    ``KL(β)`` is strictly decreasing for non-constant rewards [derived], so the root is unique. A budget
    ``ε ≥ KL_max`` has no root (the frontier ends at the β → 0 limit): it raises ``ValueError`` naming ``eps``
    and ``KL_max`` (under ``jit``: a run-time error with the same text). A budget below ``KL(hi)`` gives
    ``hi``. Constant rewards raise (``KL ≡ 0``).
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
        eps = error_if(error_if(eps, kmax <= 0.0, constant), eps >= kmax, unreachable)
    return _bisect_log_beta(log_pi0, r, eps.astype(r.dtype), lo, hi, iters)


@cites(MONTEIRO_PAES)
def max_gain_at_kl(log_pi0: Float[Array, " V"], r: Float[Array, " V"], eps, **bisection) -> FrontierPoint:
    """Theorem A1 [derived]: the largest reward gain of any policy with ``KL(π‖π₀) ≤ ε`` is attained by
    ``π_{β_ε}``.

    Returns the frontier point at ``β_ε`` (see :func:`beta_for_kl`, whose keyword arguments pass through).
    """
    beta = beta_for_kl(log_pi0, r, eps, **bisection)
    return frontier_point(log_pi0, r, beta)


@cites(MONTEIRO_PAES)
def kl_regularized_objective(log_pi: Float[Array, " V"], log_pi0: Float[Array, " V"], r: Float[Array, " V"],
                             beta) -> Array:
    """``R_β(π) = E_π[r] − β KL(π‖π₀)`` for a policy given by its log-probabilities ``log_pi``."""
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
    """``ln N − (N−1)/N``: KL(π_BoN‖π₀) for continuous rewards, an upper bound on finite spaces [prior]."""
    n = check_count(n, "n", ndim=(0, 1))
    return jnp.log(n) - (n - 1.0) / n


def _log_cdf_pair(below, above):
    """``ln F`` from the mass at-or-below (``below``) and its complement (``above``), accurate near 0, 1."""
    safe_below = jnp.where(below > 0, below, 1.0)
    return jnp.where(below <= 0, -jnp.inf, jnp.where(below < 0.5, jnp.log(safe_below), jnp.log1p(-above)))


@jax.jit
def _best_of_n(log_pi0, r, n):
    V = r.shape[0]
    order = jnp.argsort(r)
    r_s, lp_s = r[order], log_pi0[order]  # everything below is in ascending reward order
    p_s = jnp.exp(lp_s)
    cum = jnp.concatenate([jnp.zeros(1, p_s.dtype), jnp.cumsum(p_s)])
    tail = jnp.concatenate([jnp.cumsum(p_s[::-1])[::-1], jnp.zeros(1, p_s.dtype)])
    # reward levels: i_lt = first index of the level (outputs below it), i_le = one past its last index
    k = jnp.arange(V)
    starts = jnp.concatenate([jnp.ones(1, bool), r_s[1:] != r_s[:-1]])
    ends = jnp.concatenate([r_s[1:] != r_s[:-1], jnp.ones(1, bool)])
    i_lt = jax.lax.cummax(jnp.where(starts, k, 0))
    i_le = jax.lax.cummin(jnp.where(ends, k + 1, V), reverse=True)
    log_f_le = _log_cdf_pair(cum[i_le], tail[i_le])
    log_f_lt = _log_cdf_pair(cum[i_lt], tail[i_lt])
    # P(level) = F_le^N − F_lt^N = F_le^N (1 − (F_lt/F_le)^N), in logs to avoid cancellation near F = 1
    log_p_level = n * log_f_le + jnp.log(-jnp.expm1(n * (log_f_lt - log_f_le)))
    q_level = jax.ops.segment_sum(p_s, i_lt, num_segments=V, indices_are_sorted=True)[i_lt]
    log_bon_s = jnp.where(p_s > 0, lp_s + log_p_level - jnp.log(jnp.where(q_level > 0, q_level, 1.0)), -jnp.inf)
    kl = kl_divergence(log_bon_s, lp_s)
    gain = jnp.sum((jnp.exp(log_bon_s) - p_s) * r_s)
    return jnp.empty_like(log_pi0).at[order].set(log_bon_s), kl, gain


@cites(BEIRAMI, MONTEIRO_PAES)
def best_of_n(log_pi0: Float[Array, " V"], r: Float[Array, " V"], n) -> tuple[Array, Array, Array]:
    """Exact best-of-N policy on a finite space, tie-aware [prior]: ``(log π_BoN, KL(π_BoN‖π₀), gain)``.

    The BoN output's reward level ``j`` has probability ``F_j^N − F_{j−1}^N`` (``F`` the π₀-CDF of the reward
    levels); inside a level the mass is split ∝ π₀ (uniform tie-breaking). ``n`` may be a traced float ≥ 1.
    """
    log_pi0, r = check_problem(log_pi0, r)
    n = check_count(n, "n")
    return _best_of_n(log_pi0, r, n.astype(r.dtype))


_GRID = 4001  # trapezoid nodes on [−12, 12]: the integrand is smooth and decays like a Gaussian


@cites(BEIRAMI, GAO)
def gaussian_bon_gain(n, sigma=1.0) -> Array:
    """``σ e_N`` with ``e_N = E[max of N standard normals] = ∫ z N φ(z) Φ(z)^{N−1} dz`` (trapezoid rule)."""
    n = check_count(n, "n")
    return _gaussian_bon_gain(n, check_penalty(sigma, "sigma").astype(n.dtype))


@jax.jit
def _gaussian_bon_gain(n, sigma):
    z = jnp.linspace(-12.0, 12.0, _GRID, dtype=n.dtype)
    log_density = jnp.log(n) + norm.logpdf(z) + (n - 1.0) * norm.logcdf(z)
    return sigma * jnp.trapezoid(z * jnp.exp(log_density), z)


@cites(BEIRAMI)
def uniform_bon_gain(n) -> Array:
    """Best-of-N gain for ``r ~ U(0, 1)`` under π₀: ``N/(N+1) − 1/2`` [prior]."""
    n = check_count(n, "n", ndim=(0, 1))
    return n / (n + 1.0) - 0.5


@cites(BEIRAMI)
def exponential_bon_gain(n) -> Array:
    """Best-of-N gain for ``r ~ Exp(1)`` under π₀: ``H_N − 1 = ψ(N+1) + γ − 1`` [prior]."""
    n = check_count(n, "n", ndim=(0, 1))
    return digamma(n + 1.0) + np.euler_gamma - 1.0


# ----------------------------------------------------------------------------------------------------------
# Closed-form frontiers (oracles for tests and notebooks) [derived]


def _point(beta, kl, rkl, gain, expected):
    return FrontierPoint(beta, kl, rkl, kl + rkl, gain, expected)


@cites(MONTEIRO_PAES, MROUEH)
def gaussian_frontier(sigma, beta, *, mu=0.0) -> FrontierPoint:
    """``r ~ N(μ, σ²)`` under π₀: ``gain = σ²/β``, ``KL = rKL = σ²/(2β²)``, so
    ``gain = σ sqrt(2 KL)`` exactly."""
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
    """``r ∈ {0, 1}`` with ``π₀(r = 1) = p``: ``q = p e^λ/(p e^λ + 1 − p)``, ``gain = q − p``,
    ``KL = kl_Bern(q‖p)``, ``rKL = kl_Bern(p‖q)``."""
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
    """``r ~ Exp(1)`` under π₀ (``β > 1``, so ``λ < 1``): ``gain = λ/(1−λ)``, ``KL = λ/(1−λ) + ln(1−λ)``,
    ``rKL = −ln(1−λ) − λ``."""
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
    """``r ~ U(0, 1)`` under π₀: ``Λ(λ) = ln((e^λ − 1)/λ)``, ``Λ'(λ) = 1/(1 − e^{−λ}) − 1/λ``,
    ``Λ'(0) = 1/2``."""
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
    """``ĝain(β) = Σ_i w_i r_i − r̄`` with ``w = softmax(r/β)`` over the last axis
    (= the sample covariance form)."""
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    return _sample_point(r, check_penalty(beta)).gain


@cites(MONTEIRO_PAES)
def kl_from_samples(r: Float[Array, "... n"], beta) -> Array:
    """``K̂L(β) = Σ_i w_i ln(n w_i) ∈ [0, ln n]``, the KL of the tilted weights from uniform."""
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    return _sample_point(r, check_penalty(beta)).kl


@cites(MONTEIRO_PAES)
def default_betas(r, num: int = 256) -> Array:
    """Log-spaced grid of ``num`` penalties in ``[1e−3, 1e3]·sd(r)`` (sd over every entry of ``r``)."""
    r = check_rewards(r, ndim=(1, 2))
    num = check_int(num, "num", min_value=2)
    sd = value_check(jnp.std(r), lambda v: ~(v > 0),
                     "r must not be constant (its standard deviation sets the beta grid), got sd = 0")
    return sd * jnp.logspace(-3.0, 3.0, num, dtype=r.dtype)


@cites(MONTEIRO_PAES)
def frontier_from_samples(r: Float[Array, "... n"],
                          betas: Float[Array, " B"] | None = None) -> SampleFrontierPoint:
    """Sample-based frontier: the self-normalised estimates over a ``β`` grid (default :func:`default_betas`).

    ``r`` holds the rewards of ``n`` base-model samples (``(n,)``, or ``(prompts, n)`` for one frontier per
    prompt); fields have shape ``(B,)`` or ``(prompts, B)``. Consistent as ``n → ∞``; biased low for KL near
    ``ln n``, hence the ``ess`` and ``reliable`` fields.
    """
    r = check_rewards(r, ndim=(1, 2))
    check_samples(r)
    betas = default_betas(r) if betas is None else check_penalty(betas, "betas", ndim=1)
    return _sample_frontier(r, betas.astype(r.dtype))


@cites(MONTEIRO_PAES)
def dataset_frontier(r_by_prompt: Float[Array, "prompts n"],
                     betas: Float[Array, " B"] | None = None) -> SampleFrontierPoint:
    """Frontier of a data set: one shared ``β`` for every prompt (the Lagrangian-optimal split of a total KL
    budget), ``KL̄(β) = mean_x KL_x(β)``, ``gain̄(β) = mean_x gain_x(β)``; ``ess`` is the smallest over prompts
    and ``reliable`` holds where every prompt is reliable."""
    r = check_rewards(r_by_prompt, "r_by_prompt", ndim=2)
    check_samples(r, "r_by_prompt")
    pts = frontier_from_samples(r, betas)
    mean = lambda a: jnp.mean(a, axis=0)  # noqa: E731
    return SampleFrontierPoint(pts.beta[0], mean(pts.kl), mean(pts.reverse_kl), mean(pts.jeffreys),
                               mean(pts.gain), mean(pts.expected_reward), jnp.min(pts.ess, axis=0),
                               jnp.all(pts.reliable, axis=0))


@cites(MONTEIRO_PAES)
def gain_at_kl(points: FrontierPoint | SampleFrontierPoint, kl) -> Array:
    """Frontier gain at a target KL, interpolating a β grid monotonically in ``ln β``: first ``ln β`` at the
    target from the (decreasing) KL curve, then the gain at that ``ln β``. Targets outside the grid
    take the end value."""
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
    """Best-of-``n_bon`` from ``n ≫ n_bon`` base samples: ``(ln N − (N−1)/N, gain)``, the gain from the
    order-statistic weights ``(i/n)^N − ((i−1)/n)^N`` on the sorted rewards (exact BoN under the empirical
    distribution, a plug-in estimate)."""
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
    objective_gap = beta * kl_divergence(log_hat, log_pi)
    true_gap = jnp.sum((jnp.exp(log_pi) - jnp.exp(log_hat)) * r)
    support = jnp.exp(log_pi0) > 0
    spread = jnp.max(jnp.where(support, e, -jnp.inf)) - jnp.min(jnp.where(support, e, jnp.inf))
    return ProxyGap(objective_gap, true_gap, spread**2 / (8.0 * beta))


@cites(MONTEIRO_PAES)
def proxy_gaps(log_pi0: Float[Array, " V"], r: Float[Array, " V"], e: Float[Array, " V"], beta) -> ProxyGap:
    """Gaps of the proxy-aligned ``π̂_β ∝ π₀ e^{(r+e)/β}`` against ``π_β`` [derived]:
    ``Δ_obj = β KL(π̂_β‖π_β)``, ``Δ_true = E_{π_β}[r] − E_{π̂_β}[r]`` and the bound
    ``(sup e − inf e)²/(8β)`` (range over the support of π₀)."""
    log_pi0, r = check_problem(log_pi0, r)
    e = check_rewards(e, "e")
    if e.shape != r.shape:
        raise ValueError(f"e must have the shape of r {tuple(r.shape)}, got shape {tuple(e.shape)}")
    return _proxy_gaps(log_pi0, r, e, check_penalty(beta))


@cites(MONTEIRO_PAES)
def ensemble_proxy(r: Float[Array, " V"], errors: Float[Array, "M V"]) -> Float[Array, " V"]:
    """Ensemble of ``M`` proxies ``r + e_m``: ``r̄ = r + mean_m e_m``."""
    r = check_rewards(r)
    errors = check_rewards(errors, "errors", ndim=2)
    check_ndim(errors, "errors", 2)
    if errors.shape[1] != r.shape[0] or errors.shape[0] < 1:
        raise ValueError(f"errors must have shape (M >= 1, {r.shape[0]}), got shape {tuple(errors.shape)}")
    return r + jnp.mean(errors, axis=0)
