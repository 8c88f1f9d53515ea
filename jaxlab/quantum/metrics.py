r"""Spectral metrics of training runs.

* relative residual per frequency ``ε_ω(t) = |r̂_ω(t)| / |ŷ_ω|`` for ω in supp(ŷ);
* learning time ``τ_ω(δ)`` = the first recorded step with ``ε_ω ≤ δ`` (``inf`` if never; default δ = 0.1);
* gradient share ``s_ω = ‖g_{ω,·}‖ / Σ_ω' ‖g_{ω',·}‖`` of the per-frequency gradient contributions;
* Spearman's rank correlation (average ranks for ties), used to test whether τ_ω follows the amplitude −|ŷ_ω|
  or the frequency index |ω| (Xu, Zhang, Yan, arXiv:2409.06682: "Spectral Amplitude Priority").
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array

__all__ = ["gradient_shares", "learning_times", "relative_residuals", "spearman"]


def relative_residuals(r_hat, y_hat, freqs=None) -> Float[Array, "... k"]:
    """``|r̂_ω| / |ŷ_ω|``. With ``freqs``, ``r_hat`` (``(..., 2K+1)``) and ``y_hat`` (``(2K+1,)``) are full
    spectra ordered ω = −K..K and the ratio is taken at those frequencies; without, elementwise."""
    r_hat = as_array(r_hat, "r_hat", kind="complex")
    y_hat = as_array(y_hat, "y_hat", kind="complex")
    if freqs is not None:
        K = y_hat.shape[-1] // 2
        idx = as_array(freqs, "freqs", kind="int", ndim=1) + K
        r_hat, y_hat = r_hat[..., idx], y_hat[..., idx]
    return jnp.abs(r_hat) / jnp.abs(y_hat)


def learning_times(eps_traj, delta: float = 0.1, steps=None) -> Float[Array, " k"]:
    """First time (``steps[t]``, default the index t) with ``ε ≤ δ`` along axis 0 of ``eps_traj`` ``(T, k)``;
    ``inf`` where never reached."""
    eps = as_array(eps_traj, "eps_traj", ndim=(1, 2))
    T = eps.shape[0]
    steps = jnp.arange(T) if steps is None else as_array(steps, "steps", kind="number", shape=(T,))
    hit = eps <= delta
    first = jnp.argmax(hit, axis=0)
    return jnp.where(jnp.any(hit, axis=0), steps[first].astype(jnp.result_type(float)), jnp.inf)


def _ranks(a: jnp.ndarray) -> jnp.ndarray:
    less = jnp.sum(a[None, :] < a[:, None], axis=1)
    equal = jnp.sum(a[None, :] == a[:, None], axis=1)
    return less + (equal + 1) / 2


def spearman(a, b) -> Float[Array, ""]:
    """Spearman's ρ: Pearson correlation of the (tie-averaged) ranks; ``inf`` entries rank last."""
    a = as_array(a, "a", ndim=1, kind="number")
    b = as_array(b, "b", ndim=1, kind="number", shape=(a.shape[0],))
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return jnp.sum(ra * rb) / jnp.sqrt(jnp.sum(ra**2) * jnp.sum(rb**2))


def gradient_shares(per_freq) -> Float[Array, "... W1"]:
    """``s_ω = ‖g_ω‖ / Σ_ω' ‖g_ω'‖`` for per-frequency contributions ``(..., W+1, P)``."""
    g = as_array(per_freq, "per_freq", ndim=(2, 3))
    norms = jnp.linalg.norm(g, axis=-1)
    return norms / jnp.sum(norms, axis=-1, keepdims=True)
