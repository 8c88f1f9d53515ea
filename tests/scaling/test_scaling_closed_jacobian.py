"""The closed forms of the Chinchilla law used by the LM fits (Jacobian, weighted curvature) equal autodiff, and the
Huber LM step switches to the exact Hessian at small damping."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from jaxlab.scaling import ChinchillaParams, covariates, load_chinchilla
from jaxlab.scaling.laws import VALUE_AND_JACOBIAN, WEIGHTED_CURVATURE, chinchilla_log_loss


def test_chinchilla_closed_forms_match_autodiff():
    # ln L and its Jacobian, and sum_i c_i d^2 ln L_i / d theta^2 from that Jacobian (against jax.hessian of c . ln L)
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
        c = jnp.asarray(rng.normal(size=d.N.shape))
        B, a = WEIGHTED_CURVATURE[chinchilla_log_loss](J, c, X)
        S = B + J.T @ (a[:, None] * J)
        S_ad = jax.hessian(lambda v, unravel=unravel, c=c: jnp.dot(c, chinchilla_log_loss(unravel(v), X)))(flat)
        scale = float(jnp.max(jnp.abs(S_ad)))
        np.testing.assert_allclose(S, S_ad, rtol=1e-11, atol=1e-13 * scale)
        np.testing.assert_allclose(S, S.T, rtol=1e-14, atol=1e-15 * scale)


def test_closed_form_keeps_float32():
    d = load_chinchilla()
    X = covariates(d.N.astype(np.float32), d.D.astype(np.float32))
    p = ChinchillaParams(*(jnp.float32(v) for v in (6.0, 7.0, 0.5, 0.35, 0.37)))
    value, J = VALUE_AND_JACOBIAN[chinchilla_log_loss](p, X)
    assert value.dtype == J.dtype == jnp.float32


def test_huber_lm_switches_to_the_exact_hessian_when_the_damping_is_small():
    # at lam <= 1e-6 the Huber step is (M + lam diag(M))^-1 (-grad F) with M the autodiff Hessian of F; above, M is
    # the IRLS matrix J^T W J
    from jaxlab.scaling import fit as F

    d = load_chinchilla()
    X, log_L = covariates(d.N, d.D), jnp.log(d.L)
    delta = 1e-3
    theta = ChinchillaParams(*(jnp.asarray(v) for v in (6.18, 7.66, 0.6, 0.348, 0.367)))  # near the optimum
    flat, unravel = ravel_pytree(theta)

    def F_of(v):
        r = chinchilla_log_loss(unravel(v), X) - log_L
        a = jnp.abs(r)
        return jnp.sum(jnp.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta)))

    g, Hess = jax.grad(F_of)(flat), jax.hessian(F_of)(flat)
    s0 = F.lm_init("chinchilla", theta, X, log_L, huber_delta=delta)
    r = s0.r
    w = jnp.where(jnp.abs(r) <= delta, 1.0, delta / jnp.abs(r))
    H_irls = s0.J.T @ (w[:, None] * s0.J)
    for lam, M in ((1e-6, Hess), (1e-3, H_irls)):
        state = s0._replace(lam=jnp.asarray(lam))
        new = F.lm_step("chinchilla", state, X, log_L, delta)
        expected = flat + jnp.linalg.solve(M + lam * jnp.diag(jnp.diag(M)), -g)
        if float(new.value) < float(s0.value):  # accepted: theta moved by the step of that model
            np.testing.assert_allclose(ravel_pytree(new.theta)[0], expected, rtol=1e-9)
        else:
            raise AssertionError(f"the step at lam = {lam} was rejected")


def test_a_rejected_exact_step_hands_the_next_step_to_the_irls_model():
    from jaxlab.scaling import fit as F

    d = load_chinchilla()
    X, log_L = covariates(d.N, d.D), jnp.log(d.L)
    theta = ChinchillaParams(*(jnp.asarray(v) for v in (6.1, 7.6, 0.6, 0.35, 0.37)))  # away from the optimum
    s0 = F.lm_init("chinchilla", theta, X, log_L, huber_delta=1e-3)._replace(lam=jnp.asarray(1e-9))
    new = F.lm_step("chinchilla", s0, X, log_L, 1e-3)
    assert float(new.value) == float(s0.value)  # the Newton step from here increases F: rejected
    assert float(new.lam) == pytest.approx(1e-5)  # max(10 lam, 1e-5): above the 1e-6 switch, so the next model is IRLS
    nxt = F.lm_step("chinchilla", new, X, log_L, 1e-3)
    assert float(nxt.value) < float(s0.value) and float(nxt.lam) == pytest.approx(1e-6)  # IRLS step accepted
