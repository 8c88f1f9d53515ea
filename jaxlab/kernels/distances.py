"""Pairwise distances by the Gram trick, and distance quantiles for bandwidth rules.

``sqdist(X, Y)_{ij} = ||x_i||² + ||y_j||² - 2 x_i·y_j``, clamped at 0 (rounding can make it slightly
negative). One matrix product, so it runs at BLAS/XLA matmul speed; with ``Y = None`` the diagonal is set to
exactly 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array, check_finite, check_in_range

__all__ = ["as_points", "distance_matrix", "pairwise_distance_quantile", "safe_sqrt", "sqdist", "sqdist_unchecked"]


def _pair(X, Y):
    X = as_points(X, "X")
    if Y is None:
        return X, None
    Y = as_points(Y, "Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"Y must have {X.shape[1]} columns like X, got shape {Y.shape}")
    return X, Y


def as_points(X, name: str):
    """Return ``X`` as a finite ``(n, d)`` float array with ``n >= 1``.

    Raises:
      TypeError: ``X`` is not a float array.
      ValueError: ``X`` is not 2-dimensional or has no rows (at trace time), or holds NaN or inf (eagerly, and
        at run time under ``jit``).
    """
    X = as_array(X, name, ndim=2)
    if X.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one point, got shape {X.shape}")
    return check_finite(X, name)


def sqdist(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None) -> Float[Array, "n m"]:
    """Squared Euclidean distances ``||x_i - y_j||²`` by the Gram trick, clamped at 0.

    ``Y = None`` means ``Y = X``, and then the diagonal is exactly 0.
    """
    return sqdist_unchecked(*_pair(X, Y))


def sqdist_unchecked(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None) -> Float[Array, "n m"]:
    """:func:`sqdist` on inputs the caller has already validated (as :func:`as_points` does): no checks, so
    that a kernel composed of several distance matrices checks each input once, not once per matrix."""
    same = Y is None
    Y = X if same else Y
    xx = jnp.sum(X * X, axis=-1)
    yy = xx if same else jnp.sum(Y * Y, axis=-1)
    d2 = jnp.maximum(xx[:, None] + yy[None, :] - 2.0 * (X @ Y.T), 0.0)
    if same:
        i = jnp.arange(X.shape[0])
        d2 = d2.at[i, i].set(0.0)
    return d2


def safe_sqrt(x: Array) -> Array:
    """``sqrt(x)`` with a zero (not NaN) derivative at ``x = 0``."""
    pos = x > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, x, 1.0)), 0.0)


def distance_matrix(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None) -> Float[Array, "n m"]:
    """Euclidean distances ``||x_i - y_j||`` (differentiable at coincident points)."""
    return safe_sqrt(sqdist(X, Y))


def pairwise_distance_quantile(
    X: Float[Array, "n d"], q: float | Float[Array, ""], *, method: str = "select", iters: int = 64
) -> Float[Array, ""]:
    """The ``q``-quantile of the ``n(n-1)/2`` distances ``||x_i - x_j||``, ``i < j`` (numpy's "linear" rule).

    ``method="sort"`` sorts the condensed distances (``jnp.quantile``). ``method="select"`` (default) avoids
    the sort, for use inside hot loops: it finds the two order statistics that the linear rule interpolates
    by bisection on the value (``iters`` counting passes over the n² matrix, no sort) and snaps each to the
    largest distance not above the bisection bound, so the result is an actual order statistic, equal to the
    sorted answer to rounding.
    """
    X = as_points(X, "X")
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X needs at least 2 rows to have pairwise distances, got shape {X.shape}")
    q = check_in_range(q, "q", 0.0, 1.0)
    if method not in ("select", "sort"):
        raise ValueError(f"method must be 'select' or 'sort', got {method!r}")
    D = distance_matrix(X)
    iu = jnp.triu_indices(n, k=1)
    m = n * (n - 1) // 2
    if method == "sort":
        return jnp.quantile(D[iu], q)
    upper = jnp.triu(jnp.ones((n, n), dtype=bool), k=1)
    pos = jnp.asarray(q, D.dtype) * (m - 1)
    lo_rank = jnp.floor(pos)
    frac = pos - lo_rank

    def order_stat(rank):
        # Smallest v with #{d <= v} >= rank + 1, by bisection on v.
        def body(_, bounds):
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            enough = jnp.sum(upper & (D <= mid)) >= rank + 1
            return jnp.where(enough, lo, mid), jnp.where(enough, mid, hi)

        hi0 = jnp.max(D) * (1 + 1e-7) + jnp.finfo(D.dtype).tiny
        _, hi = jax.lax.fori_loop(0, iters, body, (jnp.zeros((), D.dtype), hi0))
        return jnp.max(jnp.where(upper & (D <= hi), D, -jnp.inf))

    a = order_stat(lo_rank)
    b = order_stat(jnp.minimum(lo_rank + 1, m - 1))
    return a + frac * (b - a)
