"""The four laws against numpy transcriptions of their formulas, L3 -> L1 reduction, compute-optimal
allocation, parameter conversions and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.scaling import laws as L

N = np.array([1e8, 7e8, 3e9, 7e10])
D = np.array([2e9, 3e10, 5e10, 1.4e12])


def test_chinchilla_matches_formula_and_published_values():
    A, B, E, a, b = 406.4, 410.7, 1.69, 0.34, 0.28
    got = np.asarray(L.loss("chinchilla", L.HOFFMANN_2022, N, D))
    np.testing.assert_allclose(got, E + A * N**-a + B * D**-b, rtol=1e-13)
    # the Besiroglu refit at Chinchilla's own (N, D) = (70B, 1.4T): 1.9734 +- 0.003
    assert float(L.loss("chinchilla", L.BESIROGLU_2024, 7e10, 1.4e12)) == pytest.approx(1.9734, abs=3e-3)
    A2, B2, E2 = (float(v) for v in L.HOFFMANN_2022_UNROUNDED.to_natural()[:3])
    assert (A2, B2, E2) == pytest.approx((406.4, 410.7, 1.69), rel=3e-3)


def test_kaplan_matches_formula():
    p = L.KAPLAN_2020
    Nc, Dc, aN, aD = np.exp(float(p.log_Nc)), np.exp(float(p.log_Dc)), 0.076, 0.103
    want = ((Nc / N) ** (aN / aD) + Dc / D) ** aD
    np.testing.assert_allclose(np.asarray(L.loss("kaplan", p, N, D)), want, rtol=1e-12)


def _muennighoff_np(p, N, D, U):
    a, b, e, al, be, rd, rn = (float(v) for v in p)
    A, B, E = np.exp(a), np.exp(b), np.exp(e)
    G = (al * A / (be * B)) ** (1 / (al + be))
    RD = np.maximum(D / U - 1, 0)
    Dp = U + U * rd * (1 - np.exp(-RD / rd))
    UN = np.minimum(N, G * (U * G) ** (be / al))
    RN = np.maximum(N / UN - 1, 0)
    Np = UN + UN * rn * (1 - np.exp(-RN / rn))
    return E + A / Np**al + B / Dp**be


def test_muennighoff_matches_formula_and_reduces_to_chinchilla():
    p = L.MUENNIGHOFF_2023
    U = D / np.array([1.0, 4.0, 20.0, 1.0])
    Nbig = N * np.array([1.0, 50.0, 1.0, 30.0])  # some runs beyond N_opt(U_D): excess parameters decay too
    np.testing.assert_allclose(np.asarray(L.loss("muennighoff", p, Nbig, D, U)),
                               _muennighoff_np(p, Nbig, D, U), rtol=1e-12)
    # single epoch (U = D) and N <= N_opt(D) (here N_opt(D) ~ 0.05 D): exactly L1 with the same parameters
    l1 = L.ChinchillaParams(*p[:5])
    D40 = 40 * N
    np.testing.assert_allclose(np.asarray(L.loss("muennighoff", p, N, D40, D40)),
                               np.asarray(L.loss("chinchilla", l1, N, D40)), rtol=1e-14)
    assert not np.allclose(np.asarray(L.loss("muennighoff", p, 2 * D40, D40, D40)),
                           np.asarray(L.loss("chinchilla", l1, 2 * D40, D40)), rtol=1e-6)
    # repeating data is worth less than fresh data
    assert np.all(np.asarray(L.loss("muennighoff", p, N, D, D / 8)) > np.asarray(L.loss("chinchilla", l1, N, D)))


def test_farseer_matches_formula():
    p = L.FarseerParams(*(jnp.asarray(v) for v in (-0.05, -1.2, 0.1, 1.5, 3.0, -0.02, -0.3, 0.6, 0.05)))
    a1, b1, al, a2, b2, be, a3, b3, ga = (float(v) for v in p)
    want = np.exp(a3 * N**ga + b3) + np.exp(a2 * N**be + b2) * D ** (-np.exp(a1 * N**al + b1))
    np.testing.assert_allclose(np.asarray(L.loss("farseer", p, N, D)), want, rtol=1e-12)


def test_compute_optimal_allocation_minimizes_loss_on_the_isoflop_curve():
    p = L.HOFFMANN_2022
    C = 5.76e23
    n_opt, d_opt = (float(v) for v in L.chinchilla_compute_optimal(p, C))
    assert 6 * n_opt * d_opt == pytest.approx(C, rel=1e-12)
    grid = n_opt * np.exp(np.linspace(-1, 1, 2001))
    losses = np.asarray(L.loss("chinchilla", p, grid, C / (6 * grid)))
    assert grid[np.argmin(losses)] == pytest.approx(n_opt, rel=2e-3)


def test_parameter_conversion_roundtrip_and_vmap():
    p = L.ChinchillaParams.from_natural(482.01, 2085.43, 1.8172, 0.3478, 0.3658)
    np.testing.assert_allclose([float(v) for v in p.to_natural()], [482.01, 2085.43, 1.8172, 0.3478, 0.3658],
                               rtol=1e-14)
    batch = jax.tree.map(lambda a, b: jnp.stack([a, b]), L.HOFFMANN_2022, L.BESIROGLU_2024)
    X = L.covariates(N, D)
    out = jax.vmap(L.chinchilla_log_loss, in_axes=(0, None))(batch, X)
    np.testing.assert_allclose(out[1], L.chinchilla_log_loss(L.BESIROGLU_2024, X), rtol=1e-14)
    with pytest.warns(UserWarning, match="alpha <= 0"):
        L.ChinchillaParams(0.0, 0.0, 0.0, -0.1, 0.2).to_natural()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: L.covariates(-N, D), "N must lie in"),
        (lambda: L.covariates(N, np.where(D > 1e11, np.nan, D)), "D must be finite"),
        (lambda: L.covariates(N, D[:3]), "D must have shape"),
        (lambda: L.covariates(N, D, 2 * D), r"U \(unique tokens\) must be <= D"),
        (lambda: L.covariates(np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0])), "N must have a float dtype"),
        (lambda: L.resolve_law("gpt"), "law must be one of"),
        (lambda: L.muennighoff_log_loss(L.MUENNIGHOFF_2023, L.covariates(N, D)), "X.log_U"),
        (lambda: L.ChinchillaParams.from_natural(406.4, 410.7, 1.69, 0.0, 0.28), "alpha must lie in"),
        (lambda: L.ChinchillaParams.from_natural(-1.0, 410.7, 1.69, 0.3, 0.28), "A must lie in"),
        (lambda: L.chinchilla_compute_optimal(L.HOFFMANN_2022, -1.0), "C must lie in"),
        (lambda: L.chinchilla_log_loss(L.HOFFMANN_2022, (np.log(N), np.log(D))), "Covariates"),
    ],
)
def test_bad_inputs_raise(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
