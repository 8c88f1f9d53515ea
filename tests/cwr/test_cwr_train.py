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


def test_centre_radius_scorer_is_two_dimensional_with_centre_in_one_to_K():
    model = tr.make_centre_radius_scorer(jax.random.key(0), 3, 5, 8)
    U = jax.vmap(model)(10.0 * jax.random.normal(jax.random.key(1), (200, 3)))
    assert U.shape == (200, 2)
    assert float(U[:, 0].min()) >= 1.0 and float(U[:, 0].max()) <= 5.0
    # m is the softmax-weighted class position 1 + sum_k k softmax(z)_k of the hidden logits z
    z = model.mlp(jnp.ones(3))
    np.testing.assert_allclose(float(model(jnp.ones(3))[0]), 1 + float(jnp.sum(jnp.arange(5) * jax.nn.softmax(z[:5]))),
                               rtol=1e-6)


def test_cwr2d_centre_radius_scorer_recovers_most_of_chows_gain_on_an_easy_mixture():
    """K = 4 mixture, c = 0.2: the cwr2d-trained 2-d scorer's excess risk is below a quarter of c - R* (measured
    0.05 of it at this seed; a plain ReLU MLP scorer on the same data: 0.43). On a harder K = 8 mixture it is not
    (the documented negative result ``cwr:cwr2d_training_approaches_the_bayes_risk``)."""
    K, D, c = 4, 5, 0.2
    task = tr.make_mixture(jax.random.key(0), K, dim=D, sep=4.0, eta=0.1)
    X, y, _ = tr.sample_mixture(jax.random.key(1), task, 4000)
    Xt, yt, Pt = tr.sample_mixture(jax.random.key(2), task, 4000)
    s = cwr.surrogate("cwr2d", K, c)
    model, _ = tr.fit(jax.random.key(3), tr.make_centre_radius_scorer(jax.random.key(4), D, K, 32), X, y, s.loss,
                      num_steps=800, learning_rate=1e-2, batch_size=512)
    out = tr.evaluate(model, Xt, yt, s.link, c, Pt)
    assert out["risk"] - out["bayes_risk"] < (c - out["bayes_risk"]) / 4
