"""Claims of the online area: USP coefficients and annihilation, Chebyshev decay on real and complex spectra,
VAW exactness and its regret bound, polylogarithmic regret against OGD, and the ETTh1 experiment
(A. Marsden and E. Hazan, arXiv:2605.08390 and arXiv:2502.06545)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.core.verification import by_precision
from jaxlab.data.ett import load_etth1
from jaxlab.online import lds, ogd, regret, usp, vaw

TITLE = "Online prediction of LDS: Universal Sequence Preconditioning + Vovk-Azoury-Warmuth"
MODULES = ("jaxlab.online.usp", "jaxlab.online.vaw", "jaxlab.online.lds", "jaxlab.online.regret",
           "jaxlab.online.ogd", "jaxlab.online.spectral", "jaxlab.data.ett")

_DECAY_NS = np.arange(4, 17)
_EPS32 = 2.0**-23  # float32 unit roundoff


@claim(area="online", paper="marsden2025usp")
def chebyshev_coefficients_match_closed_forms() -> ClaimResult:
    """Monic Chebyshev coefficients equal their closed forms (n = 2, 3, 5, 8) exactly."""
    ex = {2: [1, 0, -0.5], 3: [1, 0, -0.75, 0], 5: [1, 0, -1.25, 0, 0.3125, 0],
          8: [1, 0, -2, 0, 1.25, 0, -0.25, 0, 0.0078125]}
    err = max(float(np.max(np.abs(np.asarray(usp.chebyshev_coeffs(n)) - c))) for n, c in ex.items())
    return ClaimResult.at_most(err, 1e-15)


@claim(area="online", paper="marsden2025usp")
def chebyshev_sup_norm_is_two_to_one_minus_n() -> ClaimResult:
    """sup over 1e5 Chebyshev-Lobatto points of |M_10| equals 2^{1-10}."""
    x = np.cos(np.pi * np.arange(100_000) / 99_999)
    sup = np.max(np.abs(np.polyval(np.asarray(usp.chebyshev_coeffs(10)), x)))
    return ClaimResult.close(sup, 2.0**-9, rtol=1e-9)


@claim(area="online", paper="marsden2025usp")
def chebyshev_l1_norm_closed_form() -> ClaimResult:
    """||c||_1 = ((1+sqrt2)^n + (1-sqrt2)^n) / 2^n for n <= 30: worst relative error."""
    err = max(abs(np.abs(np.asarray(usp.chebyshev_coeffs(n))).sum()
                  / (((1 + math.sqrt(2)) ** n + (1 - math.sqrt(2)) ** n) / 2**n) - 1) for n in range(1, 31))
    return ClaimResult.at_most(err, 1e-12)


@claim(area="online", paper="marsden2025usp")
def coefficient_growth_lemma() -> ClaimResult:
    """USP Lemma 3.2: max_k |c_k| <= 2^{0.3 n} for n <= 40 (worst ratio reported)."""
    worst = max(np.abs(np.asarray(usp.chebyshev_coeffs(n))).max() / 2 ** (0.3 * n) for n in range(1, 41))
    return ClaimResult.at_most(worst, 1.0)


@claim(area="online", paper="marsden2025usp")
def monic_legendre_sup_norm() -> ClaimResult:
    """sup_[-1,1] of the monic Legendre polynomial of degree 5 is 0.126984 (> 2^-4, Chebyshev is minimal)."""
    x = np.cos(np.pi * np.arange(100_000) / 99_999)
    sup = np.max(np.abs(np.polyval(np.asarray(usp.legendre_coeffs(5)), x)))
    return ClaimResult.close(sup, 0.126984, atol=1e-6, details=f"2^-4 = {2**-4}")


def _system():
    params = lds.random_lds(jax.random.key(3), 20, d_in=2, d_out=2)
    u = jax.random.normal(jax.random.key(4), (120, 2))
    y, x = lds.simulate(jax.random.key(5), params, u)
    return params, u, y, x


@claim(area="online", paper="marsden2025usp")
def annihilation_identity() -> ClaimResult:
    """y_t - y*_t = C M_8(A) x_{t-8} on a random asymmetric LDS (d_h = 20): max error / max |y|."""
    params, u, y, x = _system()
    n, c = 8, usp.chebyshev_coeffs(8)
    y_star = usp.arx_features(y, u, n) @ usp.usp_predictor(params, c).T
    resid = (params.C @ usp.matrix_polynomial(params.A, c) @ x.T).T
    err = np.abs(np.asarray(y - y_star)[n:] - np.asarray(resid)[:-n]).max() / np.abs(np.asarray(y)).max()
    # float32: both sides weight n + 1 = 9 lagged terms by the coefficients, ||c||_1 = 4.51 for n = 8: relative
    # error <= (n + 1) ||c||_1 eps32 ~ 4.8e-6
    return ClaimResult.at_most(err, by_precision(1e-10, 9 * 4.51 * _EPS32))


@claim(area="online", paper="marsden2025usp")
def precondition_roundtrip() -> ClaimResult:
    """unprecondition(precondition(y, c), c) = y (relative max error, n = 8)."""
    y = _system()[2]
    c = usp.chebyshev_coeffs(8)
    back = usp.unprecondition(usp.precondition(y, c), c)
    # float32: the same operations in float64 leave 10.5 eps64 (2.3e-15 measured); rounding scales with the unit
    # roundoff, so float32 leaves ~10.5 eps32, with a factor 4 of margin: 42 eps32 ~ 5e-6
    return ClaimResult.at_most(float(jnp.max(jnp.abs(back - y)) / jnp.max(jnp.abs(y))),
                               by_precision(1e-12, 42 * _EPS32))


@jax.jit
def _log_residual_norms(A, C):
    M = usp.monic_chebyshev_matrices(A, 16)
    return jnp.log(jnp.linalg.norm(jnp.einsum("ij,njk->nik", C, M), axis=(1, 2)))


def _decay_slope(params) -> float:
    return float(np.polyfit(_DECAY_NS, np.asarray(_log_residual_norms(params.A, params.C))[_DECAY_NS], 1)[0])


def _decay_slopes(seeds: int = 12, **kw) -> tuple[float, float]:
    """Mean and standard error of :func:`_decay_slope` over ``seeds`` random LDS (d_h = 40) drawn with ``kw``."""
    return mean_and_se(np.array([_decay_slope(lds.random_lds(jax.random.key(s), 40, **kw)) for s in range(seeds)]))


@claim(area="online", paper="marsden2025usp")
def real_spectrum_residual_decays_like_two_to_minus_n() -> ClaimResult:
    """Real spectrum in [-1, 1] (d_h = 40): the slope of log ||C M_n(A)|| over n = 4..16 is -ln 2 (the monic
    Chebyshev polynomial's sup norm 2^(1-n) on the interval): the mean slope over 12 random systems lies within 4
    standard errors (SE from the spread of the systems, about 0.0024) of -ln 2."""
    mean, se = _decay_slopes()
    return ClaimResult.within_se(mean, -math.log(2), se, k=4.0, details="12 random systems")


@claim(area="online", paper="marsden2026second")
def arc_spectrum_decay_within_bernstein_bound() -> ClaimResult:
    """Eigenvalues on the arc e^{i theta}, |theta| <= 0.2: the decay slope is at most the Bernstein bound
    ln(rho(e^{0.2i})/2) = -0.261: the mean slope over 12 random systems plus 4 standard errors is below it."""
    bound = float(np.log(usp.bernstein_rho(np.exp(0.2j)) / 2))
    mean, se = _decay_slopes(eigs="arc", max_arg=0.2, extra_eigs=())
    return ClaimResult.at_most(mean + 4 * se, bound, details=f"mean slope {mean:.4f} (SE {se:.4f}), 12 systems")


@claim(area="online", paper="marsden2026second")
def wide_arc_has_no_decay() -> ClaimResult:
    """Arc |theta| <= 0.7 > phi* = 0.5974 (where rho/2 >= 1): no decay. The mean slope over 12 random systems is not
    below 0 by more than 4 standard errors, and not above the Bernstein bound ln(rho(e^{0.7i})/2) = 0.042 by more
    than 4 standard errors; measured = the mean slope's z-score against 0."""
    bound = float(np.log(usp.bernstein_rho(np.exp(0.7j)) / 2))
    mean, se = _decay_slopes(eigs="arc", max_arg=0.7, extra_eigs=())
    ok = -4 * se <= mean <= bound + 4 * se
    return ClaimResult(mean / se, "z >= -4, <= bound", 4.0, ok,
                       f"mean slope {mean:.4f} (SE {se:.4f}), bound {bound:.4f}, 12 systems")


@claim(area="online", paper="marsden2026second")
def complex_chebyshev_joukowski_identity() -> ClaimResult:
    """|M_12(z)| = 2^{-12} |w^12 + w^-12| on a grid of the unit disk (worst relative error)."""
    r, t = np.meshgrid(np.linspace(0.0, 1.0, 21), np.linspace(-np.pi, np.pi, 37))
    z = r * np.exp(1j * t)
    s = np.sqrt(z * z - 1)
    w = np.where(np.abs(z + s) >= np.abs(z - s), z + s, z - s)
    want = 2.0**-12 * np.abs(w**12 + w**-12)
    got = np.abs(np.asarray(usp.monic_chebyshev_eval(z, 12)))
    # float32: the recurrence in complex128 leaves 38 eps64 (8.4e-15 measured) on this grid; rounding scales with
    # the unit roundoff, so complex64 leaves ~38 eps32, with a factor 4 of margin: 152 eps32 ~ 1.8e-5
    return ClaimResult.at_most(float(np.max(np.abs(got - want) / want)), by_precision(1e-10, 152 * _EPS32))


@claim(area="online", paper="marsden2026second")
def bernstein_rho_reaches_two_at_phi_star() -> ClaimResult:
    """rho(e^{i phi*}) = 2 at phi* = 0.5974064."""
    return ClaimResult.close(float(usp.bernstein_rho(np.exp(0.5974064j))), 2.0, atol=1e-6)


def _vaw_numpy(a: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """The VAW predictions by their definition, in float64 numpy (one solve per step, no jaxlab code):
    y^_t = a_t^T A_t^{-1} b_{t-1}, A_t = lam I + sum_{s<=t} a_s a_s^T, b_{t-1} = sum_{s<t} y_s a_s."""
    a, y = np.asarray(a, dtype=np.float64), np.asarray(y, dtype=np.float64)
    A, b, out = lam * np.eye(a.shape[1]), np.zeros(a.shape[1]), np.empty(len(y))
    for t in range(len(y)):
        A += np.outer(a[t], a[t])
        out[t] = a[t] @ np.linalg.solve(A, b)
        b += y[t] * a[t]
    return out


def _arx_numpy(y: np.ndarray, u: np.ndarray | None, n: int) -> np.ndarray:
    """ARX features a_t = [y_{t-1}, ..., y_{t-n}, u_t, ..., u_{t-n+1}] (zeros before the series starts; only the y
    lags without ``u``), numpy."""
    lag = lambda x, k: np.concatenate([np.zeros(k), x[: len(x) - k]])  # noqa: E731
    cols = [lag(np.asarray(y, dtype=np.float64).reshape(-1), k) for k in range(1, n + 1)]
    if u is not None:
        cols += [lag(np.asarray(u, dtype=np.float64).reshape(-1), k) for k in range(n)]
    return np.stack(cols, axis=1)


def _random_stream():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((500, 16)) * np.linspace(0.2, 3.0, 16)
    return a, a @ rng.standard_normal(16) + 0.3 * rng.standard_normal(500)


@claim(area="online", paper="vovk2001competitive")
def vaw_sherman_morrison_equals_solve() -> ClaimResult:
    """Rank-one VAW, the per-step solve and the block (Woodbury) path all equal an independent float64 numpy loop
    of the definition y^_t = a_t^T A_t^{-1} b_{t-1}, A_t = lam I + sum_{s<=t} a_s a_s^T, b_{t-1} = sum_{s<t} y_s a_s
    (one np.linalg.solve per step), on random data (T = 500, d = 16): measured = max |y^ - y^_numpy| over the three
    methods."""
    a, y = _random_stream()
    sm = np.asarray(vaw.run(a, y, 1.0, method="sherman_morrison")[1].y_hat, dtype=np.float64)
    so = np.asarray(vaw.run(a, y, 1.0, method="solve")[1].y_hat, dtype=np.float64)
    bl = np.asarray(vaw.run(a, y, 1.0, method="block")[1].y_hat, dtype=np.float64)
    ref = _vaw_numpy(a, y, 1.0)
    # float32: the paths solve with A_t (the block path with A_s and I + G, eigenvalues >= 1), cond(A_T) = 239,
    # and |y^| <= 16.7: error <= cond eps32 |y^| ~ 4.7e-4
    err = max(float(np.max(np.abs(m - ref))) for m in (sm, so, bl))
    return ClaimResult.at_most(err, by_precision(1e-9, 239 * _EPS32 * 16.7),
                               details=f"max |SM - solve| = {float(np.max(np.abs(sm - so))):.1e}, "
                                       f"max |block - solve| = {float(np.max(np.abs(bl - so))):.1e}")


@claim(area="online", paper="cesabianchi2006prediction")
def vaw_regret_bound_holds_every_round() -> ClaimResult:
    """Regret_t <= Y_t^2 sum_{s<=t} h_s <= Y_t^2 ln det(A_t / lam) for every t: min slack (>= 0; the first
    inequality is an equality at t = 1, so the slack is 0 to rounding)."""
    a, y = _random_stream()
    info = vaw.run(a, y, 1.0)[1]
    reg = np.asarray(regret.regret_vs_best_fixed(a, y, info.y_hat, 1.0))
    lev = np.maximum.accumulate(np.abs(y)) ** 2 * np.cumsum(np.asarray(info.leverage))
    bound = np.asarray(regret.vaw_regret_bound(a, y, 1.0))
    # float32: the smallest slack is at t = 1 (an equality), where both sides are O(y_1^2) = 19.4 and each carries
    # <= 2 eps32 relative rounding: slack >= -4 eps32 * 19.4 ~ -9.3e-6
    return ClaimResult.at_least(min(np.min(lev - reg), np.min(bound - lev)), by_precision(-1e-9, -4 * _EPS32 * 19.4))


def _deterministic_lds():
    params, u = lds.deterministic_lds()
    return lds.simulate(jax.random.key(0), params, u)[0][:, 0], u


@claim(area="online", paper="marsden2026second")
def deterministic_lds_cumulative_loss() -> ClaimResult:
    """USP+VAW (n = 8, lam = 1) on the deterministic LDS, T = 2000: the cumulative loss equals that of an independent
    float64 numpy loop on the same series (ARX features and VAW by their definitions, written in the claim):
    350.6589 (reported in the details)."""
    y, u = _deterministic_lds()
    loss = float(usp.usp_vaw_run(y, u, n=8, lam=1.0)[1].loss.sum())
    y_np = np.asarray(y, dtype=np.float64)
    ref = float(np.sum((_vaw_numpy(_arx_numpy(y_np, np.asarray(u), 8), y_np, 1.0) - y_np) ** 2))
    # float32: the VAW Gram of the features has cond(A_T) = 1.68e6; a backward-stable solve moves each prediction by
    # ~sqrt(cond) eps32 relative (the error lies along A^-1/2), and the loss by twice that: 2 sqrt(cond) eps32 L ~ 0.11
    return ClaimResult.close(loss, ref, rtol=by_precision(1e-9, 0.0),
                             atol=by_precision(0.0, 2 * math.sqrt(1.68e6) * _EPS32 * ref),
                             details=f"numpy reference {ref:.4f}")


@claim(area="online", paper="marsden2026second")
def float32_auto_path_is_stable() -> ClaimResult:
    """float32 VAW with method='auto' (per-step solve) on the deterministic LDS stays within 2% of 350.66
    (float32 Sherman-Morrison reaches thousands)."""
    y, u = _deterministic_lds()
    feats = usp.arx_features(y, u, 8).astype(jnp.float32)
    loss = float(vaw.run(feats, y.astype(jnp.float32), 1.0)[1].loss.sum())
    sm = float(vaw.run(feats, y.astype(jnp.float32), 1.0, method="sherman_morrison")[1].loss.sum())
    return ClaimResult.close(loss, 350.6589, rtol=0.02, details=f"float32 Sherman-Morrison: {sm:.1f}")


_T_CHECK = np.array([1000, 2000, 4000, 8000])


@jax.jit
def _regret_experiment(key):
    k1, k2, k3 = jax.random.split(key, 3)
    params = lds.random_lds(k1, 50)
    u = jax.random.normal(k2, (8000, 1))
    y, _ = lds.simulate(k3, params, u, obs_noise=0.1)
    feats = usp.arx_features(y, u, 8)
    y_vaw = vaw.run(feats, y[:, 0], 1.0)[1].y_hat
    y_ogd = ogd.run(feats, y[:, 0], optax.sgd(1e-2))[1].y_hat
    best = regret.best_fixed_loss(feats, y[:, 0], 1.0)
    return (jnp.cumsum((y_vaw - y[:, 0]) ** 2) - best, jnp.cumsum((y_ogd - y[:, 0]) ** 2) - best)


@claim(area="online", paper="marsden2026second")
def usp_vaw_regret_is_polylogarithmic() -> ClaimResult:
    """Regret_T / ln^3 T is non-increasing over T = 1000..8000 on 3 random marginally stable LDS (d_h = 50,
    n = 8, sigma = 0.1) while Regret_T increases: worst ratio of consecutive Regret_T / ln^3 T (<= 1.02)."""
    worst, details = 0.0, []
    for seed in range(3):
        reg = np.asarray(_regret_experiment(jax.random.key(seed))[0])[_T_CHECK - 1]
        if not np.all(np.diff(reg) > 0):
            return ClaimResult(float("nan"), "<= 1.02", 1.02, False, f"regret not increasing: {reg}")
        r = reg / np.log(_T_CHECK) ** 3
        worst = max(worst, float(np.max(r[1:] / r[:-1])))
        details.append(f"{reg[0]:.2f}->{reg[-1]:.2f}")
    return ClaimResult.at_most(worst, 1.02, details="regret T=1000->8000: " + ", ".join(details))


@claim(area="online", paper="marsden2026second")
def ogd_regret_grows_polynomially() -> ClaimResult:
    """OGD (eta = 1e-2) on the same USP features: smallest ratio (OGD regret growth 1000 -> 8000) / (VAW's);
    polynomial vs logarithmic growth makes it >= 1.5 (a diverged run counts as infinite)."""
    worst = math.inf
    for seed in range(3):
        rv, ro = (np.asarray(v)[_T_CHECK - 1] for v in _regret_experiment(jax.random.key(seed)))
        growth = ro[-1] / ro[0] if np.isfinite(ro[-1]) else math.inf
        worst = min(worst, growth / (rv[-1] / rv[0]))
    return ClaimResult.at_least(worst, 1.5)


@claim(area="online", paper="marsden2025usp")
def etth1_vaw_beats_ogd() -> ClaimResult:
    """ETTh1 OT (first 5000 rows, z-scored, AR features n = 5, lam = 1): VAW's cumulative loss is below the best
    OGD's over eta in {1e-3, 1e-2, 1e-1}, and equals an independent float64 numpy loop of VAW on the same features
    (1e-9 relative; float32: 1e-4). The naive last-value forecast is reported too, and it wins on this
    noise-dominated series (56.9 against VAW's 59.5): VAW beats OGD, not the naive forecast."""
    y = jnp.asarray(load_etth1()[:, 0])
    feats = usp.arx_features(y, None, 5)
    loss = float(vaw.run(feats, y, 1.0)[1].loss.sum())
    y_np = np.asarray(y, dtype=np.float64)
    ref = float(np.sum((_vaw_numpy(_arx_numpy(y_np, None, 5), y_np, 1.0) - y_np) ** 2))
    best_ogd = min(float(jnp.nan_to_num(ogd.run(feats, y, optax.sgd(eta))[1].loss.sum(), nan=jnp.inf))
                   for eta in (1e-3, 1e-2, 1e-1))
    naive = float(jnp.sum(jnp.diff(y) ** 2) + y[0] ** 2)
    verdict = "the naive forecast beats VAW" if naive < loss else "VAW beats the naive forecast"
    details = f"numpy VAW {ref:.4f}, best OGD {best_ogd:.1f}, naive {naive:.1f}: {verdict}"
    res = ClaimResult.close(loss, ref, rtol=by_precision(1e-9, 1e-4), details=details)
    return res if loss < best_ogd else ClaimResult(loss, res.expected, res.tolerance, False, res.details)


_T_NOISE, _SEEDS_NOISE = 1000, 8


def vaw_ftl_regrets(sigma: float, lam: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Regret_T (definition (i), T = 1000) of VAW and of online ridge (FTL) on the USP features (n = 8) of
    ``_SEEDS_NOISE`` random marginally stable LDS (d_h = 50) observed with noise ``sigma``: two ``(seeds,)`` arrays."""

    @jax.jit
    @jax.vmap
    def one(key):
        k1, k2, k3 = jax.random.split(key, 3)
        u = jax.random.normal(k2, (_T_NOISE, 1))
        y, _ = lds.simulate(k3, lds.random_lds(k1, 50), u, obs_noise=sigma)
        feats, y = usp.arx_features(y, u, 8), y[:, 0]
        best = regret.best_fixed_loss(feats, y, lam)[-1]
        return (vaw.run(feats, y, lam)[1].loss.sum() - best, vaw.ridge_ftl_run(feats, y, lam)[1].loss.sum() - best)

    r_vaw, r_ftl = one(jnp.stack([jax.random.key(s) for s in range(_SEEDS_NOISE)]))
    return np.asarray(r_vaw, dtype=np.float64), np.asarray(r_ftl, dtype=np.float64)


@claim(area="online", paper="vovk2001competitive", quick=False)
def vaw_beats_ridge_ftl_under_heavy_noise() -> ClaimResult:
    """VAW's regret is below online ridge's (follow the leader, FTL) when the noise is as large as the signal.

    Why (Zhdanov and Vovk, arXiv:0910.4683; Cesa-Bianchi and Lugosi 2006, section 11.8): with the leverage
    h_t = a_t^T A_t^{-1} a_t, VAW's prediction is FTL's shrunk, y^VAW_t = (1 - h_t) y^FTL_t, and FTL obeys the
    identity sum_t (1 - h_t)(y^FTL_t - y_t)^2 = L*_T, so Regret^FTL_T = sum_t h_t (y^FTL_t - y_t)^2 exactly: FTL
    pays its own loss at every high-leverage round, a loss it does not bound (its prediction is unbounded), while
    VAW pays at most Y^2 h_t (Regret^VAW_T <= Y^2 sum_t h_t <= Y^2 ln det(A_T / lam)). In a well-specified model
    with noise sigma, FTL's excess at a high-leverage round is ~ sigma^2 h_t / (1 - h_t) and VAW's
    ~ sigma^2 h_t (1 - h_t) + h_t^2 (theta^T a_t)^2: the shrinkage wins when the noise dominates and loses when the
    signal dominates. So the worst-case advantage of VAW shows in heavy noise, not on near-noiseless streams.

    Experiment (ours): 8 random marginally stable LDS (d_h = 50, the systems of
    ``usp_vaw_regret_is_polylogarithmic``), u_t ~ N(0, 1), observation noise sigma = 1, USP features n = 8,
    lam = 1, T = 1000, regret against the best fixed ridge predictor. Check: the mean of Regret^FTL_T -
    Regret^VAW_T over the 8 systems exceeds 4 standard errors (measured: 53.8 +- 8.1, VAW 70.9, FTL 124.7; with
    lam = 1e-2 the gap is 420 +- 126 and with lam = 1e-4 2140 +- 1300: FTL's regret grows as lam shrinks, VAW's
    stays at 71.6). Reported in the details, not checked: at sigma = 0.1 (the polylog claims' setting) FTL is
    the lower of the two (gap -2.3 +- 1.0 at lam = 1; 1.77 against 4.10 in the notebook), because there the
    shrinkage's bias h_t^2 (theta^T a_t)^2 exceeds the variance it saves."""
    r_vaw, r_ftl = vaw_ftl_regrets(1.0)
    mean, se = mean_and_se(r_ftl - r_vaw)
    low_vaw, low_ftl = vaw_ftl_regrets(0.1)
    low, low_se = mean_and_se(low_ftl - low_vaw)
    return ClaimResult.at_least(mean - 4 * se, 0.0,
                                details=f"sigma = 1: FTL - VAW = {mean:.1f} +- {se:.1f} (VAW {r_vaw.mean():.1f}, FTL "
                                        f"{r_ftl.mean():.1f}); sigma = 0.1: FTL - VAW = {low:.2f} +- {low_se:.2f}")
