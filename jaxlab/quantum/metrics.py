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

from jaxlab.core.validation import as_array, check_in_range

__all__ = ["gradient_shares", "learning_times", "relative_residuals", "spearman"]


def relative_residuals(r_hat, y_hat, freqs=None) -> Float[Array, "... k"]:
    """The relative residual per frequency, ε_ω = |r̂_ω| / |ŷ_ω|: the fraction of target component ω not yet
    learned (1 at the start from a zero model, 0 when learned).

    Args:
      r_hat: complex (or real float) array of residual coefficients: ``(..., 2K + 1)`` full spectra ordered
        ω = −K..K when ``freqs`` is given (e.g. a trajectory ``(T, 2K + 1)``), else any shape that
        broadcasts with ``y_hat``.
      y_hat: complex (or real float) array of target coefficients: ``(2K + 1,)`` ordered ω = −K..K when
        ``freqs`` is given.
      freqs: optional ``(k,)`` int array of frequencies in −K..K at which to take the ratio.

    Returns:
      Float array: ``r_hat.shape[:-1] + (k,)`` with ``freqs``, else the broadcast shape. Division by
      ŷ_ω = 0 gives inf or NaN.

    Raises:
      TypeError: integer-dtype ``r_hat`` or ``y_hat``; non-integer ``freqs``.
      ValueError: ``freqs`` not 1-d, or a frequency outside −K..K (under ``jit``: at run time).
    """
    r_hat = as_array(r_hat, "r_hat", kind="complex")
    y_hat = as_array(y_hat, "y_hat", kind="complex")
    if freqs is not None:
        K = y_hat.shape[-1] // 2
        idx = check_in_range(as_array(freqs, "freqs", kind="int", ndim=1), "freqs", -K, K) + K
        r_hat, y_hat = r_hat[..., idx], y_hat[..., idx]
    return jnp.abs(r_hat) / jnp.abs(y_hat)


def learning_times(eps_traj, delta: float = 0.1, steps=None) -> Float[Array, " k"]:
    """Learning times τ_ω(δ): the first recorded step at which ε_ω <= δ.

    Args:
      eps_traj: ``(T,)`` or ``(T, k)`` float array of relative residuals over time (axis 0), e.g. from
        :func:`relative_residuals` on a trajectory.
      delta: float threshold δ (not validated).
      steps: optional ``(T,)`` int or float array, the step number of each record (e.g.
        ``Trajectory.steps``); default ``arange(T)``.

    Returns:
      Float array of shape ``eps_traj.shape[1:]``: ``steps[t]`` at the first hit, ``inf`` where never
      reached.

    Raises:
      TypeError: an integer-dtype ``eps_traj``; a non-numeric ``steps``.
      ValueError: ``eps_traj`` neither 1-d nor 2-d; ``steps`` not of shape ``(T,)``.
    """
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
    """Spearman's rank correlation ρ: the Pearson correlation of the ranks of ``a`` and ``b``.

    Ties get their average rank; ``inf`` entries (e.g. never-learned learning times) rank last. Used to test
    whether learning times follow the amplitude order (−|ŷ_ω|) or the frequency order (|ω|).

    Args:
      a: ``(k,)`` int or float array.
      b: ``(k,)`` int or float array.

    Returns:
      Float scalar in [−1, 1] (NaN when either input is constant).

    Raises:
      TypeError: non-numeric inputs.
      ValueError: ``a`` not 1-d; ``b`` not of the shape of ``a``.
    """
    a = as_array(a, "a", ndim=1, kind="number")
    b = as_array(b, "b", ndim=1, kind="number", shape=(a.shape[0],))
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return jnp.sum(ra * rb) / jnp.sqrt(jnp.sum(ra**2) * jnp.sum(rb**2))


def gradient_shares(per_freq) -> Float[Array, "... W1"]:
    """Gradient shares s_ω = ‖g_ω‖ / Σ_ω' ‖g_ω'‖ of the per-frequency gradient contributions.

    Args:
      per_freq: ``(W + 1, P)`` float array of the g_ω (from
        :func:`~jaxlab.quantum.qntk.frequency_gradient`), or ``(B, W + 1, P)`` for a batch.

    Returns:
      Float array of shape ``per_freq.shape[:-1]``, summing to 1 along the last axis (NaN if all g_ω = 0).

    Raises:
      TypeError: an integer-dtype ``per_freq``.
      ValueError: ``per_freq`` neither 2-d nor 3-d.
    """
    g = as_array(per_freq, "per_freq", ndim=(2, 3))
    norms = jnp.linalg.norm(g, axis=-1)
    return norms / jnp.sum(norms, axis=-1, keepdims=True)
