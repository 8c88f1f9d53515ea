"""The kernels in float32 on un-centred data, against float64 on the same (float32) inputs.

The Gram trick ``|x|² + |y|² - 2 x·y`` cancels catastrophically when the points sit far from the origin: at an
offset of 1e4 in float32 most squared distances of a unit-scale cloud round to 0. The kernels centre the data
first, which is exact (a float32 subtraction of two numbers within a factor 2 of each other is exact, Sterbenz),
so their float32 error is that of a centred cloud: a few ulps of the cloud's squared radius.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.distance import cdist

from jaxlab import kernels as K

OFFSETS = [0.0, 1e3, 1e4, 1e6]
EPS32 = float(np.finfo(np.float32).eps)


def cloud(n, d, offset, seed, shift=0.0):
    Z = np.random.default_rng(seed).standard_normal((n, d)) + shift
    return (Z + offset).astype(np.float32)


def ref_sqdist(A, B):
    return cdist(np.float64(A), np.float64(B), "sqeuclidean")


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("d", [2, 16])
def test_float32_sqdist_is_accurate_far_from_the_origin(offset, d):
    X, Y = cloud(300, d, offset, 0), cloud(200, d, offset, 1, shift=0.3)
    ref_xy, ref_xx = ref_sqdist(X, Y), ref_sqdist(X, X)
    # the error bound of a centred cloud: a few ulps of its largest squared radius (~ (3 sqrt(d))^2)
    tol = 16 * EPS32 * float(np.max(np.sum((np.float64(X) - np.float64(X).mean(0)) ** 2, 1)))
    for got, ref in ((K.sqdist(X, Y), ref_xy), (K.sqdist(X), ref_xx), (jax.jit(K.sqdist)(X, Y), ref_xy)):
        assert got.dtype == jnp.float32
        assert float(np.max(np.abs(np.float64(got) - ref))) <= tol
    off_diag = ~np.eye(len(X), dtype=bool)
    # none rounds to zero (at 1e6 the float32 inputs themselves are on a 1/16 grid: some pairs coincide exactly)
    assert np.array_equal(np.asarray(K.sqdist(X))[off_diag] == 0.0, ref_xx[off_diag] == 0.0)
    np.testing.assert_allclose(np.float64(K.distance_matrix(X, Y)), np.sqrt(ref_xy), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("offset", OFFSETS)
def test_float32_gram_keeps_its_unit_diagonal_and_entries(offset):
    X = cloud(256, 16, offset, 2)
    ell = 2.0
    ref = np.exp(-ref_sqdist(X, X) / (2 * ell**2))
    for G in (K.gram(X, lengthscale=ell), K.gram(X, X, lengthscale=ell)):
        assert G.dtype == jnp.float32
        assert float(np.max(np.abs(np.float64(G) - ref))) <= 2e-6
        assert float(np.max(np.abs(np.diag(np.float64(G)) - 1.0))) <= 1e-6
    assert float(np.max(np.abs(np.diag(np.float64(K.gram(X, X, lengthscale=ell))) - 1.0))) == 0.0


def mmd2_ref(X, Y, ell):
    kxx = np.exp(-ref_sqdist(X, X) / (2 * ell**2)).mean()
    kyy = np.exp(-ref_sqdist(Y, Y) / (2 * ell**2)).mean()
    kxy = np.exp(-ref_sqdist(X, Y) / (2 * ell**2)).mean()
    return kxx - 2 * kxy + kyy


def energy_ref(X, Y):
    dxy, dxx, dyy = (np.sqrt(ref_sqdist(A, B)).mean() for A, B in ((X, Y), (X, X), (Y, Y)))
    return 2 * dxy - dxx - dyy


@pytest.mark.parametrize("offset", OFFSETS)
def test_float32_discrepancies_match_float64_far_from_the_origin(offset):
    X, Y = cloud(400, 4, offset, 3), cloud(300, 4, offset, 4, shift=0.5)
    m = float(K.mmd2(X, None, Y, None, lengthscale=1.0))
    e = float(K.energy_distance(X, None, Y, None))
    # the discrepancies are differences of O(1) means: float32 leaves ~1e-6 absolute, i.e. 1e-4 relative here
    assert m == pytest.approx(mmd2_ref(X, Y, 1.0), rel=1e-3)
    assert e == pytest.approx(energy_ref(X, Y), rel=1e-3)
    assert K.mmd2(X, None, Y, None, lengthscale=1.0).dtype == jnp.float32


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e4])
def test_float32_stein_gram_matches_float64_far_from_the_origin(offset):
    X = cloud(120, 3, offset, 5)
    mu = np.float32(offset)
    S = (mu - X).astype(np.float32)  # scores of N(offset, I)
    G32 = K.stein_gram(X, S, lengthscale=1.5)
    G64 = K.stein_gram(np.float64(X), np.float64(S), lengthscale=1.5)
    assert G32.dtype == jnp.float32
    assert float(np.max(np.abs(np.float64(G32) - np.asarray(G64)))) <= 1e-4 * float(np.max(np.abs(G64)))


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_float32_distance_quantile_far_from_the_origin(offset):
    X = cloud(60, 3, offset, 6)
    ref = np.quantile(np.sqrt(ref_sqdist(X, X))[np.triu_indices(60, 1)], 0.5)
    assert float(K.pairwise_distance_quantile(X, 0.5)) == pytest.approx(ref, rel=1e-5)


def test_centring_leaves_the_gradient_exact():
    # d/dX of sum(gram) is translation-invariant: the float64 gradient equals the autodiff of direct differences
    X = cloud(30, 3, 0.0, 7).astype(np.float64) + 5.0
    Y = cloud(20, 3, 0.0, 8).astype(np.float64) - 2.0

    def direct(A, B):
        return jnp.sum(jnp.exp(-jnp.sum((A[:, None] - B[None]) ** 2, -1) / 2.0))

    gx, gy = jax.grad(lambda A, B: jnp.sum(K.gram(A, B, lengthscale=1.0)), (0, 1))(X, Y)
    rx, ry = jax.grad(direct, (0, 1))(X, Y)
    np.testing.assert_allclose(gx, rx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gy, ry, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e4])
def test_float32_weighted_moments_far_from_the_origin(offset):
    X = cloud(500, 3, offset, 9)
    w = np.random.default_rng(10).dirichlet(np.ones(500)).astype(np.float32)
    m, C = K.weighted_moments(X, w)
    X64, w64 = np.float64(X), np.float64(w)
    m_ref = w64 @ X64
    C_ref = ((X64 - m_ref) * w64[:, None]).T @ (X64 - m_ref)
    assert C.dtype == jnp.float32
    np.testing.assert_allclose(np.float64(m), m_ref, rtol=1e-6, atol=1e-6 * (1.0 + offset))  # ulps of |x|
    np.testing.assert_allclose(np.float64(C), C_ref, atol=1e-5 * np.abs(C_ref).max())


def test_weighted_moments_with_signed_weights_are_the_central_moment():
    # float64, against the defining sums: C = sum_i w_i (x_i - m)(x_i - m)^T, m = sum_i w_i x_i, weights as given
    X = np.random.default_rng(11).standard_normal((40, 3)) + 3.0
    w = np.random.default_rng(12).standard_normal(40)
    m, C = K.weighted_moments(X, w)
    np.testing.assert_allclose(m, w @ X, rtol=1e-12)
    np.testing.assert_allclose(C, ((X - w @ X) * w[:, None]).T @ (X - w @ X), rtol=1e-10, atol=1e-10)
    u = np.random.default_rng(13).dirichlet(np.ones(40))  # weights summing to 1: the covariance
    np.testing.assert_allclose(K.weighted_moments(X, u)[1], (X * u[:, None]).T @ X - np.outer(u @ X, u @ X),
                               rtol=1e-9, atol=1e-12)
