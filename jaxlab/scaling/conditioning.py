"""Conditioning of scaling-law fits: equilibrated condition numbers, sloppiness spectra, and the
tokens-per-parameter (TPP) diversity threshold.

Paper: Kricheli, Reid, Sarkar, Gandikota, Shakarian, "Tokens-per-Parameter Coverage Is Critical for Robust LLM
Scaling Law Extrapolation" (arXiv:2605.08541). Only its abstract was available: the statements below are
**derived** for jaxlab from the abstract's claims and checked numerically.
Sloppy-model background: Transtrum, Machta, Sethna, "Why are nonlinear fits to data so challenging?"
(PRL 104, 060201, 2010).

Equilibrated condition number of a Jacobian J (n x p), invariant to per-parameter rescaling::

    J~ = J S,  S = diag(1 / ||J[:, j]||_2),      kappa = kappa_2(J~^T J~) = (s_max(J~) / s_min(J~))^2

(from the singular values of J~; J^T J is never formed; kappa = +inf when s_min = 0).

Scale-coefficient block of L1 at fixed exponents: columns u_i = N_i^(-alpha), w_i = D_i^(-beta) (and 1 for E).
With x = ln N, z = ln(D/N), s_i = delta x_i + beta z_i = beta ln D_i - alpha ln N_i, delta = beta - alpha,
p_i proportional to u_i^2 = N_i^(-2 alpha), exactly (derived)::

    c = <u, w> / (||u|| ||w||) = E_p[e^(-s)] / sqrt(E_p[e^(-2 s)]),      kappa_AB = (1 + c) / (1 - c)

Theorem S1 (derived; collinear design D = k N): s = delta x + beta ln k, k cancels from c, and
kappa_AB = 4 / (delta^2 Var_p(ln N)) (1 + O(delta)), infinite at delta = 0.

Theorem S2 (derived; TPP-diversity threshold): with Q = ln E_p[e^(-2 s)] - 2 ln E_p[e^(-s)] = -2 ln c >= 0,

    kappa_AB <= kappa*   <=>   Q >= tau(kappa*) = 2 ln((kappa* + 1) / (kappa* - 1))

and Q ~ Var_p(s), so for a factorial design the minimal log-TPP spread is
sd_p(ln k) >= sqrt(max(0, tau - delta^2 Var_p(ln N))) / beta.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
from jax.scipy.special import logsumexp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_in_range, check_ndim, check_positive, is_concrete, value_check
from jaxlab.scaling.laws import Covariates, covariates, resolve_law
from jaxlab.scaling.papers import HOFFMANN, KRICHELI, TRANSTRUM

__all__ = [
    "asymptotic_collinear_kappa",
    "collinear_cosine",
    "equilibrated_condition_number",
    "equilibrated_hessian_condition_number",
    "is_well_conditioned",
    "jacobian",
    "kappa_from_cosine",
    "min_log_tpp_spread",
    "scale_block_condition_number",
    "sloppiest_direction",
    "sloppiness_spectrum",
    "tpp_diversity_statistic",
    "tpp_threshold",
]


@cites(KRICHELI, TRANSTRUM)
def jacobian(law: str | Callable, theta: Any, X: Covariates) -> Float[Array, "n p"]:
    """d ln L_i / d theta_j by forward-mode autodiff, theta flattened with ``ravel_pytree`` (field order)."""
    fn = resolve_law(law)
    flat, unravel = ravel_pytree(theta)
    return jax.jacfwd(lambda f: fn(unravel(f), X).reshape(-1))(flat)


def _float32_warning(kappa: Array, dtype: Any) -> None:
    eps = float(jnp.finfo(dtype).eps)
    if jnp.dtype(dtype) == jnp.float32 and is_concrete(kappa) and float(kappa) * eps >= 1e-2:
        warnings.warn(f"kappa = {float(kappa):.3g} with float32 (eps {eps:.2g}): kappa * eps >= 1e-2, solves "
                      "with this matrix lose most of their digits; enable float64", UserWarning, stacklevel=3)


@cites(KRICHELI, TRANSTRUM)
def equilibrated_condition_number(J: Any) -> Float[Array, ""]:
    """kappa_2(J~^T J~) of the column-normalized Jacobian (SVD of J~; +inf when rank deficient)."""
    J = as_array(J, "J", ndim=2)
    n, p = J.shape
    norms = jnp.linalg.norm(J, axis=0)
    Jt = J / jnp.where(norms > 0, norms, 1.0)
    s = jnp.linalg.svd(Jt, compute_uv=False)
    kappa = (s[0] / s[-1]) ** 2
    singular = (s[-1] <= 0) | jnp.any(norms <= 0) | (n < p) | ~jnp.isfinite(kappa)
    kappa = jnp.where(singular, jnp.inf, kappa)
    _float32_warning(kappa, J.dtype)
    return kappa


@cites(KRICHELI, TRANSTRUM)
def sloppiness_spectrum(J: Any) -> Float[Array, " p"]:
    """Eigenvalues of J~^T J~ (column-normalized J), descending; zeros pad a rank-deficient n < p."""
    J = as_array(J, "J", ndim=2)
    norms = jnp.linalg.norm(J, axis=0)
    s = jnp.linalg.svd(J / jnp.where(norms > 0, norms, 1.0), compute_uv=False)
    return jnp.zeros(J.shape[1], J.dtype).at[: s.shape[0]].set(s**2)


@cites(TRANSTRUM)
def sloppiest_direction(J: Any) -> Float[Array, " p"]:
    """Unit right singular vector of J for its smallest singular value (the least-determined combination)."""
    J = as_array(J, "J", ndim=2)
    _, _, vt = jnp.linalg.svd(J, full_matrices=True)
    v = vt[-1]
    return v * jnp.sign(v[jnp.argmax(jnp.abs(v))])


@cites(KRICHELI)
def equilibrated_hessian_condition_number(H: Any) -> Float[Array, ""]:
    """kappa_2(S H S), S = diag(H_jj^(-1/2)), of a symmetric PSD curvature matrix (+inf when singular).

    For H = J^T W J with W = w I this equals :func:`equilibrated_condition_number` of J.
    """
    H = as_array(H, "H", ndim=2)
    if H.shape[0] != H.shape[1]:
        raise ValueError(f"H must be square, got shape {H.shape}")
    d = jnp.sqrt(jnp.diag(H))
    lam = jnp.linalg.eigvalsh(H / jnp.outer(d, d))
    return jnp.where(lam[0] > 0, lam[-1] / lam[0], jnp.inf)


def _design(N: Any, D: Any) -> Covariates:
    X = covariates(N, D)
    check_ndim(X.log_N, "N", 1)
    return X


def _exponent(v: Any, name: str) -> Array:
    return as_array(v, name, ndim=0, finite=True)


def _log_weights(log_N: Array, alpha: Array) -> Array:
    """ln p_i with p_i proportional to N_i^(-2 alpha)."""
    lw = -2.0 * alpha * log_N
    return lw - logsumexp(lw)


def _var_p(log_p: Array, v: Array) -> Array:
    p = jnp.exp(log_p)
    m = jnp.sum(p * v)
    return jnp.sum(p * (v - m) ** 2)


@cites(KRICHELI, HOFFMANN)
def scale_block_condition_number(N: Any, D: Any, alpha: Any, beta: Any, include_E: bool = False
                                 ) -> Float[Array, ""]:
    """kappa_AB (columns N^-alpha, D^-beta) or kappa_EAB (also a column of ones), equilibrated, by SVD."""
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    cols = [jnp.exp(-alpha * X.log_N), jnp.exp(-beta * X.log_D)]
    if include_E:
        cols = [jnp.ones_like(X.log_N), *cols]
    return equilibrated_condition_number(jnp.stack(cols, axis=1))


@cites(KRICHELI)
def collinear_cosine(N: Any, D: Any, alpha: Any, beta: Any) -> Float[Array, ""]:
    """c = <u, w>/(||u|| ||w||), u = N^-alpha, w = D^-beta, computed in log space (any design)."""
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    lu, lw = -alpha * X.log_N, -beta * X.log_D
    return jnp.exp(logsumexp(lu + lw) - 0.5 * logsumexp(2 * lu) - 0.5 * logsumexp(2 * lw))


@cites(KRICHELI)
def kappa_from_cosine(c: Any) -> Float[Array, "*b"]:
    """kappa_2 of the 2x2 normalized Gram matrix [[1, c], [c, 1]]: (1 + |c|)/(1 - |c|), +inf at |c| = 1."""
    c = jnp.abs(as_array(c, "c"))
    return jnp.where(c < 1, (1 + c) / jnp.where(c < 1, 1 - c, 1.0), jnp.inf)


@cites(KRICHELI)
def asymptotic_collinear_kappa(N: Any, alpha: Any, delta: Any) -> Float[Array, ""]:
    """Small-gap law of Theorem S1 on a ray D = k N: kappa_AB ~ 4 / (delta^2 Var_p(ln N)), p ~ N^(-2 alpha).

    Raises ``ValueError`` when N has a single distinct value (Var(ln N) = 0: nothing to fit a slope to).
    """
    N = as_array(N, "N", ndim=1, finite=True)
    N = check_in_range(N, "N", 0.0, math.inf, lo_open=True)
    N = value_check(N, lambda n: jnp.all(n == n[0]), "N must have at least two distinct values (Var(ln N) > 0)")
    alpha, delta = _exponent(alpha, "alpha"), _exponent(delta, "delta")
    log_N = jnp.log(N)
    v = _var_p(_log_weights(log_N, alpha), log_N)
    return 4.0 / (delta**2 * v)


def _log_mean_exp_s(X: Covariates, alpha: Array, beta: Array, t: float) -> Array:
    """ln E_p[exp(-t s)] with s = beta ln D - alpha ln N."""
    s = beta * X.log_D - alpha * X.log_N
    return logsumexp(_log_weights(X.log_N, alpha) - t * s)


@cites(KRICHELI)
def tpp_diversity_statistic(N: Any, D: Any, alpha: Any, beta: Any) -> Float[Array, ""]:
    """Q = ln E_p[e^(-2 s)] - 2 ln E_p[e^(-s)] = -2 ln c >= 0 with s = beta ln D - alpha ln N and
    p ~ N^(-2 alpha)."""
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    return _log_mean_exp_s(X, alpha, beta, 2.0) - 2.0 * _log_mean_exp_s(X, alpha, beta, 1.0)


def _check_kappa_max(kappa_max: Any) -> Any:
    kappa_max = check_positive(kappa_max, "kappa_max")
    return value_check(kappa_max, lambda k: k <= 1.0, "kappa_max must be > 1 (a condition number is >= 1)")


@cites(KRICHELI)
def tpp_threshold(kappa_max: Any) -> Float[Array, ""]:
    """tau(kappa*) = 2 ln((kappa* + 1)/(kappa* - 1)): kappa_AB <= kappa* exactly when Q >= tau."""
    kappa_max = _check_kappa_max(kappa_max)
    k = jnp.asarray(kappa_max, dtype=float)
    return 2.0 * jnp.log1p(2.0 / (k - 1.0))


@cites(KRICHELI)
def is_well_conditioned(N: Any, D: Any, alpha: Any, beta: Any, kappa_max: Any) -> Array:
    """True when kappa_AB <= kappa_max, decided by the TPP-diversity test Q >= tau(kappa_max) (Theorem S2).

    Raises ``ValueError`` for a collinear design (one TPP value D/N): it is ill-conditioned by construction
    (kappa_AB depends only on the exponent gap there; use :func:`scale_block_condition_number`).
    """
    X = _design(N, D)

    def collinear(log_N):
        z = X.log_D - log_N
        return jnp.all(jnp.abs(z - z[0]) <= 1e-12 * (1 + jnp.abs(z[0])))

    well = tpp_diversity_statistic(N, D, alpha, beta) >= tpp_threshold(kappa_max)
    return value_check(well, lambda _: collinear(X.log_N),
                       "D/N takes a single value: a collinear design is ill-conditioned by construction "
                       "(kappa_AB ~ 4/(delta^2 Var_p(ln N)), infinite when alpha = beta); spread the "
                       "tokens-per-parameter ratios")


@cites(KRICHELI)
def min_log_tpp_spread(N: Any, alpha: Any, beta: Any, kappa_max: Any) -> Float[Array, ""]:
    """sigma_k* = sqrt(max(0, tau(kappa*) - delta^2 Var_p(ln N))) / beta: the smallest standard deviation of
    ln(D/N) (independent of N) for which kappa_AB <= kappa_max, to second order in s."""
    N = as_array(N, "N", ndim=1, finite=True)
    N = check_in_range(N, "N", 0.0, math.inf, lo_open=True)
    beta = check_positive(beta, "beta")
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    tau = tpp_threshold(kappa_max)
    log_N = jnp.log(N)
    v = _var_p(_log_weights(log_N, alpha), log_N)
    return jnp.sqrt(jnp.maximum(0.0, tau - (beta - alpha) ** 2 * v)) / beta
