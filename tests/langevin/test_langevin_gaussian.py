"""Gaussian closed forms (claims `langevin:linhart_precision_is_loewner_below_geffner`,
`langevin:ula_stationary_variance_is_inflated`) and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from jaxlab.sampling import annealed_langevin as al


def _w2_reference(m1, C1, m2, C2):
    R = scipy.linalg.sqrtm(C1)
    cross = np.real(scipy.linalg.sqrtm(R @ C2 @ R))
    return np.sqrt(np.sum((m1 - m2) ** 2) + np.trace(C1 + C2 - 2 * cross))


def test_w2_gaussian_matches_scipy_sqrtm_reference():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 3, 3))
    C1, C2 = A @ A.T + 0.1 * np.eye(3), B @ B.T + 0.2 * np.eye(3)
    m1, m2 = rng.standard_normal((2, 3))
    w2 = jax.jit(al.w2_gaussian)
    np.testing.assert_allclose(w2(m1, C1, m2, C2), _w2_reference(m1, C1, m2, C2), rtol=1e-9)
    np.testing.assert_allclose(w2(m1, C1, m1, C1), 0.0, atol=1e-6)
    # 1-d closed form: W2² = (m1 - m2)² + (s1 - s2)²
    np.testing.assert_allclose(
        al.w2_gaussian(np.array([0.5]), np.array([[4.0]]), np.array([-1.0]), np.array([[0.25]])),
        np.sqrt(1.5**2 + 1.5**2), rtol=1e-12,
    )


def test_loewner_ordering_of_bridging_precisions(toy):
    """Claim `langevin:linhart_precision_is_loewner_below_geffner`: λ_min(Λ^G_t - Λ^L_t) >= -1e-12 on 200 levels (equal
    Σ_j); the Linhart cap is never smaller."""

    @jax.jit
    def gap(ts):
        _, PG = al.bridging_gaussians("geffner", ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
        _, PL = al.bridging_gaussians("linhart", ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
        capG = al.stability_cap(*al.level_constants(PG))
        capL = al.stability_cap(*al.level_constants(PL))
        return jnp.linalg.eigvalsh(PG - PL)[:, 0], capL - capG, capG

    lam, dcap, capG = gap(jnp.linspace(1.0, 1e-3, 200))
    assert float(lam.min()) >= -1e-12
    assert float(dcap.min()) >= -1e-12 * float(capG.max())
    assert float(lam.max()) > 1e-3  # the ordering is strict somewhere: the check can tell the two apart


def test_one_dimensional_precisions_closed_form():
    """1-d: P^G = (1-n)/(α s_λ² + 1-α) + n/(α s_p² + 1-α) and P^L = 1/(α s_n² + 1-α)."""
    sl2, sp2, n, a = 3.0, 0.8, 5, 0.4
    mus = np.full((n, 1), 0.3)
    _, PG = al.geffner_bridging_gaussian(a, np.array([1.0]), np.array([[sl2]]), mus, np.array([[sp2]]))
    _, PL = al.linhart_bridging_gaussian(a, np.array([1.0]), np.array([[sl2]]), mus, np.array([[sp2]]))
    sn2 = 1.0 / ((1 - n) / sl2 + n / sp2)
    np.testing.assert_allclose(PG[0, 0], (1 - n) / (a * sl2 + 1 - a) + n / (a * sp2 + 1 - a), rtol=1e-12)
    np.testing.assert_allclose(PL[0, 0], 1.0 / (a * sn2 + 1 - a), rtol=1e-12)


def test_ula_moments_match_step_by_step_recursion_and_stationary_variance():
    """Claim `langevin:ula_stationary_variance_is_inflated` (exact part): k-step closed form = k one-step maps; 1-d
    stationary variance 1/(p(1 - hp/2))."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3))
    P = A @ A.T + np.eye(3)
    mu, m, C = rng.standard_normal(3), rng.standard_normal(3), np.eye(3) * 0.5
    h, k = 0.8 / np.linalg.eigvalsh(P).max(), 7
    mm, CC = m.copy(), C.copy()
    I_hP = np.eye(3) - h * P
    for _ in range(k):
        mm, CC = mu + I_hP @ (mm - mu), I_hP @ CC @ I_hP.T + 2 * h * np.eye(3)
    got_m, got_C = al.ula_gaussian_moments(m, C, mu, P, h, k)
    np.testing.assert_allclose(got_m, mm, rtol=1e-10)
    np.testing.assert_allclose(got_C, CC, rtol=1e-10)
    p, h = 2.0, 0.3
    _, var = al.ula_gaussian_moments(np.zeros(1), np.eye(1), np.zeros(1), np.array([[p]]), h, 2000)
    np.testing.assert_allclose(var[0, 0], 1.0 / (p * (1 - h * p / 2)), rtol=1e-10)


def test_tall_posterior_of_gaussian_toy(toy):
    """Σ_n^{-1} = Σ_λ^{-1} + n Σ_x^{-1} for the conjugate toy; μ_n is the conjugate mean."""
    n = toy.xs.shape[0]
    mu_n, cov_n = al.tall_posterior_gaussian(toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
    P = np.linalg.inv(toy.cov_prior) + n * np.linalg.inv(toy.lik_cov)
    np.testing.assert_allclose(np.linalg.inv(cov_n), P, rtol=1e-10)
    rhs = np.linalg.solve(toy.cov_prior, toy.mu_prior) + np.linalg.solve(toy.lik_cov, toy.xs.sum(0))
    want = np.linalg.solve(P, rhs)
    np.testing.assert_allclose(mu_n, want, rtol=1e-10)


# ------------------------------------------------------------------------------------------------ bad inputs
def test_geffner_not_positive_definite_names_the_level():
    mus = np.zeros((2, 1))
    with pytest.raises(ValueError, match=r"not positive definite at level 1 \(alpha=0.5\)"):
        al.geffner_bridging_gaussian(np.array([0.01, 0.5, 0.999]), np.zeros(1), np.eye(1), mus, 4 * np.eye(1))


def test_closed_form_bad_inputs_raise():
    with pytest.raises(ValueError, match="cov_prior must be positive definite"):
        al.tall_posterior_gaussian(np.zeros(2), np.diag([1.0, -1.0]), np.zeros((3, 2)), np.eye(2))
    with pytest.raises(ValueError, match=r"covs must have shape \(3, 2, 2\) or \(2, 2\)"):
        al.tall_posterior_gaussian(np.zeros(2), np.eye(2), np.zeros((3, 2)), np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="mus must hold n >= 1"):
        al.tall_posterior_gaussian(np.zeros(2), np.eye(2), np.zeros((0, 2)), np.eye(2))
    with pytest.raises(ValueError, match=r"alpha must lie in \(0.0, 1.0\]"):
        al.linhart_bridging_gaussian(0.0, np.zeros(2), np.eye(2), np.zeros((3, 2)), np.eye(2))
    with pytest.raises(ValueError, match=r"m2 must have shape \(2\)"):
        al.w2_gaussian(np.zeros(2), np.eye(2), np.zeros(3), np.eye(3))
