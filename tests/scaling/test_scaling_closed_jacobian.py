"""The closed-form Jacobian of the Chinchilla law (used by the LM fits) equals forward-mode autodiff."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from jaxlab.scaling import ChinchillaParams, covariates, load_chinchilla
from jaxlab.scaling.laws import VALUE_AND_JACOBIAN, chinchilla_log_loss


def test_chinchilla_closed_form_matches_autodiff():
    d = load_chinchilla()
    X = covariates(d.N, d.D)
    rng = np.random.default_rng(0)
    for _ in range(5):
        p = ChinchillaParams(*(jnp.asarray(v) for v in rng.normal([6.0, 7.0, 0.5, 0.35, 0.37], [2, 2, 0.5, 0.1, 0.1])))
        flat, unravel = ravel_pytree(p)
        value, J = VALUE_AND_JACOBIAN[chinchilla_log_loss](p, X)
        np.testing.assert_allclose(value, chinchilla_log_loss(p, X), rtol=1e-14)
        J_ad = jax.jacfwd(lambda v, unravel=unravel: chinchilla_log_loss(unravel(v), X))(flat)
        np.testing.assert_allclose(J, J_ad, rtol=1e-12, atol=1e-14)


def test_closed_form_keeps_float32():
    d = load_chinchilla()
    X = covariates(d.N.astype(np.float32), d.D.astype(np.float32))
    p = ChinchillaParams(*(jnp.float32(v) for v in (6.0, 7.0, 0.5, 0.35, 0.37)))
    value, J = VALUE_AND_JACOBIAN[chinchilla_log_loss](p, X)
    assert value.dtype == J.dtype == jnp.float32
