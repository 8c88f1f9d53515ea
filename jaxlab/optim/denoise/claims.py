"""Claims of the gradient-denoising area (DiSK, arXiv:2410.03883, and the 2026 gradient-denoising paper):
exactness on quadratics and cubics, the sigma^2 d / t law, DiSK's stationary error and the 1-D quadratic MLE variance.

Set-up: d = 10, f_q(x) = x'Hx/2 + b'x, H = diag(linspace(0.5, 3, 10)), b = 1; the cubic f_c adds
sum_i c_i x_i^3 / 6 with c = linspace(-1, 1, 10); the trajectory is the cumulative sum of 0.1 N(0, I) steps,
T = 100, sigma = 1. Noise is drawn with numpy and injected through :func:`jaxlab.optim.track`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core import ClaimResult, claim
from jaxlab.core.verification import by_precision, mean_and_se
from jaxlab.optim.denoise.denoisers import (
    Denoiser,
    disk,
    ema,
    gaussian_noise,
    harmonic,
    igt,
    run,
    track,
    two_point,
)
from jaxlab.optim.denoise.mle import quadratic_mle
from jaxlab.optim.denoise.papers import DENOISE, DISK

TITLE = "Gradient denoising: EMA, IGT, DiSK, two-point recursions and MLE denoisers (optax transformations)"
MODULES = ("jaxlab.optim.denoise.denoisers", "jaxlab.optim.denoise.mle", "jaxlab.optim.denoise.dp")

D, T = 10, 100
H_DIAG = np.linspace(0.5, 3.0, D)
C_CUBIC = np.linspace(-1.0, 1.0, D)


def grad_quadratic(x):
    """Gradient of f_q: H x + b."""
    return jnp.asarray(H_DIAG, x.dtype) * x + 1.0


def grad_cubic(x):
    """Gradient of f_c = f_q + sum c_i x_i^3 / 6: H x + b + c x^2 / 2."""
    return grad_quadratic(x) + jnp.asarray(C_CUBIC, x.dtype) * x**2 / 2


def trajectory(seed: int = 0, num_steps: int = T, d: int = D) -> jax.Array:
    """Cumulative sum of 0.1 N(0, I) steps, shape (num_steps, d), in the default float dtype."""
    steps = 0.1 * np.random.default_rng(seed).standard_normal((num_steps, d))
    return jnp.asarray(np.cumsum(steps, axis=0), dtype=jnp.result_type(float))


def max_error(denoiser: Denoiser, grad_fn=grad_quadratic, seed: int = 0) -> float:
    """max_t ||m_t - grad f(x_t)|| along the trajectory, noise-free."""
    return float(jnp.sqrt(jnp.max(track(grad_fn, trajectory(seed), denoiser).error2)))


def exactness_bound(grad_fn, float64_bound: float) -> float:
    """The claim's bound on a noise-free recursion's error: ``float64_bound`` in float64; in float32 the rounding
    allowance (T + 1)/2 * 3 eps32 G, G = max_t ||grad f(x_t)||.

    Each step rounds the O(G) state (a few operations, <= 3 eps32 G); with alpha_t = 1/t the state averages its past
    errors with weights s/t, so they add up to at most (T + 1)/2 times one step's (a constant alpha, or DiSK's
    contraction, adds up less)."""
    G = float(jnp.max(jnp.linalg.norm(jax.vmap(grad_fn)(trajectory()), axis=1)))
    return by_precision(float64_bound, (T + 1) / 2 * 3 * 2.0**-23 * G)


def mc_errors(denoiser: Denoiser, mode: str, reps: int, *, seed: int = 1, last: int = 1) -> np.ndarray:
    """Monte Carlo ||e_t||^2 on f_q with sigma = 1, one value per independent replicate (noise draw), averaged over
    the last ``last`` steps (t <= T) of that replicate: float64 array of shape ``(reps,)``."""
    xs = trajectory()
    rng = np.random.default_rng(seed)
    err = jax.jit(jax.vmap(lambda w: jnp.mean(track(grad_quadratic, xs, denoiser, w, mode=mode).error2[-last:])))
    out = []
    for start in range(0, reps, 4000):  # chunks of 4000 replicates keep the noise array small (<= 64 MB)
        n = min(4000, reps - start)
        shape = (n, T, denoiser.num_queries, D) if mode == "oracle" else (n, T, D)
        out.append(np.asarray(err(jnp.asarray(rng.standard_normal(shape))), dtype=np.float64))
    return np.concatenate(out)


def mc_error(denoiser: Denoiser, mode: str, reps: int, *, seed: int = 1, last: int = 1) -> float:
    """Monte Carlo E||e_t||^2 on f_q with sigma = 1, averaged over the last ``last`` steps (t <= T)."""
    return float(np.mean(mc_errors(denoiser, mode, reps, seed=seed, last=last)))


def mc_claim(denoiser: Denoiser, mode: str, reps: int, predicted: float, *, seed: int, last: int = 1) -> ClaimResult:
    """The Monte Carlo E||e||^2 of :func:`mc_errors` within 4 standard errors of ``predicted``; the SE comes from the
    spread of the ``reps`` independent replicates.

    The injected noise is drawn in float64 and only rounded to float32, so a float32 run sees the same draws; its
    rounding of the O(G) recursion state, <= (T + 1)/2 * 3 eps32 G ~ 1e-4 in ||e|| (see :func:`exactness_bound`),
    moves ||e||^2 ~ 0.1-5 by <= 2 ||e|| 1e-4 on one replicate, and by ~1e-4 / sqrt(reps) on average (the rounding
    errors are uncorrelated with the noise), far below the SE (>= 3.5e-4): no float32 allowance."""
    mean, se = mean_and_se(mc_errors(denoiser, mode, reps, seed=seed, last=last))
    return ClaimResult.within_se(mean, predicted, se, k=4.0, details=f"{reps} independent replicates")


def two_point_oracle_variance(s: float = 1.5, d: int = D, num_steps: int = T) -> float:
    """sigma^2 d T^-2 sum_t (a_t^2 + (1 - a_t)^2) for E3 with alpha_t = 1/t (r_t = t - 1)."""
    r = np.arange(num_steps, dtype=float)
    a = -r * (s - 1) ** 2 / (1 + s * r * (2 - s))
    return d * float(np.sum(a**2 + (1 - a) ** 2)) / num_steps**2


@claim(area="denoise", paper=DENOISE)
def quadratic_exactness_of_igt_disk_two_point() -> ClaimResult:
    """Noise-free, alpha_t = 1/t (DiSK: kappa = 0.4, gamma = 0.3): E1, E2, E3 return grad f_q(x_t) exactly,
    max over t and methods of ||m_t - grad f(x_t)|| <= 1e-12."""
    errs = [max_error(igt(harmonic())), max_error(disk(0.4, 0.3)), max_error(two_point(harmonic()))]
    return ClaimResult.at_most(max(errs), exactness_bound(grad_quadratic, 1e-12), details=f"IGT/DiSK/two-point: {errs}")


@claim(area="denoise", paper=DENOISE)
def ema_is_biased_on_a_moving_quadratic() -> ClaimResult:
    """E0 (EMA, alpha_t = 1/t) is not exact on the same noise-free quadratic: max error is O(1) (>= 0.1)."""
    return ClaimResult.at_least(max_error(ema(harmonic())), 0.1)


@claim(area="denoise", paper=DENOISE)
def igt_error_follows_one_over_t() -> ClaimResult:
    """DP mode, alpha_t = 1/t: E||e_T||^2 = sigma^2 d / T = 0.1 for E1; the mean of 16000 independent replicates
    lies within 4 standard errors (SE ~ 3.5e-4, 0.35 %: a 2 % bias is 5.6 SE) of 0.1."""
    return mc_claim(igt(harmonic()), "dp", 16_000, D / T, seed=1)


@claim(area="denoise", paper=DENOISE)
def two_point_error_follows_one_over_t() -> ClaimResult:
    """DP mode, alpha_t = 1/t: E||e_T||^2 = sigma^2 d / T = 0.1 for E3; the mean of 16000 independent replicates
    lies within 4 standard errors (SE ~ 3.5e-4, 0.35 %) of 0.1."""
    return mc_claim(two_point(harmonic()), "dp", 16_000, D / T, seed=2)


@claim(area="denoise", paper=DENOISE)
def two_point_oracle_noise_factor() -> ClaimResult:
    """Oracle mode, E3, alpha_t = 1/t: E||e_T||^2 = sigma^2 d T^-2 sum_t (a_t^2 + (1-a_t)^2) = 0.18229; the mean
    of 16000 independent replicates lies within 4 standard errors (SE ~ 6.4e-4, 0.35 %) of it."""
    return mc_claim(two_point(harmonic()), "oracle", 16_000, two_point_oracle_variance(), seed=3)


@claim(area="denoise", paper=DISK)
def disk_stationary_error_dp_mode() -> ClaimResult:
    """DiSK (kappa = 0.7, gamma = 0.5), DP mode: E||e||^2 -> kappa/(2 - kappa) sigma^2 d = 5.3846; 2000
    independent replicates, each averaged over the stationary steps t = 51..100, have a mean within 4 standard
    errors (SE from the replicates, ~ 8.4e-3, 0.16 %) of it."""
    return mc_claim(disk(), "dp", 2000, 0.7 / 1.3 * D, seed=4, last=50)


@claim(area="denoise", paper=DISK)
def disk_stationary_error_oracle_mode() -> ClaimResult:
    """DiSK (kappa = 0.7, gamma = 0.5), oracle mode: E||e||^2 -> kappa/(2-kappa) (c^2 + (1-c)^2) sigma^2 d
    = 4.0659, c = (1 - kappa)/(kappa gamma); 2000 independent replicates averaged over t = 51..100, within 4
    standard errors (SE ~ 6.4e-3, 0.16 %)."""
    c = 0.3 / 0.35
    return mc_claim(disk(), "oracle", 2000, 0.7 / 1.3 * (c**2 + (1 - c) ** 2) * D, seed=5, last=50)


@claim(area="denoise", paper=DENOISE)
def two_point_is_exact_on_cubics() -> ClaimResult:
    """Noise-free cubic f_c: E3 error <= 1e-10 for alpha_t = 1/t and for alpha = 0.3."""
    errs = [max_error(two_point(harmonic()), grad_cubic), max_error(two_point(0.3), grad_cubic)]
    return ClaimResult.at_most(max(errs), exactness_bound(grad_cubic, 1e-10), details=f"alpha=1/t, 0.3: {errs}")


@claim(area="denoise", paper=DENOISE)
def one_point_estimators_are_not_exact_on_cubics() -> ClaimResult:
    """Noise-free cubic f_c: E1 (alpha_t = 1/t) and E2 (DiSK defaults) have clearly non-zero error
    (min of the two max errors >= 1e-3)."""
    errs = [max_error(igt(harmonic()), grad_cubic), max_error(disk(), grad_cubic)]
    return ClaimResult.at_least(min(errs), 1e-3, details=f"IGT, DiSK: {errs}")


def mle_1d_errors(reps: int, seed: int = 6) -> jax.Array:
    """Errors of the plug-in MLE of grad f(x_10) from observations at x_s = s, s = 1..10, sigma = 1
    (f(x) = 1.5 x^2/2 - 2 x)."""
    xs = jnp.arange(1.0, 11.0)[:, None]
    noise = jnp.asarray(np.random.default_rng(seed).standard_normal((reps, 10, 1)))

    def one(w):
        H, b = quadratic_mle(xs, 1.5 * xs - 2.0 + w)
        return (H @ xs[-1] + b - (1.5 * xs[-1] - 2.0))[0]

    return jax.jit(jax.vmap(one))(noise)


@claim(area="denoise", paper=DENOISE)
def quadratic_mle_variance_in_1d() -> ClaimResult:
    """1-D quadratic MLE, x_s = s, s = 1..10, sigma = 1: Var(g_hat_10) = 1/10 + 20.25/82.5 = 0.345455. The mean
    squared error over 2e5 independent replicates lies within 4 standard errors of it (SE from the replicates'
    spread, about 0.32 %; the old band was 2 %)."""
    err = np.asarray(mle_1d_errors(200_000), dtype=np.float64)
    mean, se = mean_and_se(err**2)
    # float32: each error is a 10-point least-squares solve, rounding ~ 10 eps32 relative to |g| <= 12, 1e-5 absolute
    # on an error of sd 0.59: the squared error moves by <= 2e-5 relative, 100 times below the SE: no allowance
    return ClaimResult.within_se(mean, 0.1 + 20.25 / 82.5, se, k=4.0,
                                 details=f"mean error {float(np.mean(err)):.2e} (unbiased)")


@claim(area="denoise", paper=DENOISE)
def quadratic_mle_recovers_h_and_b() -> ClaimResult:
    """Noise-free data, d = 5, t = 20: quadratic_mle returns H and b to 1e-10 (unconstrained and symmetric)."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((5, 5))
    H, b = A @ A.T + np.eye(5), rng.standard_normal(5)
    xs = rng.standard_normal((20, 5))
    gs = xs @ H + b
    err = 0.0
    for sym in (False, True):
        Hh, bh = quadratic_mle(jnp.asarray(xs), jnp.asarray(gs), symmetric=sym)
        err = max(err, float(jnp.max(jnp.abs(Hh - H))), float(jnp.max(jnp.abs(bh - b))))
    # float32: H solves the normal equations S H' = C' (S = the centred scatter of t = 20 points, formed with
    # relative error <= t eps32, condition number kappa(S) = cond(centred xs)^2 ~ 6.5 here): |error| <= kappa(S) t
    # eps32 max|H| ~ 1.4e-4
    kappa = float(np.linalg.cond(xs - xs.mean(0)) ** 2)
    return ClaimResult.at_most(err, by_precision(1e-10, kappa * 20 * 2.0**-23 * float(np.max(np.abs(H)))))


NC_D, NC_SEEDS = 20, 8
NC_TS = np.array([250, 1000, 4000, 16000])


def nonconvex_loss(x):
    """f(x) = sum_i x_i^2 / 2 + 2 sin^2 x_i: non-convex (f'' = 1 + 4 cos 2x < 0 near x = pi/2), every derivative
    bounded, one stationary point x = 0."""
    return jnp.sum(x**2 / 2 + 2 * jnp.sin(x) ** 2)


def average_grad_norm2(denoiser: Denoiser, lr: float, num_steps: int, seeds: int = NC_SEEDS) -> np.ndarray:
    """(1/T) sum_{t<=T} ||grad f(x_t)||^2 for ``optax.chain(denoiser, optax.sgd(lr))`` on :func:`nonconvex_loss`
    (d = 20, x_1 = 2), oracle-mode noise sigma = 1 on every query, one value per seed: ``(seeds,)`` float64."""
    x0 = jnp.full((NC_D,), 2.0)

    @jax.jit
    @jax.vmap
    def one(key):
        info = run(key, nonconvex_loss, x0, denoiser, optax.sgd(lr), gaussian_noise(1.0), num_steps, mode="oracle")[1]
        return jnp.mean(info.grad_norm2)

    return np.asarray(one(jnp.stack([jax.random.key(100 + s) for s in range(seeds)])), dtype=np.float64)


def loglog_slope(ts: np.ndarray, values: list[np.ndarray]) -> tuple[float, float]:
    """Least-squares slope of log value on log T over every (T, seed) point, and its standard error from the
    residuals (which also absorb any curvature of the log-log curve)."""
    x = np.repeat(np.log(ts), [len(v) for v in values])
    y = np.log(np.concatenate(values))
    X = np.stack([np.ones_like(x), x], axis=1)
    beta, rss = np.linalg.lstsq(X, y, rcond=None)[:2]
    return float(beta[1]), float(np.sqrt(rss[0] / (len(y) - 2) * np.linalg.inv(X.T @ X)[1, 1]))


@claim(area="denoise", paper=DENOISE, quick=False, expected="not reproduced")
def two_point_nonconvex_rate_is_not_t_to_minus_12_19() -> ClaimResult:
    """Not reproduced: the T^(-12/19) non-convex rate of the two-query recursion (E3) is not seen; measured
    E||grad f||^2 decays as T^(-0.45), slower than SGD's T^(-1/2).

    The paper's statement (abstract only; full text not located): with higher-order smoothness the recursive
    two-query denoiser reaches O(T^(-12/19)) for smooth non-convex optimization, against SGD's O(T^(-1/2)); the
    comparison with SGD makes the measure (1/T) sum_t E||grad f(x_t)||^2. Our reading of where 12/19 comes from
    [reconstruction]: SGD on the denoised gradient m_t, with the descent-lemma terms Delta/(eta T) (progress),
    L eta E||m_t - grad f||^2 ~ eta sigma^2 alpha (variance of an EMA of weight alpha) and the squared bias
    (eta/alpha)^(2p) of a transport exact to order p; balancing them gives T^(-4p/(6p+1)), which is -12/19 for
    p = 3, the order of E3 (exact on cubics), with eta ~ T^(-7/19) and alpha ~ T^(-5/19).

    Experiment (ours, the regime where the rate should show): f(x) = sum_i x_i^2/2 + 2 sin^2 x_i (non-convex,
    every derivative bounded), d = 20, x_1 = 2, oracle noise sigma = 1 on each of E3's two queries (s = 1.5),
    inner optax.sgd; T in {250, 1000, 4000, 16000}, 8 seeds; the log-log least-squares slope of the per-seed
    averages, its SE from the residuals. E3 on the schedule eta = T^(-7/19), alpha = T^(-5/19) (constants 1,
    the best of a 4 x 3 grid at T = 1000 on other seeds): slope -0.448 +- 0.005. SGD with eta = 1/sqrt(T) on
    the same problem: -0.504 +- 0.0014, its classical T^(-1/2) (reported in the details): the measure does show
    a method's rate. E3 with (eta, alpha) tuned at every T on a 6 x 4 grid: -0.485 +- 0.003, and at T = 16000
    the best alpha is 1 (no denoising). SGD at E3's step eta = T^(-7/19): -0.453 +- 0.003, 1.44-1.49 times
    E3's value at every T: denoising lowers the constant, not the exponent.

    Diagnosis: the variance term is not eta sigma^2 alpha. The error e_t = m_t - grad f(x_t) of a recursive
    filter is correlated with x_t (x_t moved along e_{t-1}, which e_t still holds), and the filter has unit gain
    at low frequency, where an SGD iterate near a minimum collects its noise: the stationary E||grad f||^2 stays
    of the order of plain SGD's eta sigma^2 tr(H) / 2 (= 1.41 at T = 16000, eta = 0.028; measured averages 1.17
    for E3, 1.67 for SGD), so with eta ~ T^(-7/19) a noise floor ~ T^(-7/19) joins the
    T^(-12/19) progress term and the fit lands between them (-0.45). The larger step the rate needs is what the
    denoiser cannot pay for. Normalized steps (our earlier study, last-10% window) give steeper slopes
    for every method (E3 -0.95, SGD -1.02: the local strongly convex rate at x = 0), again no T^(-12/19).

    Check (the measured opposite): the E3 slope minus 4 standard errors lies above -12/19 = -0.632."""
    e3 = [average_grad_norm2(two_point(float(T) ** (-5 / 19)), float(T) ** (-7 / 19), int(T)) for T in NC_TS]
    slope, se = loglog_slope(NC_TS, e3)
    sgd = [average_grad_norm2(ema(1.0), 1.0 / float(np.sqrt(T)), int(T)) for T in NC_TS]
    sgd_slope, sgd_se = loglog_slope(NC_TS, sgd)
    return ClaimResult.at_least(slope - 4 * se, -12 / 19,
                                details=f"E3 slope {slope:.3f} +- {se:.3f} (averages "
                                        f"{', '.join(f'{v.mean():.3f}' for v in e3)}); SGD eta = 1/sqrt(T): "
                                        f"{sgd_slope:.3f} +- {sgd_se:.4f}")
