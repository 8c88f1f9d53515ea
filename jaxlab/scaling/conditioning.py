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
    """The Jacobian J_ij = d ln L_hat(theta; N_i, D_i) / d theta_j of a law, by forward-mode autodiff.

    ``theta`` is flattened with ``ravel_pytree`` (for a NamedTuple: field order). J is the matrix whose
    conditioning Kricheli et al. (arXiv:2605.08541) study: the Gauss-Newton matrix of any smooth objective
    on the residuals is J^T W J.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta: the parameters, a pytree of float arrays with ``p`` entries in all.
      X: :class:`~jaxlab.scaling.Covariates` of the design (``n`` entries in all).

    Returns:
      ``(n, p)`` float array.

    Raises:
      ValueError: an unknown law name; the registered laws also raise on an invalid ``X`` (see
        :func:`~jaxlab.scaling.chinchilla_log_loss`).
    """
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
    """Equilibrated condition number kappa = kappa_2(J~^T J~) = (s_max(J~) / s_min(J~))^2, J~ = J S,
    S = diag(1 / ||J[:, j]||_2).

    Column scaling makes kappa invariant to rescaling any parameter, so it measures how nearly collinear
    the columns are (Kricheli et al., arXiv:2605.08541; Transtrum, Machta, Sethna, PRL 104, 060201, 2010).
    Computed from the singular values of J~; J^T J is never formed.

    Args:
      J: ``(n, p)`` float array, e.g. from :func:`jacobian`.

    Returns:
      Float scalar kappa >= 1; +inf when J~ is rank deficient (s_min = 0, a zero column, or n < p).

    Raises:
      TypeError: a non-float ``J``.
      ValueError: ``J`` not 2-d.

    Warns:
      UserWarning: float32 ``J`` with kappa eps >= 1e-2 (solves with J^T J lose most of their digits).
    """
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
    """The sloppiness spectrum: eigenvalues of J~^T J~, J~ = J with unit-norm columns, in descending order.

    A "sloppy" model (Transtrum, Machta, Sethna, PRL 104, 060201, 2010) has eigenvalues spread over many
    decades; the ratio of the first to the last is :func:`equilibrated_condition_number`.

    Args:
      J: ``(n, p)`` float array, e.g. from :func:`jacobian`.

    Returns:
      ``(p,)`` float array (the squared singular values of J~), zero-padded when n < p.

    Raises:
      TypeError: a non-float ``J``.
      ValueError: ``J`` not 2-d.
    """
    J = as_array(J, "J", ndim=2)
    norms = jnp.linalg.norm(J, axis=0)
    s = jnp.linalg.svd(J / jnp.where(norms > 0, norms, 1.0), compute_uv=False)
    return jnp.zeros(J.shape[1], J.dtype).at[: s.shape[0]].set(s**2)


@cites(TRANSTRUM)
def sloppiest_direction(J: Any) -> Float[Array, " p"]:
    """The sloppiest parameter direction: the unit right singular vector of J for its smallest singular value.

    Moving theta along it changes the fitted log-losses least, so it is the combination of parameters the
    data determine worst (Transtrum, Machta, Sethna, PRL 104, 060201, 2010). J is not column-scaled here.

    Args:
      J: ``(n, p)`` float array, e.g. from :func:`jacobian`.

    Returns:
      ``(p,)`` float unit vector, its sign fixed so that its largest-magnitude entry is positive (for n < p,
      a vector of the null space).

    Raises:
      TypeError: a non-float ``J``.
      ValueError: ``J`` not 2-d.
    """
    J = as_array(J, "J", ndim=2)
    _, _, vt = jnp.linalg.svd(J, full_matrices=True)
    v = vt[-1]
    return v * jnp.sign(v[jnp.argmax(jnp.abs(v))])


@cites(KRICHELI)
def equilibrated_hessian_condition_number(H: Any) -> Float[Array, ""]:
    """Equilibrated condition number of a curvature matrix: kappa_2(S H S), S = diag(H_jj^(-1/2)).

    For H = J^T W J with W = w I this equals :func:`equilibrated_condition_number` of J. Applied to the
    Hessians of squared, Huber or Cauchy losses it shows that the ill-conditioning comes from J, not from
    the loss (Kricheli et al., arXiv:2605.08541, as read from the abstract).

    Args:
      H: ``(p, p)`` float array, symmetric positive semidefinite (assumed, not checked; ``eigvalsh`` reads
        the lower triangle).

    Returns:
      Float scalar lam_max / lam_min of S H S; +inf when lam_min <= 0 or H has a zero or negative diagonal.

    Raises:
      TypeError: a non-float ``H``.
      ValueError: ``H`` not 2-d or not square.
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
    """kappa_AB: the equilibrated condition number of the scale-coefficient block of L1 at fixed exponents.

    The columns are u_i = N_i^(-alpha) and w_i = D_i^(-beta) (the derivatives of L in A and B), plus a column
    of ones (the derivative in E) when ``include_E``; kappa is :func:`equilibrated_condition_number` of that
    matrix. On a collinear design D = k N it equals (1 + c)/(1 - c) with c = :func:`collinear_cosine`, does
    not depend on k, and grows like 4 / ((beta - alpha)^2 Var_p(ln N)) (Theorem S1 of the module docstring,
    derived here from the abstract of Kricheli et al., arXiv:2605.08541).

    Args:
      N: ``(n,)`` float array of parameter counts, finite and > 0.
      D: ``(n,)`` float array of token counts, finite and > 0.
      alpha: float scalar (0-d), the exponent of N.
      beta: float scalar (0-d), the exponent of D.
      include_E: also include the column of ones (kappa_EAB).

    Returns:
      Float scalar kappa >= 1; +inf, or a huge value from rounding (~1e31 in float64), when the columns are
      linearly dependent (a collinear design at alpha = beta).

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d; ``D`` of another shape; entries not finite and > 0; ``alpha`` or ``beta``
        not a finite scalar.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.scaling import collinear_design, factorial_design, scale_block_condition_number
      >>> N = jnp.logspace(8, 10, 9)
      >>> k_ray = scale_block_condition_number(*collinear_design(N, 20.0), 0.34, 0.36)  # about 7.9e3
      >>> ks = jnp.array([5.0, 20.0, 80.0])
      >>> k_grid = scale_block_condition_number(*factorial_design(N, ks), 0.34, 0.36)  # about 27
    """
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    cols = [jnp.exp(-alpha * X.log_N), jnp.exp(-beta * X.log_D)]
    if include_E:
        cols = [jnp.ones_like(X.log_N), *cols]
    return equilibrated_condition_number(jnp.stack(cols, axis=1))


@cites(KRICHELI)
def collinear_cosine(N: Any, D: Any, alpha: Any, beta: Any) -> Float[Array, ""]:
    """The cosine c = <u, w> / (||u|| ||w||) between the columns u = N^(-alpha) and w = D^(-beta).

    Computed in log space as exp(LSE(ln u + ln w) - LSE(2 ln u)/2 - LSE(2 ln w)/2), for any design; the
    2x2 block has kappa_AB = (1 + c)/(1 - c) (:func:`kappa_from_cosine`). With s_i = beta ln D_i - alpha ln N_i
    and p_i proportional to N_i^(-2 alpha), c = E_p[e^(-s)] / sqrt(E_p[e^(-2 s)]) (derived here).

    Args:
      N: ``(n,)`` float array of parameter counts, finite and > 0.
      D: ``(n,)`` float array of token counts, finite and > 0.
      alpha: float scalar (0-d), the exponent of N.
      beta: float scalar (0-d), the exponent of D.

    Returns:
      Float scalar c in (0, 1].

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d; ``D`` of another shape; entries not finite and > 0; ``alpha`` or ``beta``
        not a finite scalar.
    """
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    lu, lw = -alpha * X.log_N, -beta * X.log_D
    return jnp.exp(logsumexp(lu + lw) - 0.5 * logsumexp(2 * lu) - 0.5 * logsumexp(2 * lw))


@cites(KRICHELI)
def kappa_from_cosine(c: Any) -> Float[Array, "*b"]:
    """kappa_2 of the 2x2 normalized Gram matrix [[1, c], [c, 1]]: (1 + |c|) / (1 - |c|).

    Args:
      c: float array (any shape) of cosines, |c| <= 1.

    Returns:
      Float array of the shape of ``c``; +inf where |c| >= 1.

    Raises:
      TypeError: a non-float ``c``.
    """
    c = jnp.abs(as_array(c, "c"))
    return jnp.where(c < 1, (1 + c) / jnp.where(c < 1, 1 - c, 1.0), jnp.inf)


@cites(KRICHELI)
def asymptotic_collinear_kappa(N: Any, alpha: Any, delta: Any) -> Float[Array, ""]:
    """Small-gap law of Theorem S1 on a collinear design D = k N: kappa_AB ~ 4 / (delta^2 Var_p(ln N)).

    Var_p is the variance under p_i proportional to N_i^(-2 alpha), and delta = beta - alpha the exponent
    gap; the exact kappa_AB is this times (1 + O(delta)) and does not depend on k. The law is derived here
    from the abstract of Kricheli et al. (arXiv:2605.08541), which states that the condition number grows as
    the inverse square of the gap.

    Args:
      N: ``(n,)`` float array of parameter counts, finite, > 0, with at least two distinct values.
      alpha: float scalar (0-d), the exponent of N.
      delta: float scalar (0-d), the gap beta - alpha.

    Returns:
      Float scalar; +inf at delta = 0.

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d, with an entry not finite and > 0, or a single distinct value
        (Var(ln N) = 0); ``alpha`` or ``delta`` not a finite scalar.
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
    """The TPP-diversity statistic Q = ln E_p[e^(-2 s)] - 2 ln E_p[e^(-s)] = -2 ln c >= 0.

    s_i = beta ln D_i - alpha ln N_i, p_i proportional to N_i^(-2 alpha), c = :func:`collinear_cosine`.
    Q ~ Var_p(s) for small spreads, so it grows with the spread of the tokens-per-parameter ratios D/N.
    Theorem S2 (derived here from the abstract of Kricheli et al., arXiv:2605.08541, which announces a
    closed-form threshold that is necessary and sufficient): kappa_AB <= kappa* exactly when
    Q >= :func:`tpp_threshold` (kappa*).

    Args:
      N: ``(n,)`` float array of parameter counts, finite and > 0.
      D: ``(n,)`` float array of token counts, finite and > 0.
      alpha: float scalar (0-d), the exponent of N.
      beta: float scalar (0-d), the exponent of D.

    Returns:
      Float scalar Q >= 0 (0 up to rounding on a collinear design with alpha = beta).

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d; ``D`` of another shape; entries not finite and > 0; ``alpha`` or ``beta``
        not a finite scalar.
    """
    X = _design(N, D)
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    return _log_mean_exp_s(X, alpha, beta, 2.0) - 2.0 * _log_mean_exp_s(X, alpha, beta, 1.0)


def _check_kappa_max(kappa_max: Any) -> Any:
    kappa_max = check_positive(kappa_max, "kappa_max")
    return value_check(kappa_max, lambda k: k <= 1.0, "kappa_max must be > 1 (a condition number is >= 1)")


@cites(KRICHELI)
def tpp_threshold(kappa_max: Any) -> Float[Array, ""]:
    """The TPP-diversity threshold tau(kappa*) = 2 ln((kappa* + 1) / (kappa* - 1)) of Theorem S2.

    kappa_AB <= kappa* exactly when Q >= tau (Q = :func:`tpp_diversity_statistic`), because
    kappa_AB = (1 + c)/(1 - c) and Q = -2 ln c (derived here; Kricheli et al., arXiv:2605.08541, announce
    such a threshold in their abstract).

    Args:
      kappa_max: float scalar kappa* > 1, the largest acceptable kappa_AB.

    Returns:
      Float scalar tau > 0 (default float dtype).

    Raises:
      TypeError: ``kappa_max`` not a real number.
      ValueError: ``kappa_max`` not a finite scalar > 1 (under ``jit``: at run time).
    """
    kappa_max = _check_kappa_max(kappa_max)
    k = jnp.asarray(kappa_max, dtype=float)
    return 2.0 * jnp.log1p(2.0 / (k - 1.0))


@cites(KRICHELI)
def is_well_conditioned(N: Any, D: Any, alpha: Any, beta: Any, kappa_max: Any) -> Array:
    """Whether a design's scale block is well conditioned, kappa_AB <= kappa_max, by the TPP-diversity test.

    Decides Q >= tau(kappa_max) (:func:`tpp_diversity_statistic`, :func:`tpp_threshold`), which is
    equivalent to kappa_AB <= kappa_max (Theorem S2 of the module docstring, derived here from the abstract
    of Kricheli et al., arXiv:2605.08541) and needs no SVD. A collinear design (one value of D/N) is
    rejected: it is ill-conditioned by construction (kappa_AB ~ 4 / (delta^2 Var_p(ln N)) there; use
    :func:`scale_block_condition_number` to get its value).

    Args:
      N: ``(n,)`` float array of parameter counts, finite and > 0.
      D: ``(n,)`` float array of token counts, finite and > 0.
      alpha: float scalar (0-d), the exponent of N.
      beta: float scalar (0-d), the exponent of D.
      kappa_max: float scalar > 1, the largest acceptable kappa_AB.

    Returns:
      Bool scalar (0-d array).

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d; ``D`` of another shape; entries not finite and > 0; ``alpha`` or ``beta``
        not a finite scalar; ``kappa_max`` not > 1; a collinear design, D/N constant within a relative 1e-12
        (under ``jit`` the value checks fail at run time).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.scaling import factorial_design, is_well_conditioned
      >>> N, D = factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0]))
      >>> bool(is_well_conditioned(N, D, 0.34, 0.36, kappa_max=100.0))
      True
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
    """The smallest spread of log tokens-per-parameter that makes a factorial design well conditioned.

    sigma_k* = sqrt(max(0, tau(kappa*) - delta^2 Var_p(ln N))) / beta, delta = beta - alpha, p_i
    proportional to N_i^(-2 alpha): the smallest standard deviation (under p) of ln k = ln(D/N), drawn
    independently of N, for which kappa_AB <= kappa*. It uses Q ~ Var_p(s) = delta^2 Var_p(ln N) +
    beta^2 Var_p(ln k), so it holds to second order in s (derived here, a corollary of Theorem S2).

    Args:
      N: ``(n,)`` float array of the parameter counts of the design, finite and > 0.
      alpha: float scalar (0-d), the exponent of N.
      beta: positive float scalar (0-d), the exponent of D.
      kappa_max: float scalar kappa* > 1.

    Returns:
      Float scalar sigma_k* >= 0 (0 when the spread of N alone already suffices).

    Raises:
      TypeError: non-float arrays.
      ValueError: ``N`` not 1-d or with an entry not finite and > 0; ``alpha`` not a finite scalar;
        ``beta`` not a positive finite scalar; ``kappa_max`` not > 1.
    """
    N = as_array(N, "N", ndim=1, finite=True)
    N = check_in_range(N, "N", 0.0, math.inf, lo_open=True)
    beta = check_positive(beta, "beta")
    alpha, beta = _exponent(alpha, "alpha"), _exponent(beta, "beta")
    tau = tpp_threshold(kappa_max)
    log_N = jnp.log(N)
    v = _var_p(_log_weights(log_N, alpha), log_N)
    return jnp.sqrt(jnp.maximum(0.0, tau - (beta - alpha) ** 2 * v)) / beta
