r"""Policies on a finite output space: boundary checks of a problem and the KL divergence of log-policies.

The setting of Monteiro Paes, Mackraz, Theobald and Danieli, "Theoretical Limits of Language Model Alignment"
(arXiv:2605.07105), for one prompt. A problem is a base policy ``π₀`` over ``V`` outputs, given as
log-probabilities ``log_pi0`` (normalised: ``logsumexp(log_pi0) = 0``; ``−inf`` marks outputs outside the
support), and a finite reward vector ``r`` of the same shape. The penalty ``β`` of a KL-regularised objective
``E_π[r] − β KL(π‖π₀)`` is positive and finite. These checks are shared by :mod:`jaxlab.alignment.kl_limits`
and :mod:`jaxlab.alignment.reinforce`, so every entry point reports a bad input the same way, naming the
argument; value checks also hold under ``jit``.

    KL(p‖q) = Σ_y p(y) (ln p(y) − ln q(y)),    with 0 · ln(0/q) = 0.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array, check_in_range, error_if, is_concrete, value_check

__all__ = [
    "NORM_ATOL",
    "check_count",
    "check_log_policy",
    "check_penalty",
    "check_problem",
    "check_rewards",
    "check_samples",
    "kl_divergence",
]

NORM_ATOL = 1e-6
"""Largest ``|logsumexp(log_pi0)|`` accepted as normalised (jaxlab does not renormalise silently)."""


def check_rewards(r, name: str = "r", ndim=1) -> jax.Array:
    """``r`` as a finite floating array of ``ndim`` dimensions.

    Args:
      r: array-like of rewards.
      name: the argument name used in error messages.
      ndim: the allowed number of dimensions, an int or a tuple of ints.

    Returns:
      ``r`` as a JAX float array (under ``jit``, carrying the run-time finiteness check: use it).

    Raises:
      TypeError: naming ``name``, for a non-float dtype.
      ValueError: naming ``name``, for a wrong ndim or a non-finite entry.
    """
    return as_array(r, name, ndim=ndim, kind="float", finite=True)


def check_log_policy(log_pi0, r=None) -> jax.Array:
    """``log_pi0`` as normalised log-probabilities ``(V,)``, ``V ≥ 1``, of the shape of ``r`` when given.

    Normalised means ``|logsumexp(log_pi0)| ≤ atol`` with ``atol = max(NORM_ATOL, 64 ε)`` for the machine
    epsilon ``ε`` of the dtype (a float32 policy cannot sum to 1 closer than its rounding allows). The value
    checks hold under ``jit``/``vmap`` too (:func:`jaxlab.core.validation.value_check`); the returned array
    carries them, so use it.

    Args:
      log_pi0: ``(V,)`` float32 or float64 array of log-probabilities (``−inf`` off the support).
      r: optional array whose shape ``log_pi0`` must have.

    Returns:
      ``log_pi0`` as a JAX array.

    Raises:
      TypeError: naming ``log_pi0``, for a non-float or half-precision (float16, bfloat16) policy.
      ValueError: naming ``log_pi0``, for a wrong ndim, no entry, NaN or ``+inf`` entries or a policy that is not
        normalised; naming ``r`` when its shape differs.
    """
    log_pi0 = as_array(log_pi0, "log_pi0", ndim=1, kind="float")
    if jnp.finfo(log_pi0.dtype).bits < 32:
        # a half-precision policy cannot be normalised to any useful tolerance: say so, not "not normalised"
        raise TypeError(f"log_pi0 must be float32 or float64, got dtype {log_pi0.dtype}")
    if log_pi0.shape[0] < 1:
        raise ValueError("log_pi0 must have at least one entry, got shape (0,)")
    if r is not None and r.shape != log_pi0.shape:
        raise ValueError(f"r must have the shape of log_pi0 {tuple(log_pi0.shape)}, got shape "
                         f"{tuple(r.shape)}")
    log_pi0 = value_check(log_pi0, lambda a: jnp.isnan(a) | (a == jnp.inf),
                          "log_pi0 must be log-probabilities (no NaN or +inf), got NaN or +inf entries")
    atol = max(NORM_ATOL, 64 * float(jnp.finfo(log_pi0.dtype).eps))
    if is_concrete(log_pi0):
        with jax.ensure_compile_time_eval():  # evaluated where the array lives; one scalar reaches the host
            lse = float(logsumexp(log_pi0))
        if not abs(lse) <= atol:
            raise ValueError(f"log_pi0 must be normalised (|logsumexp(log_pi0)| <= {atol:.3g}), got "
                             f"logsumexp = {lse:.3g}; jaxlab does not renormalise silently")
        return log_pi0
    return error_if(log_pi0, ~(jnp.abs(logsumexp(log_pi0)) <= atol),
                    f"log_pi0 must be normalised (|logsumexp(log_pi0)| <= {atol:.3g}); jaxlab does not "
                    "renormalise silently")


def check_problem(log_pi0, r) -> tuple[jax.Array, jax.Array]:
    """Validated ``(log_pi0, r)`` of one prompt: normalised log-probabilities and finite float rewards.

    Args:
      log_pi0: ``(V,)`` float array of base-policy log-probabilities.
      r: ``(V,)`` float array of rewards.

    Returns:
      The tuple ``(log_pi0, r)`` of checked JAX arrays.

    Raises:
      TypeError: as :func:`check_rewards` and :func:`check_log_policy`.
      ValueError: as :func:`check_rewards` and :func:`check_log_policy`.
    """
    r = check_rewards(r)
    return check_log_policy(log_pi0, r), r


def check_penalty(beta, name: str = "beta", ndim=0) -> jax.Array:
    """A KL penalty ``β ∈ (0, ∞)`` (or a grid of them, ``ndim=1``) as a floating array.

    Args:
      beta: the penalty, a float or array.
      name: the argument name used in error messages.
      ndim: the allowed number of dimensions, an int or a tuple of ints.

    Returns:
      ``beta`` as a JAX float array (under ``jit``, carrying the run-time range check).

    Raises:
      TypeError: naming ``name``, for a non-float array.
      ValueError: naming ``name``, for a wrong ndim, ``β ≤ 0``, ``β = ∞`` or NaN (under ``jit``: at run time).
    """
    beta = as_array(beta, name, ndim=ndim, kind="float")
    return check_in_range(beta, name, 0.0, math.inf, lo_open=True, hi_open=True)


def check_count(n, name: str, ndim=0) -> jax.Array:
    """A best-of-N count ``N ≥ 1`` as a floating array (traced values allowed, so ``N`` can be vmapped).

    Args:
      n: the count, a number or an int or float array.
      name: the argument name used in error messages.
      ndim: the allowed number of dimensions, an int or a tuple of ints.

    Returns:
      ``n`` as a JAX float array (integers are cast to the default float dtype).

    Raises:
      TypeError: naming ``name``, for a non-numeric input.
      ValueError: naming ``name``, for a wrong ndim, ``N < 1``, ``N = ∞`` or NaN.
    """
    n = as_array(n, name, ndim=ndim, kind="number")
    n = check_in_range(n, name, 1.0, math.inf, hi_open=True)
    return n.astype(jnp.result_type(float)) if not jnp.issubdtype(n.dtype, jnp.floating) else n


def check_samples(r, name: str = "r") -> None:
    """Require at least two samples along the last axis of ``r`` (a sample mean and spread need two).

    Args:
      r: array of sampled rewards, samples on the last axis.
      name: the argument name used in the error message.

    Raises:
      ValueError: naming ``name``, when ``r.shape[-1] < 2``.
    """
    if r.shape[-1] < 2:
        raise ValueError(f"{name} must hold at least 2 samples along its last axis, got shape "
                         f"{tuple(r.shape)}")


def kl_divergence(log_p: Float[Array, " V"], log_q: Float[Array, " V"]) -> Float[Array, ""]:
    """``KL(p‖q) = Σ_y p(y) (ln p(y) − ln q(y))`` for log-probability vectors, with ``0 · ln(0/q) = 0``.

    Entries with ``p = 0`` contribute 0, also where ``q = 0``. Inputs are not checked.

    Args:
      log_p: ``(V,)`` float array, ``ln p``.
      log_q: ``(V,)`` float array, ``ln q``.

    Returns:
      0-d float array ``KL(p‖q)`` (``+inf`` where ``p > 0 = q``).
    """
    p = jnp.exp(log_p)
    diff = jnp.where(p > 0, log_p - log_q, 0.0)
    return jnp.sum(p * diff)
