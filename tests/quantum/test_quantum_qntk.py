"""QNTK identities: closed form (single qubit), Gram vs Fourier form, frequency-gradient identity, residual ODE,
frozen-kernel solution against scipy's expm, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from jaxlab.quantum import (
    QNNConfig,
    coefficient_jacobian,
    empirical_ntk,
    frequency_gradient,
    grid,
    init_qnn_params,
    linearized_residual,
    mse_loss,
    qntk,
    qntk_fourier,
    residual_spectrum,
)
from jaxlab.quantum.claims import _single_qubit


@pytest.mark.slow  # the quick claim single_qubit_closed_form checks the same closed form
def test_single_qubit_qntk_closed_form():
    t1, t2 = 0.9, -2.3
    xs = jnp.linspace(-2.0, 2.0, 5)
    K = np.asarray(empirical_ntk(_single_qubit, jnp.array([t1, t2]), xs, xs[:3]))
    d1 = -np.sin(t1) * np.cos(t2) - np.cos(t1) * np.sin(t2) * np.cos(xs)
    d2 = -np.cos(t1) * np.sin(t2) - np.sin(t1) * np.cos(t2) * np.cos(xs)
    np.testing.assert_allclose(K, np.outer(d1, d1[:3]) + np.outer(d2, d2[:3]), atol=1e-14)


def test_gram_equals_fourier_form_and_identities():
    cfg = QNNConfig(2, 2)
    p = init_qnn_params(jax.random.key(0), cfg)
    xs = jnp.array([0.1, 1.3, 2.9, 4.0, 5.5])

    W = 4
    M = 2 * W + 1

    @jax.jit
    def run(p):
        return qntk(p, xs, xs, cfg), qntk_fourier(p, cfg), coefficient_jacobian(p, cfg), qntk(p, grid(M), grid(M), cfg)

    K, G, J, Kg = (np.asarray(a) for a in run(p))
    E = np.exp(1j * np.outer(np.asarray(xs), np.arange(-W, W + 1)))
    np.testing.assert_allclose(K, np.real(E @ G @ E.conj().T), atol=1e-12)
    np.testing.assert_allclose(G, J @ J.conj().T, atol=1e-14)
    assert np.linalg.eigvalsh(K).min() > -1e-12 and np.linalg.eigvalsh(G).min() > -1e-12
    # Parseval on the coefficient Jacobian: sum_w |J_wj|^2 = mean over the grid of (d_j f)^2; trace(G) likewise
    assert np.trace(G).real == pytest.approx(np.trace(Kg) / M, rel=1e-12)


@pytest.mark.slow  # the quick claims frequency_gradient_identity / simulator_matches_dense_reference
def test_frequency_gradient_identity_and_bound():
    cfg = QNNConfig(1, 3, "ry")
    p = init_qnn_params(jax.random.key(4), cfg)
    x = grid(16)
    y = 0.5 * jnp.cos(2 * x) - 0.2 * jnp.sin(7 * x)  # w = 7 is outside the spectrum (W = 3)
    x15 = grid(15)
    y15 = 0.5 * jnp.cos(2 * x15) - 0.2 * jnp.sin(7 * x15)

    @jax.jit
    def run(p):
        total, per = frequency_gradient(p, x, y, cfg)
        g = jax.grad(mse_loss)(p, x, y, cfg)
        r15 = residual_spectrum(p, x15, y15, cfg)
        return total, per, g, residual_spectrum(p, x, y, cfg, degree=3), mse_loss(p, x15, y15, cfg), r15

    total, per, g, r_hat, loss15, r15 = (np.asarray(a) for a in run(p))
    np.testing.assert_allclose(total, g, atol=1e-13)
    bound = 2 * np.abs(r_hat[3:]) * 1.0  # |g_w,j| <= 2 |r_w| ||O|| (pair folded), ||O|| = 1
    bound[0] /= 2
    assert np.all(np.abs(per) <= bound[:, None] + 1e-14)
    # Parseval: loss = 1/2 sum_w |r_hat_w|^2 over the full DFT of an odd grid (M = 15, w = -7..7)
    assert float(loss15) == pytest.approx(0.5 * float(np.sum(np.abs(r15) ** 2)), rel=1e-12)


def test_linearized_residual_matches_expm_and_gd():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5))
    G = A @ A.conj().T
    r0 = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    ts = jnp.array([0.0, 0.3, 1.0])
    out = np.asarray(linearized_residual(jnp.asarray(G), jnp.asarray(r0), 0.5, ts))
    for k, t in enumerate(np.asarray(ts)):
        np.testing.assert_allclose(out[k], scipy.linalg.expm(-0.5 * t * G) @ r0, atol=1e-12)
    with pytest.raises(ValueError, match="Hermitian"):
        linearized_residual(jnp.asarray(A), jnp.asarray(r0), 0.1, 1.0)
    with pytest.raises(ValueError, match="positive semidefinite"):
        linearized_residual(jnp.asarray(-G), jnp.asarray(r0), 0.1, 1.0)


@pytest.mark.slow  # the claim residual_ode_is_second_order (not quick) measures the same ratio
def test_one_gd_step_follows_residual_ode():
    cfg = QNNConfig(1, 2)
    p = init_qnn_params(jax.random.key(2), cfg)
    x = grid(12)
    y = 0.3 * jnp.cos(x) + 0.2 * jnp.sin(2 * x)

    @jax.jit
    def err(eta):
        G = qntk_fourier(p, cfg)
        r0 = residual_spectrum(p, x, y, cfg, degree=2)
        r1 = residual_spectrum(p - eta * jax.grad(mse_loss)(p, x, y, cfg), x, y, cfg, degree=2)
        return jnp.linalg.norm(r1 - (r0 - eta * G @ r0))

    ratio = float(err(2e-3) / err(1e-3))
    assert 3.5 < ratio < 4.5


def test_bad_inputs_raise():
    cfg = QNNConfig(2, 2)
    p = init_qnn_params(jax.random.key(0), cfg)
    x = grid(16)
    with pytest.raises(ValueError, match="y_grid must have the grid's length 16"):
        residual_spectrum(p, x, jnp.zeros(15), cfg)
    with pytest.raises(ValueError, match="equispaced"):
        residual_spectrum(p, x.at[3].set(0.5), jnp.zeros(16), cfg)
    with pytest.raises(ValueError, match=r"at least 2W \+ 1 = 9"):
        frequency_gradient(p, grid(8), jnp.zeros(8), cfg)
    with pytest.raises(ValueError, match="degree must be >= 4"):
        qntk_fourier(p, cfg, degree=2)
