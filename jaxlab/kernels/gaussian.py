r"""Kernels, Gram matrices, the Langevin Stein kernel and weighted discrepancies between particle sets.

Radial kernels are functions of the squared distance ``r² = ||x - y||²`` and a length scale ``ℓ``:

- Gaussian: ``k(x, y) = exp(-r² / (2ℓ²))``;
- inverse multiquadric (IMQ): ``k = (c² + r²/ℓ²)^β`` with ``c > 0``, ``β ∈ (-1, 0)`` (default ``c = 1``,
  ``β = -1/2``; Gorham & Mackey 2017);
- Matérn ν ∈ {1/2, 3/2, 5/2}: with ``u = √(2ν) r / ℓ``, ``e^{-u}``, ``(1 + u) e^{-u}``,
  ``(1 + u + u²/3) e^{-u}``.

Weighted discrepancies between ``μ = Σ_i wx_i δ_{x_i}`` and ``ν = Σ_j wy_j δ_{y_j}`` (weights need not be
positive or sum to 1; ``None`` means uniform ``1/n``):

- ``MMD²(μ, ν) = wxᵀ K_XX wx - 2 wxᵀ K_XY wy + wyᵀ K_YY wy`` (biased V-statistic; Gretton et al. 2012);
- Langevin Stein kernel of the Gaussian base kernel, with scores ``s = ∇ log π̃``:
  ``k_π(x, y) = k(x, y) [ d/ℓ² - r²/ℓ⁴ + (x - y)·(s(x) - s(y))/ℓ² + s(x)·s(y) ]`` and
  ``KSD = sqrt(wᵀ K_π w)`` (Liu, Lee & Jordan 2016; Chwialkowski et al. 2016);
- energy distance ``E = 2 E||X - Y|| - E||X - X'|| - E||Y - Y'||`` (Székely & Rizzo 2013; scipy's
  ``energy_distance`` returns ``sqrt(E)`` in 1-d);
- weighted moments ``m = Σ w_i x_i``, ``C = Σ w_i x_i x_iᵀ - m mᵀ`` and the Förstner distance
  ``sqrt(Σ_i log² λ_i)`` with ``λ`` the generalised eigenvalues of ``(C, C_ref)``.

All distances are computed on data centred at one common point (exact in the distances, and the reason the
float32 results are accurate on clouds far from the origin). All functions are pure and jit/vmap/grad-able;
values are checked eagerly and, under ``jit``, at run time.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.papers import FORSTNER, GRETTON, LIU, SZEKELY
from jaxlab.core.validation import as_array, check_positive
from jaxlab.kernels.distances import as_points, centre, pairwise_distance_quantile, safe_sqrt, sqdist, sqdist_unchecked

__all__ = [
    "KERNELS",
    "energy_distance",
    "foerstner_distance",
    "gaussian_kernel",
    "gram",
    "ksd",
    "mmd2",
    "pairwise_distance_quantile",
    "stein_gram",
    "weighted_moments",
]

def _gaussian(r2, ell):
    return jnp.exp(-r2 / (2.0 * ell**2))


def _imq(r2, ell, c=1.0, beta=-0.5):
    return (c**2 + r2 / ell**2) ** beta


def _matern(nu2: int):
    # nu2 = 2ν ∈ {1, 3, 5}
    def k(r2, ell):
        u = jnp.sqrt(float(nu2)) * safe_sqrt(r2) / ell
        poly = {1: 1.0, 3: 1.0 + u, 5: 1.0 + u + u**2 / 3.0}[nu2]
        return poly * jnp.exp(-u)

    return k


KERNELS: dict[str, Callable[[Array, Array], Array]] = {
    "gaussian": _gaussian,
    "imq": _imq,
    "matern12": _matern(1),
    "matern32": _matern(3),
    "matern52": _matern(5),
}
"""Radial kernel profiles ``k(r², ℓ)`` by name."""


def _profile(kernel: str):
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    return KERNELS[kernel]


@cites(GRETTON)
def gaussian_kernel(x: Float[Array, " d"], y: Float[Array, " d"], lengthscale) -> Float[Array, ""]:
    """Gaussian (RBF) kernel of two points, ``k(x, y) = exp(-||x - y||² / (2 ℓ²))``.

    vmap it for batches; :func:`gram` is faster for whole matrices.

    Args:
      x: ``(d,)`` float array, finite.
      y: ``(d,)`` float array, finite.
      lengthscale: ``ℓ > 0``, float or 0-d array.

    Returns:
      0-d array in ``(0, 1]``.

    Raises:
      ValueError: ``x`` or ``y`` is not 1-d, their shapes differ, either holds NaN/inf, or ``ℓ <= 0``
        (eagerly and under ``jit``).
    """
    x = as_array(x, "x", ndim=1, finite=True)
    y = as_array(y, "y", ndim=1, shape=x.shape, finite=True)
    lengthscale = check_positive(lengthscale, "lengthscale")
    return _gaussian(jnp.sum((x - y) ** 2), lengthscale)


@cites(GRETTON)
def gram(
    X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None, *, lengthscale, kernel: str = "gaussian"
) -> Float[Array, "n m"]:
    """Kernel matrix ``K_ij = k(||x_i - y_j||², ℓ)`` of a radial kernel (see the module docstring).

    Args:
      X: ``(n, d)`` float array, ``n >= 1``, finite.
      Y: ``(m, d)`` float array; None (or ``X`` itself) means ``X``, and then ``K`` is symmetric positive
        semi-definite with an exactly unit diagonal (Gaussian, Matérn).
      lengthscale: ``ℓ > 0``, float or 0-d array.
      kernel: one of :data:`KERNELS`: ``"gaussian"``, ``"imq"``, ``"matern12"``, ``"matern32"``,
        ``"matern52"``.

    Returns:
      ``(n, m)`` array in the inputs' float dtype.

    Raises:
      TypeError, ValueError: as :func:`sqdist`; ValueError if ``ℓ <= 0`` (eagerly and under ``jit``) or
        ``kernel`` is unknown.

    Example:
      >>> import jax
      >>> from jaxlab.kernels import gram
      >>> X = jax.random.normal(jax.random.key(0), (5, 2))
      >>> K = gram(X, lengthscale=1.0)
      >>> print(K.shape, float(K[0, 0]))
      (5, 5) 1.0
    """
    lengthscale = check_positive(lengthscale, "lengthscale")
    return _profile(kernel)(sqdist(X, Y), lengthscale)


def _weights(w, n: int, name: str, dtype):
    if w is None:
        return jnp.full((n,), 1.0 / n, dtype=dtype)
    return as_array(w, name, ndim=1, shape=(n,), finite=True).astype(dtype)


@cites(GRETTON)
def mmd2(
    X: Float[Array, "n d"],
    wx: Float[Array, " n"] | None,
    Y: Float[Array, "m d"],
    wy: Float[Array, " m"] | None,
    *,
    lengthscale,
    kernel: str = "gaussian",
) -> Float[Array, ""]:
    """Weighted squared maximum mean discrepancy, ``wxᵀ K_XX wx - 2 wxᵀ K_XY wy + wyᵀ K_YY wy``.

    The biased V-statistic of Gretton, Borgwardt, Rasch, Schölkopf & Smola, "A Kernel Two-Sample Test" (JMLR
    13, 2012), between ``μ = Σ_i wx_i δ_{x_i}`` and ``ν = Σ_j wy_j δ_{y_j}``. Not clamped: for a positive
    definite kernel it is ``>= 0`` up to rounding (``~1e-16`` in float64, ``~1e-7`` in float32).

    Args:
      X: ``(n, d)`` float array, finite.
      wx: ``(n,)`` weights of ``X`` (any sign, any sum), or None for ``1/n``.
      Y: ``(m, d)`` float array, finite.
      wy: ``(m,)`` weights of ``Y``, or None for ``1/m``.
      lengthscale: ``ℓ > 0``.
      kernel: a name in :data:`KERNELS`.

    Returns:
      0-d array in the inputs' common float dtype.

    Raises:
      TypeError, ValueError: as :func:`gram`; ValueError if a weight vector has the wrong length or holds
        NaN/inf.

    Example:
      >>> import jax
      >>> from jaxlab.kernels import mmd2
      >>> kx, ky = jax.random.split(jax.random.key(0))
      >>> X = jax.random.normal(kx, (200, 2))
      >>> Y = jax.random.normal(ky, (200, 2)) + 1.0
      >>> print(float(mmd2(X, None, Y, None, lengthscale=1.0)) > 0.1)
      True
    """
    X = as_points(X, "X")
    Y = as_points(Y, "Y")
    dtype = jnp.result_type(X, Y)
    wx = _weights(wx, X.shape[0], "wx", dtype)
    wy = _weights(wy, Y.shape[0], "wy", dtype)
    lengthscale = check_positive(lengthscale, "lengthscale")
    k = _profile(kernel)
    # X and Y are checked once above; the three Gram matrices reuse them unchecked
    kxx = k(sqdist_unchecked(X), lengthscale)
    kyy = k(sqdist_unchecked(Y), lengthscale)
    kxy = k(sqdist_unchecked(X, Y), lengthscale)
    return wx @ kxx @ wx - 2.0 * (wx @ kxy @ wy) + wy @ kyy @ wy


@cites(LIU)
def stein_gram(
    X: Float[Array, "n d"],
    scores_X: Float[Array, "n d"],
    Y: Float[Array, "m d"] | None = None,
    scores_Y: Float[Array, "m d"] | None = None,
    *,
    lengthscale,
) -> Float[Array, "n m"]:
    """Langevin Stein kernel matrix of the Gaussian base kernel, in closed form.

    ``k_π(x, y) = k(x, y) [d/ℓ² - r²/ℓ⁴ + (x - y)·(s(x) - s(y))/ℓ² + s(x)·s(y)]`` with ``k`` the Gaussian kernel,
    ``r = ||x - y||`` and ``s = ∇ log π̃`` (Liu, Lee & Jordan, "A Kernelized Stein Discrepancy for
    Goodness-of-fit Tests", ICML 2016). Only scores are needed, so ``π̃`` may be unnormalised.

    Args:
      X: ``(n, d)`` float array, finite.
      scores_X: ``(n, d)`` array, ``scores_X[i] = ∇ log π̃(x_i)``.
      Y: ``(m, d)`` float array, or None for ``X`` itself.
      scores_Y: ``(m, d)`` scores at ``Y``; required with ``Y``, forbidden without.
      lengthscale: ``ℓ > 0``.

    Returns:
      ``(n, m)`` array (symmetric PSD when ``Y`` is None).

    Raises:
      TypeError, ValueError: as :func:`gram`; ValueError if a score array has the wrong shape or holds
        NaN/inf, or ``scores_Y`` is given without ``Y`` (or missing with it).
    """
    X = as_points(X, "X")
    sX = as_array(scores_X, "scores_X", shape=X.shape, finite=True)
    if Y is None:
        if scores_Y is not None:
            raise ValueError("scores_Y was given without Y")
        Y, sY = X, sX
    else:
        Y = as_points(Y, "Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"Y must have {X.shape[1]} columns like X, got shape {Y.shape}")
        if scores_Y is None:
            raise ValueError("scores_Y is required when Y is given")
        sY = as_array(scores_Y, "scores_Y", shape=Y.shape, finite=True)
    lengthscale = check_positive(lengthscale, "lengthscale")
    ell2 = jnp.asarray(lengthscale, dtype=X.dtype) ** 2
    d = X.shape[1]
    r2 = sqdist_unchecked(X, Y)
    k = jnp.exp(-r2 / (2.0 * ell2))
    # (x_i - y_j)·(s(x_i) - s(y_j)) expanded so that no (n, m, d) tensor is formed, on centred points (the
    # expansion cancels like the Gram trick; the difference x_i - y_j does not change under centring).
    Xc, Yc = centre(X, None if Y is X else Y)
    Yc = Xc if Y is X else Yc
    cross = (
        jnp.sum(Xc * sX, -1)[:, None]
        - Xc @ sY.T
        - sX @ Yc.T
        + jnp.sum(Yc * sY, -1)[None, :]
    )
    return k * (d / ell2 - r2 / ell2**2 + cross / ell2 + sX @ sY.T)


@cites(LIU)
def ksd(X: Float[Array, "n d"], w: Float[Array, " n"] | None, scores: Float[Array, "n d"], *, lengthscale):
    """Weighted kernel Stein discrepancy ``KSD = sqrt(max(wᵀ K_π w, 0))`` with the Gaussian base kernel.

    ``K_π`` is :func:`stein_gram` of ``X`` with itself (Liu, Lee & Jordan 2016). It is 0 exactly when the
    weighted sample matches ``π`` in the Stein sense, and needs only the scores.

    Args:
      X: ``(n, d)`` float array, finite.
      w: ``(n,)`` weights, or None for ``1/n``.
      scores: ``(n, d)`` array, ``∇ log π̃`` at the rows of ``X``.
      lengthscale: ``ℓ > 0``.

    Returns:
      0-d array, ``>= 0``.

    Raises:
      TypeError, ValueError: as :func:`stein_gram`; ValueError if ``w`` has the wrong length or holds NaN/inf.

    Example:
      >>> import jax
      >>> from jaxlab.kernels import ksd
      >>> X = jax.random.normal(jax.random.key(0), (300, 2))
      >>> print(float(ksd(X, None, -X, lengthscale=1.0)) < 0.2)  # N(0, I): score -x
      True
    """
    X = as_points(X, "X")
    scores = as_array(scores, "scores", shape=X.shape, finite=True)
    w = _weights(w, X.shape[0], "w", X.dtype)
    q = w @ stein_gram(X, scores, lengthscale=lengthscale) @ w
    return safe_sqrt(q)


@cites(SZEKELY)
def energy_distance(
    X: Float[Array, "n d"], wx: Float[Array, " n"] | None, Y: Float[Array, "m d"], wy: Float[Array, " m"] | None
) -> Float[Array, ""]:
    """Weighted energy distance ``E = 2 E||X - Y|| - E||X - X'|| - E||Y - Y'||``, the V-statistic.

    Székely & Rizzo, "Energy statistics: A class of statistics based on distances" (J. Stat. Plan. Inference,
    2013). Not its square root (scipy's 1-d ``energy_distance`` returns ``sqrt(E)``).

    Args:
      X: ``(n, d)`` float array, finite.
      wx: ``(n,)`` weights of ``X``, or None for ``1/n``.
      Y: ``(m, d)`` float array with the columns of ``X``, finite.
      wy: ``(m,)`` weights of ``Y``, or None for ``1/m``.

    Returns:
      0-d array in the inputs' common float dtype.

    Raises:
      TypeError, ValueError: as :func:`sqdist`; ValueError if a weight vector has the wrong length or holds
        NaN/inf.
    """
    X = as_points(X, "X")
    Y = as_points(Y, "Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"Y must have {X.shape[1]} columns like X, got shape {Y.shape}")
    dtype = jnp.result_type(X, Y)
    wx = _weights(wx, X.shape[0], "wx", dtype)
    wy = _weights(wy, Y.shape[0], "wy", dtype)
    dxy = safe_sqrt(sqdist_unchecked(X, Y))
    dxx = safe_sqrt(sqdist_unchecked(X))
    dyy = safe_sqrt(sqdist_unchecked(Y))
    return 2.0 * (wx @ dxy @ wy) - wx @ dxx @ wx - wy @ dyy @ wy


def weighted_moments(X: Float[Array, "n d"], w: Float[Array, " n"] | None = None):
    """Weighted mean ``m = Σ w_i x_i`` and central second moment ``C = Σ w_i (x_i - m)(x_i - m)ᵀ``.

    For weights that sum to 1 (uniform, normalised, or the signed weights of a quadrature rule) ``C`` is the
    weighted covariance ``Σ w_i x_i x_iᵀ - m mᵀ``; it is computed about ``m`` (two passes), which keeps it
    accurate in float32 on data far from the origin, where the raw second moment cancels. Weights are used as
    given, not renormalised.

    Args:
      X: ``(n, d)`` float array.
      w: ``(n,)`` weights, or None for ``1/n``.

    Returns:
      ``(m, C)``: the ``(d,)`` mean and the ``(d, d)`` symmetric second moment, in ``X``'s dtype.

    Raises:
      TypeError: ``X`` is not a float array.
      ValueError: ``X`` is not 2-d, or ``w`` has the wrong length or holds NaN/inf.
    """
    X = as_array(X, "X", ndim=2)
    w = _weights(w, X.shape[0], "w", X.dtype)
    # Sums about a point a near the data (exact in every formula below, any a): a long float32 sum of values at
    # 1e4 would otherwise put an O(ulp · sqrt(n)) error into m, and a squared one into C.
    a = jax.lax.stop_gradient(jnp.mean(X, axis=0))
    Z = X - a
    dm = w @ Z + (jnp.sum(w) - 1.0) * a  # m - a
    m = a + dm
    Zm = Z - dm  # x_i - m
    C = (Zm * w[:, None]).T @ Zm
    return m, C


@cites(FORSTNER)
def foerstner_distance(C: Float[Array, "d d"], C_ref: Float[Array, "d d"]) -> Float[Array, ""]:
    """Förstner distance ``sqrt(Σ_i log² λ_i)``, ``λ`` the eigenvalues of ``C_ref^{-1/2} C C_ref^{-1/2}``.

    The affine-invariant metric on covariance matrices of Förstner & Moonen, "A Metric for Covariance Matrices"
    (2003), computed through the Cholesky factor of ``C_ref``.

    Args:
      C: ``(d, d)`` symmetric positive definite float array.
      C_ref: ``(d, d)`` symmetric positive definite float array.

    Returns:
      0-d array, ``>= 0`` (NaN when a matrix is not positive definite).

    Raises:
      ValueError: ``C`` is not square or ``C_ref`` has another shape.
    """
    C = as_array(C, "C", ndim=2)
    C_ref = as_array(C_ref, "C_ref", ndim=2, shape=C.shape)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be square, got shape {C.shape}")
    L = jnp.linalg.cholesky(C_ref)
    A = jax.scipy.linalg.solve_triangular(L, C, lower=True)
    M = jax.scipy.linalg.solve_triangular(L, A.T, lower=True)
    lam = jnp.linalg.eigvalsh(0.5 * (M + M.T))
    return jnp.sqrt(jnp.sum(jnp.log(lam) ** 2))
