"""Input checks shared by the CwR losses, links, registry and checker (private to the area)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.validation import (
    as_array,
    check_in_range,
    check_int,
    is_concrete,
    tie_finite_checks,
    value_check,
)


def _first_value(x: Any) -> float:
    """The first entry of a concrete (rejected) input, for the error message."""
    return float(np.asarray(x, dtype=float).ravel()[0])


def _check_cost(c: Any, name: str, *, lo: float, hi: float, hi_open: bool, why: str = "") -> Any:
    """Return ``c``; raise unless lo < c < hi (c <= hi when not ``hi_open``), eagerly or under ``jit``."""
    interval = f"({lo}, {hi}{')' if hi_open else ']'}"
    msg = f"c must lie in {interval} for the {name} surrogate{why}"
    try:
        return value_check(c, lambda v: ~((v > lo) & ((v < hi) if hi_open else (v <= hi))), msg)
    except ValueError:
        raise ValueError(f"{msg}, got {_first_value(c)!r}") from None


def _check_half(c: Any, name: str) -> Any:
    """Return ``c``; raise unless c = 1/2, eagerly or under ``jit``."""
    msg = (f"c must equal 1/2 for the {name} surrogate (Ramaswamy et al. calibrate it at c = 1/2; their "
           "c < 1/2 variants are not implemented)")
    try:
        return value_check(c, lambda v: v != 0.5, msg)
    except ValueError:
        raise ValueError(f"{msg}, got {_first_value(c)!r}") from None


_CWR2D_WHY = (
    " (at c = 1/2 the midpoint of a tied pair with radius 1/2 beats the accept vertex for every a, so the "
    "interval-coverage loss is not calibrated there)"
)


def _check_K(K: Any, min_value: int = 2) -> int:
    return check_int(K, "K", min_value=min_value)


def _scores(u: Any, d: int | None, name: str = "u") -> jax.Array:
    # concrete scores are checked for finiteness here; traced ones by _finite_scores, on the function's result
    u = as_array(u, name, kind="float", finite=is_concrete(u))
    if u.ndim < 1:
        raise ValueError(f"{name} must have at least 1 dimension (scores on the last axis), got a scalar")
    if d is not None and u.shape[-1] != d:
        raise ValueError(f"{name} must have last dimension {d} (the surrogate's dimension), "
                         f"got shape {u.shape}")
    return u


def _finite_scores(fn: Callable) -> Callable:
    """Decorate a function of the scores ``u`` (its first argument): under ``jit``/``vmap`` the finiteness check of
    ``u`` is tied to the function's result rather than to ``u``, which spares a select over the (batch, K) scores
    that XLA would materialise; eagerly, :func:`_scores` has already checked ``u``."""

    @functools.wraps(fn)
    def wrapper(u: Any, *args: Any, **kwargs: Any) -> Any:
        return tie_finite_checks(fn(u, *args, **kwargs), u=u)

    return wrapper


def _labels(y: Any, K: int | None, name: str = "y") -> jax.Array:
    y = as_array(y, name, kind="int")
    if K is not None:
        y = check_in_range(y, name, 0, K - 1)
    return y


def _broadcast(u: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Broadcast scores (..., d) and labels to one batch shape; a mismatch names both (at trace time)."""
    try:
        batch = jnp.broadcast_shapes(u.shape[:-1], y.shape)
    except ValueError:
        raise ValueError(
            f"u and y must have matching batch shapes: scores u of shape {tuple(u.shape)} have batch shape "
            f"{tuple(u.shape[:-1])} (scores on the last axis), labels y have shape {tuple(y.shape)}, and the "
            "two do not broadcast"
        ) from None
    return jnp.broadcast_to(u, (*batch, u.shape[-1])), jnp.broadcast_to(y, batch)


def _loss_inputs(u: Any, y: Any) -> tuple[jax.Array, jax.Array]:
    """Scores ``(..., K)`` and labels of one batch shape for a K-dimensional loss. Concrete inputs are checked now
    (ValueError); traced ones by :func:`_tie_loss` on the loss, which the loss must make a witness of them."""
    u = _scores(u, None)
    return _broadcast(u, _labels(y, u.shape[-1] if is_concrete(y) else None))


def _poison(u: jax.Array) -> jax.Array:
    """``u - u``: 0 where ``u`` is finite, NaN where it is not. Added inside a loss's own pass over the scores, it
    makes the loss a witness of their finiteness at no extra pass (no constant either: a broadcast zero would be
    materialised at the scores' size as an input of XLA-CPU's reduction kernels)."""
    return u - u


def _tie_loss(out: jax.Array, u: jax.Array, y: jax.Array) -> jax.Array:
    """Tie the run-time checks of traced ``u`` (finite) and ``y`` (in 0..K-1) to the loss ``out``, which is NaN or
    infinite wherever ``u`` has a non-finite entry (the loss adds :func:`_poison`); a label out of range makes the
    sample's loss NaN here. The inputs are read again only when the loss is not finite, so a finite loss costs one
    reduction over the batch instead of one over the scores."""
    K = u.shape[-1]
    if is_concrete(y):
        return tie_finite_checks(out, witness=out, u=u)
    bad = (y < 0) | (y >= K)
    out = jnp.where(bad, jnp.nan, out)
    return tie_finite_checks(out, witness=out, checks=((lambda: bad, f"y must lie in [0, {K - 1}]"),), u=u)


def _pick(u: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.take_along_axis(u, y[..., None], axis=-1)[..., 0]


def _check_tau(tau: Any, name: str, lo: float, hi: float) -> Any:
    """Return the link threshold ``tau``; raise unless lo < tau < hi, eagerly or under ``jit``."""
    return check_in_range(tau, name, lo, hi, lo_open=True, hi_open=True)

