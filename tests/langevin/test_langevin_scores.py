"""Composite scores (claims `langevin:linhart_score_is_the_exact_diffused_tall_posterior_score`,
`langevin:geffner_score_is_the_score_of_its_gaussian_bridging_density`) and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.sampling import annealed_langevin as al
from jaxlab.sampling.langevin.models import gaussian_toy_scores


def _random_problem(seed, d, n):
    """Random PD prior, Gaussian likelihood with a random PD covariance (the setting of
    `langevin:linhart_score_is_the_exact_diffused_tall_posterior_score`); numpy inputs."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((2, d, d))
    cov_prior = A @ A.T / d + 0.5 * np.eye(d)
    lik_cov = B @ B.T / d + 0.3 * np.eye(d)
    mu_prior = rng.standard_normal(d)
    xs = rng.standard_normal((n, d)) + 1.0
    P_prior, P_lik = np.linalg.inv(cov_prior), np.linalg.inv(lik_cov)
    post_cov = np.linalg.inv(P_prior + P_lik)
    mus = (P_prior @ mu_prior + xs @ P_lik) @ post_cov
    return mu_prior, cov_prior, mus, post_cov


def _diffused_score(theta, mean, cov, a):
    C = a * cov + (1 - a) * jnp.eye(mean.shape[0])
    return -jnp.linalg.solve(C, theta - jnp.sqrt(a) * mean)


@pytest.mark.parametrize("d,n", [(2, 2), (3, 10), (5, 30)])
def test_linhart_score_equals_diffused_tall_posterior_score(d, n):
    """Claim `langevin:linhart_score_is_the_exact_diffused_tall_posterior_score`: s^L_t = ∇log of the diffused tall
    posterior, to 1e-10, at random θ and t."""
    mu_prior, cov_prior, mus, post_cov = _random_problem(d + n, d, n)

    @jax.jit
    @jax.vmap
    def both(theta, t):
        mu_n, cov_n = al.tall_posterior_gaussian(mu_prior, cov_prior, mus, post_cov)
        a = al.vp_alpha(t)
        s_prior = _diffused_score(theta, mu_prior, cov_prior, a)
        s_posts = jax.vmap(lambda m: _diffused_score(theta, m, post_cov, a))(mus)
        got = al.linhart_score(s_prior, s_posts, *al.linhart_weights(cov_prior, post_cov, a, n=n), n)
        return got, _diffused_score(theta, mu_n, cov_n, a)

    rng = np.random.default_rng(1)
    got, want = both(2.0 * rng.standard_normal((5, d)), rng.uniform(1e-3, 1.0, 5))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * float(jnp.abs(want).max()))


def test_linhart_shared_and_per_observation_covariances_agree():
    _, cov_prior, _, post_cov = _random_problem(3, 3, 4)
    a = 0.37
    s_prior = np.arange(3.0)
    s_posts = np.linspace(-1, 1, 12).reshape(4, 3)

    @jax.jit
    def both(cov_prior, post_cov):
        shared = al.linhart_score(s_prior, s_posts, *al.linhart_weights(cov_prior, post_cov, a, n=4), 4)
        covs = jnp.broadcast_to(post_cov, (4, 3, 3))
        return shared, al.linhart_score(s_prior, s_posts, *al.linhart_weights(cov_prior, covs, a), 4)

    np.testing.assert_allclose(*both(cov_prior, post_cov), rtol=1e-12)


def test_geffner_score_matches_closed_form_bridging_density(toy):
    """Claim `langevin:geffner_score_is_the_score_of_its_gaussian_bridging_density`: s^G_t equals the score of N(m^G_t,
    (Λ^G_t)^{-1}); the closed form matches an autodiff fit."""
    n = toy.xs.shape[0]
    t = 0.3
    a = al.vp_alpha(t)
    mean, prec = al.geffner_bridging_gaussian(a, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)

    def log_density(theta):  # unnormalised: (1-n) log λ_t + Σ_j log p_t(θ | x_j)
        def logn(m, C):
            Ct = a * C + (1 - a) * jnp.eye(2)
            r = theta - jnp.sqrt(a) * m
            return -0.5 * r @ jnp.linalg.solve(Ct, r)

        return (1 - n) * logn(toy.mu_prior, toy.cov_prior) + jax.vmap(lambda m: logn(m, toy.post_cov))(toy.mus).sum()

    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    score = jax.jit(jax.vmap(al.make_composite_score("geffner", prior_fn, post_fn, toy.xs), (0, None)))
    thetas = jnp.array([[0.3, -1.0], [2.0, 4.0]])
    np.testing.assert_allclose(score(thetas, t), -(thetas - mean) @ prec, rtol=1e-10, atol=1e-10)
    H, g = jax.jit(lambda th: (jax.hessian(log_density)(th), jax.grad(log_density)(th)))(jnp.zeros(2))
    np.testing.assert_allclose(-H, prec, rtol=1e-10)
    np.testing.assert_allclose(-jnp.linalg.solve(H, g), mean, rtol=1e-10)


def test_jac_variant_equals_gauss_variant_for_gaussian_scores(toy):
    """Tweedie covariance of a Gaussian is exact, so the JAC and GAUSS scores coincide."""
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    gauss = al.make_composite_score("linhart", prior_fn, post_fn, toy.xs, prior_cov=toy.cov_prior,
                                    post_covs=toy.post_cov)
    jac = al.make_composite_score("linhart_jac", prior_fn, post_fn, toy.xs)
    theta = jnp.array([0.7, 1.9])
    both = jax.jit(lambda th, t: (jac(th, t), gauss(th, t)))
    np.testing.assert_allclose(*both(theta, 0.2), rtol=1e-9)


def test_one_observation_reduces_to_the_single_posterior_score():
    s_prior = jnp.array([1.0, -2.0])
    s_post = jnp.array([[0.5, 0.25]])
    np.testing.assert_allclose(al.geffner_score(s_prior, s_post, 1), s_post[0])
    cov = jnp.array([[2.0, 0.3], [0.3, 1.0]])
    w = al.linhart_weights(cov, jnp.eye(2) * 0.5, 0.6, n=1)
    np.testing.assert_allclose(al.linhart_score(s_prior, s_post, *w, 1), s_post[0], rtol=1e-12)


def test_tempered_prior_mode_weights_the_undiffused_prior(toy):
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    tempered = al.make_composite_score("geffner", prior_fn, post_fn, toy.xs, prior_mode="tempered")
    theta, t = jnp.array([0.1, 0.2]), 0.25
    n = toy.xs.shape[0]

    def want(theta, t):
        return (1 - n) * 0.75 * prior_fn(theta, 0.0) + jax.vmap(lambda x: post_fn(theta, x, t))(toy.xs).sum(0)

    np.testing.assert_allclose(*jax.jit(lambda th: (tempered(th, t), want(th, t)))(theta), rtol=1e-12)


def test_vp_alpha_closed_form():
    t = 0.4
    np.testing.assert_allclose(al.vp_alpha(t), np.exp(-(0.1 * t + 0.5 * 19.9 * t**2)), rtol=1e-14)
    np.testing.assert_allclose(al.linhart_alpha(t), np.exp(-16 * t**2), rtol=1e-14)


# ------------------------------------------------------------------------------------------------ bad inputs
def test_bad_n_and_shapes_raise():
    with pytest.raises(ValueError, match="n must be >= 1"):
        al.geffner_score(jnp.zeros(2), jnp.zeros((1, 2)), 0)
    with pytest.raises(ValueError, match="n must equal post_scores"):
        al.geffner_score(jnp.zeros(2), jnp.zeros((3, 2)), 2)
    with pytest.raises(ValueError, match=r"post_scores must have shape \(n, 2\)"):
        al.geffner_score(jnp.zeros(2), jnp.zeros((3, 4)))
    with pytest.raises(ValueError, match="prior_score must be 1-dimensional"):
        al.geffner_score(jnp.zeros((2, 1)), jnp.zeros((3, 2)))
    with pytest.raises(ValueError, match="post_covs must have shape"):
        al.linhart_weights(jnp.eye(2), jnp.eye(3), 0.5, n=2)
    with pytest.raises(ValueError, match="n is required"):
        al.linhart_weights(jnp.eye(2), jnp.eye(2), 0.5)


def test_bad_covariances_and_alpha_raise():
    with pytest.raises(ValueError, match="prior_cov must be symmetric"):
        al.linhart_weights(jnp.array([[1.0, 0.5], [0.0, 1.0]]), jnp.eye(2), 0.5, n=2)
    with pytest.raises(ValueError, match=r"post_covs\[1\] must be positive definite"):
        al.linhart_weights(jnp.eye(2), jnp.stack([jnp.eye(2), -jnp.eye(2)]), 0.5)
    with pytest.raises(ValueError, match=r"alpha must lie in \(0.0, 1.0\)"):
        al.linhart_weights(jnp.eye(2), jnp.eye(2), 1.0, n=2)


def test_mismatched_score_model_output_raises(toy):
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    bad = al.make_composite_score("geffner", prior_fn, lambda th, x, t: jnp.zeros(3), toy.xs)
    with pytest.raises(ValueError, match="post_score_fn must return shape"):
        bad(jnp.zeros(2), 0.5)
    with pytest.raises(ValueError, match="kind must be"):
        al.make_composite_score("gauss", prior_fn, post_fn, toy.xs)
    with pytest.raises(ValueError, match="needs prior_cov and post_covs"):
        al.make_composite_score("linhart", prior_fn, post_fn, toy.xs)
