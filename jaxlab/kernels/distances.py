"""Pairwise distances by the Gram trick, and distance quantiles for bandwidth rules.

``sqdist(X, Y)_{ij} = ||x̃_i||² + ||ỹ_j||² - 2 x̃_i·ỹ_j`` with ``x̃ = x - c``, ``ỹ = y - c`` for one common
centre ``c`` near the data, clamped at 0 (rounding can make it slightly negative). One matrix product, so it
runs at BLAS/XLA matmul speed; centring first keeps it accurate in float32 on data far from the origin (see
:func:`centre`); with ``Y = None`` the diagonal is set to exactly 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.validation import as_array, check_finite, check_in_range

__all__ = [
    "as_points",
    "centre",
    "distance_matrix",
    "pairwise_distance_quantile",
    "safe_sqrt",
    "sqdist",
    "sqdist_unchecked",
]


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

    Args:
      X: array-like of points, one per row.
      name: the argument's name, for the error messages.

    Returns:
      ``X`` as a jax float array (unchanged values).

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
    """Squared Euclidean distances ``D_ij = ||x_i - y_j||²`` by the centred Gram trick, clamped at 0.

    Args:
      X: ``(n, d)`` float array, ``n >= 1``, finite.
      Y: ``(m, d)`` float array with the columns of ``X``; ``None`` (or ``X`` itself) means ``X``, and then
        the diagonal is exactly 0.

    Returns:
      ``(n, m)`` array in the inputs' common float dtype. In float32 its error is a few ulps of the squared
      radius of the (centred) cloud, wherever the cloud sits.

    Raises:
      TypeError: an input is not a float array.
      ValueError: an input is not 2-d, has no rows or holds NaN/inf (eagerly and under ``jit``), or ``Y`` has
        other columns than ``X``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.kernels import sqdist
      >>> print(sqdist(jnp.array([[0.0, 0.0], [3.0, 4.0]])))
      [[ 0. 25.]
       [25.  0.]]
    """
    return sqdist_unchecked(*_pair(X, None if Y is X else Y))


def centre(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None):
    """Translate ``X`` (and ``Y``) by one common point ``c`` near the data, for the Gram trick.

    Distances are translation-invariant, but the Gram trick is not in finite precision: its error is a few ulps
    of ``|x|² + |y|²``, so a cloud of unit scale sitting at ``1e4`` loses every digit in float32. With ``c`` the
    mean of the sample means, ``x - c`` is exact wherever the offset dominates (Sterbenz's lemma), and the error
    falls to a few ulps of the cloud's own squared radius. ``c`` carries no gradient: the distances do not
    depend on it, so their derivatives are those of the centred points.

    Args:
      X: ``(n, d)`` float array.
      Y: ``(m, d)`` float array, or None.

    Returns:
      ``(X - c, Y - c)`` (``Y - c`` is None when ``Y`` is None), same dtypes.
    """
    c = jnp.mean(X, axis=0) if Y is None else 0.5 * (jnp.mean(X, axis=0) + jnp.mean(Y, axis=0))
    c = jax.lax.stop_gradient(c).astype(X.dtype)
    return X - c, None if Y is None else Y - c.astype(Y.dtype)


def sqdist_unchecked(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None) -> Float[Array, "n m"]:
    """:func:`sqdist` on inputs the caller has already validated (as :func:`as_points` does).

    No checks, so that a kernel composed of several distance matrices checks each input once, not once per
    matrix. The data are centred first (:func:`centre`), which keeps float32 accurate on un-centred clouds.

    Args:
      X: ``(n, d)`` float array.
      Y: ``(m, d)`` float array; None, or ``X`` itself, means ``X`` (and then the diagonal is exactly 0).

    Returns:
      ``(n, m)`` array of squared distances, in the inputs' common float dtype.
    """
    same = Y is None or Y is X
    X, Y = centre(X, None if same else Y)
    Y = X if same else Y
    xx = jnp.sum(X * X, axis=-1)
    yy = xx if same else jnp.sum(Y * Y, axis=-1)
    d2 = jnp.maximum(xx[:, None] + yy[None, :] - 2.0 * (X @ Y.T), 0.0)
    if same:  # an exact zero diagonal, as a select that XLA fuses with the line above (a scatter would not fuse)
        n = X.shape[0]
        diagonal = jax.lax.broadcasted_iota(jnp.int32, (n, n), 0) == jax.lax.broadcasted_iota(jnp.int32, (n, n), 1)
        d2 = jnp.where(diagonal, jnp.zeros((), d2.dtype), d2)
    return d2


def safe_sqrt(x: Array) -> Array:
    """``sqrt(x)`` with a zero (not NaN) derivative at ``x = 0``.

    Args:
      x: float array, ``>= 0`` (negative entries give 0).

    Returns:
      ``sqrt(max(x, 0))``, same shape and dtype; its gradient is 0 where ``x <= 0``.
    """
    pos = x > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, x, 1.0)), 0.0)


def distance_matrix(X: Float[Array, "n d"], Y: Float[Array, "m d"] | None = None) -> Float[Array, "n m"]:
    """Euclidean distances ``||x_i - y_j||``, differentiable at coincident points (gradient 0 there).

    Args:
      X: ``(n, d)`` float array, ``n >= 1``, finite.
      Y: ``(m, d)`` float array, or None for ``X``.

    Returns:
      ``(n, m)`` array, ``safe_sqrt(sqdist(X, Y))``.

    Raises:
      TypeError, ValueError: as :func:`sqdist`.
    """
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

    Args:
      X: ``(n, d)`` float array, ``n >= 2``, finite.
      q: the quantile level in ``[0, 1]`` (float or 0-d array; checked under ``jit`` too).
      method: ``"select"`` (bisection, no sort) or ``"sort"``.
      iters: bisection passes of ``"select"``; 64 resolves float64 to the last bit.

    Returns:
      0-d array, the ``q``-quantile of the pairwise distances (0.5: the median heuristic's bandwidth).

    Raises:
      TypeError: ``X`` is not a float array.
      ValueError: ``X`` is not 2-d, has fewer than 2 rows or holds NaN/inf; ``q`` is outside ``[0, 1]``;
        ``method`` is unknown.
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
