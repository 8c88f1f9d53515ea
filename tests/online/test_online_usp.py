"""USP coefficients, preconditioning, ARX features, the annihilation identity and the complex Chebyshev bound
(claims `online:chebyshev_coefficients_match_closed_forms`, `online:chebyshev_sup_norm_is_two_to_one_minus_n`,
`online:coefficient_growth_lemma`, `online:annihilation_identity`, `online:complex_chebyshev_joukowski_identity`)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.polynomial import chebyshev as npcheb
from numpy.polynomial import legendre as npleg

from jaxlab.online import lds, usp

PHI_STAR = 0.5974064


def test_chebyshev_coeffs_match_spec_examples():
    ex = {2: [1, 0, -0.5], 3: [1, 0, -0.75, 0], 5: [1, 0, -1.25, 0, 0.3125, 0],
          8: [1, 0, -2, 0, 1.25, 0, -0.25, 0, 0.0078125]}
    for n, c in ex.items():
        np.testing.assert_allclose(usp.chebyshev_coeffs(n), c, rtol=0, atol=1e-15)
    np.testing.assert_allclose(usp.legendre_coeffs(5), [1, 0, -10 / 9, 0, 5 / 21, 0], rtol=0, atol=1e-15)
    assert usp.chebyshev_coeffs(4, dtype=jnp.float32).dtype == jnp.float32


@pytest.mark.parametrize("n", [1, 2, 7, 12, 20])
def test_coeffs_match_numpy_polynomial(n):
    cheb = npcheb.cheb2poly(np.eye(n + 1)[n])[::-1]
    np.testing.assert_allclose(usp.chebyshev_coeffs(n), cheb / cheb[0], rtol=1e-13, atol=1e-13)
    leg = npleg.leg2poly(np.eye(n + 1)[n])[::-1]
    np.testing.assert_allclose(usp.legendre_coeffs(n), leg / leg[0], rtol=1e-12, atol=1e-12)


def test_sup_norm_on_lobatto_points():
    x = np.cos(np.pi * np.arange(100_000) / 99_999)
    for n in (5, 10):
        sup = np.max(np.abs(np.polyval(np.asarray(usp.chebyshev_coeffs(n)), x)))
        np.testing.assert_allclose(sup, 2.0 ** (1 - n), rtol=1e-9)
        np.testing.assert_allclose(np.max(np.abs(usp.monic_chebyshev_eval(x, n))), 2.0 ** (1 - n), rtol=1e-9)
    leg = np.max(np.abs(np.polyval(np.asarray(usp.legendre_coeffs(5)), x)))
    np.testing.assert_allclose(leg, 0.126984, atol=1e-6)
    assert leg > 2.0**-4


def test_l1_norm_and_coefficient_growth():
    for n in range(1, 31):
        l1 = np.abs(np.asarray(usp.chebyshev_coeffs(n))).sum()
        np.testing.assert_allclose(l1, ((1 + math.sqrt(2)) ** n + (1 - math.sqrt(2)) ** n) / 2**n, rtol=1e-12)
    np.testing.assert_allclose(np.abs(np.asarray(usp.chebyshev_coeffs(16))).sum(), 20.320343, rtol=1e-7)
    for n in range(1, 41):
        assert np.abs(np.asarray(usp.chebyshev_coeffs(n))).max() <= 2 ** (0.3 * n)


def test_coeffs_kinds():
    np.testing.assert_array_equal(usp.coeffs("none", 3), [1.0])
    np.testing.assert_array_equal(usp.coeffs("legendre", 4), usp.legendre_coeffs(4))


@pytest.fixture(scope="module")
def system():
    params = lds.random_lds(jax.random.key(3), 20, d_in=2, d_out=2)
    u = jax.random.normal(jax.random.key(4), (120, 2))
    y, x = lds.simulate(jax.random.key(5), params, u)
    return params, u, y, x


@pytest.mark.parametrize("n", [3, 8])
def test_annihilation_identity(system, n):
    params, u, y, x = system
    c = usp.chebyshev_coeffs(n)
    theta = usp.usp_predictor(params, c)
    y_star = usp.arx_features(y, u, n) @ theta.T
    resid = (params.C @ usp.matrix_polynomial(params.A, c) @ x.T).T  # row k is C p(A) x at time k+1
    y, y_star, resid = np.asarray(y), np.asarray(y_star), np.asarray(resid)
    scale = np.abs(y).max()
    assert np.abs((y - y_star)[n:] - resid[:-n]).max() <= 1e-10 * scale
    # before time n+1 the history is zero-padded: the identity holds with x_{t-n} = 0
    assert np.abs((y - y_star)[:n]).max() <= 1e-10 * scale


def test_annihilation_with_feedthrough(system):
    params, u, y, x = system
    D = jnp.array([[0.3, -0.2], [0.1, 0.5]])
    p = params._replace(D=D)
    yd = y + u @ D.T
    n = 5  # odd: c_n = 0, so the D term is fully inside the features
    c = usp.chebyshev_coeffs(n)
    y_star = usp.arx_features(yd, u, n) @ usp.usp_predictor(p, c).T
    resid = (params.C @ usp.matrix_polynomial(params.A, c) @ x.T).T
    assert float(jnp.max(jnp.abs((yd - y_star)[n:] - resid[:-n]))) <= 1e-10 * float(jnp.max(jnp.abs(yd)))


def test_precondition_roundtrip_and_definition(system):
    _, _, y, _ = system
    for c in (usp.chebyshev_coeffs(8), usp.legendre_coeffs(5), jnp.array([1.0, -1.0])):
        yt = usp.precondition(y, c)
        ref = np.stack([np.convolve(np.asarray(y[:, i]), np.asarray(c))[: y.shape[0]] for i in range(2)], 1)
        np.testing.assert_allclose(yt, ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(usp.unprecondition(yt, c), y, rtol=1e-12, atol=1e-12 * float(jnp.abs(y).max()))
    np.testing.assert_allclose(usp.precondition(y[:, 0], jnp.array([1.0, -1.0]))[1:], jnp.diff(y[:, 0]), atol=1e-14)


def test_arx_feature_layout():
    y = jnp.arange(1.0, 7.0).reshape(6, 1)
    u = 10 * jnp.arange(1.0, 7.0)
    a = usp.arx_features(y, u, 2)
    # time 3 (row 2): y lags (y_2, y_1) then inputs (u_3, u_2)
    np.testing.assert_array_equal(a[2], [2.0, 1.0, 30.0, 20.0])
    np.testing.assert_array_equal(a[0], [0.0, 0.0, 10.0, 0.0])
    np.testing.assert_array_equal(usp.arx_features(y, None, 3)[4], [4.0, 3.0, 2.0])


def test_chebyshev_matrices_equal_horner(system):
    A = system[0].A
    M = usp.monic_chebyshev_matrices(A, 12)
    for n in (1, 2, 7, 12):
        np.testing.assert_allclose(M[n], usp.matrix_polynomial(A, usp.chebyshev_coeffs(n)), atol=1e-12)


def test_complex_chebyshev_bound():
    r, t = np.meshgrid(np.linspace(0.0, 1.0, 41), np.linspace(-np.pi, np.pi, 73))
    z = r * np.exp(1j * t)
    s = np.sqrt(z * z - 1)
    w = np.where(np.abs(z + s) >= np.abs(z - s), z + s, z - s)
    np.testing.assert_allclose(usp.bernstein_rho(z), np.abs(w), rtol=1e-12)
    for n in (4, 9, 16):
        want = 2.0**-n * np.abs(w**n + w ** (-n))
        np.testing.assert_allclose(np.abs(usp.monic_chebyshev_eval(z, n)), want, rtol=1e-10, atol=1e-300)
        assert np.all(np.abs(usp.monic_chebyshev_eval(z, n)) <= 2.0 ** (1 - n) * np.abs(w) ** n * (1 + 1e-12))
    np.testing.assert_allclose(usp.bernstein_rho(np.exp(1j * PHI_STAR)), 2.0, atol=1e-6)
    np.testing.assert_allclose(usp.bernstein_rho(np.exp(1j * np.array([0.05, 0.1, 0.2, 0.5]))),
                               [1.24825, 1.36469, 1.54056, 1.90872], atol=1e-5)
    np.testing.assert_allclose(usp.bernstein_rho(np.linspace(-1, 1, 11)), 1.0, atol=1e-7)


def test_jit_and_vmap(system):
    _, _u, y, _ = system
    c = usp.chebyshev_coeffs(5)
    f = jax.jit(lambda y: usp.unprecondition(usp.precondition(y, c), c))
    np.testing.assert_allclose(f(y), y, atol=1e-10)
    batch = jnp.stack([y, 2 * y])
    np.testing.assert_allclose(jax.vmap(lambda y: usp.precondition(y, c))(batch)[1], 2 * usp.precondition(y, c))


def test_bad_inputs():
    with pytest.raises(ValueError, match="n must be >= 1"):
        usp.chebyshev_coeffs(0)
    with pytest.raises(TypeError, match="n must be a Python int"):
        usp.legendre_coeffs(2.5)
    with pytest.raises(ValueError, match=r"n must be <= 64 .*float64"):
        usp.chebyshev_coeffs(65, dtype=jnp.float32)
    with pytest.raises(ValueError, match="kind must be one of"):
        usp.coeffs("hermite", 3)
    with pytest.raises(ValueError, match="mode must be one of"):
        usp.usp_vaw_run(jnp.ones(10), None, n=2, mode="fft")
    with pytest.raises(ValueError, match="lam must be > 0"):
        usp.usp_vaw_run(jnp.ones(10), None, n=2, lam=0.0)
    with pytest.raises(ValueError, match="u must have the same length as y"):
        usp.arx_features(jnp.ones(10), jnp.ones(9), 2)
    with pytest.raises(ValueError, match="y must be finite"):
        usp.precondition(jnp.array([1.0, jnp.nan]), usp.chebyshev_coeffs(2))
    with pytest.raises(TypeError, match="y must have a float dtype"):
        usp.arx_features(jnp.arange(5), None, 2)
    with pytest.raises(ValueError, match="at least one time step"):
        usp.precondition(jnp.ones((0, 2)), usp.chebyshev_coeffs(2))
    with pytest.raises(ValueError, match="needs inputs u"):
        usp.usp_vaw_run(jnp.ones(10), None, n=2, mode="precondition")
