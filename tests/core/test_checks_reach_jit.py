"""Value checks whose result used to be discarded, so that under ``jit`` the run-time check was dead code and a
bad value passed silently; each is now threaded into the computation and raises eagerly and under ``jit``."""

import jax
import jax.numpy as jnp
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.eval.facts import bootstrap_ci
from jaxlab.sampling.langevin import GMMPrior, gmm_toy_scores
from jaxlab.sampling.msip import empirical_estimator


def _empirical_log_v0(data, weights):
    return empirical_estimator(data, weights)(None, jnp.zeros((2, 2)), 1.0)[0]


def test_empirical_estimator_weights_not_normalised():
    data = jnp.arange(6.0).reshape(3, 2)
    raises_eager_and_jit(_empirical_log_v0, data, jnp.array([0.5, 0.6, 0.1]), match="empirical target weights")


def test_empirical_estimator_good_weights_pass_under_jit():
    data = jnp.arange(6.0).reshape(3, 2)
    w = jnp.array([0.2, 0.3, 0.5])
    assert jnp.allclose(jax.jit(_empirical_log_v0)(data, w), _empirical_log_v0(data, w))


def _gmm_score(weights, means, covs):
    prior_score, _ = gmm_toy_scores(GMMPrior(weights, means, covs), jnp.eye(2), lambda t: 1.0 - t)
    return prior_score(jnp.zeros(2), 0.5)


def test_gmm_prior_covariance_not_positive_definite():
    covs = jnp.stack([jnp.eye(2), -jnp.eye(2)])
    raises_eager_and_jit(_gmm_score, jnp.array([0.5, 0.5]), jnp.zeros((2, 2)), covs, match=r"covs\[1\]")


def test_bootstrap_level_outside_unit_interval():
    raises_eager_and_jit(lambda lv: bootstrap_ci(jax.random.key(0), jnp.ones(5), jnp.mean, 10, lv), 1.5,
                         match="level")


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_bootstrap_level_traced_matches_eager(level):
    per_item = jnp.arange(20.0)
    eager = bootstrap_ci(jax.random.key(0), per_item, jnp.mean, 50, level)
    traced = jax.jit(lambda lv: bootstrap_ci(jax.random.key(0), per_item, jnp.mean, 50, lv))(level)
    assert jnp.allclose(jnp.asarray(eager), jnp.asarray(traced))
