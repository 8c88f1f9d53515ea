"""Training (optax + lax.scan) and spectral metrics: recorded residual spectra, learning times, Spearman, MLP and
Fourier-feature baselines with their empirical NTK, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.stats

from jaxlab.quantum import (
    QNNConfig,
    empirical_ntk,
    ff_mlp_apply,
    fit,
    fourier_features,
    gradient_shares,
    grid,
    init_qnn_params,
    learning_times,
    mlp_apply,
    mlp_init,
    mse_loss,
    qnn_apply,
    relative_residuals,
    sample_ff_matrix,
    spearman,
    train_init,
    train_step,
)


def test_fit_records_residual_spectrum_and_matches_manual_steps():
    cfg = QNNConfig(1, 2)
    p = init_qnn_params(jax.random.key(0), cfg)
    x = grid(12)
    y = 0.4 * jnp.cos(x) + 0.3 * jnp.cos(2 * x)
    opt = optax.adam(0.05)
    st, tr = jax.jit(lambda p: fit(train_init(p, opt), x, y, cfg, opt, 20, 5, freqs=(1, 2)))(p)
    assert tr.loss.shape == (4,) and tr.r_hat.shape == (4, 2)
    np.testing.assert_array_equal(np.asarray(tr.steps), [4, 9, 14, 19])
    # the same 20 steps by hand; the record at step 19 is taken before the 20th update
    step = jax.jit(lambda s: train_step(s, x, y, cfg, opt, (1, 2)))
    s = train_init(p, opt)
    for _ in range(19):
        s, _ = step(s)
    s, info = step(s)  # the record at step 19 is taken before the 20th update
    np.testing.assert_allclose(np.asarray(tr.r_hat[-1]), np.asarray(info.r_hat), atol=1e-12)
    np.testing.assert_allclose(np.asarray(st.params), np.asarray(s.params), atol=1e-12)
    assert float(info.loss) == pytest.approx(float(tr.loss[-1]), rel=1e-12)
    # r_hat is the residual's Fourier coefficient: compare with the FFT of the residual on the grid
    r = np.asarray(jax.vmap(lambda xi: qnn_apply(st.params, xi, cfg))(x) - y)
    np.testing.assert_allclose(np.fft.fft(r)[[1, 2]] / 12, np.asarray(step(st)[1].r_hat), atol=1e-12)
    assert float(mse_loss(st.params, x, y, cfg)) < float(tr.loss[0])


def test_metrics_against_references():
    eps = jnp.array([[1.0, 0.9], [0.5, 0.2], [0.08, 0.15], [0.01, 0.12]])
    np.testing.assert_array_equal(np.asarray(learning_times(eps, 0.1)), [2.0, np.inf])
    np.testing.assert_array_equal(np.asarray(learning_times(eps, 0.2, jnp.array([0, 10, 20, 30]))), [20.0, 10.0])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(12), rng.integers(0, 4, 12).astype(float)  # ties in b
    assert float(spearman(jnp.asarray(a), jnp.asarray(b))) == pytest.approx(scipy.stats.spearmanr(a, b)[0], abs=1e-12)
    y_hat = jnp.array([0.5j, 0.2, 0.0, 0.2, -0.5j])
    r_hat = jnp.array([[0.1j, 0.1, 0.3, 0.1, -0.1j]])
    np.testing.assert_allclose(np.asarray(relative_residuals(r_hat, y_hat, jnp.array([1, 2]))), [[0.5, 0.2]])
    sh = np.asarray(gradient_shares(jnp.array([[3.0, 4.0], [0.0, 5.0], [0.0, 0.0]])))
    np.testing.assert_allclose(sh, [0.5, 0.5, 0.0])


def test_mlp_and_fourier_features():
    key = jax.random.key(0)
    params = mlp_init(key, (1, 8, 1))
    W1, b1 = params[0]
    W2, b2 = params[1]
    B = sample_ff_matrix(key, 4, 3.0)
    ff = mlp_init(key, (8, 16, 1))

    @jax.jit
    def run(params, ff, B):
        g = fourier_features(0.3, B)
        return mlp_apply(params, 0.7), g, ff_mlp_apply(ff, 0.3, B), mlp_apply(ff, g, "relu")

    v, g, vff, vref = run(params, ff, B)
    assert float(v) == pytest.approx(float((jnp.tanh(0.7 * W1 + b1) @ W2 + b2)[0, 0]))
    np.testing.assert_allclose(
        np.asarray(g), np.concatenate([np.cos(2 * np.pi * B * 0.3), np.sin(2 * np.pi * B * 0.3)])
    )
    assert float(vff) == pytest.approx(float(vref))
    xs = jnp.linspace(-1.0, 1.0, 6)
    K = np.asarray(empirical_ntk(mlp_apply, params, xs, xs))
    # reference: explicit gradients of the 1-8-1 tanh network
    h = np.tanh(np.asarray(xs)[:, None] * np.asarray(W1) + np.asarray(b1))
    dW2, db2 = h, np.ones((6, 1))
    dpre = (1 - h**2) * np.asarray(W2)[:, 0]
    dW1, db1 = dpre * np.asarray(xs)[:, None], dpre
    Jm = np.concatenate([dW1, db1, dW2, db2], axis=1)
    np.testing.assert_allclose(K, Jm @ Jm.T, atol=1e-12)


def test_bad_inputs_raise():
    cfg = QNNConfig(1, 1)
    p = init_qnn_params(jax.random.key(0), cfg)
    opt = optax.sgd(0.1)
    with pytest.raises(ValueError, match="y must have the length of x"):
        fit(train_init(p, opt), grid(8), jnp.zeros(7), cfg, opt, 4)
    with pytest.raises(ValueError, match="multiple of thin"):
        fit(train_init(p, opt), grid(8), jnp.zeros(8), cfg, opt, 5, 2)
    with pytest.raises(ValueError, match="equispaced"):
        fit(train_init(p, opt), jnp.linspace(0, 1, 8) ** 2, jnp.zeros(8), cfg, opt, 4, freqs=(1,))
    with pytest.raises(ValueError, match="activation must be one of"):
        mlp_apply(mlp_init(jax.random.key(0), (1, 2, 1)), 0.1, "gelu")
