"""Input validation at the boundary of every public jaxlab function.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the argument, what was expected and
what came in, e.g. ``ValueError: lengthscale must be > 0, got -1.0``. Shape and dtype checks work on tracers
(they run at trace time, so under ``jit`` they cost nothing at run time). Value checks (ranges, finiteness,
simplex, symmetry) run only on concrete arrays and are skipped on tracers; use :func:`error_if` for the few
value checks that must survive ``jit``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "as_array",
    "check_finite",
    "check_in_range",
    "check_int",
    "check_ndim",
    "check_positive",
    "check_psd",
    "check_quadrature",
    "check_shape",
    "check_simplex",
    "check_symmetric",
    "error_if",
    "is_concrete",
]


def is_concrete(x: Any) -> bool:
    """True when ``x`` holds values (not a tracer inside ``jit``/``vmap``/``grad``)."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(x))


def _describe(x: Any) -> str:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return f"array of shape {tuple(x.shape)} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"


def as_array(
    x: Any,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    kind: str = "float",
    finite: bool = False,
) -> jax.Array:
    """Convert ``x`` to a JAX array and check its dtype kind, rank and shape.

    Args:
      x: array-like input.
      name: argument name used in error messages.
      ndim: required rank, or a collection of allowed ranks.
      shape: required shape; ``None`` entries are wildcards.
      kind: ``"float"`` (real floating; Python floats and ints are promoted to the default float dtype),
        ``"int"``, ``"bool"``, ``"complex"`` (complex or real floating), ``"number"`` or ``"any"``.
      finite: also require every entry to be finite (concrete inputs only).

    Raises:
      TypeError: wrong dtype kind (for example an integer array where floats are required).
      ValueError: wrong rank or shape, or non-finite entries when ``finite=True``.
    """
    if isinstance(x, (list, tuple, int, float, bool, np.ndarray, np.generic)):
        arr_np = np.asarray(x)
        if arr_np.dtype == object:
            raise TypeError(f"{name} must be numeric, got {_describe(x)}")
        if kind == "float" and not isinstance(x, np.ndarray) and arr_np.dtype.kind in "biu":
            # Python literals such as 1 or [0, 1] mean real numbers here.
            arr = jnp.asarray(arr_np, dtype=jnp.result_type(float))
        else:
            arr = jnp.asarray(arr_np)
    elif isinstance(x, jax.Array):
        arr = x
    else:
        raise TypeError(f"{name} must be an array, got {_describe(x)}")
    dk = jnp.dtype(arr.dtype)
    ok = {
        "float": jnp.issubdtype(dk, jnp.floating),
        "int": jnp.issubdtype(dk, jnp.integer),
        "bool": dk == jnp.bool_,
        "complex": jnp.issubdtype(dk, jnp.inexact),
        "number": jnp.issubdtype(dk, jnp.number),
        "any": True,
    }.get(kind)
    if ok is None:
        raise ValueError(f"kind must be one of float/int/bool/complex/number/any, got {kind!r}")
    if not ok:
        raise TypeError(f"{name} must have a {kind} dtype, got {_describe(arr)}")
    if ndim is not None:
        check_ndim(arr, name, ndim)
    if shape is not None:
        check_shape(arr, name, shape)
    if finite:
        check_finite(arr, name)
    return arr


def check_ndim(x: Any, name: str, ndim: int | Sequence[int]) -> None:
    """Raise ``ValueError`` unless ``x.ndim`` is ``ndim`` (or one of them)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if jnp.ndim(x) not in allowed:
        want = allowed[0] if len(allowed) == 1 else " or ".join(map(str, allowed))
        raise ValueError(f"{name} must be {want}-dimensional, got {_describe(jnp.asarray(x))}")


def check_shape(x: Any, name: str, shape: Sequence[int | None]) -> None:
    """Raise ``ValueError`` unless ``x.shape`` matches ``shape`` (``None`` matches any size)."""
    got = tuple(jnp.shape(x))
    if len(got) != len(shape) or any(s is not None and s != g for s, g in zip(shape, got, strict=False)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got shape {got}")


def check_finite(x: Any, name: str) -> None:
    """Raise ``ValueError`` if a concrete ``x`` has NaN or infinite entries (no-op on tracers)."""
    # numpy, not jnp: inside a jit trace even operations on concrete arrays are staged out.
    if is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{name} must be finite, got non-finite entries in {_describe(np.asarray(x))}")


def _scalar(value: Any, name: str) -> float | None:
    if not is_concrete(value):
        return None
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got {_describe(arr)}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real number, got {_describe(arr)}")
    return float(arr)


def check_positive(value: Any, name: str, *, strict: bool = True) -> None:
    """Raise ``ValueError`` unless the scalar ``value`` is finite and > 0 (>= 0 when ``strict=False``)."""
    v = _scalar(value, name)
    if v is None:
        return
    if not math.isfinite(v) or (v <= 0 if strict else v < 0):
        raise ValueError(f"{name} must be {'>' if strict else '>='} 0 and finite, got {v!r}")


def check_in_range(
    value: Any,
    name: str,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> None:
    """Raise ``ValueError`` unless ``lo <= value <= hi`` (open ends with ``lo_open``/``hi_open``).

    Works on scalars and arrays (every entry must lie in the interval); NaN is always out of range.
    """
    if not is_concrete(value):
        return
    arr = np.asarray(value, dtype=float)
    ok = (arr > lo if lo_open else arr >= lo) & (arr < hi if hi_open else arr <= hi)
    if not bool(np.all(ok)):
        interval = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
        bad = arr if arr.ndim == 0 else arr[~ok].ravel()[0]
        raise ValueError(f"{name} must lie in {interval}, got {float(bad)!r}")


def check_int(value: Any, name: str, *, min_value: int | None = None, max_value: int | None = None) -> int:
    """Return ``value`` as a Python ``int``; raise ``TypeError`` if it is not an integer, ``ValueError`` if
    it is outside ``[min_value, max_value]``. Integers are static (shapes, step counts), so tracers fail."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a Python int, got {_describe(value)}")
    v = int(value)
    if min_value is not None and v < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {v}")
    if max_value is not None and v > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {v}")
    return v


def check_simplex(w: Any, name: str, *, atol: float = 1e-6, axis: int = -1) -> None:
    """Raise ``ValueError`` unless ``w`` is nonnegative and sums to 1 (within ``atol``) along ``axis``."""
    if not is_concrete(w):
        return
    arr = np.asarray(w, dtype=float)
    if np.any(arr < -atol) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be nonnegative and finite (a probability vector), got min {arr.min()!r}")
    s = arr.sum(axis=axis)
    if np.any(np.abs(s - 1.0) > atol):
        raise ValueError(f"{name} must sum to 1 along axis {axis} (within {atol}), got sum {s.ravel()[0]!r}")


def check_symmetric(a: Any, name: str, *, atol: float = 1e-8) -> None:
    """Raise ``ValueError`` unless ``a`` is a square matrix with ``|a - a.T| <= atol * max(1, |a|)``."""
    check_ndim(a, name, 2)
    n, m = jnp.shape(a)
    if n != m:
        raise ValueError(f"{name} must be square, got shape {(n, m)}")
    if not is_concrete(a):
        return
    arr = np.asarray(a, dtype=float)
    err = float(np.max(np.abs(arr - arr.T), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(arr), initial=0.0)))
    if err > atol * scale:
        raise ValueError(f"{name} must be symmetric, got max |a - a.T| = {err:.3g}")


def check_psd(a: Any, name: str, *, atol: float = 1e-8, strict: bool = False) -> None:
    """Raise ``ValueError`` unless ``a`` is symmetric positive semidefinite (definite with ``strict``).

    The smallest eigenvalue must be ``>= -atol * max(1, |a|)`` (``> 0`` with ``strict=True``).
    """
    check_symmetric(a, name, atol=max(atol, 1e-12))
    if not is_concrete(a):
        return
    arr = np.asarray(a, dtype=float)
    lam = float(np.linalg.eigvalsh((arr + arr.T) / 2).min()) if arr.size else 0.0
    scale = max(1.0, float(np.max(np.abs(arr), initial=0.0)))
    if (lam <= 0) if strict else (lam < -atol * scale):
        kind = "positive definite" if strict else "positive semidefinite"
        raise ValueError(f"{name} must be {kind}, got smallest eigenvalue {lam:.3g}")


def check_quadrature(nodes: Any, weights: Any, d: int, *, name: str = "quadrature", atol: float = 1e-8):
    """Validate a user quadrature rule ``(nodes (Q, d), weights (Q,))``, weights nonnegative summing to 1
    (within ``atol``, or 64 machine epsilons of the weights' dtype if larger).

    Returns the pair as arrays.
    """
    nodes = as_array(nodes, f"{name} nodes", ndim=2, shape=(None, d))
    weights = as_array(weights, f"{name} weights", ndim=1, shape=(nodes.shape[0],))
    # A float32 rule cannot sum to 1 closer than its rounding allows.
    atol = max(atol, 64 * float(jnp.finfo(weights.dtype).eps))
    check_simplex(weights, f"{name} weights", atol=atol)
    return nodes, weights


def error_if(x: Any, pred: Any, msg: str) -> Any:
    """Return ``x``, raising ``msg`` at run time (also under ``jit``) where ``pred`` is true.

    A thin wrapper on :func:`equinox.error_if`, kept in one place so that every area uses the same runtime
    check. Use it only for cheap predicates.
    """
    return eqx.error_if(x, pred, msg)
