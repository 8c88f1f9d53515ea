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
from jaxlab.kernels import sqdist

TITLE = "Positional spread of additive PEs: identities, closed forms, separation bound, attention scaling"
MODULES = ("jaxlab.attention.pe_spread.pe", "jaxlab.attention.pe_spread.attention",
           "jaxlab.attention.pe_spread.training")


def _E(seed: int, n: int = 23, d: int = 7):
    return 1.7 * jax.random.normal(jax.random.key(seed), (n, d), dtype=jnp.float64) + 0.4


@claim(area="pe_spread", paper=SPREAD)
def p1_spread_forms_and_invariances_agree() -> ClaimResult:
    """P1: ‖HE‖_F² = Σ‖e_i - ē‖² = (1/2n)Σ_{ij}‖e_i - e_j‖², and S is invariant to shifts and orthogonal maps
    and scales as α² (max relative error over the six comparisons, float64)."""
    E = _E(0)
    n = E.shape[0]
    H = jnp.eye(n) - 1.0 / n
    s = float(spread(E))
    Q, _ = jnp.linalg.qr(_E(1, 7, 7))
    others = [float(jnp.sum((H @ E) ** 2)), float(jnp.sum(sqdist(E)) / (2 * n)),
              float(spread(E + _E(2, 1, 7))), float(spread(E @ Q)), float(spread(-3.0 * E)) / 9.0]
    return ClaimResult.at_most(max(abs(o - s) / s for o in others), 1e-10)


@claim(area="pe_spread", paper=VASWANI)
def p2_sinusoidal_closed_form() -> ClaimResult:
    """P2: S of the sinusoidal PE (n = 64, d = 16, base 1e4) from the table equals the Fejér closed form
    Σ_k [n - sin²(nω_k/2)/(n sin²(ω_k/2))] = 213.16389761."""
    table = float(spread(sinusoidal_pe(64, 16, 1e4, dtype=jnp.float64)))
    closed = float(spread_closed_form_sinusoidal(64, 16, 1e4))
    if abs(closed - 213.16389761) > 1e-9 * 213.16389761:
        return ClaimResult(closed, 213.16389761, 2e-7, False, "the closed form is off the reference value")
    return ClaimResult.close(table, closed, rtol=1e-9, details="spread of the table vs closed form")


@claim(area="pe_spread", paper=SPREAD, quick=False)
def p3_separation_lower_bound_holds() -> ClaimResult:
    """P3: S(E) / ((n-1)δ²/2) ≥ 1 for 2040 random tables (n in {2, 5, 17, 40}, d in {1, 3, 20, 1}); the
    minimum ratio over all of them (n = 2 attains 1)."""

    @jax.jit
    def ratios(Es):
        delta = jax.vmap(min_separation)(Es)
        return jax.vmap(spread)(Es) / jax.vmap(lambda dl: spread_lower_bound(Es.shape[1], dl))(delta)

    mins = [float(jnp.min(ratios(jax.random.normal(jax.random.key(n), (510, n, d), dtype=jnp.float64))))
            for n, d in ((2, 1), (5, 3), (17, 20), (40, 1))]
    return ClaimResult.close(min(mins), 1.0, atol=1e-9, details="min ratio, attained at n = 2")


@claim(area="pe_spread", paper=SPREAD)
def p3_simplex_attains_the_bound() -> ClaimResult:
    """P3 (tightness): the regular simplex E = (δ/√2) I_n (n = 24, δ = 0.8) has S = (n-1)δ²/2 exactly."""
    E = 0.8 / np.sqrt(2) * jnp.eye(24, dtype=jnp.float64)
    return ClaimResult.close(float(spread(E)) / float(spread_lower_bound(24, min_separation(E))), 1.0, atol=1e-12)


_M = None


def _model():
    global _M
    if _M is None:
        _M = MeanPoolAttention(8, 3, num_heads=2, key=jax.random.key(0), dtype=jnp.float64)
    return _M


def _pool(p, x, E):
    return attention_mean_pool(p, x, E)


@claim(area="pe_spread", paper=SPREAD)
def p4_constant_pe_keeps_mean_pool_invariant() -> ClaimResult:
    """P4: with E = 1bᵀ, g(ΠX; E) = g(X; E) for random permutations Π (max abs difference, float64)."""
    n = 12
    x = jax.random.normal(jax.random.key(6), (n, 8), dtype=jnp.float64)
    E = jnp.broadcast_to(_E(7, 1, 8), (n, 8))
    perms = jax.vmap(lambda k: jax.random.permutation(k, n))(jax.random.split(jax.random.key(8), 8))
    out = jax.jit(attention_mean_pool)(_model(), jnp.concatenate([x[None], x[perms]]), E)
    return ClaimResult.at_most(float(jnp.max(jnp.abs(out[1:] - out[0]))), 1e-12)


def _deviations(ts):
    n = 12
    xs = jax.random.normal(jax.random.key(11), (200, n, 8), dtype=jnp.float64)
    E0 = jax.random.normal(jax.random.key(12), (n, 8), dtype=jnp.float64)
    dev = jax.jit(lambda t: invariant_deviation(_pool, _model(), xs, scale_spread(E0, t)))
    return np.array([float(dev(t)) for t in ts]), float(spread(E0))


@claim(area="pe_spread", paper=SPREAD)
def p5_deviation_grows_with_slope_two() -> ClaimResult:
    """P5: D(1ēᵀ + tẼ) = E_X‖g(X; E_t) - g(X; 1ēᵀ)‖² has log-log slope 2 in t ∈ [1e-3, 1e-1]."""
    ts = np.array([1e-3, 3e-3, 1e-2, 3e-2, 1e-1])
    D, _ = _deviations(ts)
    return ClaimResult.close(np.polyfit(np.log(ts), np.log(D), 1)[0], 2.0, atol=0.05)


@claim(area="pe_spread", paper=SPREAD)
def p5_deviation_ratio_is_stable() -> ClaimResult:
    """P5: D/(t²‖Ẽ‖²) changes by less than 5% between t = 1e-3 and t = 1e-2 (a finite positive constant:
    the upper and the matching lower bound scale like the spread)."""
    ts = np.array([1e-3, 1e-2])
    D, S = _deviations(ts)
    r = D / (ts**2 * S)
    if not r[0] > 0:
        return ClaimResult(float(r[0]), "> 0", 0.0, False, "zero deviation: no lower bound")
    return ClaimResult.at_most(abs(r[1] / r[0] - 1.0), 0.05, details=f"D/(t² S) = {r[0]:.4g}, {r[1]:.4g}")


@claim(area="pe_spread", paper=SPREAD)
def p6_spread_knob_is_quadratic() -> ClaimResult:
    """P6: S(1ēᵀ + αẼ) = α² S(E) (max relative error over α in {0.1, 0.5, 2, 7})."""
    E = _E(3)
    s = float(spread(E))
    return ClaimResult.at_most(max(abs(float(spread(scale_spread(E, a))) / (a**2 * s) - 1) for a in (0.1, 0.5, 2, 7)),
                               1e-12)


@claim(area="pe_spread", paper=ALIBI)
def alibi_displacement_spread_closed_form() -> ClaimResult:
    """[recommended diagnostic] ALiBi: (1/n²)Σ(B_ij - B̄)² = m² Var|i - j| with Var|i-j| =
    (n²-1)/6 - ((n²-1)/(3n))² (n = 50, first of 4 heads)."""
    n = 50
    m = float(alibi_slopes(4, dtype=jnp.float64)[0])
    var = (n**2 - 1) / 6 - ((n**2 - 1) / (3 * n)) ** 2
    return ClaimResult.close(float(displacement_spread(alibi_bias(n, 4, dtype=jnp.float64))[0]), m**2 * var,
                             rtol=1e-12)


@claim(area="pe_spread", paper=ROPE)
def rope_displacement_spread_closed_form() -> ClaimResult:
    """[recommended diagnostic] RoPE: Σ_k [1 - |mean_{ij} e^{iθ_k(i-j)}|²] from the Fejér closed form equals the
    direct average over the n x n displacement grid (n = 40, d = 16, base 1e4)."""
    n, d = 40, 16
    theta = 1e4 ** (-2 * np.arange(d // 2) / d)
    r = np.arange(n)[:, None] - np.arange(n)[None, :]
    direct = sum(1 - abs(np.mean(np.exp(1j * t * r))) ** 2 for t in theta)
    return ClaimResult.close(float(rope_displacement_spread(n, d, 1e4)), direct, rtol=1e-10)
