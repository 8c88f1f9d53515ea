"""Kernels and discrepancies against numpy/scipy on the same inputs (float64)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats
from scipy.linalg import eigh
from scipy.spatial.distance import cdist, pdist

from jaxlab import kernels as K

RNG = np.random.default_rng(0)
X = RNG.standard_normal((23, 3))
Y = RNG.standard_normal((17, 3)) + 0.4
WX = RNG.dirichlet(np.ones(23))
WY = RNG.standard_normal(17)  # signed weights are allowed
ELL = 0.8


def test_sqdist_matches_scipy_and_is_exactly_zero_on_the_diagonal():
    np.testing.assert_allclose(K.sqdist(X, Y), cdist(X, Y, "sqeuclidean"), atol=1e-12)
    D = K.sqdist(X)
    assert float(jnp.max(jnp.abs(jnp.diag(D)))) == 0.0
    np.testing.assert_allclose(K.distance_matrix(X, Y), cdist(X, Y), atol=1e-12)


def test_sqdist_is_clamped_at_zero_for_near_duplicates():
    Z = np.full((4, 3), 1e4) + np.array([0.0, 1e-9, 0.0, 0.0])[:, None]
    assert float(jnp.min(K.sqdist(Z, Z + 1e-13))) >= 0.0


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 10_000))
def test_sqdist_properties(n, d, seed):
    A = np.random.default_rng(seed).standard_normal((n, d)) * 3
    D = np.asarray(K.sqdist(A))
    assert (D >= 0).all()
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    np.testing.assert_allclose(D, cdist(A, A, "sqeuclidean"), atol=1e-10)


def test_gaussian_kernel_and_gram():
    ref = np.exp(-cdist(X, Y, "sqeuclidean") / (2 * ELL**2))
    np.testing.assert_allclose(K.gram(X, Y, lengthscale=ELL), ref, atol=1e-14)
    assert float(K.gaussian_kernel(X[0], Y[0], ELL)) == pytest.approx(ref[0, 0], rel=1e-14)
    G = K.gram(X, lengthscale=ELL)
    assert np.linalg.eigvalsh(np.asarray(G)).min() > -1e-12


@pytest.mark.parametrize("name,nu", [("matern12", 0.5), ("matern32", 1.5), ("matern52", 2.5)])
def test_matern_kernels_match_the_bessel_form(name, nu):
    r = cdist(X, Y)
    u = np.sqrt(2 * nu) * r / ELL
    ref = 2 ** (1 - nu) / special.gamma(nu) * u**nu * special.kv(nu, u)
    np.testing.assert_allclose(K.gram(X, Y, lengthscale=ELL, kernel=name), ref, rtol=1e-10)


def test_imq_kernel():
    ref = (1 + cdist(X, Y, "sqeuclidean") / ELL**2) ** -0.5
    np.testing.assert_allclose(K.gram(X, Y, lengthscale=ELL, kernel="imq"), ref, rtol=1e-13)


def test_mmd2_matches_a_direct_double_sum():
    k = lambda A, B: np.exp(-cdist(A, B, "sqeuclidean") / (2 * ELL**2))  # noqa: E731
    ref = WX @ k(X, X) @ WX - 2 * WX @ k(X, Y) @ WY + WY @ k(Y, Y) @ WY
    assert float(K.mmd2(X, WX, Y, WY, lengthscale=ELL)) == pytest.approx(ref, rel=1e-12)
    ref_u = k(X, X).mean() - 2 * k(X, Y).mean() + k(Y, Y).mean()
    assert float(K.mmd2(X, None, Y, None, lengthscale=ELL)) == pytest.approx(ref_u, rel=1e-12)
    assert abs(float(K.mmd2(X, WX, X, WX, lengthscale=ELL))) < 1e-14


def test_mmd2_is_differentiable_and_zero_gradient_at_equality():
    g = jax.grad(lambda A: K.mmd2(A, None, jnp.asarray(X), None, lengthscale=ELL))(jnp.asarray(X))
    assert float(jnp.max(jnp.abs(g))) < 1e-12


def _stein_kernel_by_autodiff(x, y, sx, sy, ell):
    k = lambda a, b: jnp.exp(-jnp.sum((a - b) ** 2) / (2 * ell**2))  # noqa: E731
    gx = jax.grad(k, 0)(x, y)
    gy = jax.grad(k, 1)(x, y)
    trace = jnp.trace(jax.jacfwd(jax.grad(k, 1), 0)(x, y))
    return trace + gx @ sy + gy @ sx + k(x, y) * (sx @ sy)


def test_stein_gram_matches_autodiff_definition():
    sX, sY = -X, -(Y - 1.0)
    ref = jax.vmap(lambda x, sx: jax.vmap(lambda y, sy: _stein_kernel_by_autodiff(x, y, sx, sy, ELL))(
        jnp.asarray(Y), jnp.asarray(sY)))(jnp.asarray(X), jnp.asarray(sX))
    np.testing.assert_allclose(K.stein_gram(X, sX, Y, sY, lengthscale=ELL), ref, atol=1e-12)
    Kp = K.stein_gram(X, sX, lengthscale=ELL)
    np.testing.assert_allclose(Kp, Kp.T, atol=1e-12)
    assert float(K.ksd(X, WX, sX, lengthscale=ELL)) == pytest.approx(np.sqrt(WX @ np.asarray(Kp) @ WX), rel=1e-12)


def test_energy_distance_matches_scipy_in_one_dimension():
    a, b = RNG.standard_normal(30), RNG.standard_normal(20) * 1.5 + 0.3
    wa, wb = RNG.uniform(0.1, 1, 30), RNG.uniform(0.1, 1, 20)
    ours = K.energy_distance(a[:, None], wa / wa.sum(), b[:, None], wb / wb.sum())
    ref = stats.energy_distance(a, b, wa, wb)  # scipy returns the square root
    assert np.sqrt(float(ours)) == pytest.approx(ref, rel=1e-10)


def test_energy_distance_in_several_dimensions_matches_double_sums():
    ref = 2 * cdist(X, Y).mean() - cdist(X, X).mean() - cdist(Y, Y).mean()
    assert float(K.energy_distance(X, None, Y, None)) == pytest.approx(ref, rel=1e-12)


def test_weighted_moments_and_foerstner():
    m, C = K.weighted_moments(X, WX)
    np.testing.assert_allclose(m, WX @ X, atol=1e-14)
    np.testing.assert_allclose(C, np.cov(X.T, aweights=WX, bias=True), atol=1e-13)
    C_ref = np.cov(Y.T)
    lam = eigh(np.asarray(C), C_ref, eigvals_only=True)
    assert float(K.foerstner_distance(C, C_ref)) == pytest.approx(np.sqrt(np.sum(np.log(lam) ** 2)), rel=1e-10)
    assert float(K.foerstner_distance(C_ref, C_ref)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("method", ["select", "sort"])
def test_pairwise_distance_quantile(method):
    D = pdist(X)
    f = jax.jit(lambda A, q: K.pairwise_distance_quantile(A, q, method=method))
    for q in (0.0, 0.25, 0.5, 0.9, 1.0):
        assert float(f(X, q)) == pytest.approx(np.quantile(D, q), rel=1e-12)


def test_float32_in_float32_out():
    X32 = jnp.asarray(X, jnp.float32)
    assert K.gram(X32, lengthscale=1.0).dtype == jnp.float32
    assert K.mmd2(X32, None, X32, None, lengthscale=1.0).dtype == jnp.float32


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="lengthscale must be > 0"):
        K.gram(X, lengthscale=0.0)
    with pytest.raises(ValueError, match="kernel must be one of"):
        K.gram(X, lengthscale=1.0, kernel="laplace")
    with pytest.raises(ValueError, match="Y must have 3 columns"):
        K.sqdist(X, Y[:, :2])
    with pytest.raises(ValueError, match=r"wx must have shape \(23\)"):
        K.mmd2(X, WX[:5], Y, None, lengthscale=1.0)
    with pytest.raises(TypeError, match="X must have a float dtype"):
        K.gram(np.arange(6).reshape(3, 2), lengthscale=1.0)
    with pytest.raises(ValueError, match="scores_Y is required"):
        K.stein_gram(X, X, Y, lengthscale=1.0)
    with pytest.raises(ValueError, match="q must lie in"):
        K.pairwise_distance_quantile(X, 1.5)
    with pytest.raises(ValueError, match="at least 2 rows"):
        K.pairwise_distance_quantile(X[:1], 0.5)


def _with(a, i, value):
    a = np.array(a)
    a.flat[i] = value
    return jnp.asarray(a)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_inputs_raise_eagerly_and_under_jit(bad):
    from jaxlab_testing import raises_eager_and_jit

    Xb, Yb = _with(X, 4, bad), _with(Y, 0, bad)
    raises_eager_and_jit(lambda A: K.gram(A, lengthscale=1.0), Xb, match="X must be finite")
    raises_eager_and_jit(lambda A, B: K.gram(A, B, lengthscale=1.0), X, Yb, match="Y must be finite")
    raises_eager_and_jit(lambda A: K.distance_matrix(A), Xb, match="X must be finite")
    raises_eager_and_jit(lambda A: K.sqdist(A), Xb, match="X must be finite")
    raises_eager_and_jit(lambda A: K.pairwise_distance_quantile(A, 0.5), Xb, match="X must be finite")
    raises_eager_and_jit(lambda A, B: K.mmd2(A, None, B, None, lengthscale=1.0), Xb, Y, match="X must be finite")
    raises_eager_and_jit(lambda A, B: K.mmd2(A, None, B, None, lengthscale=1.0), X, Yb, match="Y must be finite")
    raises_eager_and_jit(lambda w: K.mmd2(X, w, Y, None, lengthscale=1.0), _with(WX, 3, bad), match="wx must be finite")
    raises_eager_and_jit(lambda A, B: K.energy_distance(A, None, B, None), Xb, Y, match="X must be finite")
    raises_eager_and_jit(lambda w: K.energy_distance(X, None, Y, w), _with(np.ones(len(Y)) / len(Y), 1, bad),
                         match="wy must be finite")
    raises_eager_and_jit(lambda S: K.ksd(X, None, S, lengthscale=1.0), _with(X, 2, bad),
                         match="scores must be finite")
    raises_eager_and_jit(lambda A: K.ksd(A, None, X, lengthscale=1.0), Xb, match="X must be finite")


def test_values_are_checked_under_jit_not_just_eagerly():
    from jaxlab_testing import raises_eager_and_jit

    raises_eager_and_jit(lambda ell: K.gram(X, lengthscale=ell), -1.0, match="lengthscale must be > 0")
    raises_eager_and_jit(lambda ell: K.mmd2(X, None, Y, None, lengthscale=ell), jnp.nan, match="lengthscale")
    raises_eager_and_jit(lambda q: K.pairwise_distance_quantile(X, q), 1.5, match="q must lie in")
    # and a valid traced value still computes the same number
    np.testing.assert_allclose(jax.jit(lambda ell: K.gram(X, lengthscale=ell))(0.7), K.gram(X, lengthscale=0.7),
                               rtol=1e-14)


def test_an_empty_sample_is_rejected_at_trace_time():
    empty = jnp.zeros((0, 3))
    for fn in (lambda A: K.mmd2(A, None, Y, None, lengthscale=1.0), lambda A: K.gram(A, lengthscale=1.0),
               lambda A: K.energy_distance(A, None, Y, None), lambda A: K.ksd(A, None, A, lengthscale=1.0)):
        with pytest.raises(ValueError, match="X must hold at least one point"):
            fn(empty)
        with pytest.raises(ValueError, match="X must hold at least one point"):
            jax.jit(fn)(empty)


class KernelsWithAndWithoutJit(chex.TestCase):
    """The kernels give the same numbers eagerly and under ``jit`` (chex variants)."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_mmd2_energy_and_gram(self):
        f = self.variant(lambda A, B, w: (K.mmd2(A, w, B, None, lengthscale=ELL), K.energy_distance(A, w, B, None),
                                          K.gram(A, lengthscale=ELL)))
        mmd, energy, gram = f(X, Y, WX)
        k = lambda A, B: np.exp(-cdist(A, B, "sqeuclidean") / (2 * ELL**2))  # noqa: E731
        wy = np.full(len(Y), 1 / len(Y))
        np.testing.assert_allclose(mmd, WX @ k(X, X) @ WX - 2 * WX @ k(X, Y) @ wy + wy @ k(Y, Y) @ wy, rtol=1e-12)
        d = lambda A, B: cdist(A, B)  # noqa: E731
        np.testing.assert_allclose(energy, 2 * WX @ d(X, Y) @ wy - WX @ d(X, X) @ WX - wy @ d(Y, Y) @ wy, rtol=1e-12)
        np.testing.assert_allclose(gram, k(X, X), rtol=1e-13)

    @chex.variants(with_jit=True, without_jit=True)
    def test_a_negative_lengthscale_raises(self):
        f = self.variant(lambda ell: K.gram(X, lengthscale=ell))
        with self.assertRaisesRegex(Exception, "lengthscale must be > 0"):
            jax.block_until_ready(f(-1.0))
