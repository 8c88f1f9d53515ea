"""Fourier tools: spectra and redundancies (closed forms), exact FFT coefficients, coefficient Jacobian, bad inputs."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.quantum import (
    QNNConfig,
    coefficient_jacobian,
    encoding_spectrum,
    eval_fourier,
    fourier_coefficients,
    fourier_coeffs_of,
    grid,
    grid_coefficients,
    init_qnn_params,
    max_frequency,
    qnn_apply,
    spectrum_from_eigenvalues,
)
from jaxlab.quantum.reference import dense_qnn


@pytest.mark.parametrize(("n", "L"), [(1, 1), (1, 3), (2, 2), (3, 2), (2, 5)])
def test_unary_redundancy_is_binomial(n, L):
    freqs, red = encoding_spectrum(QNNConfig(n, L))
    N = n * L
    np.testing.assert_array_equal(freqs, np.arange(-N, N + 1))
    np.testing.assert_array_equal(red, [math.comb(2 * N, N + w) for w in range(-N, N + 1)])
    assert red.sum() == 4**N


def test_n3_redundancies_20_15_6_1():
    np.testing.assert_array_equal(encoding_spectrum(QNNConfig(3, 1))[1][3:], [20, 15, 6, 1])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_ternary_one_layer_spectrum_is_dense(n):
    freqs, red = encoding_spectrum(QNNConfig(n, 1, scales="ternary"))
    W = (3**n - 1) // 2
    np.testing.assert_array_equal(freqs, np.arange(-W, W + 1))
    assert red.sum() == 4**n


def test_spectrum_from_generic_eigenvalues():
    # a qutrit generator with eigenvalues (-1, 0, 1) and a half-integer qubit gate: pair count prod(dim^2) = 36
    freqs, red = spectrum_from_eigenvalues([(-1.0, 0.0, 1.0), (-0.25, 0.25)])
    assert red.sum() == 36 and freqs.dtype.kind == "f"
    np.testing.assert_allclose(freqs, -freqs[::-1])
    np.testing.assert_array_equal(red, red[::-1])
    assert float(freqs.max()) == pytest.approx(2.5)


def test_fourier_coefficients_of_known_polynomial():
    M = 11
    x = grid(M)
    f = 0.3 + np.cos(x) - 2 * np.sin(3 * x)  # c_1 = c_-1 = 1/2, c_3 = i, c_-3 = -i (e^{+iwx} convention)
    c = np.asarray(fourier_coefficients(jnp.asarray(f), 4))
    want = np.zeros(9, complex)
    want[4], want[5], want[3], want[7], want[1] = 0.3, 0.5, 0.5, 1j, -1j
    np.testing.assert_allclose(c, want, atol=1e-14)
    xs = jnp.linspace(-4.0, 9.0, 17)
    np.testing.assert_allclose(
        np.asarray(eval_fourier(jnp.asarray(c), xs)), 0.3 + np.cos(xs) - 2 * np.sin(3 * xs), atol=1e-13
    )
    # shifted grid x_m = x0 + 2 pi m / M
    x0 = 0.7
    c2 = grid_coefficients(jnp.asarray(0.3 + np.cos(x + x0) - 2 * np.sin(3 * (x + x0))), x + x0, 4)
    np.testing.assert_allclose(np.asarray(c2), want, atol=1e-13)


def test_qnn_coefficients_exact_and_hermitian():
    cfg = QNNConfig(1, 2)
    p = init_qnn_params(jax.random.key(0), cfg)
    xs = jnp.linspace(0.1, 6.0, 13)

    @jax.jit
    def run(p):
        c = fourier_coeffs_of(lambda x: qnn_apply(p, x, cfg), 5)
        return c, eval_fourier(c, xs), jax.vmap(lambda x: qnn_apply(p, x, cfg))(xs)

    c, fc, fx = (np.asarray(a) for a in run(p))
    assert np.max(np.abs(c[:3])) < 1e-14 and np.max(np.abs(c[-3:])) < 1e-14  # |w| > 2 vanish
    np.testing.assert_allclose(c, c[::-1].conj(), atol=1e-15)
    np.testing.assert_allclose(fc, fx, atol=1e-13)


def test_coefficient_jacobian_matches_finite_differences():
    cfg = QNNConfig(1, 2)
    p = init_qnn_params(jax.random.key(3), cfg)
    J, J4 = (
        np.asarray(a) for a in jax.jit(lambda p: (coefficient_jacobian(p, cfg), coefficient_jacobian(p, cfg, 4)))(p)
    )
    assert J.shape == (5, p.size)
    xs = np.asarray(grid(5))
    h = 1e-6
    for j in (0, 4, 8):
        e = np.zeros(p.size)
        e[j] = h
        e = e.reshape(p.shape)
        fd = [dense_qnn(np.asarray(p) + e, x, cfg) - dense_qnn(np.asarray(p) - e, x, cfg) for x in xs]
        c = np.fft.fft(np.array(fd) / (2 * h)) / 5  # numpy reference: FFT order w = 0, 1, 2, -2, -1
        np.testing.assert_allclose(J[:, j], c[[3, 4, 0, 1, 2]], atol=1e-8)
    # padding the degree adds zero rows
    np.testing.assert_allclose(J4[2:-2], J, atol=1e-14)
    assert np.max(np.abs(J4[:2])) < 1e-14


def test_bad_inputs_raise():
    cfg = QNNConfig(2, 3)
    p = init_qnn_params(jax.random.key(0), cfg)
    with pytest.raises(ValueError, match="degree must be >= 6"):
        coefficient_jacobian(p, cfg, degree=3)
    with pytest.raises(ValueError, match="at least 2\\*degree \\+ 1 = 9"):
        fourier_coefficients(jnp.ones(8), 4)
    with pytest.raises(ValueError, match="equispaced"):
        grid_coefficients(jnp.ones(5), jnp.array([0.0, 1.0, 2.0, 3.5, 4.0]))
    with pytest.raises(ValueError, match="scales must be integers"):
        max_frequency(QNNConfig(2, 1, scales=(1.0, 0.5)))
    assert max_frequency(QNNConfig(2, 2, scales="binary")) == 6
