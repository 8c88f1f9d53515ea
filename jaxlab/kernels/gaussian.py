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

Names and signatures follow ``specs/sampling.md`` section A.6; all functions are pure and jit/vmap/grad-able.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.papers import FORSTNER, GRETTON, LIU, SZEKELY
from jaxlab.core.validation import as_array, check_positive
from jaxlab.kernels.distances import as_points, pairwise_distance_quantile, safe_sqrt, sqdist, sqdist_unchecked

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
    """``exp(-||x - y||² / (2 ℓ²))`` for two points (vmap it for batches; :func:`gram` is faster)."""
    x = as_array(x, "x", ndim=1, finite=True)
    y = as_array(y, "y", ndim=1, shape=x.shape, finite=True)
    lengthscale = check_positive(lengthscale, "lengthscale")
    return _gaussian(jnp.sum((x - y) ** 2), lengthscale)


@cites(GRETTON)
def gram(
    X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None, *, lengthscale, kernel: str = "gaussian"
) -> Float[Array, "n m"]:
    """Kernel matrix ``K_ij = k(x_i, y_j)`` (``Y = None``: ``Y = X``, symmetric PSD) via the Gram trick."""
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
    """Weighted squared MMD (biased V-statistic) ``wxᵀK_XX wx - 2 wxᵀK_XY wy + wyᵀK_YY wy``.

    Not clamped: for a positive definite kernel it is ``>= 0`` up to rounding (``~1e-16`` in float64).
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
    """Langevin Stein kernel matrix of the Gaussian base kernel (closed form, see the module docstring).

    ``scores_X[i] = ∇ log π̃(x_i)``; with ``Y = None`` the Stein kernel of ``X`` with itself.
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
    r2 = sqdist_unchecked(X, Y) if Y is not X else sqdist_unchecked(X)
    k = jnp.exp(-r2 / (2.0 * ell2))
    # (x_i - y_j)·(s(x_i) - s(y_j)) expanded so that no (n, m, d) tensor is formed.
    cross = (
        jnp.sum(X * sX, -1)[:, None]
        - X @ sY.T
        - sX @ Y.T
        + jnp.sum(Y * sY, -1)[None, :]
    )
    return k * (d / ell2 - r2 / ell2**2 + cross / ell2 + sX @ sY.T)


@cites(LIU)
def ksd(X: Float[Array, "n d"], w: Float[Array, " n"] | None, scores: Float[Array, "n d"], *, lengthscale):
    """Weighted kernel Stein discrepancy ``sqrt(max(wᵀ K_π w, 0))`` with the Gaussian base kernel."""
    X = as_points(X, "X")
    scores = as_array(scores, "scores", shape=X.shape, finite=True)
    w = _weights(w, X.shape[0], "w", X.dtype)
    q = w @ stein_gram(X, scores, lengthscale=lengthscale) @ w
    return safe_sqrt(q)


@cites(SZEKELY)
def energy_distance(
    X: Float[Array, "n d"], wx: Float[Array, " n"] | None, Y: Float[Array, "m d"], wy: Float[Array, " m"] | None
) -> Float[Array, ""]:
    """Weighted energy distance ``2 E||X-Y|| - E||X-X'|| - E||Y-Y'||`` (V-statistic, not its square root)."""
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
    """Weighted mean ``m = Σ w_i x_i`` and centred covariance ``C = Σ w_i x_i x_iᵀ - m mᵀ``.

    The weights are used as given (signed weights of a quadrature rule are allowed); ``None`` = uniform.
    """
    X = as_array(X, "X", ndim=2)
    w = _weights(w, X.shape[0], "w", X.dtype)
    m = w @ X
    C = (X * w[:, None]).T @ X - jnp.outer(m, m)
    return m, C


@cites(FORSTNER)
def foerstner_distance(C: Float[Array, "d d"], C_ref: Float[Array, "d d"]) -> Float[Array, ""]:
    """Förstner distance ``sqrt(Σ_i log² λ_i)``, ``λ`` the eigenvalues of ``C_ref^{-1/2} C C_ref^{-1/2}``.

    Both matrices must be symmetric positive definite (NaN otherwise).
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
