"""Claims of MSIP (Belhadji, Sharp, Marzouk, arXiv:2605.14142 and arXiv:2502.10600), checked in float64
(and in float32 at tolerances derived from its unit roundoff eps32 = 2^-23).

Each ``measure_*`` function computes one figure; the tests (``tests/msip``) assert on the same functions and
the registered claims compare them with what the paper's derivation predicts.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import minimize_scalar

from jaxlab.core import ClaimResult, claim
from jaxlab.core.quadrature import gauss_hermite
from jaxlab.core.verification import by_precision
from jaxlab.sampling import msip as M
from jaxlab.sampling.msip import benchmarks as B
from jaxlab.sampling.msip.papers import MSIP

TITLE = "MSIP: mean shift interacting particles for MMD-optimal quadrature of unnormalized densities"
MODULES = ("jaxlab.sampling.msip.iteration", "jaxlab.sampling.msip.estimators", "jaxlab.sampling.msip.benchmarks")

PAPER = MSIP
GMM_MEANS = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 4.0]])


def _gaussian_v0_v1(m: float, s: float):
    """Closed forms for ``π = N(m, s²)`` in 1-D: ``v0(y)``, ``v1(y)`` and ``c_π`` as functions of σ."""

    def v0(y, sigma):
        return (sigma / jnp.sqrt(sigma**2 + s**2) * jnp.exp(-((y[0] - m) ** 2) / (2 * (sigma**2 + s**2))))

    def v1(y, sigma):
        return v0(y, sigma) * (s**2 * y + sigma**2 * m) / (s**2 + sigma**2)

    def c_pi(sigma):
        return sigma / math.sqrt(sigma**2 + 2 * s**2)

    return v0, v1, c_pi


def measure_mean_shift_contraction(m=0.7, s=1.3, sigma=0.5, y0=3.0, num_steps=30):
    """Max deviation of the N = 1 mean-shift iterates from ``m + (y0 - m) (s²/(s²+σ²))^t``."""
    est = M.gaussian_estimator(jnp.array([m]), jnp.array([[s**2]]))
    _, traj = M.mean_shift(jax.random.key(0), jnp.array([y0]), est, num_steps=num_steps, lengthscale=sigma,
                           return_trajectory=True)
    rho = s**2 / (s**2 + sigma**2)
    expected = m + (y0 - m) * rho ** np.arange(1, num_steps + 1)
    return float(np.max(np.abs(np.asarray(traj[:, 0]) - expected)))


def measure_fixed_point(n: int, sigma: float = 1.0, num_steps: int = 2000, h: float | None = None):
    """Run exact MSIP (π = N(0, 1), 1-D) with N = 2 or 3; return ``(max |∂F/∂y| by central differences of step
    ``h``, F at the MSIP fixed point, F of the best symmetric configuration {±a} or {±a, 0})``.

    ``h = None``: 1e-5 in float64, 1e-2 in float32, where F = c_π - vᵀK⁻¹v (c_π = 0.577) is known to about
    eps32 c_π ~ 7e-8 only, so a smaller step would difference rounding noise."""
    v0, v1, c_pi = _gaussian_v0_v1(0.0, 1.0)
    est = M.exact_estimator(v0, v1)
    Y0 = jnp.array([[-1.0], [0.8]]) if n == 2 else jnp.array([[-1.0], [0.1], [0.8]])
    state, _ = M.msip(jax.random.key(0), Y0, est, num_steps=num_steps, step_size=0.7, lengthscale=sigma, jitter=0.0)
    c = c_pi(sigma)
    F = jax.jit(lambda Y: M.reduced_objective(Y, est(None, Y, sigma)[0], c, lengthscale=sigma))
    Y = np.asarray(state.particles)
    h = by_precision(1e-5, 1e-2) if h is None else h
    grad = []
    for i in range(n):
        e = np.zeros_like(Y)
        e[i, 0] = h
        grad.append((float(F(Y + e)) - float(F(Y - e))) / (2 * h))

    def sym(a):
        pts = [-a, a] if n == 2 else [-a, 0.0, a]
        return float(F(jnp.array(pts)[:, None]))

    best = minimize_scalar(sym, bounds=(0.05, 4.0), method="bounded", options={"xatol": 1e-10})
    return float(np.max(np.abs(grad))), float(F(Y)), float(best.fun)


ESTIMATORS = {
    "fredholm": lambda f: M.fredholm_estimator(f),
    "gradient_free_mc": lambda f: M.gradient_free_estimator(f),
    "gradient_free_spherical_radial": lambda f: M.gradient_free_estimator(f, quadrature="spherical_radial"),
    "gradient_informed_mc": lambda f: M.gradient_informed_estimator(f),
    "gradient_informed_gauss_hermite": lambda f: M.gradient_informed_estimator(f, quadrature=gauss_hermite(5, 2),
                                                                               gamma=0.5),
}


def measure_z_invariance(c: float = 800.0, n: int = 8, num_steps: int = 10, estimators=tuple(ESTIMATORS)):
    """Max difference of trajectories and normalized weights between ``log π̃`` and ``log π̃ ± c`` over the
    Fredholm, gradient-free (MC, spherical-radial) and gradient-informed (MC, Gauss-Hermite) estimators.

    σ = 0.3 keeps ``K`` well conditioned: the map itself (not the implementation) amplifies rounding for a
    particle whose own ``v0`` is tiny next to a neighbour's, and then the ``c``-rounding of ``log π̃ + c``
    (``~1e-13``) shows at ``~1e-8`` (measured with σ = 0.6)."""
    lp = B.gmm(GMM_MEANS / 2).log_density
    Y0 = 1.5 * jax.random.normal(jax.random.key(1), (n, 2))

    def all_runs(shift):
        def f(x):
            return lp(x) + shift

        outs = []
        for name in estimators:
            st, tr = M.msip(jax.random.key(2), Y0, ESTIMATORS[name](f), num_steps=num_steps, step_size=0.3,
                            lengthscale=0.3, return_trajectory=True)
            outs.append((tr.states.particles, st.weights))
        return outs

    res = jax.jit(jax.vmap(all_runs))(jnp.array([0.0, c, -c]))
    err = 0.0
    for traj, w in res:
        err = max(err, float(jnp.max(jnp.abs(traj[1:] - traj[0]))), float(jnp.max(jnp.abs(w[1:] - w[0]))))
    return err


def measure_gauss_hermite_consistency(m=0.3, s2=1.5, sigma=0.7):
    """Max difference between the exact MSIP map and the maps from the gradient-free and gradient-informed
    (γ = 1) estimators with a 40-node Gauss-Hermite rule (1-D Gaussian target)."""
    Y = jnp.linspace(-2.0, 2.5, 6)[:, None]
    exact = M.gaussian_estimator(jnp.array([m]), jnp.array([[s2]]))
    lp = lambda x: -0.5 * (x[0] - m) ** 2 / s2  # noqa: E731
    T0 = M.msip_map(Y, *exact(None, Y, sigma), lengthscale=sigma)
    err = 0.0
    for est in (M.gradient_free_estimator(lp, quadrature=gauss_hermite(40)),
                M.gradient_informed_estimator(lp, gamma=1.0, quadrature=gauss_hermite(40))):
        T = M.msip_map(Y, *jax.jit(est)(None, Y, sigma), lengthscale=sigma)
        err = max(err, float(jnp.max(jnp.abs(T - T0))))
    return err


def measure_mc_slope(qs=(16, 64, 256, 1024, 4096), reps: int = 400, sigma: float = 0.7):
    """Log-log slope of the RMS error of the MC (gradient-free) shift ``r`` against ``Q`` (1-D N(0, 1), y = 1)."""
    Y = jnp.ones((reps, 1))
    r_exact = float(M.gaussian_estimator(jnp.zeros(1), jnp.eye(1))(None, Y[:1], sigma)[1][0, 0])
    lp = lambda x: -0.5 * x[0] ** 2  # noqa: E731
    rms = []
    for q in qs:
        est = jax.jit(M.gradient_free_estimator(lp, n_quad=q))
        r = est(jax.random.key(q), Y, sigma)[1][:, 0]
        rms.append(float(jnp.sqrt(jnp.mean((r - r_exact) ** 2))))
    return float(np.polyfit(np.log(qs), np.log(rms), 1)[0])


def measure_fredholm_exactness(s=1.2, sigma=0.6, num_steps=2000):
    """Max difference between Fredholm-MSIP (γ = 1) on N(0, s²) and exact MSIP on N(0, s² - σ²), plus the
    difference to exact MSIP on N(0, s²) itself (which must be large: the Fredholm bias)."""
    Y0 = jnp.array([[-1.0], [0.1], [0.8]])
    kw = dict(num_steps=num_steps, step_size=0.7, lengthscale=sigma, jitter=0.0)
    fred, _ = M.msip(jax.random.key(0), Y0, M.fredholm_estimator(lambda x: -0.5 * x[0] ** 2 / s**2, gamma=1.0), **kw)
    deconv, _ = M.msip(jax.random.key(0), Y0, M.gaussian_estimator(jnp.zeros(1), jnp.eye(1) * (s**2 - sigma**2)),
                       **kw)
    plain, _ = M.msip(jax.random.key(0), Y0, M.gaussian_estimator(jnp.zeros(1), jnp.eye(1) * s**2), **kw)
    same = max(float(jnp.max(jnp.abs(fred.particles - deconv.particles))),
               float(jnp.max(jnp.abs(fred.weights - deconv.weights))))
    return same, float(jnp.max(jnp.abs(fred.particles - plain.particles)))


def measure_quality_vs_n(ns=(10, 20, 40, 80), seeds: int = 5, sigma: float = 0.5, num_steps: int = 200):
    """Mean weighted MMD² (test ℓ = 1.5, 4000 exact reference samples) of exact MSIP and of N iid samples on
    N(0, I₂); returns ``(MSIP log-log slope, iid slope, iid/MSIP ratio at N = 40)``."""
    ref = B.make_reference(jax.random.normal(jax.random.key(99), (4000, 2)), lengthscale=1.5)
    est = M.gaussian_estimator(jnp.zeros(2), jnp.eye(2))
    msip_mmd, iid_mmd = [], []
    for n in ns:
        def one(key, n=n):
            k0, k1 = jax.random.split(key)
            st, _ = M.msip(k1, jax.random.normal(k0, (n, 2)), est, num_steps=num_steps, step_size=0.5,
                           lengthscale=sigma)
            iid = jax.random.normal(k1, (n, 2))
            return (B.particle_metrics(st.particles, st.weights, ref)["mmd2"],
                    B.particle_metrics(iid, None, ref)["mmd2"])

        a, b = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(n), seeds))
        msip_mmd.append(float(a.mean()))
        iid_mmd.append(float(b.mean()))
    logn = np.log(ns)
    i40 = list(ns).index(40)
    return (float(np.polyfit(logn, np.log(msip_mmd), 1)[0]), float(np.polyfit(logn, np.log(iid_mmd), 1)[0]),
            iid_mmd[i40] / msip_mmd[i40])


def measure_mode_coverage(n: int = 30, num_steps: int = 200, seeds: int = 3):
    """Fredholm MSIP (γ = 0.9, σ = sqrt(d/N), η = 0.1) on the 3-component GMM from N(0, 4I): the smallest
    number of particles nearest to a component and the largest |component weight - 1/3| over seeds."""
    target = B.gmm(GMM_MEANS)
    est = M.fredholm_estimator(target.log_density)

    def one(key):
        k0, k1 = jax.random.split(key)
        st, _ = M.msip(k1, 2.0 * jax.random.normal(k0, (n, 2)), est, num_steps=num_steps, step_size=0.1)
        return st.particles, st.weights

    Y, w = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(0), seeds))
    comp = np.argmin(((np.asarray(Y)[:, :, None] - GMM_MEANS) ** 2).sum(-1), axis=-1)
    onehot = comp[..., None] == np.arange(3)
    counts = onehot.sum(1)
    mass = (np.asarray(w)[..., None] * onehot).sum(1)
    return int(counts.min()), float(np.max(np.abs(mass - 1 / 3)))


@claim(area="msip", paper=PAPER)
def mean_shift_contracts_at_the_closed_form_rate() -> ClaimResult:
    """N = 1 MSIP (mean shift) on N(m, s²) contracts to m with ratio s²/(s²+σ²) per step (η = 1)."""
    # float32: each step rounds y (|y| <= 3) by <= eps32 |y| and the map contracts errors by rho = s²/(s²+σ²) = 0.871:
    # error <= 3 eps32 / (1 - rho) ~ 2.8e-6
    return ClaimResult.at_most(measure_mean_shift_contraction(), by_precision(1e-12, 3 * 2.0**-23 / (1 - 1.69 / 1.94)),
                               details="max |y_t - closed form|, 30 steps")


@claim(area="msip", paper=PAPER)
def msip_fixed_points_are_critical_points_of_the_reduced_mmd() -> ClaimResult:
    """exact MSIP with N = 2, 3 on N(0, 1) converges to a point where ∇F < 1e-8 and F equals the best
    symmetric configuration to 1e-10 (float64; float32 bounds derived in the code)."""
    eps32, c_pi = 2.0**-23, 1 / math.sqrt(3)
    # float32: F = c_pi - v^T K^-1 v is known to ~2 eps32 c_pi, so a central difference with h = 1e-2 carries
    # 2 * 2 eps32 c_pi / (2h) ~ 1.4e-5 of rounding plus h² |F'''| / 6 ~ 1.5e-6 of truncation (measured in float64):
    # |grad| <= 1.6e-5; F and F_sym each carry <= 2 eps32 c_pi: |F - F_sym| <= 4 eps32 c_pi ~ 2.8e-7
    g_tol = by_precision(1e-8, 2 * eps32 * c_pi / 1e-2 + 1.5e-6)
    f_tol = by_precision(1e-10, 4 * eps32 * c_pi)
    worst = 0.0
    details = []
    for n in (2, 3):
        g, f, f_best = measure_fixed_point(n)
        worst = max(worst, g / g_tol, abs(f - f_best) / f_tol)
        details.append(f"N={n}: |grad F|={g:.1e}, F={f:.12f}, F_sym={f_best:.12f}")
    label = by_precision("1e-8", f"{g_tol:.2g}"), by_precision("1e-10", f"{f_tol:.2g}")
    return ClaimResult.at_most(worst, 1.0, details=f"max of |grad|/{label[0]} and |F - F_sym|/{label[1]}; "
                               + "; ".join(details))


@claim(area="msip", paper=PAPER, quick=False)
def msip_is_invariant_to_the_normalizing_constant() -> ClaimResult:
    """trajectories and weights with log π̃ + c, c = ±800, equal those with log π̃ (every estimator)."""
    return ClaimResult.at_most(measure_z_invariance(), 1e-10, details="5 estimators, 10 steps, N = 8, d = 2")


@claim(area="msip", paper=PAPER)
def quadrature_estimators_reproduce_the_exact_map() -> ClaimResult:
    """gradient-free and gradient-informed (γ = 1) estimators with 40 Gauss-Hermite nodes give the
    exact-expectation MSIP map to 1e-8."""
    # float32: log v0 and r come from ratios of 40-node pairwise sums (<= (2 * 6 + 4) u = 8 eps32 relative), |T| <= 2.5,
    # and the N = 6 Gram solve amplifies by cond(K) = 7.1: error <= 8 eps32 * 2.5 * 7.1 ~ 1.7e-5
    return ClaimResult.at_most(measure_gauss_hermite_consistency(), by_precision(1e-8, 8 * 2.0**-23 * 2.5 * 7.1))


@claim(area="msip", paper=PAPER)
def monte_carlo_estimator_error_decays_as_q_to_minus_half() -> ClaimResult:
    """RMS error of the MC shift estimate has log-log slope -0.5 ± 0.1 in Q ∈ {16, ..., 4096}."""
    return ClaimResult.close(measure_mc_slope(), -0.5, atol=0.1)


@claim(area="msip", paper=PAPER)
def fredholm_msip_quantizes_the_deconvolved_target() -> ClaimResult:
    """Fredholm MSIP (γ = 1) on N(0, s²) converges to exact MSIP on N(0, s² - σ²)."""
    same, bias = measure_fredholm_exactness()
    # float32: each of the two runs rounds its particles (|y| <= 1.05) by ~eps32 per step and the slowest mode
    # contracts by rho = 0.973 per step (measured on the float64 trajectory): 2 * 1.05 eps32 / (1 - rho) ~ 9.3e-6
    return ClaimResult.at_most(same, by_precision(1e-10, 2 * 1.05 * 2.0**-23 / (1 - 0.973)),
                               details=f"distance to exact MSIP on N(0, s²) itself: {bias:.3f}")


@claim(area="msip", paper=PAPER, quick=False)
def msip_mmd_decays_faster_than_iid() -> ClaimResult:
    """(soft) on N(0, I₂), MSIP's MMD² has log-log slope < -1 over N ∈ {10, ..., 80} and beats iid by
    >= 3x at N = 40 (5 seeds). Measured: the slope; passes when it is < -1 and the ratio >= 3."""
    slope, iid_slope, ratio = measure_quality_vs_n()
    ok = slope < -1.0 and ratio >= 3.0
    return ClaimResult(slope, "< -1 and ratio >= 3", -1.0, ok,
                       details=f"iid slope {iid_slope:.2f}, iid/MSIP MMD² at N=40: {ratio:.1f}")


@claim(area="msip", paper=PAPER, quick=False)
def msip_covers_every_mode() -> ClaimResult:
    """(soft) on a 3-component GMM, N = 30, each component gets >= 5 particles and weight 1/3 ± 0.1."""
    count, dev = measure_mode_coverage()
    return ClaimResult(dev, "<= 0.1 with >= 5 particles each", 0.1, count >= 5 and dev <= 0.1,
                       details=f"smallest particle count per component: {count}")
