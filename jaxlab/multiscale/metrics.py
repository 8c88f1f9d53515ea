"""Recovery metrics for the multiscale single-index model: sign-invariant overlaps ``|⟨ŵ_k, w_k⟩|``, the
weak-recovery time (first step with ``|m_1 m_2| >= thr``) and strong recovery (``min_k |m_k| >= 1 - eps``), as
in Ben Arous, Gheissari, Jagannath, "Online stochastic gradient descent on non-convex losses from
high-dimensional inference" (arXiv:2003.10409)."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array, check_in_range, value_check

__all__ = ["overlaps", "strong_recovery", "weak_recovery_time"]


def _nonzero_rows(w: Array, name: str) -> Array:
    return value_check(w, lambda a: jnp.any(jnp.all(a == 0, axis=-1)),
                       f"{name} must have nonzero rows (a zero vector has no direction to compare)")


def overlaps(ws_hat: Float[Array, "K d"], ws: Float[Array, "K d"]) -> Float[Array, " K"]:
    """Sign-invariant overlaps ``|⟨ŵ_k, w_k⟩| / (||ŵ_k|| ||w_k||)`` (rows normalised first).

    Args:
      ws_hat: estimated features, shape ``(K, d)``, finite, no zero row.
      ws: true features, the same shape, finite, no zero row.

    Returns:
      The ``K`` overlaps, in ``[0, 1]``.

    Raises:
      ValueError: mismatched shapes, non-finite entries or a zero row, naming the argument (under ``jit`` the
        value checks raise the same message at run time).
    """
    ws_hat = _nonzero_rows(as_array(ws_hat, "ws_hat", ndim=2, finite=True), "ws_hat")
    ws = _nonzero_rows(as_array(ws, "ws", shape=ws_hat.shape, finite=True), "ws")
    nh = ws_hat / jnp.linalg.norm(ws_hat, axis=-1, keepdims=True)
    nw = ws / jnp.linalg.norm(ws, axis=-1, keepdims=True)
    return jnp.abs(jnp.sum(nh * nw, axis=-1))


def weak_recovery_time(traj: Float[Array, "T 2"], thr: float = 0.25, record_every: int = 1) -> Array:
    """First step ``t`` (in SGD steps) with ``|m_1 m_2| >= thr``; ``-1`` if never reached.

    ``traj`` holds the overlaps ``(m_1, m_2)`` recorded every ``record_every`` steps (entry ``i`` is after
    step ``(i + 1) · record_every``), e.g. the second output of :func:`jaxlab.multiscale.run_online_sgd`.

    Args:
      traj: ``(T, 2)`` float array of recorded overlaps.
      thr: threshold in ``(0, 1]`` on ``|m_1 m_2|``.
      record_every: the recording interval in SGD steps (not validated).

    Returns:
      0-d int array: the first step reaching the threshold, or ``-1``.

    Raises:
      TypeError: non-float ``traj``.
      ValueError: ``traj`` not of shape ``(T, 2)``, or ``thr`` outside ``(0, 1]``.
    """
    traj = as_array(traj, "traj", ndim=2, shape=(None, 2))
    thr = check_in_range(thr, "thr", 0.0, 1.0, lo_open=True)
    hit = jnp.abs(traj[:, 0] * traj[:, 1]) >= thr
    return jnp.where(jnp.any(hit), (jnp.argmax(hit) + 1) * record_every, -1)


def strong_recovery(traj: Float[Array, "T 2"], eps: float) -> Array:
    """Strong recovery: whether the last recorded overlaps satisfy ``min_k |m_k| >= 1 - eps``.

    Args:
      traj: ``(T, K)`` float array of recorded overlaps (the last row is used).
      eps: tolerance in ``(0, 1]``.

    Returns:
      0-d bool array.

    Raises:
      TypeError: non-float ``traj``.
      ValueError: ``traj`` not 2-D, or ``eps`` outside ``(0, 1]``.
    """
    traj = as_array(traj, "traj", ndim=2)
    eps = check_in_range(eps, "eps", 0.0, 1.0, lo_open=True)
    return jnp.min(jnp.abs(traj[-1])) >= 1.0 - eps
