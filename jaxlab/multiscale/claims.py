"""Claims of the multiscale single-index model (model reconstructed from the abstract of "Multiscale
Single-Index Model", 2026; SGD after Ben Arous, Gheissari, Jagannath, arXiv:2003.10409)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.core.verification import by_precision
from jaxlab.multiscale.metrics import overlaps, strong_recovery, weak_recovery_time
from jaxlab.multiscale.model import (
    MSIMConfig,
    first_chaos_exact_k2,
    first_chaos_mc,
    msim_forward,
    sample_data,
    sample_features,
)
from jaxlab.multiscale.papers import BEN_AROUS, MSIM
from jaxlab.multiscale.sgd import (
    SphericalSGDState,
    lr_schedule,
    population_loss_linear,
    run_online_sgd,
    run_shallow_sgd,
)
from jaxlab.multiscale.spectral import unfolding_estimator

TITLE = "Multiscale single-index model: first chaos, tensor unfolding, online spherical SGD (reconstructed)"
MODULES = ("jaxlab.multiscale.model", "jaxlab.multiscale.spectral", "jaxlab.multiscale.sgd",
           "jaxlab.multiscale.metrics")


@claim(area="multiscale", paper=MSIM)
def forward_convention_linear_and_tanh() -> ClaimResult:
    """d = 2, K = 2, x = (1,2,3,4), w_1 = (0.6, 0.8), w_2 = (0.8, -0.6): y = -1.24 (linear links) and
    0.8 tanh(2.2) - 0.6 tanh(5.0) for σ_1 = tanh (unstandardised), σ_2 = id."""
    ws, x = jnp.array([[0.6, 0.8], [0.8, -0.6]]), jnp.array([1.0, 2.0, 3.0, 4.0])
    lin = float(msim_forward(ws, x, MSIMConfig(2, 2, ("linear", "linear"))))
    th = float(msim_forward(ws, x, MSIMConfig(2, 2, ("tanh", "linear")))) * 0.6279287303491068
    err = max(abs(lin + 1.24), abs(th - (0.8 * math.tanh(2.2) - 0.6 * math.tanh(5.0))))
    # float32: two nested length-2 dot products with rounded weights, sum of |terms| 0.8 * 2.2 + 0.6 * 5.0 = 4.76
    # (linear links; tanh is 1-Lipschitz): error <= 4 eps32 * 4.76 ~ 2.3e-6
    return ClaimResult.at_most(err, by_precision(1e-12, 4 * 4.76 * 2.0**-23))


@claim(area="multiscale", paper=MSIM)
def first_chaos_he12_closed_form_vs_monte_carlo() -> ClaimResult:
    """Stein: ⟨T*, w_2 ⊗ w_1⟩ = ½ + (√2/2) Σ_j w_{2,j}³ for he12 links (w_2 = e_1: 1.207107, computed here from
    that formula, independently of the library's closed form). Monte Carlo: 8 independent seeds of n = 10⁶ samples;
    their mean lies within 4 standard errors (SE from the spread of the seeds, about 0.0027: he12 responses are
    heavy-tailed) of the formula, and the library's closed form first_chaos_exact_k2 equals the formula to 1e-12
    (float32: 8 eps32)."""
    w1, w2 = np.array([0.5, 0.5, 0.5, -0.5]), np.array([1.0, 0.0, 0.0, 0.0])
    ws = jnp.asarray(np.stack([w1, w2]), dtype=jnp.result_type(float))
    cfg = MSIMConfig(4, 2, ("he12", "he12"))
    probe = jnp.asarray(np.outer(w2, w1).reshape(-1), dtype=ws.dtype)
    formula = 0.5 + math.sqrt(2) / 2 * float(np.sum(w2**3))
    seeds = [float(first_chaos_mc(k, ws, 1_000_000, cfg, chunk=100_000) @ probe)
             for k in jax.random.split(jax.random.key(0), 8)]
    mean, se = mean_and_se(np.array(seeds))
    closed = float(first_chaos_exact_k2(ws, cfg) @ probe)
    # float32: each seed's estimate is a chunked mean of 10⁶ terms (pairwise within a chunk, then 10 chunk sums):
    # relative rounding <= ~20 eps32 = 2.4e-6 of |T| ~ 1.2, 10³ times below the SE: no allowance
    res = ClaimResult.within_se(mean, formula, se, k=4.0, details=f"library closed form {closed:.9f}")
    if abs(closed - formula) > by_precision(1e-12, 8 * 2.0**-23):
        return ClaimResult(res.measured, res.expected, res.tolerance, False,
                           f"the library's closed form {closed:.9f} is not the formula's {formula:.9f}")
    return res


@claim(area="multiscale", paper=MSIM)
def bbp_overlap_square_unfolding() -> ClaimResult:
    """K = 2, linear links, d = 100, n = 400: mean |⟨û, w_2⟩|² over 6 seeds ≈ 1 - d/n = 0.75 (±0.06)."""
    d, n = 100, 400
    cfg = MSIMConfig(d, 2, ("linear", "linear"))

    def one(k):
        k1, k2 = jax.random.split(k)
        ws = sample_features(k1, d, 2)
        X, y = sample_data(k2, ws, n, cfg, chunk=n)
        return overlaps(unfolding_estimator(X, y, d, 2), ws) ** 2

    ov = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(1), 6))
    return ClaimResult.close(float(jnp.mean(ov)), 0.75, atol=0.06, details=f"per factor {np.round(ov.mean(0), 3)}")


@claim(area="multiscale", paper=MSIM)
def population_loss_linear_links() -> ClaimResult:
    """E ½(y - f(x; u))² = 1 - Π_k ⟨u_k, w_k⟩ for linear links (K = 3, d = 3), Monte Carlo n = 4·10⁵."""
    d, K = 3, 3
    cfg = MSIMConfig(d, K, ("linear",) * K)
    ws = sample_features(jax.random.key(2), d, K)
    us = ws + 0.5 * jax.random.normal(jax.random.key(3), ws.shape)
    us = us / jnp.linalg.norm(us, axis=1, keepdims=True)
    X, y = sample_data(jax.random.key(4), ws, 400_000, cfg, chunk=100_000)
    r = 0.5 * (y - jax.vmap(lambda x: msim_forward(us, x, cfg))(X)) ** 2
    se = float(jnp.std(r)) / math.sqrt(r.shape[0])
    return ClaimResult.close(float(jnp.mean(r)), float(population_loss_linear(us, ws)), atol=5 * se)


@claim(area="multiscale", paper=MSIM)
def strong_recovery_by_unfolding_k3_k4() -> ClaimResult:
    """Linear links: K = 3, d = 8, n = 20 d² log d = 2661 and K = 4, d = 6, n = 1290 give every overlap
    >= 0.99 (worst over 2 seeds each)."""
    worst = 1.0
    for K, d, n in ((3, 8, 2661), (4, 6, 1290)):
        cfg = MSIMConfig(d, K, ("linear",) * K)
        for s in range(2):
            ws = sample_features(jax.random.key(10 + s), d, K)
            X, y = sample_data(jax.random.key(20 + s), ws, n, cfg)
            worst = min(worst, float(jnp.min(overlaps(unfolding_estimator(X, y, d, K), ws))))
    return ClaimResult.at_least(worst, 0.99)


@claim(area="multiscale", paper=BEN_AROUS)
def sgd_weak_then_strong_recovery_tanh() -> ClaimResult:
    """K = 2, tanh links, d = 32: weak recovery within T_w = 10 d log² d steps for every seed (4 seeds),
    then min_k |m_k| >= 0.999 after 100 d more steps at η = 0.2/d. Measured: worst final min |m_k|."""
    d = 32
    cfg = MSIMConfig(d, 2, ("tanh", "tanh"))
    T_w = int(10 * d * math.log(d) ** 2) // 8 * 8
    ws = sample_features(jax.random.key(42), d, 2)
    sched = lr_schedule(d, 0.3, T_w, 0.2)
    _, traj = jax.jit(jax.vmap(lambda k: run_online_sgd(k, ws, cfg, T_w + 100 * d, sched, 8)))(
        jax.random.split(jax.random.key(5), 4))
    t_w = jax.vmap(lambda tr: weak_recovery_time(tr, 0.25, 8))(traj)
    ok_weak = bool(jnp.all((t_w > 0) & (t_w <= T_w)))
    final = float(jnp.min(jnp.abs(traj[:, -1])))
    strong = bool(jnp.all(jax.vmap(lambda tr: strong_recovery(tr, 1e-3))(traj)))
    return ClaimResult(final, ">= 0.999 and weak recovery <= T_w", 1e-3, ok_weak and strong,
                       f"weak-recovery steps {t_w.tolist()} (T_w = {T_w})")


_SCALING_DS = (16, 32, 64, 128)  # block sizes of the weak-recovery scaling claim
_SCALING_SEEDS = 16
_C_W = 0.3  # η = c_w / (d log d), the weak-recovery step size


def _weak_recovery_steps(d: int, num_seeds: int, c_w: float = _C_W) -> np.ndarray:
    """Weak-recovery times (first step with |m_1 m_2| >= 1/4, to 16 steps; -1 if not reached) of ``num_seeds``
    online spherical SGD runs at block size ``d``: linear links, η = c_w / (d log d), float32 (a statistical
    figure, far above float32's rounding). Each start is uniform on the sphere conditioned on the overlaps
    ⟨u_k(0), w_k⟩ = d^{-1/2}, their root-mean-square value at a uniform start. The budget is
    (½ log d + 1.5) / (η (1 - c_w / log d)) steps, 1.5 more units of η t than the linearised dynamics need."""
    cfg = MSIMConfig(d, 2, ("linear", "linear"))
    ws = sample_features(jax.random.key(d), d, 2).astype(jnp.float32)
    g = jax.random.normal(jax.random.key(1000 + d), (num_seeds, 2, d), dtype=jnp.float32)
    v = g - jnp.sum(g * ws, axis=-1, keepdims=True) * ws  # uniform directions orthogonal to w_k
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True)
    m0 = 1.0 / math.sqrt(d)
    u0 = m0 * ws + math.sqrt(1.0 - m0**2) * v
    eta, rec = c_w / (d * math.log(d)), 16
    T = int((0.5 * math.log(d) + 1.5) / (eta * (1.0 - c_w / math.log(d)))) // rec * rec

    def one(k, u):
        start = SphericalSGDState(u, jnp.zeros((), jnp.int32))
        return weak_recovery_time(run_online_sgd(k, ws, cfg, T, eta, rec, init=start)[1], 0.25, rec)

    return np.asarray(jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(7 + d), num_seeds), u0), dtype=float)


def _slope_and_se(x: np.ndarray, samples: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of the per-``x`` means of ``samples`` (rows: the x values, columns: independent seeds)
    on ``x``, and its standard error from the seed scatter: slope = Σ_j c_j ȳ_j with c_j = (x_j - x̄)/Σ(x - x̄)²,
    SE² = Σ_j c_j² s_j² / n_j."""
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    means = samples.mean(axis=1)
    var = samples.var(axis=1, ddof=1) / samples.shape[1]
    return float(c @ means), float(math.sqrt(c**2 @ var))


def _weak_recovery_scaling(ds, steps: np.ndarray, c_w: float = _C_W) -> dict:
    """Fits of the weak-recovery times ``steps`` (rows: the block sizes ``ds``, columns: seeds).

    ``alpha``: slope of η_d T(d) = c_w T / (d log d) on log d (the model T = d log d (α log d + β) / c_w: the
    d log² d law with its O(d log d) correction; T ∝ d log d is α = 0). ``p``: log-log slope of T on d (T ∝ d
    is 1, T ∝ d² is 2). ``b``: the exponent of a pure T = C d log(d)^b fit. Each with its standard error."""
    ds = np.asarray(ds, dtype=float)
    logd = np.log(ds)
    out = {}
    out["alpha"], out["se_alpha"] = _slope_and_se(logd, steps * c_w / (ds * logd)[:, None])
    out["p"], out["se_p"] = _slope_and_se(logd, np.log(steps))
    out["b"], out["se_b"] = _slope_and_se(np.log(logd), np.log(steps / ds[:, None]))
    return out


def _scaling_verdict(fit: dict, k: float = 4.0) -> bool:
    """α within k SE of ½, α = 0 (T ∝ d log d) beyond k SE, and the log-log slope beyond k SE from 1 and 2."""
    a, sa, p, sp = fit["alpha"], fit["se_alpha"], fit["p"], fit["se_p"]
    return abs(a - 0.5) <= k * sa and a > k * sa and 1.0 + k * sp < p < 2.0 - k * sp


@claim(area="multiscale", paper=BEN_AROUS, quick=False)
def sgd_weak_recovery_time_scales_like_d_log2_d() -> ClaimResult:
    """Weak recovery of the joint online spherical SGD (K = 2) takes T = Θ(d log² d) steps at η = c_w/(d log d),
    and not d log d nor d² (linear links, c_w = 0.3, d ∈ {16, 32, 64, 128}, 16 seeds each; the abstract states
    O(d log² d), the sharper law below is derived here from the linearised dynamics, after Ben Arous, Gheissari
    and Jagannath, arXiv:2003.10409).

    Theory: the population loss is 1 - m_1 m_2 (m_k = ⟨u_k, w_k⟩), whose spherical gradient flow is
    m_1' = η m_2 (1 - m_1²), m_2' = η m_1 (1 - m_2²); the normalisation of each noisy step shrinks m by the factor
    1 - η² E‖g‖²/2 ≈ 1 - η² d. So from overlaps d^{-1/2} the threshold |m_1 m_2| = 1/4 is reached at
    η T ≈ (½ log(d - 1) - ½ log 3) / (1 - c_w / log d) = ½ log d + O(1): T = d log d (α log d + β) / c_w with
    α = ½. The alternatives are α = 0 (T ∝ d log d) and a log-log slope of 2 (T ∝ d²).

    Experiment (:func:`_weak_recovery_steps`): starts uniform on the sphere conditioned on ⟨u_k(0), w_k⟩ = d^{-1/2}
    (at a uniform start the overlap's d-independent factor |Z|, Z ~ N(0, 1), adds a log|Z| term whose seed
    scatter hides the d dependence). Fits (:func:`_weak_recovery_scaling`): α, the slope of η T on log d, and p,
    the log-log slope of T on d, each with its SE from the seed scatter. Check: |α - ½| <= 4 SE, α > 4 SE
    (excludes d log d) and 1 + 4 SE < p < 2 - 4 SE (excludes d and d²). A pure power law T = C d log(d)^b is
    misspecified at these d: the constant -½ log 3 of the threshold pushes the fitted b above 2, so b is reported,
    not checked. Measured (float32 runs): α = 0.503 ± 0.035 (d log d excluded by 14 SE), p = 1.63 ± 0.03, mean η T
    0.95, 1.38, 1.70, 2.01 against the linearised 0.90, 1.28, 1.64, 2.00; b = 2.37 ± 0.11. A first attempt from
    uniform starts gave α = 0.58 ± 0.17 (d ≤ 64, 8 seeds): consistent, but too wide to exclude anything at k = 4.
    With η = c_w / d instead (a planted bug) the same fit gives α = 0.01 ± 0.04: T ∝ d log d, and the check fails.
    Measured: α."""
    steps = np.stack([_weak_recovery_steps(d, _SCALING_SEEDS) for d in _SCALING_DS])
    if np.any(steps <= 0):
        return ClaimResult(float(np.sum(steps <= 0)), "every run reaches weak recovery", 0.0, False,
                           f"runs without weak recovery in the budget, per d: {np.sum(steps <= 0, axis=1).tolist()}")
    fit = _weak_recovery_scaling(_SCALING_DS, steps)
    eta_t = steps * _C_W / np.array([d * math.log(d) for d in _SCALING_DS])[:, None]
    return ClaimResult(fit["alpha"], "½ (α = 0 is d log d) within 4 SE; log-log slope in (1, 2) by 4 SE",
                       4 * fit["se_alpha"], _scaling_verdict(fit),
                       f"α = {fit['alpha']:.3f} ± {fit['se_alpha']:.3f}, log-log slope p = {fit['p']:.3f} ± "
                       f"{fit['se_p']:.3f}, pure-power exponent b = {fit['b']:.2f} ± {fit['se_b']:.2f}; mean η T by d: "
                       + ", ".join(f"{d}: {m:.2f}" for d, m in zip(_SCALING_DS, eta_t.mean(axis=1), strict=True)))


@claim(area="multiscale", paper=MSIM, quick=False)
def shallow_sgd_falls_short_at_the_hierarchical_budget() -> ClaimResult:
    """Hierarchical versus shallow SGD [reconstructed]: K = 2, tanh links, d = 32 (the setting of
    ``sgd_weak_then_strong_recovery_tanh``, whose hierarchical SGD reaches min_k |m_k| >= 0.999 within
    T_w + 100 d steps). A "shallow" single-index SGD on the 1,024-dimensional input with the composite link,
    same budget, 4 seeds, step sizes c / d^2 for c in {0.3, 1, 3}. Measured: the best median overlap with
    w_2 ⊗ w_1; expected below strong recovery (0.999): it has d^2 unknowns instead of 2 d."""
    d = 32
    cfg = MSIMConfig(d, 2, ("tanh", "tanh"))
    T = int(10 * d * math.log(d) ** 2) // 8 * 8 + 100 * d
    ws = sample_features(jax.random.key(42), d, 2)
    keys = jax.random.split(jax.random.key(5), 4)
    finals = {c: float(jnp.median(jax.jit(jax.vmap(lambda k, c=c: run_shallow_sgd(k, ws, cfg, T, c / d**2, 8)[1]))(
        keys)[:, -1])) for c in (0.3, 1.0, 3.0)}
    return ClaimResult.at_most(max(finals.values()), 0.999,
                               details=f"{T} steps; median final overlap by c: "
                                       + ", ".join(f"{c}: {v:.3f}" for c, v in finals.items()))

