"""Parametric scaling laws L(N, D) of language-model loss, written as pure functions of log-covariates.

Papers: Hoffmann et al., "Training Compute-Optimal Large Language Models" (arXiv:2203.15556); Besiroglu,
Erdil, Barnett, You, "Chinchilla Scaling: A replication attempt" (arXiv:2404.10102); Kaplan et al., "Scaling
Laws for Neural Language Models" (arXiv:2001.08361); Muennighoff et al., "Scaling Data-Constrained Language
Models" (arXiv:2305.16264); Li et al., "Farseer: A Refined Scaling Law in Large Language Models"
(arXiv:2506.10972). They are the laws studied by Kricheli, Reid, Sarkar, Gandikota, Shakarian,
"Tokens-per-Parameter Coverage Is Critical for Robust LLM Scaling Law Extrapolation" (arXiv:2605.08541);
which four laws that paper uses is not confirmed (Farseer is a guess).

N = parameters, D = training tokens, U = unique tokens; x = ln N, y = ln D, u = ln U. Every law is a function
``log_loss(theta, X) -> ln L`` with ``theta`` a NamedTuple and ``X`` a :class:`Covariates` of logs, so it
jits, vmaps over designs or parameter sets, and differentiates with respect to ``theta``.

L1 (Chinchilla), log-sum-exp parameterization A = e^a, B = e^b, E = e^e::

    L = E + A N^(-alpha) + B D^(-beta),      ln L = LSE(a - alpha x, b - beta y, e)

compute-optimal allocation under C = 6 N D, with G = (alpha A / (beta B))^(1/(alpha + beta))::

    N_opt = G (C/6)^(beta/(alpha+beta)),      D_opt = G^(-1) (C/6)^(alpha/(alpha+beta))

L2 (Kaplan)::

    L = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^(alpha_D),
    ln L = alpha_D LSE((alpha_N/alpha_D)(ln N_c - x), ln D_c - y)

L3 (Muennighoff, data-constrained)::

    L = E + A N'^(-alpha) + B D'^(-beta)
    D' = U_D + U_D R_D* (1 - exp(-R_D/R_D*)),   R_D = max(D/U_D - 1, 0)
    N' = U_N + U_N R_N* (1 - exp(-R_N/R_N*)),   U_N = min(N, N_opt(U_D)),  R_N = max(N/U_N - 1, 0)
    N_opt(D) = G (D G)^(beta/alpha)

In the single-epoch regime (U_D = D, N <= N_opt(D)) L3 is exactly L1.

L4 (Farseer, recalled from arXiv:2506.10972; no reference constants)::

    L = exp(a3 N^gamma + b3) + exp(a2 N^beta + b2) D^(-exp(a1 N^alpha + b1))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_in_range, check_positive, is_concrete, value_check
from jaxlab.scaling.papers import BESIROGLU, FARSEER, HOFFMANN, KAPLAN, MUENNIGHOFF

__all__ = [
    "BESIROGLU_2024",
    "HOFFMANN_2022",
    "HOFFMANN_2022_UNROUNDED",
    "KAPLAN_2020",
    "LAWS",
    "MUENNIGHOFF_2023",
    "PARAMS",
    "ChinchillaParams",
    "Covariates",
    "FarseerParams",
    "KaplanParams",
    "MuennighoffParams",
    "chinchilla_compute_optimal",
    "chinchilla_log_loss",
    "covariates",
    "farseer_log_loss",
    "kaplan_log_loss",
    "loss",
    "muennighoff_log_loss",
    "resolve_law",
]


class Covariates(NamedTuple):
    """Log-covariates of a design, the ``X`` every law takes: x = ln N, y = ln D, u = ln U_D.

    Build it with :func:`covariates` (which validates natural units and takes the logs). The three fields
    share one shape, usually ``(n,)`` (one entry per run); the fitting functions require ``(n,)``.

    Attributes:
      log_N: float array of ln N, N = number of parameters.
      log_D: float array of ln D, D = number of training tokens; same shape as ``log_N``.
      log_U: float array of ln U_D, U_D = number of unique tokens (U_D <= D), same shape; ``None`` when the
        data are not repeated. Only the Muennighoff law (L3) reads it.
    """

    log_N: Array
    log_D: Array
    log_U: Array | None = None


class ChinchillaParams(NamedTuple):
    """Parameters of L1 (Chinchilla), L = E + A N^(-alpha) + B D^(-beta), with A = e^a, B = e^b, E = e^e.

    The log-coefficients keep A, B, E positive during unconstrained fitting. Fields are float scalars (0-d
    arrays) for one law, or ``(s,)`` arrays for a batch of ``s`` parameter sets (e.g. fitting starts).

    Attributes:
      a: ln A, the log-coefficient of the parameter term.
      b: ln B, the log-coefficient of the data term.
      e: ln E, the log irreducible loss.
      alpha: exponent of N (> 0 for a decaying law).
      beta: exponent of D (> 0 for a decaying law).
    """

    a: Array
    b: Array
    e: Array
    alpha: Array
    beta: Array

    @classmethod
    def from_natural(cls, A, B, E, alpha, beta) -> ChinchillaParams:
        """Build from natural coefficients: ``a, b, e = ln A, ln B, ln E``.

        Args:
          A: positive float (or array), the coefficient of N^(-alpha).
          B: positive float (or array), the coefficient of D^(-beta).
          E: positive float (or array), the irreducible loss.
          alpha: positive float (or array), the exponent of N.
          beta: positive float (or array), the exponent of D.

        Returns:
          The :class:`ChinchillaParams` ``(ln A, ln B, ln E, alpha, beta)`` as JAX arrays.

        Raises:
          ValueError: an entry that is not finite and > 0 (under ``jit``: at run time).
        """
        A, B, E, alpha, beta = (_check_positive_entries(v, n) for v, n in
                                ((A, "A"), (B, "B"), (E, "E"), (alpha, "alpha"), (beta, "beta")))
        f = jnp.asarray
        return cls(jnp.log(f(A)), jnp.log(f(B)), jnp.log(f(E)), f(alpha), f(beta))

    def to_natural(self) -> tuple[Array, Array, Array, Array, Array]:
        """The natural coefficients ``(A, B, E, alpha, beta) = (e^a, e^b, e^e, alpha, beta)``.

        Returns:
          A tuple of five arrays with the shapes of the fields.

        Warns:
          UserWarning: an exponent is <= 0 (allowed while fitting, but not a decaying power law); checked
            only on concrete values.
        """
        _warn_nonpositive(self.alpha, "alpha")
        _warn_nonpositive(self.beta, "beta")
        return jnp.exp(self.a), jnp.exp(self.b), jnp.exp(self.e), self.alpha, self.beta


class KaplanParams(NamedTuple):
    """Parameters of L2 (Kaplan et al., arXiv:2001.08361), L = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^(alpha_D).

    Fields are float scalars (0-d arrays), or ``(s,)`` arrays for a batch of parameter sets.

    Attributes:
      log_Nc: ln N_c, the parameter-count scale.
      log_Dc: ln D_c, the token-count scale.
      alpha_N: exponent of N.
      alpha_D: exponent of D (nonzero: the law divides by it).
    """

    log_Nc: Array
    log_Dc: Array
    alpha_N: Array
    alpha_D: Array


class MuennighoffParams(NamedTuple):
    """Parameters of L3 (Muennighoff et al., arXiv:2305.16264): L1 at effective data D' and size N'.

    Fields are float scalars (0-d arrays), or ``(s,)`` arrays for a batch of parameter sets.

    Attributes:
      a: ln A, as in :class:`ChinchillaParams`.
      b: ln B.
      e: ln E.
      alpha: exponent of N' (> 0).
      beta: exponent of D' (> 0).
      R_D_star: R_D* > 0, the decay constant of the value of repeated data (in epochs beyond the first).
      R_N_star: R_N* > 0, the decay constant of the value of parameters beyond the compute-optimal size.
    """

    a: Array
    b: Array
    e: Array
    alpha: Array
    beta: Array
    R_D_star: Array
    R_N_star: Array


class FarseerParams(NamedTuple):
    """Parameters of L4 (Farseer, Li et al., arXiv:2506.10972, as recalled here):
    L = exp(a3 N^gamma + b3) + exp(a2 N^beta + b2) D^(-beta_D(N)),  beta_D(N) = exp(a1 N^alpha + b1).

    Fields are float scalars (0-d arrays), or ``(s,)`` arrays for a batch of parameter sets.

    Attributes:
      a1: coefficient of N^alpha in ln beta_D(N).
      b1: offset of ln beta_D(N).
      alpha: exponent of N in ln beta_D(N).
      a2: coefficient of N^beta in the log-scale of the data term.
      b2: offset of the log-scale of the data term.
      beta: exponent of N in the log-scale of the data term.
      a3: coefficient of N^gamma in the log-floor.
      b3: offset of the log-floor.
      gamma: exponent of N in the log-floor.
    """

    a1: Array
    b1: Array
    alpha: Array
    a2: Array
    b2: Array
    beta: Array
    a3: Array
    b3: Array
    gamma: Array


def _check_positive_entries(v: Any, name: str) -> Any:
    return check_in_range(v, name, 0.0, math.inf, lo_open=True, hi_open=True)


def _warn_nonpositive(v: Any, name: str) -> None:
    if is_concrete(v) and bool(jnp.any(jnp.asarray(v) <= 0)):
        warnings.warn(f"{name} <= 0 ({v!r}): not a decaying power law", UserWarning, stacklevel=3)


def _np_params(cls: type, *values: float) -> Any:
    """A reference parameter set as float64 numpy scalars: constants that touch no JAX backend at import."""
    return cls(*(np.asarray(v, dtype=np.float64) for v in values))


HOFFMANN_2022 = _np_params(ChinchillaParams, np.log(406.4), np.log(410.7), np.log(1.69), 0.34, 0.28)
"""Hoffmann et al. 2022, Approach 3, rounded as published (A = 406.4, B = 410.7, E = 1.69)."""
HOFFMANN_2022_UNROUNDED = _np_params(ChinchillaParams, 6.0073404, 6.0179186, 0.5267228, 0.33917084, 0.2849083)
"""Hoffmann et al. 2022, the unrounded values used by the Besiroglu et al. replication."""
BESIROGLU_2024 = _np_params(ChinchillaParams, np.log(482.01), np.log(2085.43), np.log(1.8172), 0.3478, 0.3658)
"""Besiroglu et al. 2024 refit (Huber likelihood), headline values (A = 482.01, B = 2085.43, E = 1.8172)."""
KAPLAN_2020 = _np_params(KaplanParams, math.log(6.4e13), math.log(1.8e13), 0.076, 0.103)
"""Kaplan et al. 2020 joint fit (Table 2, values recalled, not re-read; N counts non-embedding parameters)."""
MUENNIGHOFF_2023 = _np_params(MuennighoffParams, 6.255414, 7.3049974, 0.6254804, 0.3526596, 0.3526596, 15.387756,
                              5.309743)
"""Muennighoff et al. 2023 published fit (alpha = beta exactly)."""


def _check_X(X: Any, *, need_U: bool = False) -> Covariates:
    if not isinstance(X, Covariates):
        raise TypeError(f"X must be a jaxlab.scaling.laws.Covariates, got {type(X).__name__}")
    log_N = as_array(X.log_N, "X.log_N", finite=True)
    log_D = as_array(X.log_D, "X.log_D", finite=True)
    if log_N.shape != log_D.shape:
        raise ValueError(f"X.log_N and X.log_D must have the same shape, got {log_N.shape} and {log_D.shape}")
    log_U = None
    if X.log_U is not None:
        log_U = as_array(X.log_U, "X.log_U", shape=log_N.shape, finite=True)
    elif need_U:
        raise ValueError("X.log_U (log unique tokens) is required by the Muennighoff law, got None")
    return Covariates(log_N, log_D, log_U)


@cites(HOFFMANN)
def covariates(N: Any, D: Any, U: Any = None) -> Covariates:
    """Validate a design in natural units and take logs: ``Covariates(ln N, ln D, ln U_D)``.

    Args:
      N: float array (any shape, usually ``(n,)``) of parameter counts, finite and > 0.
      D: float array of token counts, the shape of ``N``, finite and > 0.
      U: optional float array of unique-token counts U_D, the shape of ``N``, finite, > 0 and <= D (a
        relative excess up to 1e-12 is clipped to D); only the Muennighoff law uses it.

    Returns:
      :class:`Covariates` with float arrays of the shape of ``N`` (``log_U`` is ``None`` without ``U``).

    Raises:
      TypeError: a non-float array (Python numbers are promoted).
      ValueError: shapes that differ; an entry that is not finite and > 0; U_D > D (the value checks fail at
        run time under ``jit``).
    """
    N = as_array(N, "N", finite=True)
    D = as_array(D, "D", shape=N.shape, finite=True)
    N = check_in_range(N, "N", 0.0, math.inf, lo_open=True)
    D = check_in_range(D, "D", 0.0, math.inf, lo_open=True)
    log_U = None
    if U is not None:
        U = as_array(U, "U", shape=N.shape, finite=True)
        U = check_in_range(U, "U", 0.0, math.inf, lo_open=True)
        U = value_check(U, lambda u: u > D * (1 + 1e-12),
                        "U (unique tokens) must be <= D (total tokens) at every design point")
        log_U = jnp.minimum(jnp.log(U), jnp.log(D))
    return Covariates(jnp.log(N), jnp.log(D), log_U)


@cites(HOFFMANN, BESIROGLU)
def chinchilla_log_loss(p: ChinchillaParams, X: Covariates) -> Float[Array, "*n"]:
    """ln L of L1 (Hoffmann et al., "Training Compute-Optimal Large Language Models", arXiv:2203.15556).

    ``ln L = LSE(a - alpha ln N, b - beta ln D, e)`` = ln(A N^(-alpha) + B D^(-beta) + E), evaluated with
    ``logsumexp`` so that it neither overflows nor loses the small terms.

    Args:
      p: :class:`ChinchillaParams` (scalar fields; ``jax.vmap`` over a batch of parameter sets).
      X: :class:`Covariates` of the design (``log_U`` is ignored).

    Returns:
      Float array of ln L, the broadcast shape of ``X.log_N`` and the fields of ``p``.

    Raises:
      TypeError: ``X`` is not a :class:`Covariates`, or holds non-float arrays.
      ValueError: ``X.log_N`` and ``X.log_D`` of different shapes, or non-finite entries.
    """
    X = _check_X(X)
    terms = jnp.stack(jnp.broadcast_arrays(p.a - p.alpha * X.log_N, p.b - p.beta * X.log_D, p.e))
    return logsumexp(terms, axis=0)


@cites(KAPLAN)
def kaplan_log_loss(p: KaplanParams, X: Covariates) -> Float[Array, "*n"]:
    """ln L of L2 (Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361).

    ``ln L = alpha_D LSE((alpha_N/alpha_D)(ln N_c - ln N), ln D_c - ln D)``, the log of
    L = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^(alpha_D).

    Args:
      p: :class:`KaplanParams` (scalar fields).
      X: :class:`Covariates` of the design (``log_U`` is ignored).

    Returns:
      Float array of ln L, the shape of ``X.log_N``.

    Raises:
      TypeError: ``X`` is not a :class:`Covariates`, or holds non-float arrays.
      ValueError: ``X.log_N`` and ``X.log_D`` of different shapes, or non-finite entries.
    """
    X = _check_X(X)
    terms = jnp.stack([(p.alpha_N / p.alpha_D) * (p.log_Nc - X.log_N), p.log_Dc - X.log_D])
    return p.alpha_D * logsumexp(terms, axis=0)


def _log_effective(log_unique: Array, log_total: Array, r_star: Array) -> Array:
    """ln of U + U R* (1 - exp(-R/R*)), R = max(T/U - 1, 0) (repeated data is worth less)."""
    R = jnp.maximum(jnp.expm1(log_total - log_unique), 0.0)
    return log_unique + jnp.log1p(-r_star * jnp.expm1(-R / r_star))


@cites(MUENNIGHOFF)
def muennighoff_log_loss(p: MuennighoffParams, X: Covariates) -> Float[Array, "*n"]:
    """ln L of L3 (Muennighoff et al., "Scaling Data-Constrained Language Models", arXiv:2305.16264).

    L1 evaluated at the effective data and size of repeated data::

        D' = U_D + U_D R_D* (1 - exp(-R_D/R_D*)),   R_D = max(D/U_D - 1, 0)
        N' = U_N + U_N R_N* (1 - exp(-R_N/R_N*)),   U_N = min(N, N_opt(U_D)),  R_N = max(N/U_N - 1, 0)

    with N_opt(D) = G (D G)^(beta/alpha), G = (alpha A / (beta B))^(1/(alpha + beta)), the L1 compute-optimal
    size for D tokens. With U_D = D and N <= N_opt(D) this is exactly :func:`chinchilla_log_loss`.

    Args:
      p: :class:`MuennighoffParams` (scalar fields).
      X: :class:`Covariates` of the design, with ``log_U``.

    Returns:
      Float array of ln L, the shape of ``X.log_N``.

    Raises:
      TypeError: ``X`` is not a :class:`Covariates`, or holds non-float arrays.
      ValueError: ``X.log_U`` is ``None``; fields of different shapes; non-finite entries.
    """
    X = _check_X(X, need_U=True)
    log_G = (jnp.log(p.alpha) + p.a - jnp.log(p.beta) - p.b) / (p.alpha + p.beta)
    log_n_opt = log_G + (p.beta / p.alpha) * (X.log_U + log_G)
    log_UN = jnp.minimum(X.log_N, log_n_opt)
    log_Np = _log_effective(log_UN, X.log_N, p.R_N_star)
    log_Dp = _log_effective(X.log_U, X.log_D, p.R_D_star)
    return chinchilla_log_loss(ChinchillaParams(p.a, p.b, p.e, p.alpha, p.beta), Covariates(log_Np, log_Dp))


@cites(FARSEER)
def farseer_log_loss(p: FarseerParams, X: Covariates) -> Float[Array, "*n"]:
    """ln L of L4 (Li et al., "Farseer: A Refined Scaling Law in Large Language Models", arXiv:2506.10972).

    ``ln L = LSE(a3 N^gamma + b3, a2 N^beta + b2 - exp(a1 N^alpha + b1) ln D)``, the log of
    L = exp(a3 N^gamma + b3) + exp(a2 N^beta + b2) D^(-exp(a1 N^alpha + b1)). The form is recalled from the
    paper (no reference constants are shipped).

    Args:
      p: :class:`FarseerParams` (scalar fields).
      X: :class:`Covariates` of the design (``log_U`` is ignored).

    Returns:
      Float array of ln L, the shape of ``X.log_N``.

    Raises:
      TypeError: ``X`` is not a :class:`Covariates`, or holds non-float arrays.
      ValueError: ``X.log_N`` and ``X.log_D`` of different shapes, or non-finite entries.
    """
    X = _check_X(X)
    beta_D = jnp.exp(p.a1 * jnp.exp(p.alpha * X.log_N) + p.b1)
    terms = jnp.stack([p.a3 * jnp.exp(p.gamma * X.log_N) + p.b3,
                       p.a2 * jnp.exp(p.beta * X.log_N) + p.b2 - beta_D * X.log_D])
    return logsumexp(terms, axis=0)


def _chinchilla_value_and_jacobian(p: ChinchillaParams, X: Covariates) -> tuple[Array, Array]:
    """``(ln L (n,), J (n, 5))`` of :func:`chinchilla_log_loss`, the Jacobian in closed form, no input checks.

    With ``u = (a - alpha ln N, b - beta ln D, e)`` and ``ln L = LSE(u)``, the softmax weights ``w = softmax(u)``
    give ``d ln L / d(a, b, e, alpha, beta) = (w_1, w_2, w_3, -w_1 ln N, -w_2 ln D)``: the columns in the field
    order of :class:`ChinchillaParams` (that of ``ravel_pytree``). With ``m = max(u)`` the largest term is
    ``exp(0) = 1`` exactly, so two exponentials (of the other two gaps ``lo <= mid <= 0``) and one logarithm per
    point suffice, against about three times the work for forward-mode autodiff of ``logsumexp``.
    """
    u1 = p.a - p.alpha * X.log_N
    u2 = p.b - p.beta * X.log_D
    m = jnp.maximum(jnp.maximum(u1, u2), p.e)
    d1, d2, d3 = u1 - m, u2 - m, p.e - m  # <= 0, one of them exactly 0
    lo = jnp.minimum(jnp.minimum(d1, d2), d3)
    mid = jnp.maximum(jnp.minimum(d1, d2), jnp.minimum(jnp.maximum(d1, d2), d3))  # the median gap
    e_lo, e_mid = jnp.exp(lo), jnp.exp(mid)
    s = 1 + e_mid + e_lo

    def term(dk):  # exp(dk) from the two exponentials (ties take equal values either way)
        return jnp.where(dk == 0, 1.0, jnp.where(dk == lo, e_lo, e_mid))

    w1, w2, w3 = term(d1) / s, term(d2) / s, term(d3) / s
    return m + jnp.log(s), jnp.stack([w1, w2, w3, -w1 * X.log_N, -w2 * X.log_D], axis=-1)


def _chinchilla_weighted_curvature(J: Array, c: Array, X: Covariates) -> tuple[Array, Array]:
    """``sum_i c_i d^2 ln L_i / d theta^2`` of :func:`chinchilla_log_loss` as ``(B, a)`` with the sum equal to
    ``B + J^T diag(a) J``, from its closed-form Jacobian ``J`` (:func:`_chinchilla_value_and_jacobian`) and
    weights ``c`` (n,); no input checks.

    ``ln L = LSE(u)`` with ``u_k = m_k^T theta + const`` affine in theta (``m_1 = (1, 0, 0, -ln N, 0)``,
    ``m_2 = (0, 1, 0, 0, -ln D)``, ``m_3 = (0, 0, 1, 0, 0)``), so its Hessian is
    ``sum_k w_k m_k m_k^T - J_i J_i^T`` with the softmax weights ``w = (J_i1, J_i2, J_i3)``: ``a = -c``, and
    ``B = sum_i c_i sum_k w_ik m_k m_k^T`` has seven nonzero entries, five of them from ``q = J^T c``. No
    exponential is evaluated.
    """
    q = J.T @ c
    caa = -jnp.sum(c * J[:, 3] * X.log_N)  # sum_i c_i w_1 (ln N_i)^2
    cbb = -jnp.sum(c * J[:, 4] * X.log_D)  # sum_i c_i w_2 (ln D_i)^2
    zero = jnp.zeros_like(caa)
    B = jnp.stack([
        jnp.stack([q[0], zero, zero, q[3], zero]),
        jnp.stack([zero, q[1], zero, zero, q[4]]),
        jnp.stack([zero, zero, q[2], zero, zero]),
        jnp.stack([q[3], zero, zero, caa, zero]),
        jnp.stack([zero, q[4], zero, zero, cbb]),
    ])
    return B, -c


VALUE_AND_JACOBIAN: dict[Callable, Callable[[Any, Covariates], tuple[Array, Array]]] = {
    chinchilla_log_loss: _chinchilla_value_and_jacobian,
}
"""``log_loss`` -> ``(theta, X) -> (ln L (n,), d ln L / d theta (n, p))`` in closed form (columns in
``ravel_pytree`` order), where one is known; the fits use it instead of forward-mode autodiff."""

WEIGHTED_CURVATURE: dict[Callable, Callable[[Array, Array, Covariates], tuple[Array, Array]]] = {
    chinchilla_log_loss: _chinchilla_weighted_curvature,
}
"""``log_loss`` -> ``(J, c, X) -> (B (p, p), a (n,))`` with ``sum_i c_i d^2 ln L_i / d theta^2 = B + J^T diag(a) J``,
in closed form from the Jacobian ``J`` of :data:`VALUE_AND_JACOBIAN` (same law, same column order), where one is
known; the Levenberg-Marquardt step uses it instead of an autodiff Hessian, folding ``a`` into the weights of its
one ``J^T diag(.) J`` product."""

LAWS: dict[str, Callable[[Any, Covariates], Array]] = {
    "chinchilla": chinchilla_log_loss,
    "kaplan": kaplan_log_loss,
    "muennighoff": muennighoff_log_loss,
    "farseer": farseer_log_loss,
}
"""Registry name -> ``log_loss(theta, X)``."""

PARAMS: dict[str, type] = {
    "chinchilla": ChinchillaParams,
    "kaplan": KaplanParams,
    "muennighoff": MuennighoffParams,
    "farseer": FarseerParams,
}
"""Registry name -> parameter NamedTuple."""


def resolve_law(law: str | Callable[[Any, Covariates], Array]) -> Callable[[Any, Covariates], Array]:
    """The ``log_loss(theta, X)`` callable of a law given by registry name or as a callable.

    Args:
      law: a key of :data:`LAWS` (``"chinchilla"``, ``"kaplan"``, ``"muennighoff"``, ``"farseer"``), or any
        callable ``log_loss(theta, X) -> ln L``, returned as is.

    Returns:
      The callable.

    Raises:
      ValueError: ``law`` is neither a registered name nor callable.
    """
    if callable(law):
        return law
    if isinstance(law, str) and law in LAWS:
        return LAWS[law]
    raise ValueError(f"law must be one of {sorted(LAWS)} or a callable log_loss(theta, X), got {law!r}")


@cites(HOFFMANN)
def loss(law: str | Callable, p: Any, N: Any, D: Any, U: Any = None) -> Array:
    """L(N, D[, U]) in natural units: ``exp(log_loss(p, covariates(N, D, U)))``.

    Args:
      law: a key of :data:`LAWS` or a callable ``log_loss(theta, X)``.
      p: the law's parameter NamedTuple (e.g. :data:`HOFFMANN_2022`).
      N: float array of parameter counts, > 0.
      D: float array of token counts, the shape of ``N``, > 0.
      U: optional float array of unique-token counts (required by ``"muennighoff"``).

    Returns:
      Float array of the loss L, the shape of ``N``.

    Raises:
      ValueError: an unknown law name; an invalid design (see :func:`covariates`); ``U`` missing for L3.

    Example:
      >>> from jaxlab.scaling import HOFFMANN_2022, loss
      >>> L = loss("chinchilla", HOFFMANN_2022, 70e9, 1.4e12)  # Chinchilla's size and tokens, about 1.94
    """
    return jnp.exp(resolve_law(law)(p, covariates(N, D, U)))


@cites(HOFFMANN)
def chinchilla_compute_optimal(p: ChinchillaParams, C: Any, flops_per_token_param: float = 6.0
                               ) -> tuple[Array, Array]:
    """Compute-optimal ``(N_opt, D_opt)`` of L1 for a budget C = f N D (Hoffmann et al., arXiv:2203.15556).

    Minimizing A N^(-alpha) + B D^(-beta) subject to f N D = C gives, with
    G = (alpha A / (beta B))^(1/(alpha + beta))::

        N_opt = G (C/f)^(beta/(alpha+beta)),      D_opt = (C/f) / N_opt = G^(-1) (C/f)^(alpha/(alpha+beta))

    Args:
      p: :class:`ChinchillaParams` with alpha, beta > 0 (not checked: otherwise NaN).
      C: float array (any shape) of compute budgets in FLOPs, finite and > 0.
      flops_per_token_param: positive float scalar, the f in C = f N D (6 for a dense transformer).

    Returns:
      ``(N_opt, D_opt)``, two float arrays of the shape of ``C``.

    Raises:
      ValueError: ``C`` not finite and > 0, or ``flops_per_token_param`` not a positive finite scalar.
    """
    C = as_array(C, "C", finite=True)
    C = check_in_range(C, "C", 0.0, math.inf, lo_open=True)
    flops_per_token_param = check_positive(flops_per_token_param, "flops_per_token_param")
    alpha, beta = p.alpha, p.beta
    log_G = (jnp.log(alpha) + p.a - jnp.log(beta) - p.b) / (alpha + beta)
    log_c = jnp.log(C / flops_per_token_param)
    log_N = log_G + beta / (alpha + beta) * log_c
    return jnp.exp(log_N), jnp.exp(log_c - log_N)

