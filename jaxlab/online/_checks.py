"""Boundary checks shared by the ``jaxlab.online`` modules (streams of features/targets, time series)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxlab.core.validation import as_array, check_finite, is_concrete

__all__ = ["check_series", "check_stream"]


def check_series(y, name: str) -> jax.Array:
    """Validate a time series: a real array with a non-empty leading time axis and finite entries.

    Args:
      y: array-like of shape ``(T, ...)``, ``T >= 1``.
      name: the argument's name, for error messages.

    Returns:
      ``y`` as a JAX float array (under ``jit``: wrapped in the run-time finiteness check).

    Raises:
      TypeError: ``y`` is not a float array.
      ValueError: ``y`` is a scalar, has ``T = 0`` or non-finite entries.
    """
    y = as_array(y, name, kind="float")
    if y.ndim < 1:
        raise ValueError(f"{name} must have a leading time axis, got a scalar")
    if y.shape[0] == 0:
        raise ValueError(f"{name} must have at least one time step (T >= 1), got shape {tuple(y.shape)}")
    y = check_finite(y, name)
    return y


def check_stream(features, targets, *, name: str = "features", defer: bool = False) -> tuple[jax.Array, jax.Array]:
    """Validate an online-regression stream: ``features`` (T, d) real, ``targets`` (T,) or (T, k), T >= 1.

    Args:
      features: ``(T, d)`` float array-like.
      targets: ``(T,)`` or ``(T, k)`` float array-like.
      name: the name of ``features`` in error messages.
      defer: leave the finiteness check of traced inputs to the caller, who ties it to its result with
        :func:`jaxlab.core.validation.tie_finite_checks` (cheaper than tying it to the inputs before a scan).

    Returns:
      ``(features, targets)`` as finite JAX arrays cast to their common float dtype.

    Raises:
      TypeError: non-float inputs.
      ValueError: wrong ranks, ``T = 0``, different lengths, or non-finite entries.
    """
    features = as_array(features, name, ndim=2, kind="float")
    targets = as_array(targets, "targets", ndim=(1, 2), kind="float")
    if features.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row (T >= 1), got shape {tuple(features.shape)}")
    if targets.shape[0] != features.shape[0]:
        raise ValueError(f"targets must have the same length as {name} ({features.shape[0]}), "
                         f"got length {targets.shape[0]}")
    if not defer or is_concrete((features, targets)):
        features = check_finite(features, name)
        targets = check_finite(targets, "targets")
    dtype = jnp.result_type(features.dtype, targets.dtype)
    return features.astype(dtype), targets.astype(dtype)
