"""The conditioning claims of area `scaling` (`jaxlab.scaling.claims`, from
`scaling:collinear_kappa_equals_cosine_formula_for_every_k` to `scaling:curvature_is_loss_agnostic`): the
scale-block condition number on collinear and diverse designs, the TPP-diversity threshold, and loss-agnosticism
of the curvature."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.scaling import conditioning as C
from jaxlab.scaling.designs import collinear_design, factorial_design
from jaxlab.scaling.laws import HOFFMANN_2022

N9 = np.logspace(8, 10, 9)
ALPHA = 0.34


def _var_p_log_n(N, alpha):
    x = np.log(N)
    p = N ** (-2 * alpha)
    p /= p.sum()
    return p @ (x - p @ x) ** 2


def test_s1_exact_cosine_formula_and_k_invariance():
    for delta in (0.04, 0.01):
        beta = ALPHA + delta
        k20 = float(C.scale_block_condition_number(N9, 20 * N9, ALPHA, beta))
        k200 = float(C.scale_block_condition_number(N9, 200 * N9, ALPHA, beta))
        closed = float(C.kappa_from_cosine(C.collinear_cosine(N9, 20 * N9, ALPHA, beta)))
        # numpy reference for the cosine of the two columns
        u, w = N9 ** (-ALPHA), (20 * N9) ** (-beta)
        c_np = u @ w / np.linalg.norm(u) / np.linalg.norm(w)
        assert k20 == pytest.approx(closed, rel=1e-8)
        assert k20 == pytest.approx(k200, rel=1e-10)
        assert closed == pytest.approx((1 + c_np) / (1 - c_np), rel=1e-7)


def test_inverse_square_law_in_the_exponent_gap():
    deltas = [0.04, 0.02, 0.01, 0.005]
    kab = np.array([float(C.scale_block_condition_number(N9, 20 * N9, ALPHA, ALPHA + d)) for d in deltas])
    keab = np.array([float(C.scale_block_condition_number(N9, 20 * N9, ALPHA, ALPHA + d, include_E=True))
                     for d in deltas])
    r_ab, r_eab = kab[1:] / kab[:-1], keab[1:] / keab[:-1]
    assert np.all((r_ab >= 3.8) & (r_ab <= 4.1)), r_ab
    assert np.all((r_eab >= 3.8) & (r_eab <= 4.2)), r_eab
    slope = np.polyfit(np.log(deltas), np.log(kab), 1)[0]
    assert abs(slope + 2) <= 0.1
    v = _var_p_log_n(N9, ALPHA)
    ratio = kab * np.square(deltas) * v / 4
    assert ratio[2] == pytest.approx(1.0136, abs=5e-4)
    assert ratio[3] == pytest.approx(1.0067, abs=5e-4)
    asym = np.array([float(C.asymptotic_collinear_kappa(N9, ALPHA, d)) for d in deltas])
    np.testing.assert_allclose(kab / asym, ratio, rtol=1e-10)


def test_collinear_design_is_singular_at_zero_gap():
    k = float(C.scale_block_condition_number(N9, 20 * N9, ALPHA, ALPHA))
    assert k >= 1e12
    assert float(C.kappa_from_cosine(1.0)) == np.inf
    assert float(C.asymptotic_collinear_kappa(N9, ALPHA, 0.0)) == np.inf
    assert float(C.equilibrated_condition_number(jnp.array([[1.0, 0.0], [2.0, 0.0]]))) == np.inf


def test_threshold_is_necessary_and_sufficient_on_random_designs():
    rng = np.random.default_rng(0)
    m, n = 1000, 12
    N = 10 ** np.sort(rng.uniform(7, 11, (m, n)), axis=1)
    # k_i log-uniform on a random sub-range of [2, 200], so that narrow (ill-conditioned) spreads occur too
    lo, hi = np.sort(rng.uniform(np.log(2), np.log(200), (2, m, 1)), axis=0)
    k = np.exp(lo + (hi - lo) * rng.uniform(0, 1, (m, n)))
    alpha = rng.uniform(0.2, 0.5, m)
    beta = alpha + rng.uniform(-0.1, 0.1, m)
    kab = np.asarray(jax.jit(jax.vmap(C.scale_block_condition_number))(N, k * N, alpha, beta))
    Q = np.asarray(jax.jit(jax.vmap(C.tpp_diversity_statistic))(N, k * N, alpha, beta))
    assert np.all(Q >= -1e-15)
    compared = 0
    for kmax in (10.0, 100.0, 1000.0):
        tau = float(C.tpp_threshold(kmax))
        keep = np.abs(kab - kmax) >= 1e-9 * kmax
        np.testing.assert_array_equal((Q >= tau)[keep], (kab <= kmax)[keep])
        compared += keep.sum()
        assert 0 < np.sum(kab[keep] <= kmax) < keep.sum()  # both outcomes occur
    assert compared >= 2990


def test_threshold_closed_forms():
    assert float(C.tpp_threshold(100.0)) == pytest.approx(2 * np.log(101 / 99), rel=1e-14)
    assert float(C.tpp_threshold(1e6)) == pytest.approx(4e-6, rel=1e-6)
    # worked example: kappa* = 100, beta = 0.3, delta = 0 -> sigma_k* = sqrt(0.0400)/0.3 = 0.667
    assert float(C.min_log_tpp_spread(N9, 0.3, 0.3, 100.0)) == pytest.approx(0.66668, abs=1e-4)
    N, D = factorial_design(N9, jnp.array([10.0, 40.0]))
    assert bool(C.is_well_conditioned(N, D, 0.3, 0.3, 100.0))
    N, D = factorial_design(N9, jnp.array([18.0, 22.0]))
    assert not bool(C.is_well_conditioned(N, D, 0.3, 0.3, 100.0))


def test_diverse_design_fixes_conditioning():
    N, D = factorial_design(N9, jnp.array([5.0, 20.0, 80.0]))
    assert float(C.scale_block_condition_number(N, D, ALPHA, ALPHA)) == pytest.approx(30.5, abs=0.05)
    assert float(C.scale_block_condition_number(N, D, ALPHA, ALPHA, include_E=True)) == pytest.approx(53.1, abs=0.05)
    Nc, Dc = collinear_design(jnp.tile(N9, 3), 20.0)
    assert float(C.scale_block_condition_number(Nc, Dc, ALPHA, ALPHA)) >= 1e12


def test_condition_number_is_invariant_to_parameter_rescaling():
    rng = np.random.default_rng(1)
    J = rng.standard_normal((20, 4)) @ np.diag([1e-3, 1.0, 50.0, 7.0])
    base = float(C.equilibrated_condition_number(J))
    scaled = float(C.equilibrated_condition_number(J * np.array([1e4, 2.0, 1e-3, 5.0])))
    assert scaled == pytest.approx(base, rel=1e-10)
    Jn = J / np.linalg.norm(J, axis=0)
    s = np.linalg.svd(Jn, compute_uv=False)
    assert base == pytest.approx((s[0] / s[-1]) ** 2, rel=1e-10)
    lam = np.asarray(C.sloppiness_spectrum(J))
    np.testing.assert_allclose(lam, np.sort(np.linalg.eigvalsh(Jn.T @ Jn))[::-1], rtol=1e-10)


def test_sloppy_direction_keeps_the_on_ray_combination_fixed():
    k, beta = 20.0, 0.3
    J = np.stack([N9**-beta, (k * N9) ** -beta], axis=1)  # natural (A, B) columns, alpha = beta
    v = np.asarray(C.sloppiest_direction(J))
    expected = np.array([1.0, -(k**beta)]) / np.hypot(1.0, k**beta)
    np.testing.assert_allclose(np.abs(v), np.abs(expected), rtol=1e-10)
    assert v[0] * v[1] < 0


def _natural_scale_law(alpha, beta):
    def log_loss(theta, X):
        E, A, B = theta
        return jnp.log(E + A * jnp.exp(-alpha * X.log_N) + B * jnp.exp(-beta * X.log_D))
    return log_loss


def test_curvature_is_loss_agnostic_on_the_scale_block():
    from jaxlab.scaling.fit import huber
    from jaxlab.scaling.laws import covariates

    A, B, E, alpha, _ = (float(v) for v in HOFFMANN_2022.to_natural())
    beta = alpha + 0.02
    law = _natural_scale_law(alpha, beta)
    X = covariates(N9, 20 * N9)
    theta = jnp.array([E, A, B])
    log_L = law(theta, X)
    J = C.jacobian(law, theta, X)
    kappa_J = float(C.equilibrated_condition_number(J))
    assert 1e5 <= kappa_J <= 1e6
    losses = {
        "squared": lambda r: 0.5 * jnp.sum(r**2),
        "huber": lambda r: jnp.sum(huber(r, 1e-3)),
        "cauchy": lambda r: jnp.sum(jnp.log1p(r**2 / 0.1**2)),
    }
    for name, phi in losses.items():
        H = jax.hessian(lambda th, phi=phi: phi(law(th, X) - log_L))(theta)
        assert float(C.equilibrated_hessian_condition_number(H)) == pytest.approx(kappa_J, rel=1e-6), name


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: C.tpp_threshold(1.0), "kappa_max must be > 1"),
        (lambda: C.tpp_threshold(-3.0), "kappa_max must be > 0"),
        (lambda: C.asymptotic_collinear_kappa(np.full(5, 1e9), 0.3, 0.01), "two distinct values"),
        (lambda: C.is_well_conditioned(N9, 20 * N9, 0.3, 0.31, 100.0), "ill-conditioned by construction"),
        (lambda: C.scale_block_condition_number(-N9, N9, 0.3, 0.3), "N must lie in"),
        (lambda: C.scale_block_condition_number(N9, N9[:4], 0.3, 0.3), "D must have shape"),
        (lambda: C.collinear_cosine(N9, np.where(N9 > 1e9, np.nan, N9), 0.3, 0.3), "D must be finite"),
        (lambda: C.min_log_tpp_spread(N9, 0.3, 0.0, 100.0), "beta must be > 0"),
        (lambda: C.scale_block_condition_number(np.arange(1, 10), N9, 0.3, 0.3), "N must have a float dtype"),
    ],
)
def test_bad_inputs_raise(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_float32_warns_when_kappa_eps_is_large():
    J = np.stack([N9**-0.3, (20 * N9) ** -0.305], axis=1).astype(np.float32)
    with pytest.warns(UserWarning, match="float32"):
        C.equilibrated_condition_number(jnp.asarray(J))
