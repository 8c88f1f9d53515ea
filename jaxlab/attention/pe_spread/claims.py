"""Claims of the positional-spread area (``pe_spread``; "Positional spread of additive positional encodings", 2026,
title, authors and arXiv id not retrieved): spread identities, closed forms, the separation bound, the invariance
lemma and the quadratic growth of the equivariance-breaking deviation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.attention.pe_spread.attention import MeanPoolAttention, attention_mean_pool, invariant_deviation
from jaxlab.attention.pe_spread.papers import ALIBI, ROPE, SPREAD, VASWANI
from jaxlab.attention.pe_spread.pe import (
    alibi_bias,
    alibi_slopes,
    displacement_spread,
    min_separation,
    rope_displacement_spread,
    scale_spread,
    sinusoidal_pe,
    spread,
    spread_closed_form_sinusoidal,
    spread_lower_bound,
)
from jaxlab.core import ClaimResult, claim
from jaxlab.core.verification import by_precision
from jaxlab.kernels import sqdist

_EPS32 = 2.0**-23  # float32's unit roundoff: every float32 tolerance below is a multiple of it

TITLE = "Positional spread of additive PEs: identities, closed forms, separation bound, attention scaling"
MODULES = ("jaxlab.attention.pe_spread.pe", "jaxlab.attention.pe_spread.attention",
           "jaxlab.attention.pe_spread.training")


def _E(seed: int, n: int = 23, d: int = 7):
    return 1.7 * jax.random.normal(jax.random.key(seed), (n, d), dtype=jnp.result_type(float)) + 0.4


@claim(area="pe_spread", paper=SPREAD)
def p1_spread_forms_and_invariances_agree() -> ClaimResult:
    """P1: ‖HE‖_F² = Σ‖e_i - ē‖² = (1/2n)Σ_{ij}‖e_i - e_j‖², and S is invariant to shifts and orthogonal maps
    and scales as α² (max relative error over the six comparisons)."""
    E = _E(0)
    n = E.shape[0]
    H = jnp.eye(n) - 1.0 / n
    s = float(spread(E))
    Q, _ = jnp.linalg.qr(_E(1, 7, 7))
    others = [float(jnp.sum((H @ E) ** 2)), float(jnp.sum(sqdist(E)) / (2 * n)),
              float(spread(E + _E(2, 1, 7))), float(spread(E @ Q)), float(spread(-3.0 * E)) / 9.0]
    # float32: each form is a sum of n d = 161 non-negative terms (XLA reduces in a tree: ⌈log2 161⌉ = 8 levels) of
    # ≤ 3 roundings each (mean, difference, square): ≤ 11 eps32 per form, ≤ 22 eps32 ≈ 2.6e-6 between two forms
    return ClaimResult.at_most(max(abs(o - s) / s for o in others), by_precision(1e-10, 22 * _EPS32))


@claim(area="pe_spread", paper=VASWANI)
def p2_sinusoidal_closed_form() -> ClaimResult:
    """P2: S of the sinusoidal PE (n = 64, d = 16, base 1e4) from the table equals the Fejér closed form
    Σ_k [n - sin²(nω_k/2)/(n sin²(ω_k/2))] = 213.16389761."""
    table = float(spread(sinusoidal_pe(64, 16, 1e4, dtype=jnp.result_type(float))))
    closed = float(spread_closed_form_sinusoidal(64, 16, 1e4))
    # float32: the closed form adds d/2 = 8 terms n - F_n(ω_k)/n with F_n/n ≤ n = 64 after ≤ 5 roundings (ω_k, two
    # sines, square, quotient): ≤ 8·5·64 eps32 ≈ 3.1e-4 of S = 213, 1.4e-6 relative; the table's spread is a tree sum of
    # n d = 1024 squares (10 levels + 3 roundings per entry): ≤ 13 eps32 ≈ 1.5e-6 relative. Both within 16 eps32
    rtol = by_precision(1e-9, 16 * _EPS32)
    if abs(closed - 213.16389761) > rtol * 213.16389761:
        return ClaimResult(closed, 213.16389761, rtol * 213.16389761, False,
                           "the closed form is off the reference value")
    return ClaimResult.close(table, closed, rtol=rtol, details="spread of the table vs closed form")


@claim(area="pe_spread", paper=SPREAD)
def p3_separation_lower_bound_holds() -> ClaimResult:
    """P3: S(E) / ((n-1)δ²/2) ≥ 1 for 2040 random tables (n in {2, 5, 17, 40}, d in {1, 3, 20, 1}); the
    minimum ratio over all of them (n = 2 attains 1)."""

    @jax.jit
    def ratios(Es):
        delta = jax.vmap(min_separation)(Es)
        return jax.vmap(spread)(Es) / jax.vmap(lambda dl: spread_lower_bound(Es.shape[1], dl))(delta)

    mins = [float(jnp.min(ratios(jax.random.normal(jax.random.key(n), (510, n, d), dtype=jnp.result_type(float)))))
            for n, d in ((2, 1), (5, 3), (17, 20), (40, 1))]
    # float32: at n = 2, S and (n-1)δ²/2 are both the squared difference of the two rows, each computed with <= 4
    # roundings, and the quotient rounds once: |ratio - 1| <= 9 eps32 ~ 1.1e-6
    return ClaimResult.close(min(mins), 1.0, atol=by_precision(1e-9, 9 * _EPS32),
                             details="min ratio, attained at n = 2")


@claim(area="pe_spread", paper=SPREAD)
def p3_simplex_attains_the_bound() -> ClaimResult:
    """P3 (tightness): the regular simplex E = (δ/√2) I_n (n = 24, δ = 0.8) has S = (n-1)δ²/2 exactly."""
    E = 0.8 / np.sqrt(2) * jnp.eye(24, dtype=jnp.result_type(float))
    # float32: S is a tree sum of 576 squares (10 levels + 3 roundings per entry: 13 eps32), δ² a sum of 24 squares
    # (5 levels + 2), then (n-1)δ²/2 and the quotient (2): ≤ 22 eps32 ≈ 2.6e-6
    atol = by_precision(1e-12, 22 * _EPS32)
    return ClaimResult.close(float(spread(E)) / float(spread_lower_bound(24, min_separation(E))), 1.0, atol=atol)


_M = {}


def _model():
    dtype = jnp.result_type(float)  # the run's precision (one model per dtype)
    if dtype not in _M:
        _M[dtype] = MeanPoolAttention(8, 3, num_heads=2, key=jax.random.key(0), dtype=dtype)
    return _M[dtype]


def _pool(p, x, E):
    return attention_mean_pool(p, x, E)


@claim(area="pe_spread", paper=SPREAD)
def p4_constant_pe_keeps_mean_pool_invariant() -> ClaimResult:
    """P4: with E = 1bᵀ, g(ΠX; E) = g(X; E) for random permutations Π (max abs difference)."""
    n = 12
    x = jax.random.normal(jax.random.key(6), (n, 8), dtype=jnp.result_type(float))
    E = jnp.broadcast_to(_E(7, 1, 8), (n, 8))
    perms = jax.vmap(lambda k: jax.random.permutation(k, n))(jax.random.split(jax.random.key(8), 8))
    out = jax.jit(attention_mean_pool)(_model(), jnp.concatenate([x[None], x[perms]]), E)
    # float32: g is a convex combination of the value rows v_j = (x_j + e_j) W_V, so a reordering of the n = 12 tokens
    # moves it by ≤ (⌈log2 12⌉ = 4 levels of the softmax sum + 4 of the pooled sum + ≈ 4 roundings of exp and the
    # normalisation) = 12 eps32 times max |v|
    vmax = float(jnp.max(jnp.abs((x + E) @ _model().wv)))
    return ClaimResult.at_most(float(jnp.max(jnp.abs(out[1:] - out[0]))), by_precision(1e-12, 12 * _EPS32 * vmax))


def _p5_data():
    """The 200 sequences X (n = 12, d = 8) and the table E_0 of the P5 claims, in the run's precision."""
    n = 12
    xs = jax.random.normal(jax.random.key(11), (200, n, 8), dtype=jnp.result_type(float))
    E0 = jax.random.normal(jax.random.key(12), (n, 8), dtype=jnp.result_type(float))
    return xs, E0


def _deviations(ts):
    xs, E0 = _p5_data()
    model = _model()  # built outside the traced function: the cached model must hold arrays, not tracers
    dev = jax.jit(lambda t: invariant_deviation(_pool, model, xs, scale_spread(E0, t)))
    return np.array([float(dev(t)) for t in ts]), float(spread(E0))


def _deviation_series():
    """Taylor coefficients (A, B, C, C_3) of D(1ēᵀ + tẼ)/t² = A + B t + C t² + C_3 t³ + O(t⁴) at t = 0.

    With g_k = ∂_t^k g(X; 1ēᵀ + tẼ) at t = 0 (nested forward-mode derivatives of the model itself, not of the
    deviation estimator), g(X; E_t) - g(X; 1ēᵀ) = Σ_k t^k g_k / k!, so, the means over the sample of X:
    A = E‖g_1‖², B = E⟨g_1, g_2⟩, C = E[‖g_2‖²/4 + ⟨g_1, g_3⟩/3], C_3 = E[⟨g_2, g_3⟩/6 + ⟨g_1, g_4⟩/12].
    """
    xs, E0 = _p5_data()
    model = _model()
    mean = jnp.mean(E0, axis=0, keepdims=True)

    def g(t):  # E_t = 1ēᵀ + tẼ written out, so that a wrong scale_spread is caught by the comparison
        return jax.vmap(lambda x: _pool(model, x, mean + t * (E0 - mean)))(xs)

    def derivative(h):
        return lambda t: jax.jvp(h, (t,), (jnp.ones_like(t),))[1]

    g1 = derivative(g)
    g2 = derivative(g1)
    g3 = derivative(g2)
    g4 = derivative(g3)
    d1, d2, d3, d4 = jax.jit(lambda t: (g1(t), g2(t), g3(t), g4(t)))(jnp.zeros((), E0.dtype))

    def dot(a, b):
        return float(jnp.mean(jnp.sum(a * b, axis=-1)))

    return (dot(d1, d1), dot(d1, d2), dot(d2, d2) / 4 + dot(d1, d3) / 3, dot(d2, d3) / 6 + dot(d1, d4) / 12)


@claim(area="pe_spread", paper=SPREAD)
def p5_deviation_grows_with_slope_two() -> ClaimResult:
    """P5: D(1ēᵀ + tẼ) = E_X‖g(X; E_t) - g(X; 1ēᵀ)‖² has log-log slope 2 in t ∈ [1e-3, 1e-1]."""
    ts = np.array([1e-3, 3e-3, 1e-2, 3e-2, 1e-1])
    D, _ = _deviations(ts)
    return ClaimResult.close(np.polyfit(np.log(ts), np.log(D), 1)[0], 2.0, atol=0.05)


@claim(area="pe_spread", paper=SPREAD,
       needs_float64="the check resolves D(t)/t² to its t² Taylor term, 1e-7 to 1e-5 of D/t²; in float32 the "
                     "difference g(X; E_t) - g(X; 1ēᵀ) of two O(1) outputs carries ~1e-7 absolute rounding, 1e-4 of "
                     "it at t = 1e-3")
def p5_deviation_ratio_is_stable() -> ClaimResult:
    """P5: D(1ēᵀ + tẼ)/(t²‖Ẽ‖_F²) tends to a finite positive constant A/‖Ẽ‖_F² as t → 0 (the upper bound
    D ≤ C‖Ẽ‖_F² and the matching lower bound of the paper's abstract), and at small t it follows the Taylor
    expansion of the model, derived here (the abstract gives no constant): D(t)/t² = A + B t + C t² + O(t³) with
    A = E‖∂_t g‖² > 0, B = E⟨∂_t g, ∂_t² g⟩ (:func:`_deviation_series`). So the ratio changes between t_1 and t_2
    by (B/A)(t_2 - t_1) + O(t²), about -0.1 % here. Checked at t = 1e-3 and 1e-2 (the model and sample of
    ``p5_deviation_grows_with_slope_two``): the measured |D(t)/t² - (A + B t)| is at most twice the next-order
    term, 2|C| t², which bounds C t² plus the tail as long as |C_3| t ≤ |C| / 2 (checked: the series' coefficients
    grow by |C_3/C| ≈ 6 per order, so |C_3| t / |C| ≈ 0.06 at t = 1e-2). Measured: the largest ratio of that
    residual to its bound (≈ 0.5: the residual is essentially C t²); a 3 % error in D is ~10⁵ bounds away."""
    ts = np.array([1e-3, 1e-2])
    D, _ = _deviations(ts)
    A, B, C, C3 = _deviation_series()
    if not A > 0:
        return ClaimResult(A, "> 0", 0.0, False, "zero first-order deviation: no lower bound")
    if abs(C3) * ts[-1] > abs(C) / 2:
        return ClaimResult(abs(C3) * ts[-1] / abs(C), "<= 0.5", 0.5, False,
                           "t beyond the range where the t² term bounds the Taylor tail")
    # float64 rounding: g(E_t) - g(1ēᵀ) carries ≲ 1e-14 absolute error per entry (|g| ≤ 3), so D/t² is off by
    # ≲ 2 √(8 A) 1e-14 / t ≈ 4e-11 at t = 1e-3, 0.05 % of the bound 2|C| t² ≈ 8e-8: no allowance
    residual = np.abs(D / ts**2 - (A + B * ts))
    return ClaimResult.at_most(float(np.max(residual / (2 * abs(C) * ts**2))), 1.0,
                               details=f"D/t² = {D[0] / ts[0] ** 2:.9f}, {D[1] / ts[1] ** 2:.9f}; A + B t = "
                                       f"{A + B * ts[0]:.9f}, {A + B * ts[1]:.9f} (A = {A:.6g}, B = {B:.4g}, "
                                       f"C = {C:.4g}, C_3 = {C3:.4g}); ratio change "
                                       f"{D[1] * ts[0] ** 2 / (D[0] * ts[1] ** 2) - 1:.4e} vs (B/A)(t_2 - t_1) = "
                                       f"{B / A * (ts[1] - ts[0]):.4e}")


@claim(area="pe_spread", paper=SPREAD)
def p6_spread_knob_is_quadratic() -> ClaimResult:
    """P6: S(1ēᵀ + αẼ) = α² S(E) (max relative error over α in {0.1, 0.5, 2, 7})."""
    E = _E(3)
    s = float(spread(E))
    # float32: two spreads of n d = 161 terms (≤ 11 eps32 each, as in P1), the knob 1ēᵀ + α(E - 1ēᵀ) (3 roundings)
    # and α² (1): ≤ 26 eps32 ≈ 3.1e-6
    return ClaimResult.at_most(max(abs(float(spread(scale_spread(E, a))) / (a**2 * s) - 1) for a in (0.1, 0.5, 2, 7)),
                               by_precision(1e-12, 26 * _EPS32))


@claim(area="pe_spread", paper=ALIBI)
def alibi_displacement_spread_closed_form() -> ClaimResult:
    """[recommended diagnostic] ALiBi: (1/n²)Σ(B_ij - B̄)² = m² Var|i - j| with Var|i-j| =
    (n²-1)/6 - ((n²-1)/(3n))² (n = 50, first of 4 heads)."""
    n = 50
    m = float(alibi_slopes(4, dtype=jnp.result_type(float))[0])
    var = (n**2 - 1) / 6 - ((n**2 - 1) / (3 * n)) ** 2
    # float32: B = -m|i - j| is exact (m = 2^-2), B̄ is rounded once; the n² = 2500 terms (B - B̄)² carry 2 roundings
    # each and are tree-summed (⌈log2 2500⌉ = 12 levels), then divided by n²: ≤ 16 eps32 ≈ 1.9e-6
    return ClaimResult.close(float(displacement_spread(alibi_bias(n, 4, dtype=jnp.result_type(float)))[0]), m**2 * var,
                             rtol=by_precision(1e-12, 16 * _EPS32))


@claim(area="pe_spread", paper=ROPE)
def rope_displacement_spread_closed_form() -> ClaimResult:
    """[recommended diagnostic] RoPE: Σ_k [1 - |mean_{ij} e^{iθ_k(i-j)}|²] from the Fejér closed form equals the
    direct average over the n x n displacement grid (n = 40, d = 16, base 1e4)."""
    n, d = 40, 16
    theta = 1e4 ** (-2 * np.arange(d // 2) / d)
    r = np.arange(n)[:, None] - np.arange(n)[None, :]
    direct = sum(1 - abs(np.mean(np.exp(1j * t * r))) ** 2 for t in theta)
    # float32: each of the d/2 = 8 terms 1 - (F_n/n²)² has F_n/n² ≤ 1 after ≤ 4 roundings, doubled by the square:
    # ≤ 8 eps32 absolute per term, ≤ 64 eps32 ≈ 7.6e-6 in all, 2.4e-6 of the sum 3.22 (20 eps32 relative)
    return ClaimResult.close(float(rope_displacement_spread(n, d, 1e4)), direct, rtol=by_precision(1e-10, 20 * _EPS32))
