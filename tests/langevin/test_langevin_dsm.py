"""The trained-score pipeline: denoising score matching, composition over n observations, annealed Langevin."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.sampling import annealed_langevin as al
from jaxlab.sampling.langevin.dsm import ScoreNet, dsm_loss, train_score_net
from jaxlab.sampling.langevin.models import gaussian_toy, gaussian_toy_scores


@pytest.mark.slow
def test_dsm_loss_of_the_exact_score_is_below_a_wrong_one():
    """The exact noise predictor ε* = -sqrt(1-α) ∇log p_t has a smaller DSM loss than a perturbed one."""
    toy = gaussian_toy(jax.random.key(0), 1)
    _, post_fn = gaussian_toy_scores(toy, al.vp_alpha)

    def exact(theta, x, t, shift=0.0):
        return -jnp.sqrt(1 - al.vp_alpha(t)) * post_fn(theta, x, t) + shift

    rng = np.random.default_rng(2)
    theta0 = np.asarray(toy.mu_prior) + rng.standard_normal((4000, 2)) @ np.linalg.cholesky(toy.cov_prior).T
    x = theta0 + np.sqrt(2.0) * rng.standard_normal((4000, 2))
    loss = jax.jit(lambda f, k: dsm_loss(f, k, theta0, x, alpha_fn=al.vp_alpha), static_argnums=0)
    wrong = functools.partial(exact, shift=0.3)
    l_exact, l_wrong = float(loss(exact, jax.random.key(3))), float(loss(wrong, jax.random.key(3)))
    assert l_exact < l_wrong
    np.testing.assert_allclose(l_wrong - l_exact, 2 * 0.3**2, rtol=0.15)  # E||ε* + s - ε||² = L* + ||s||²


@pytest.mark.slow
def test_trained_score_composed_over_observations_recovers_the_tall_posterior():
    toy = gaussian_toy(jax.random.key(0), 5)
    L_chol = jnp.linalg.cholesky(toy.cov_prior)

    def simulate(key, B):
        k1, k2 = jax.random.split(key)
        th = toy.mu_prior + jax.random.normal(k1, (B, 2)) @ L_chol.T
        return th, th + jnp.sqrt(2.0) * jax.random.normal(k2, (B, 2))

    net = ScoreNet(jax.random.key(1), 2, 2, al.vp_alpha)
    net, losses = eqx.filter_jit(lambda k, n: train_score_net(k, simulate, n, num_steps=1500))(jax.random.key(2), net)
    assert float(losses[-100:].mean()) < float(losses[:100].mean())
    prior_fn, _ = gaussian_toy_scores(toy, al.vp_alpha)
    score = al.make_composite_score("linhart_jac", prior_fn, net.score, toy.xs)
    ts, hs, ks = al.ald_default_schedule(100, 5, 0.5, t_min=1e-2)
    x0 = jax.random.normal(jax.random.key(3), (4000, 2))
    out = jax.jit(lambda k: al.annealed_langevin(k, x0, score, ts, hs, ks))(jax.random.key(4))
    mu_n, cov_n = al.tall_posterior_gaussian(toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
    w2 = float(al.w2_gaussian(out.mean(0), jnp.cov(out.T), mu_n, cov_n))
    assert w2 < 0.3, w2
