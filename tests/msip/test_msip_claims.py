"""The claims of area `msip` (`jaxlab.sampling.msip.claims`), checked against closed forms (float64)."""

import math

import pytest

from jaxlab.sampling.msip import claims as C


def test_mean_shift_contracts_at_rate_s2_over_s2_plus_sigma2():
    assert C.measure_mean_shift_contraction() < 1e-12


@pytest.mark.parametrize("n", [2, 3])
def test_fixed_points_are_critical_points_of_reduced_objective(n):
    grad, f, f_sym = C.measure_fixed_point(n)
    assert grad < 1e-8
    assert abs(f - f_sym) < 1e-10
    # the optimum is a real improvement over the one-point rule F = c_π - v0(0)²/k(0,0) (σ = s = 1)
    assert f < 1 / math.sqrt(3) - 0.5 - 1e-3


def test_normalizing_constant_invariance_fredholm():
    assert C.measure_z_invariance(estimators=("fredholm",)) < 1e-10


@pytest.mark.slow
def test_normalizing_constant_invariance_all_estimators():
    assert C.measure_z_invariance() < 1e-10


def test_gauss_hermite_estimators_reproduce_exact_map():
    assert C.measure_gauss_hermite_consistency() < 1e-8


def test_monte_carlo_shift_error_slope_is_minus_half():
    assert C.measure_mc_slope(qs=(16, 256, 4096)) == pytest.approx(-0.5, abs=0.1)


def test_fredholm_converges_to_msip_of_deconvolved_gaussian():
    same, bias = C.measure_fredholm_exactness()
    assert same < 1e-10
    assert bias > 1e-2  # and not to MSIP of the target itself


@pytest.mark.slow
def test_msip_mmd_decays_faster_than_iid():
    slope, iid_slope, ratio = C.measure_quality_vs_n()
    assert slope < -1.0
    assert ratio >= 3.0
    assert -1.4 < iid_slope < -0.6


@pytest.mark.slow
def test_no_mode_collapse_on_three_component_gmm():
    count, dev = C.measure_mode_coverage()
    assert count >= 5
    assert dev <= 0.1
