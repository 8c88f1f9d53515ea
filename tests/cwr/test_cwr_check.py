"""Calibration checker and claims C2-C7 (numbered in `jaxlab.losses.cwr.claims`): exact LP minima, link errors
and calibration gaps."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.losses import cwr
from jaxlab.losses import cwr_check as ck


def _eps(ps, c):
    return ps.max(1) - (1 - c)


# ------------------------------------------------------------------------------------------------ C2, C3


def _check_cs_bep(name, Ks, n):
    for K in Ks:
        ps = ck.threshold_distributions(K, K, 0.5, n)
        rep = ck.calibration_report(name, K, 0.5, ps)
        assert rep.link_errors == 0
        assert rep.min_gap > 1e-4
        # C3: min_u R_L(u; p) = min(1, 2 (1 - max p))
        np.testing.assert_allclose(rep.min_risk, np.minimum(1, 2 * (1 - ps.max(1))), atol=1e-8)


@pytest.mark.parametrize("name", ["cs", "bep"])
def test_cs_and_bep_are_calibrated_at_one_half_with_min_risk_closed_form(name):
    _check_cs_bep(name, (3, 5), 4)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cs", "bep"])
def test_cs_and_bep_are_calibrated_at_one_half_full(name):
    _check_cs_bep(name, (3, 4, 6, 8, 12) if name == "cs" else range(3, 21), 12)


# ------------------------------------------------------------------------------------------------ C4


def test_ova_minimiser_is_the_sign_of_2p_minus_1():
    K = 5
    ps = ck.threshold_distributions(4, K, 0.5, 6)
    rep = ck.calibration_report("ova", K, 0.5, ps)
    assert rep.link_errors == 0 and rep.min_gap > 1e-4
    for p, val in zip(ps, rep.min_risk, strict=True):
        u_closed = jnp.sign(2 * p - 1)
        closed = float(cwr.conditional_risk(cwr.ova_hinge_loss, u_closed, jnp.asarray(p)))
        assert abs(closed - val) < 1e-8
        assert int(cwr.ova_link(u_closed)) in ck.bayes_set(p, 0.5)


# ------------------------------------------------------------------------------------------------ C5


@pytest.mark.parametrize("K,c", [(3, 0.05), (3, 0.45), (4, 0.2), (4, 0.45), (5, 0.2)])
def test_ref2d_is_calibrated_under_the_fan_condition(K, c):
    assert cwr.ref2d_valid(K, c)
    ps = ck.threshold_distributions(7, K, c, 8)
    rep = ck.calibration_report("ref2d", K, c, ps)
    assert rep.link_errors == 0 and rep.min_gap > 1e-5
    np.testing.assert_allclose(rep.min_risk, np.minimum(0, 1 - c - ps.max(1)), atol=1e-8)


@pytest.mark.parametrize("K,c", [(6, 0.05), (6, 0.3), (8, 0.2), (5, 0.45)])
def test_ref2d_fails_without_the_fan_condition(K, c):
    assert not cwr.ref2d_valid(K, c)
    ps = ck.threshold_distributions(2, K, c, 8)
    rep = ck.calibration_report("ref2d", K, c, ps, allow_invalid=True)
    assert rep.link_errors > 0
    assert rep.min_gap < 1e-9


# ------------------------------------------------------------------------------------------------ C6


@pytest.mark.parametrize("c", [0.05, 0.3, 0.45])
def test_generalized_hinge_is_a_calibrated_1d_surrogate_for_two_classes(c):
    ps = ck.threshold_distributions(5, 2, c, 12)
    rep = ck.calibration_report("hinge2", 2, c, ps)
    assert rep.link_errors == 0 and rep.min_gap > 1e-4


# ------------------------------------------------------------------------------------------------ C7


@pytest.mark.parametrize("K,c", [(3, 0.1), (9, 0.45)])
def test_cwr2d_lp_gap_is_theta_eps_on_the_accept_side_and_lattice_agrees(K, c):
    ps = ck.threshold_distributions(11, K, c, 6)
    rep = ck.calibration_report("cwr2d", K, c, ps)
    lat = ck.cwr2d_lattice_report(K, c, ps)
    assert rep.link_errors == 0 and lat.link_errors == 0
    eps = _eps(ps, c)
    acc = eps > 0
    assert acc.any() and (~acc).any()
    np.testing.assert_allclose(rep.gaps[acc], 0.25 * eps[acc], atol=1e-8)
    assert np.all(rep.gaps[~acc] >= 0.5 * -eps[~acc] - 1e-8)
    np.testing.assert_allclose(lat.min_risk, rep.min_risk, atol=1e-8)
    np.testing.assert_allclose(lat.gaps, rep.gaps, atol=1e-8)


def _lattice_sweep(Ks, n):
    worst_ratio = np.inf
    for K in Ks:
        for c in (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.49):
            ps = ck.threshold_distributions(K, K, c, n)
            rep = ck.cwr2d_lattice_report(K, c, ps)
            eps = _eps(ps, c)
            assert rep.link_errors == 0, (K, c)
            np.testing.assert_allclose(rep.gaps[eps > 0], 0.25 * eps[eps > 0], atol=1e-9)
            worst_ratio = min(worst_ratio, np.min(rep.gaps[eps < 0] / -eps[eps < 0]))
    assert 0.5 - 1e-9 <= worst_ratio <= 0.75


def test_cwr2d_is_calibrated_for_every_K_and_c_lattice_sweep():
    _lattice_sweep((3, 30), 16)


@pytest.mark.slow
def test_cwr2d_is_calibrated_for_every_K_and_c_lattice_sweep_full():
    _lattice_sweep(range(3, 31), 64)


def _just_above_threshold(K, c, width):
    """Distributions with p_j = 1 - c + delta, delta in (0, width), the rest on the neighbours of j."""
    rng = np.random.default_rng(0)
    out = []
    for j in range(K):
        for frac in (0.2, 0.5, 0.8):
            pj = 1 - c + frac * width
            rest = rng.dirichlet(np.ones(K - 1)) if frac != 0.5 else np.eye(K - 1)[min(j, K - 2)]
            out.append(np.insert(rest * (1 - pj), j, pj))
    return np.stack(out)


@pytest.mark.parametrize("scale", [0.0, 0.5, 0.9])
def test_cwr2d_bound_on_a_is_sharp(scale):
    K, c = 5, 0.2
    a = scale * c / (1 - 2 * c)
    # (j, 0) is optimal only when (a + 1)(2 p_j - 1) >= 1 - c: just above 1 - c it is not, for a < c/(1-2c)
    width = (1 + (1 - c) / (a + 1)) / 2 - (1 - c)
    ps = _just_above_threshold(K, c, width)
    bad = ck.cwr2d_lattice_report(K, c, ps, a=a)
    assert bad.min_gap < 1e-12
    if scale == 0.9:  # the LP agrees
        assert ck.calibration_report("cwr2d", K, c, ps[:3], a=a).min_gap < 1e-9
    good = ck.cwr2d_lattice_report(K, c, ps)  # default a = c/(1-2c): calibrated on the same p
    assert good.link_errors == 0 and good.min_gap > 0


# ------------------------------------------------------------------------------------------------ smooth


@pytest.mark.slow
def test_ce_smooth_checker_matches_the_kl_closed_form():
    K, c = 3, 0.2
    ps = ck.threshold_distributions(3, K, c, 4)
    rep = ck.calibration_report("ce", K, c, ps, num_steps=300, restarts=2)

    def kl(a, b):
        return a * np.log(a / b) + (1 - a) * np.log((1 - a) / (1 - b))

    # inf over the wrong cells of KL(p || q): a Bernoulli projection of one coordinate onto q_k = 1 - c
    ref = np.array([min(kl(q, 1 - c) for q in p) for p in ps])
    assert rep.link_errors == 0
    np.testing.assert_allclose(rep.gaps, ref, rtol=1e-3, atol=1e-6)


def test_adam_minimiser_recovers_softmax_equal_p():
    p = jnp.array([0.5, 0.3, 0.15, 0.05])
    u = jax.jit(lambda k: cwr.minimize_conditional_risk(cwr.ce_chow_loss, p, 4, k, num_steps=1000, restarts=1))(
        jax.random.key(0))
    np.testing.assert_allclose(np.asarray(jax.nn.softmax(u)), np.asarray(p), atol=2e-4)


# ------------------------------------------------------------------------------------------------ tools


def test_threshold_distributions_are_on_the_simplex_and_off_the_threshold():
    ps = ck.threshold_distributions(0, 7, 0.3, 40)
    assert ps.shape == (40, 7)
    np.testing.assert_allclose(ps.sum(1), 1.0, atol=1e-12)
    assert np.all(ps >= 0) and np.all(np.abs(ps.max(1) - 0.7) >= 2e-3)
    near = np.abs(ps.max(1) - 0.7) <= 0.2 + 1e-12
    assert near.mean() >= 0.5


def test_lp_min_matches_a_grid_search():
    pieces = cwr.polyhedral_pieces("cwr2d", 4, c=0.3)
    p = np.array([0.1, 0.5, 0.3, 0.1])
    val, _ = ck.lp_min(pieces, p)
    m, r = np.meshgrid(np.linspace(0, 5, 201), np.linspace(-1, 4, 201), indexing="ij")
    U = np.stack([m.ravel(), r.ravel()], 1)
    grid = np.asarray(cwr.conditional_risk(lambda v, y: cwr.cwr2d_loss(v, y, 0.3), jnp.asarray(U), jnp.asarray(p)))
    assert abs(val - grid.min()) < 1e-9  # the grid contains the lattice (Z/40)^2, hence the kinks
    val_r, _ = ck.lp_min(pieces, p, G=np.array([[0.0, -1.0]]), h=np.array([-2.0]))  # restricted to r >= 2
    assert val_r > val


def test_checker_bad_inputs_raise(monkeypatch):
    pieces = cwr.polyhedral_pieces("cs", 3)
    with pytest.raises(ValueError, match="p must be nonnegative"):
        ck.lp_min(pieces, np.array([1.2, -0.2, 0.0]))
    with pytest.raises(ValueError, match="p must sum to 1"):
        ck.lp_min(pieces, np.array([0.5, 0.2, 0.2]))
    with pytest.raises(ValueError, match=r"p must have shape \(3\)"):
        ck.lp_min(pieces, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="ps must sum to 1"):
        ck.calibration_report("cs", 3, 0.5, np.array([[0.5, 0.4, 0.0]]))
    with pytest.raises(ValueError, match="c must equal 1/2"):
        ck.calibration_report("bep", 4, 0.4, np.array([[0.5, 0.5, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="not polyhedral"):
        cwr.polyhedral_pieces("ce", 3)
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    with pytest.raises(ImportError, match=r"needs scipy .*`test` extra"):
        ck.lp_min(pieces, np.array([0.5, 0.5, 0.0]))
