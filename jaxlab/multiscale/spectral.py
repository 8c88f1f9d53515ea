r"""Tensor-unfolding spectral estimator of the multiscale single-index model's features.

Reconstructed (the paper's text was not available), after Richard &
Montanari, "A statistical model for tensor PCA" (arXiv:1411.1076), and Benaych-Georges & Nadakuditi
(arXiv:1103.2221) for the BBP overlap:

1. first chaos ``T̂ = (1/n) Σ_i (y_i - ȳ) x_i ∈ R^{d^K}`` (Stein: ``E[y x] ≈ c w_K ⊗ ... ⊗ w_1``);
2. most-square unfolding ``M = reshape(T̂, (d^a, d^{K-a}))``, ``a = ⌈K/2⌉`` (rows: the ``a`` coarsest axes);
3. top singular pair ``(u, v)`` of ``M`` (SVD, or ``n_power`` power iterations on ``M Mᵀ``);
4. sequential rank-one splits of ``u`` into ``ŵ_K, ..., ŵ_{K-a+1}`` and of ``v`` into ``ŵ_{K-a}, ..., ŵ_1``;
5. optional higher-order power iteration ``ŵ_k ← normalise(T̂ ×_{l≠k} ŵ_l)``.

Signs are not identifiable: compare with ``|⟨ŵ_k, w_k⟩|`` (:func:`jaxlab.multiscale.metrics.overlaps`).
BBP (square case ``K = 2``, linear links, pure-noise-plus-rank-one): ``|⟨û, w_2⟩|² → 1 - d/n`` for ``n > d``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_finite, check_int, is_concrete, value_check
from jaxlab.multiscale.model import MSIMConfig, check_config
from jaxlab.multiscale.papers import MSIM, RICHARD_MONTANARI

__all__ = [
    "bbp_overlap_square",
    "estimate_from_chaos",
    "first_chaos_estimate",
    "hopi_refine",
    "rank_one_split",
    "unfold",
    "unfolding_estimator",
]


@cites(MSIM)
def first_chaos_estimate(X: Float[Array, "n D"], y: Float[Array, " n"], center: bool = True) -> Float[Array, " D"]:
    """Empirical first chaos ``T̂ = (1/n) Σ_i (y_i - ȳ) x_i`` (``center=False``: ``(1/n) Σ_i y_i x_i``).

    Step 1 of the estimator (module docstring): by Stein's lemma ``E[y x]`` is the first chaos ``T*``.

    Args:
      X: ``(n, D)`` float array of inputs, ``n >= 1``, finite.
      y: ``(n,)`` float array of responses, finite.
      center: subtract the sample mean ``ȳ``.

    Returns:
      ``(D,)`` float array ``T̂``.

    Raises:
      TypeError: non-float arrays.
      ValueError: wrong ranks, non-finite entries, ``len(y) != n`` or ``n = 0``.
    """
    X = as_array(X, "X", ndim=2)
    y = as_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one entry per row of X ({X.shape[0]}), got {y.shape[0]}")
    if X.shape[0] < 1:
        raise ValueError("X must have at least one row (n >= 1)")
    if is_concrete((X, y)):
        X, y = check_finite(X, "X"), check_finite(y, "y")
    yc = y - jnp.mean(y) if center else y
    T = yc @ X / X.shape[0]
    if is_concrete((X, y)):
        return T
    # Under jit, one check on the (D,) result instead of a pass over the (n, D) data (14× the estimator's time
    # at n = 14195, D = 4096): any NaN or inf in X or y leaves an entry of y_c·X non-finite (NaN·a, inf·0 and
    # inf - inf are all NaN).
    return value_check(T, lambda t: ~jnp.isfinite(t),
                       "X and y must be finite (the first chaos y_c·X / n came out NaN or inf)")


def _check_dk(T, d: int, K: int) -> Array:
    d = check_int(d, "d", min_value=2)
    K = check_int(K, "K", min_value=1)
    T = as_array(T, "T_hat", ndim=1)
    if T.shape[0] != d**K:
        raise ValueError(f"T_hat must have length d^K = {d**K}, got {T.shape[0]}")
    return T


@cites(MSIM)
def unfold(T_hat: Float[Array, " D"], d: int, K: int, a: int | None = None) -> Float[Array, "r c"]:
    """Unfolding ``reshape(T̂, (d^a, d^{K-a}))``, ``a = ⌈K/2⌉`` by default (rows: the ``a`` coarsest axes).

    Step 2 of the estimator (module docstring), after Richard and Montanari, *A statistical model for tensor
    PCA* (arXiv:1411.1076).

    Args:
      T_hat: ``(d^K,)`` float array (axes coarsest first).
      d: block size ``>= 2``.
      K: number of layers ``>= 1``.
      a: number of row axes in ``[0, K]``, or ``None`` for ``⌈K/2⌉``.

    Returns:
      ``(d^a, d^{K-a})`` array.

    Raises:
      TypeError: non-float ``T_hat`` or non-int ``d``/``K``/``a``.
      ValueError: ``d < 2``, ``K < 1``, ``a`` outside ``[0, K]``, or ``T_hat`` not of length ``d^K``.
    """
    T_hat = _check_dk(T_hat, d, K)
    a = (K + 1) // 2 if a is None else check_int(a, "a", min_value=0, max_value=K)
    return T_hat.reshape(d**a, d ** (K - a))


def _top_pair(A: Array, n_power: int | None):
    if n_power is None:
        U, _, Vt = jnp.linalg.svd(A, full_matrices=False)
        return U[:, 0], Vt[0]
    # Power iteration on A Aᵀ from A's largest column (deterministic, never orthogonal to the top space
    # unless A is).
    u = A[:, jnp.argmax(jnp.sum(A * A, axis=0))]

    def body(_, u):
        u = A @ (A.T @ u)
        return u / jnp.linalg.norm(u)

    u = jax.lax.fori_loop(0, n_power, body, u / jnp.linalg.norm(u))
    v = A.T @ u
    return u, v / jnp.linalg.norm(v)


@cites(MSIM)
def rank_one_split(q: Float[Array, " D"], d: int, m: int, n_power: int | None = None) -> Float[Array, "m d"]:
    """Split ``q ∈ R^{d^m}`` (axes coarsest first) into ``m`` unit vectors, coarsest first.

    Step 4 of the estimator: ``m - 1`` successive top singular pairs ``(α, q')`` of ``reshape(q, (d, d^{rest}))``;
    ``α`` is the next vector and ``q'`` is split further. Signs are arbitrary.

    Args:
      q: ``(d^m,)`` float array.
      d: block size ``>= 2``.
      m: number of factors ``>= 1``.
      n_power: ``None`` for an SVD, or the number of power iterations on ``M Mᵀ`` per split.

    Returns:
      ``(m, d)`` array of unit rows, coarsest first.

    Raises:
      TypeError: non-float ``q`` or non-int ``d``/``m``.
      ValueError: ``d < 2``, ``m < 1``, or ``q`` not of length ``d^m``.
    """
    m = check_int(m, "m", min_value=1)
    q = _check_dk(q, d, m)
    out = []
    for _ in range(m - 1):
        alpha, q = _top_pair(q.reshape(d, -1), n_power)
        out.append(alpha)
    out.append(q / jnp.linalg.norm(q))
    return jnp.stack(out)


@cites(MSIM)
def hopi_refine(T_hat: Float[Array, " D"], ws_hat: Float[Array, "K d"], sweeps: int) -> Float[Array, "K d"]:
    """Higher-order power iteration ``ŵ_k ← normalise(T̂ ×_{l≠k} ŵ_l)``, ``sweeps`` sweeps over ``k = 1..K``.

    Step 5 of the estimator (module docstring); rows finest first, like ``ws``.

    Args:
      T_hat: ``(d^K,)`` float array (axes coarsest first).
      ws_hat: ``(K, d)`` float array, the starting estimates, finest first.
      sweeps: number of sweeps ``>= 0``.

    Returns:
      ``(K, d)`` array of unit rows (``ws_hat`` itself when ``sweeps = 0``).

    Raises:
      TypeError: non-float arrays or a non-int ``sweeps``.
      ValueError: ``ws_hat`` not 2-D, ``T_hat`` not of length ``d^K``, ``d < 2`` or ``sweeps < 0``.
    """
    ws_hat = as_array(ws_hat, "ws_hat", ndim=2)
    K, d = ws_hat.shape
    T = _check_dk(T_hat, d, K).reshape((d,) * K)  # axis i carries w_{K-i}
    sweeps = check_int(sweeps, "sweeps", min_value=0)

    def sweep(_, ws):
        for k in range(K):
            axis = K - 1 - k
            t = T
            for ax in reversed(range(K)):  # contract from the last axis so indices stay valid
                if ax != axis:
                    t = jnp.tensordot(t, ws[K - 1 - ax], axes=([ax], [0]))
            ws = ws.at[k].set(t / jnp.linalg.norm(t))
        return ws

    return jax.lax.fori_loop(0, sweeps, sweep, ws_hat)


@cites(MSIM, RICHARD_MONTANARI)
def unfolding_estimator(
    X: Float[Array, "n D"],
    y: Float[Array, " n"],
    d: int,
    K: int,
    n_power: int | None = None,
    refine_sweeps: int = 0,
    *,
    center: bool = True,
    links: tuple | None = None,
) -> Float[Array, "K d"]:
    """Estimate ``ws`` (rows finest first) from samples by the unfolding method of the module docstring.

    Steps 1-5: first chaos :func:`first_chaos_estimate`, then :func:`estimate_from_chaos`. The method is a
    reconstruction (the paper's text was not available) built on Richard and Montanari, *A statistical model
    for tensor PCA* (arXiv:1411.1076). ``links`` (optional, the model's links) is checked for a vanishing first
    chaos (``μ_1 = 0``), which would make the estimate meaningless. Signs are not identifiable: compare with
    :func:`jaxlab.multiscale.metrics.overlaps`.

    Args:
      X: ``(n, d^K)`` float array of inputs, finite.
      y: ``(n,)`` float array of responses, finite.
      d: block size ``>= 2``.
      K: number of layers ``>= 1``.
      n_power: ``None`` for SVDs, or the number of power iterations per singular pair.
      refine_sweeps: sweeps of :func:`hopi_refine` ``>= 0``.
      center: centre ``y`` in the first chaos.
      links: the model's ``K`` links (finest first) to check, or ``None``.

    Returns:
      ``(K, d)`` array of unit rows ``ŵ_1, ..., ŵ_K`` (finest first).

    Raises:
      TypeError: non-float arrays or non-int sizes.
      ValueError: ``X`` without ``d^K`` columns, ``n < d`` (below the spectral threshold), non-finite entries,
        ``len(y) != n``, or ``links`` with a vanishing first chaos.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.multiscale import MSIMConfig, overlaps, sample_data, unfolding_estimator
      >>> cfg = MSIMConfig(d=4, K=2, links=("linear", "linear"))
      >>> ws = jnp.array([[0.6, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8]])  # unit rows w_1, w_2
      >>> X, y = sample_data(jax.random.key(1), ws, 2000, cfg)
      >>> ws_hat = unfolding_estimator(X, y, 4, 2, links=cfg.links)
      >>> overlaps(ws_hat, ws).shape
      (2,)
    """
    d = check_int(d, "d", min_value=2)
    K = check_int(K, "K", min_value=1)
    X = as_array(X, "X", ndim=2)  # finiteness: first_chaos_estimate
    if X.shape[1] != d**K:
        raise ValueError(f"X must have d^K = {d**K} columns, got {X.shape[1]}")
    if X.shape[0] < d:
        raise ValueError(f"the spectral estimator needs n >= d samples, got n = {X.shape[0]} < d = {d}")
    if links is not None:
        check_config(MSIMConfig(d, K, tuple(links)), need_first_chaos=True)
    return estimate_from_chaos(first_chaos_estimate(X, y, center), d, K, n_power, refine_sweeps)


@cites(MSIM, RICHARD_MONTANARI)
def estimate_from_chaos(T_hat: Float[Array, " D"], d: int, K: int, n_power: int | None = None,
                        refine_sweeps: int = 0) -> Float[Array, "K d"]:
    """Steps 2-5 of the estimator on a given first-chaos estimate (e.g. streamed by ``first_chaos_mc``).

    Unfold with ``a = ⌈K/2⌉``, take the top singular pair ``(u, v)``, split ``u`` into ``ŵ_K..ŵ_{K-a+1}`` and
    ``v`` into ``ŵ_{K-a}..ŵ_1`` (:func:`rank_one_split`), then refine (:func:`hopi_refine`). For ``K = 1`` the
    estimate is ``T̂ / ||T̂||``.

    Args:
      T_hat: ``(d^K,)`` float array (axes coarsest first).
      d: block size ``>= 2``.
      K: number of layers ``>= 1``.
      n_power: ``None`` for SVDs, or the number of power iterations per singular pair.
      refine_sweeps: sweeps of :func:`hopi_refine` ``>= 0``.

    Returns:
      ``(K, d)`` array of unit rows, finest first.

    Raises:
      TypeError: non-float ``T_hat`` or non-int sizes.
      ValueError: ``d < 2``, ``K < 1``, ``T_hat`` not of length ``d^K``, or ``refine_sweeps < 0``.
    """
    T_hat = _check_dk(T_hat, d, K)
    if K == 1:
        ws = (T_hat / jnp.linalg.norm(T_hat))[None]
    else:
        a = (K + 1) // 2
        u, v = _top_pair(unfold(T_hat, d, K, a), n_power)
        coarse = rank_one_split(u, d, a, n_power)  # ŵ_K, ..., ŵ_{K-a+1}
        fine = rank_one_split(v, d, K - a, n_power)  # ŵ_{K-a}, ..., ŵ_1
        ws = jnp.concatenate([coarse, fine])[::-1]
    return hopi_refine(T_hat, ws, refine_sweeps) if refine_sweeps else ws


def bbp_overlap_square(n, d) -> Float[Array, ""]:
    """Predicted squared overlap ``max(1 - d/n, 0)`` of the top singular vector (square ``d x d`` unfolding).

    For ``K = 2`` and linear links (rank one plus noise), after Benaych-Georges and Nadakuditi
    (arXiv:1103.2221): ``|⟨û, w_2⟩|² → 1 - d/n`` for ``n > d``, 0 below.

    Args:
      n: number of samples (number or array; not validated).
      d: block size (number; not validated).

    Returns:
      Float array of the broadcast shape of ``n`` (0-d for a scalar), default float dtype.
    """
    n = jnp.asarray(n, dtype=jnp.result_type(float))
    return jnp.where(n > d, 1.0 - d / n, 0.0)
