"""Recovery metrics for the multiscale single-index model (``specs/multiscale.md`` section 3.4)."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array, check_in_range

__all__ = ["overlaps", "strong_recovery", "weak_recovery_time"]


def overlaps(ws_hat: Float[Array, "K d"], ws: Float[Array, "K d"]) -> Float[Array, " K"]:
    """Sign-invariant overlaps ``|⟨ŵ_k, w_k⟩|`` (rows normalised first)."""
    ws_hat = as_array(ws_hat, "ws_hat", ndim=2)
    ws = as_array(ws, "ws", shape=ws_hat.shape)
    nh = ws_hat / jnp.linalg.norm(ws_hat, axis=-1, keepdims=True)
    nw = ws / jnp.linalg.norm(ws, axis=-1, keepdims=True)
    return jnp.abs(jnp.sum(nh * nw, axis=-1))


def weak_recovery_time(traj: Float[Array, "T 2"], thr: float = 0.25, record_every: int = 1) -> Array:
    """First step ``t`` (in SGD steps) with ``|m_1 m_2| >= thr``; ``-1`` if never reached.

    ``traj`` holds the overlaps ``(m_1, m_2)`` recorded every ``record_every`` steps (entry ``i`` is after
    step ``(i + 1) · record_every``).
    """
    traj = as_array(traj, "traj", ndim=2, shape=(None, 2))
    check_in_range(thr, "thr", 0.0, 1.0, lo_open=True)
    hit = jnp.abs(traj[:, 0] * traj[:, 1]) >= thr
    return jnp.where(jnp.any(hit), (jnp.argmax(hit) + 1) * record_every, -1)


def strong_recovery(traj: Float[Array, "T 2"], eps: float) -> Array:
    """Whether the last recorded overlaps satisfy ``min_k |m_k| >= 1 - eps``."""
    traj = as_array(traj, "traj", ndim=2)
    check_in_range(eps, "eps", 0.0, 1.0, lo_open=True)
    return jnp.min(jnp.abs(traj[-1])) >= 1.0 - eps
