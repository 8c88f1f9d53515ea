"""Mixture task, metrics and training of scorers with CwR surrogates."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.losses import cwr
from jaxlab.losses import cwr_train as tr


def test_mixture_posterior_matches_bayes_formula():
    task = tr.make_mixture(jax.random.key(0), 4, dim=3, sep=2.0, eta=0.1)
    X, y, P = tr.sample_mixture(jax.random.key(1), task, 50)
    X, mu = np.asarray(X), np.asarray(task.means)
    dens = np.exp(-0.5 * ((X[:, None] - mu[None]) ** 2).sum(-1))  # equal weights, unit covariance
    ref = 0.9 * dens / dens.sum(1, keepdims=True) + 0.1 / 4
    np.testing.assert_allclose(np.asarray(P), ref, rtol=1e-10)
    assert y.dtype == jnp.int32 and int(y.min()) >= 0 and int(y.max()) < 4


def test_cwr_metrics_on_hand_values():
    m = tr.cwr_metrics(jnp.array([0, -1, 2, 1, -1]), jnp.array([0, 1, 1, 1, 2]), 0.3)
    assert abs(float(m["risk"]) - (0 + 0.3 + 1 + 0 + 0.3) / 5) < 1e-12
    assert abs(float(m["reject_rate"]) - 0.4) < 1e-12
    assert abs(float(m["accepted_error"]) - 1 / 3) < 1e-12


def test_ce_linear_scorer_approaches_the_bayes_risk():
    K, c = 4, 0.2
    task = tr.make_mixture(jax.random.key(0), K, dim=5, sep=4.0, eta=0.1)
    X, y, _ = tr.sample_mixture(jax.random.key(1), task, 2000)
    Xt, yt, Pt = tr.sample_mixture(jax.random.key(2), task, 2000)
    s = cwr.surrogate("ce", K, c)
    model, losses = tr.fit(jax.random.key(3), tr.make_scorer(jax.random.key(4), 5, s.dim), X, y, s.loss,
                           num_steps=300, learning_rate=0.05)
    out = tr.evaluate(model, Xt, yt, s.link, c, Pt)
    assert losses.shape == (300,) and float(losses[-50:].mean()) < float(losses[:50].mean())
    assert 0.05 < out["reject_rate"] < 0.95
    assert out["risk"] - out["bayes_risk_empirical"] < 0.03


def test_training_bad_inputs_raise():
    with pytest.raises(ValueError, match=r"eta must lie in \[0.0, 1.0\)"):
        tr.make_mixture(jax.random.key(0), 3, eta=1.0)
    with pytest.raises(ValueError, match="K must be >= 2"):
        tr.make_mixture(jax.random.key(0), 1)
    with pytest.raises(ValueError, match=r"y must have shape \(3\)"):
        tr.fit(jax.random.key(0), tr.make_scorer(jax.random.key(0), 2, 2), jnp.zeros((3, 2)),
               jnp.zeros(4, jnp.int32), cwr.cs_loss)
