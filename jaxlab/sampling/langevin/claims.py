"""Claims of annealed Langevin with composite scores (area ``langevin``).

Touron, Cardoso, Arbel, Rodrigues, arXiv:2605.21253 (bounds and rules reconstructed from the abstract, the
Dalalyan-Karagulyan per-level bound and the authors' preliminary code), with the Geffner (2209.14249) and
Linhart (2404.07593) composite scores. Every claim runs on the Gaussian toy of
:func:`jaxlab.sampling.langevin.models.gaussian_toy` (d = 2, n = 10).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core import ClaimResult, claim
from jaxlab.core.verification import by_precision
from jaxlab.sampling import langevin as al
from jaxlab.sampling.langevin.models import gaussian_toy, gaussian_toy_scores
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART, TOURON

TITLE = "Annealed Langevin for compositional score-based SBI: composite scores, W2 bounds, tuning rules"
MODULES = ("jaxlab.sampling.langevin.scores", "jaxlab.sampling.langevin.ula", "jaxlab.sampling.langevin.ald",
           "jaxlab.sampling.langevin.gaussian", "jaxlab.sampling.langevin.bounds", "jaxlab.sampling.langevin.models")

INIT = (np.zeros(2), np.eye(2))  # numpy: importing the claims touches no XLA backend


@functools.cache
def _toy(n: int = 10):
    return gaussian_toy(jax.random.key(0), n)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _levels(toy, kind, L):
    ts = jnp.linspace(1.0, 1e-3, L)
    means, precs = al.bridging_gaussians(kind, ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
    m, M = al.level_constants(precs)
    return means, precs, m, M, al.path_w2(means, precs, *INIT)


@jax.jit
def _exact_and_bound(means, precs, m, M, W, hs, ks, bias):
    """Exact final W2 of ALD to π_{L-1} under a constant score bias, and the chained bound."""
    shifted = means + jnp.linalg.solve(precs, jnp.broadcast_to(bias, means.shape)[..., None])[..., 0]
    ms, Cs = al.ald_gaussian_moments((shifted, precs), hs, ks, *INIT)
    exact = al.w2_gaussian(ms[-1], Cs[-1], means[-1], jnp.linalg.inv(precs[-1]))
    return exact, al.ald_w2_bound(W, m, M, hs, ks, 2, jnp.linalg.norm(bias))


@claim(area="langevin", paper=LINHART)
def linhart_score_is_the_exact_diffused_tall_posterior_score() -> ClaimResult:
    """With exact Gaussian scores and covariances, s^L_t equals ∇log of the diffused tall posterior
    (max relative error over 20 random (θ, t), n = 10, d = 2)."""
    toy = _toy()
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    score = al.make_composite_score("linhart", prior_fn, post_fn, toy.xs, prior_cov=toy.cov_prior,
                                    post_covs=toy.post_cov)

    @jax.jit
    def err(thetas, ts):
        def one(theta, t):
            mean, prec = al.linhart_bridging_gaussian(al.vp_alpha(t), toy.mu_prior, toy.cov_prior, toy.mus,
                                                      toy.post_cov)
            want = -prec @ (theta - mean)
            return jnp.max(jnp.abs(score(theta, t) - want)) / jnp.max(jnp.abs(want))

        return jnp.max(jax.vmap(one)(thetas, ts))

    rng = np.random.default_rng(0)
    # float32: the score sums n + 1 = 11 score vectors whose absolute sum is up to R = 20.3x the result (R measured
    # in float64 on these 20 points): relative error <= (n + 1) R eps32 = 11 * 20.3 * 1.19e-7 ~ 2.7e-5
    return ClaimResult.at_most(err(2 * rng.standard_normal((20, 2)), rng.uniform(1e-3, 1, 20)),
                               by_precision(1e-12, 11 * 20.3 * 2.0**-23))


@claim(area="langevin", paper=GEFFNER)
def geffner_score_is_the_score_of_its_gaussian_bridging_density() -> ClaimResult:
    """s^G_t equals the score of the closed-form N(m^G_t, (Λ^G_t)^{-1}) (max relative error, 20 points)."""
    toy = _toy()
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    score = al.make_composite_score("geffner", prior_fn, post_fn, toy.xs)

    @jax.jit
    def err(thetas, ts):
        def one(theta, t):
            mean, prec = al.geffner_bridging_gaussian(al.vp_alpha(t), toy.mu_prior, toy.cov_prior, toy.mus,
                                                      toy.post_cov)
            want = -prec @ (theta - mean)
            return jnp.max(jnp.abs(score(theta, t) - want)) / jnp.max(jnp.abs(want))

        return jnp.max(jax.vmap(one)(thetas, ts))

    rng = np.random.default_rng(1)
    # float32: n + 1 = 11 score vectors whose absolute sum is up to R = 23.8x the result (measured in float64 on
    # these 20 points): relative error <= (n + 1) R eps32 = 11 * 23.8 * 1.19e-7 ~ 3.1e-5
    return ClaimResult.at_most(err(2 * rng.standard_normal((20, 2)), rng.uniform(1e-3, 1, 20)),
                               by_precision(1e-10, 11 * 23.8 * 2.0**-23))


@claim(area="langevin", paper=TOURON)
def linhart_precision_is_loewner_below_geffner() -> ClaimResult:
    """Equal Σ_j: min over a 200-level grid of λ_min(Λ^G_t - Λ^L_t) >= -1e-12, so the Linhart stability cap
    2/(m+M) is never smaller (details report the smallest cap ratio)."""
    toy = _toy()
    _, PG, mG, MG, _ = _levels(toy, "geffner", 200)
    _, PL, mL, ML, _ = _levels(toy, "linhart", 200)
    gap = float(jnp.linalg.eigvalsh(PG - PL)[:, 0].min())
    ratio = float(jnp.min(al.stability_cap(mL, ML) / al.stability_cap(mG, MG)))
    return ClaimResult.at_least(min(gap, ratio - 1.0), -1e-12,
                                details=f"min eig gap {gap:.3g}; min cap ratio L/G {ratio:.4f}")


@claim(area="langevin", paper=TOURON)
def ula_stationary_variance_is_inflated() -> ClaimResult:
    """1-d ULA on N(0, 1/p): the exact propagation converges to 1/(p(1 - hp/2)) (p = 2, h = 0.3)."""
    p, h = 2.0, 0.3
    _, var = al.ula_gaussian_moments(jnp.zeros(1), jnp.eye(1), jnp.zeros(1), jnp.array([[p]]), h, 5000)
    # float32: v <- (1 - hp)^2 v + 2h has <= 4 roundings (<= 2 eps32 relative) per step, damped by
    # 1 / (1 - (1 - hp)^2) = 1.19 at the fixed point, plus the rounding of p and h: rtol 4 eps32 ~ 4.8e-7
    return ClaimResult.close(var[0, 0], 1.0 / (p * (1 - h * p / 2)), rtol=by_precision(1e-12, 4 * 2.0**-23))


@claim(area="langevin", paper=TOURON, quick=False)
def monte_carlo_ald_matches_exact_propagation() -> ClaimResult:
    """ALD with 10^5 independent particles (Linhart, L = 20, k = 5, default τ = 0.5 rule) against the exact Gaussian
    propagation: the particle mean of each coordinate lies within k = 4 standard errors of the exact mean (SE =
    the particles' sample standard deviation / sqrt(10^5), so z ~ N(0, 1) for a correct sampler), and
    |W2_MC / W2_exact - 1| <= 0.05. Measured: the particle mean with the largest |z| (``within_se``)."""
    toy = _toy()
    ts, hs, ks = al.ald_default_schedule(20, 5, 0.5)
    P = 100_000

    def score(theta, t):
        mean, prec = al.linhart_bridging_gaussian(al.vp_alpha(t), toy.mu_prior, toy.cov_prior, toy.mus,
                                                  toy.post_cov)
        return -prec @ (theta - mean)

    @jax.jit
    def run(key):
        out = al.annealed_langevin(key, jax.random.normal(jax.random.fold_in(key, 1), (P, 2)), score, ts, hs, ks)
        means, precs = _levels(toy, "linhart", 20)[:2]
        ms, Cs = al.ald_gaussian_moments((means, precs), hs, ks, *INIT)
        tc = jnp.linalg.inv(precs[-1])
        cov = jnp.cov(out.T)
        w_mc = al.w2_gaussian(out.mean(0), cov, means[-1], tc)
        return out.mean(0), ms[-1], jnp.sqrt(jnp.diag(cov) / P), w_mc / al.w2_gaussian(ms[-1], Cs[-1], means[-1], tc)

    mean, exact, se, ratio = (np.asarray(a, np.float64) for a in run(jax.random.key(3)))
    res = ClaimResult.within_se(mean, exact, se, k=4, details=f"W2_MC / W2_exact = {float(ratio):.4f}")
    if abs(float(ratio) - 1.0) > 0.05 or not np.isfinite(ratio):
        return ClaimResult(res.measured, res.expected, res.tolerance, False,
                           f"{res.details}; W2 ratio off by more than 5 %")
    return res


@claim(area="langevin", paper=TOURON, quick=False)
def chained_bound_dominates_exact_w2() -> ClaimResult:
    """Min over (kind, L ∈ {10, 25}, h ∈ {0.01, 0.1, 0.9}·cap, k ∈ {1, 5, 40}) of bound - exact W2 (ε = 0)."""
    toy = _toy()
    grid = jax.jit(jax.vmap(_exact_and_bound, (None,) * 5 + (0, 0, None)))
    worst = np.inf
    for kind in ("geffner", "linhart"):
        for L in (10, 25):
            lv = _levels(toy, kind, L)
            cap = float(al.stability_cap(lv[2], lv[3]).min())
            hh, kk = np.meshgrid([0.01, 0.1, 0.9], [1, 5, 40], indexing="ij")
            hs = np.repeat(cap * hh.reshape(-1, 1), L, 1)
            ks = np.repeat(kk.reshape(-1, 1), L, 1).astype(np.int32)
            exact, bound = grid(*lv, hs, ks, jnp.zeros(2))
            worst = min(worst, float(jnp.min(bound - exact)))
    return ClaimResult.at_least(worst, 0.0, details="36 settings")


@claim(area="langevin", paper=TOURON)
def score_bias_raises_w2_by_at_most_eps_over_m() -> ClaimResult:
    """A score bias ε e1 (ε = 0.7, Linhart, L = 25, h = 0.1·cap, k = 40): exact W2(ε) - W2(0) <= ε / m_{L-1};
    details report the bound, which must stay above W2(ε)."""
    toy = _toy()
    lv = _levels(toy, "linhart", 25)
    cap = float(al.stability_cap(lv[2], lv[3]).min())
    hs, ks = jnp.full((25,), 0.1 * cap), jnp.full((25,), 40, dtype=jnp.int32)
    e0, _ = _exact_and_bound(*lv, hs, ks, jnp.zeros(2))
    eps = 0.7
    e1, b1 = _exact_and_bound(*lv, hs, ks, jnp.array([eps, 0.0]))
    floor = eps / float(lv[2][-1])
    ok = float(b1) >= float(e1)
    return ClaimResult.at_most(float(e1 - e0) if ok else np.inf, floor,
                               details=f"W2(0) {float(e0):.4f}, W2(eps) {float(e1):.4f}, bound {float(b1):.3f}")


@claim(area="langevin", paper=TOURON)
def linhart_needs_no_more_steps_than_geffner() -> ClaimResult:
    """Rules R1-R2 at ε* = 0.2 on the toy (L = 25): total Langevin steps Σ k_l of Linhart / Geffner <= 1."""
    toy = _toy()
    totals = {}
    for kind in ("geffner", "linhart"):
        _, _, m, M, W = _levels(toy, kind, 25)
        res = al.tune_ald(W, m, M, 2, 0.0, 0.2, n=10)
        totals[kind] = int(res.total_steps) if bool(res.feasible) else np.inf
    return ClaimResult.at_most(totals["linhart"] / totals["geffner"], 1.0,
                               details=f"Linhart {totals['linhart']} vs Geffner {totals['geffner']} steps")
