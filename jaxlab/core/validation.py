"""Input validation at the boundary of every public jaxlab function.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the argument, what was expected and
what came in, e.g. ``ValueError: lengthscale must be > 0, got -1.0``. Shape and dtype checks work on tracers
(they run at trace time, so under ``jit`` they cost nothing at run time).

Value checks (finite, positive, in range, on the simplex, symmetric, PSD) return their input and hold under
``jit``, ``vmap`` and ``scan`` too:

- on a concrete input they raise ``ValueError`` at once, evaluating the predicate where the array lives (only
  the verdict, one boolean, reaches the host);
- on a traced input they return the input tied to a run-time check (:func:`error_if`, built on
  :func:`equinox.error_if`), which raises the same message at run time (a ``RuntimeError`` from the compiled
  program); only a reduced verdict passes through the check, so the array is neither copied to the host nor
  copied on the device.

The returned value must be used, or the traced check is dropped with the unused value::

    x = check_finite(x, "x")
    lengthscale = check_positive(lengthscale, "lengthscale")
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Sequence
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
    "nonfinite_flag",
    "tie_finite_checks",
    "value_check",
]


def is_concrete(x: Any) -> bool:
    """True when ``x`` holds values: no leaf is a tracer of ``jit``, ``vmap`` or ``grad``.

    The switch between a check now (a concrete value raises ``ValueError`` at once) and a run-time check.

    Args:
      x: an array, a Python or numpy value, or a pytree of them.

    Returns:
      ``True`` when no leaf of ``x`` is a :class:`jax.core.Tracer`.
    """
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
      kind: ``"float"`` (real floating; Python literals are promoted to the default float dtype, a Python number
        weakly typed as in ``jnp``, so that it takes the dtype of the arrays it meets),
        ``"int"``, ``"bool"``, ``"complex"`` (complex or real floating), ``"number"`` or ``"any"``.
      finite: also require every entry to be finite (eagerly, and under ``jit`` through :func:`error_if`).

    Returns:
      The input as a JAX array (for a traced input with ``finite=True``, wrapped in the run-time check).

    Raises:
      TypeError: wrong dtype kind (for example an integer array where floats are required).
      ValueError: wrong rank or shape, or non-finite entries when ``finite=True``.
    """
    given = x  # error messages describe what the caller passed (a numpy int64 stays int64 when x64 is off)
    if isinstance(x, (list, tuple, int, float, bool, np.ndarray, np.generic)):
        arr_np = given = np.asarray(x)
        if arr_np.dtype == object:
            raise TypeError(f"{name} must be numeric, got {_describe(x)}")
        if kind == "float" and isinstance(x, (int, float)) and not isinstance(x, bool):
            # a Python number stays weakly typed (as in jnp): it takes the dtype of the arrays it meets, so a
            # float32 input is not promoted to float64 by a scalar parameter under x64
            arr = jnp.asarray(float(x))
        elif kind == "float" and not isinstance(x, np.ndarray) and arr_np.dtype.kind in "biu":
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
        raise TypeError(f"{name} must have a {kind} dtype, got {_describe(given)}")
    if ndim is not None:
        check_ndim(arr, name, ndim)
    if shape is not None:
        check_shape(arr, name, shape)
    if finite:
        arr = check_finite(arr, name)
    return arr


def check_ndim(x: Any, name: str, ndim: int | Sequence[int]) -> None:
    """Check the rank of ``x`` at trace time (works on tracers).

    Args:
      x: array-like (or tracer) whose rank ``jnp.ndim(x)`` is checked.
      name: argument name used in the error message.
      ndim: the required rank, or a sequence of allowed ranks.

    Raises:
      ValueError: ``jnp.ndim(x)`` is not ``ndim`` (or not one of them).
    """
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if jnp.ndim(x) not in allowed:
        want = allowed[0] if len(allowed) == 1 else " or ".join(map(str, allowed))
        raise ValueError(f"{name} must be {want}-dimensional, got {_describe(jnp.asarray(x))}")


def check_shape(x: Any, name: str, shape: Sequence[int | None]) -> None:
    """Check the shape of ``x`` at trace time (works on tracers).

    Args:
      x: array-like (or tracer) whose shape ``jnp.shape(x)`` is checked.
      name: argument name used in the error message.
      shape: the required shape; a ``None`` entry matches any size along that axis.

    Raises:
      ValueError: the rank differs from ``len(shape)`` or a non-``None`` size differs.
    """
    got = tuple(jnp.shape(x))
    if len(got) != len(shape) or any(s is not None and s != g for s, g in zip(shape, got, strict=False)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got shape {got}")


def value_check(x: Any, bad: Any, msg: str) -> Any:
    """Return ``x``; raise ``msg`` where the predicate ``bad(x)`` holds, eagerly or under ``jit``.

    The one mechanism behind every value check of this module, for areas with checks of their own.

    Args:
      x: the value to check (array or pytree of arrays).
      bad: callable mapping ``x`` to a boolean array (written with ``jax.numpy``), true where ``x`` is invalid.
      msg: the error message; it names the argument and what was expected.

    Returns:
      ``x`` unchanged when it is concrete; when it is traced, ``x`` wrapped in :func:`error_if` so that the
      check runs with the compiled program.

    Raises:
      ValueError: ``x`` is concrete and ``bad(x)`` has a true entry.
    """
    return _check(x, lambda a, xp: bad(a), msg)


def _any_concrete(bad, x) -> bool:
    # Values on the host, or in a CPU device's memory (which numpy reads in place, without a copy), are checked
    # with numpy: microseconds, against a dispatch and a sync for a device program. Arrays on an accelerator are
    # checked where they are and only the verdict comes back. ensure_compile_time_eval: inside a jit trace,
    # operations on concrete constants would otherwise be staged out.
    with jax.ensure_compile_time_eval():
        if all(_host_readable(leaf) for leaf in jax.tree_util.tree_leaves(x)):
            return bool(np.any(bad(jax.tree_util.tree_map(np.asarray, x), np)))
        if getattr(bad, "__qualname__", "") == getattr(bad, "__name__", None):  # module-level: one program
            return bool(_any_bad_jit(x, bad))
        return bool(jnp.any(bad(x, jnp)))


def _host_readable(leaf: Any) -> bool:
    """True for numpy/Python values and for JAX arrays that live whole in CPU memory of this process."""
    if isinstance(leaf, (np.ndarray, np.generic, int, float, bool, complex)):
        return True
    return (isinstance(leaf, jax.Array) and leaf.is_fully_addressable
            and all(d.platform == "cpu" for d in leaf.devices()))


@functools.partial(jax.jit, static_argnums=1)
def _any_bad_jit(x: Any, bad) -> jax.Array:
    # the verdict of a module-level predicate as one compiled program: one dispatch and one device-to-host sync
    # per eager check, instead of one dispatch per operation of the predicate
    return jnp.any(bad(x, jnp))


def check_finite(x: Any, name: str) -> Any:
    """Return ``x``; raise if it has NaN or infinite entries (eagerly, or at run time under ``jit``).

    Args:
      x: array, scalar or pytree of arrays (any floating or integer dtype).
      name: argument name used in the error message.

    Returns:
      ``x`` unchanged when concrete; when traced, ``x`` wrapped in :func:`error_if` (use the returned value, or
      the check is dropped).

    Raises:
      ValueError: ``x`` is concrete and has a NaN or infinite entry (under ``jit``: a run-time error with the
        same message).
    """
    return _check(x, _not_finite, _finite_msg(x, name))


def _finite_msg(x: Any, name: str) -> str:
    return f"{name} must be finite, got non-finite entries in {_describe(x if hasattr(x, 'shape') else np.asarray(x))}"


def nonfinite_flag(x: Any) -> jax.Array:
    """A scalar boolean, true when the array ``x`` has a NaN or infinite entry; for use under ``jit``.

    Computed as ``isnan(sum(x * 0))``: ``x * 0`` is 0 for a finite entry and NaN for NaN or ±inf, so the sum is NaN
    exactly when an entry is not finite, with no overflow for large finite entries. A plain sum fuses with the
    other reductions a program makes over ``x`` (a softmax's, a loss's), so the flag costs little beyond reading
    ``x`` once; an ``any(~isfinite(x))`` is a separate reduction with a boolean temporary.

    Args:
      x: array of any dtype (integer and boolean arrays are always finite).

    Returns:
      Boolean scalar array.
    """
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.zeros((), bool)
    return jnp.isnan(jnp.sum(x * jnp.zeros((), x.dtype)))


def tie_finite_checks(out: Any, /, *, witness: Any = None, checks: Sequence[tuple[Callable[[], Any], str]] = (),
                      **inputs: Any) -> Any:
    """Return ``out`` tied to the check that every traced input in ``inputs`` is finite (a run-time error
    naming the input otherwise); concrete inputs are skipped, since callers check those eagerly.

    The counterpart of :func:`check_finite` for hot jitted functions: the check is attached to the (usually
    smaller) output rather than to the input, so the input is not routed through a select that XLA materialises
    before a ``scan`` or a ``dot``; the verdict is :func:`nonfinite_flag`. Use it with the eager check, as in::

        x = as_array(x, "x", finite=is_concrete(x))   # eagerly: ValueError now
        ...
        return tie_finite_checks(result, x=x)          # traced: run-time error when result is used

    With ``witness``, a value the function computed anyway that is sure to be non-finite whenever an input is
    (a per-step loss, say), the inputs themselves are read only when the witness is not finite: the common
    case costs one reduction over the witness instead of one over each input. The error names the input, as
    without a witness; a non-finite witness from finite inputs (an overflow) raises nothing.

    ``checks`` adds other run-time checks to the same gate: pairs ``(flag, msg)`` of a thunk returning a boolean
    array (the check fails where it is true) and the error message. With a witness, a loss can fold a bad label
    into it (a NaN loss for that sample) and pay for the label check only when something is wrong.

    Args:
      out: the function's result (array or pytree of arrays).
      witness: optional array, non-finite whenever an input in ``inputs`` is, or a check in ``checks`` fails
        (the caller's guarantee).
      checks: optional pairs ``(flag, msg)``: ``flag()`` returns a boolean array, true where the check fails;
        ``msg`` names the argument and what was expected.
      **inputs: the inputs to check, by the argument names the error messages use.

    Returns:
      ``out``, each leaf bitwise unchanged.

    Raises:
      RuntimeError: (equinox's ``EquinoxRuntimeError``) at run time, when ``out`` is used and a traced input has a
        non-finite entry.
    """
    traced = {name: x for name, x in inputs.items() if not is_concrete(x)}
    checks = tuple(checks)
    if not traced and not checks:
        return out
    msgs = [_finite_msg(x, name) for name, x in traced.items()] + [msg for _, msg in checks]

    def verdicts(xs):
        return (*(nonfinite_flag(x) for x in xs), *(jnp.any(flag()) for flag, _ in checks))

    xs = tuple(traced.values())
    if witness is None:
        flags = verdicts(xs)
    else:
        flags = jax.lax.cond(nonfinite_flag(witness), verdicts,
                             lambda xs: tuple(jnp.zeros((), bool) for _ in msgs), xs)
    for flag, msg in zip(flags, msgs, strict=True):
        out = error_if(out, flag, msg)
    return out


def _not_finite(a, xp):
    return ~xp.isfinite(a)


def _check(x: Any, bad, msg: str) -> Any:
    """:func:`value_check` with a predicate written for both numpy and jax.numpy (``bad(a, xp)``)."""
    if is_concrete(x):
        if _any_concrete(bad, x):
            raise ValueError(msg)
        return x
    if bad is _not_finite:  # the finite check: one cached program (one dispatch under an eager vmap)
        return _check_finite_jit(x, msg)
    return error_if(x, jnp.any(bad(x, jnp)), msg)


@functools.partial(jax.jit, static_argnums=1)
def _check_finite_jit(x: Any, msg: str) -> Any:
    return error_if(x, nonfinite_flag(x), msg)


def _scalar(value: Any, name: str) -> None:
    """Trace-time part of a scalar check: rank 0 and a real dtype."""
    arr = value if hasattr(value, "dtype") else np.asarray(value)
    if jnp.ndim(arr) != 0:
        raise ValueError(f"{name} must be a scalar, got {_describe(arr)}")
    if np.dtype(arr.dtype).kind not in "biuf":
        raise TypeError(f"{name} must be a real number, got {_describe(arr)}")


def check_positive(value: Any, name: str, *, strict: bool = True) -> Any:
    """Return the scalar ``value``; raise unless it is finite and ``> 0`` (``>= 0`` when ``strict=False``).

    Args:
      value: a real scalar: Python ``int``/``float``, numpy scalar, or 0-d array (may be traced).
      name: argument name used in the error message.
      strict: require ``value > 0``; ``False`` allows ``0``.

    Returns:
      ``value`` unchanged when concrete; when traced, ``value`` wrapped in :func:`error_if`.

    Raises:
      ValueError: ``value`` is not 0-dimensional, or it is concrete and not finite and positive (under ``jit``:
        a run-time error).
      TypeError: ``value`` has a complex or non-numeric dtype.
    """
    _scalar(value, name)
    op = ">" if strict else ">="

    def bad(v, xp):
        v = xp.asarray(v, dtype=float) if xp is np else v
        return ~xp.isfinite(v) | ((v <= 0) if strict else (v < 0))

    if is_concrete(value):
        if _any_concrete(bad, value):
            raise ValueError(f"{name} must be {op} 0 and finite, got {float(np.asarray(value))!r}")
        return value
    return error_if(value, bad(value, jnp), f"{name} must be {op} 0 and finite")


def check_in_range(
    value: Any,
    name: str,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> Any:
    """Return ``value``; raise unless every entry lies in ``[lo, hi]`` (open ends with ``lo_open``/``hi_open``).

    Works on scalars and arrays; NaN is always out of range.

    Args:
      value: a real scalar or array (may be traced).
      name: argument name used in the error message.
      lo: lower end of the interval (default ``-inf``).
      hi: upper end of the interval (default ``inf``).
      lo_open: exclude ``lo`` (require ``value > lo``).
      hi_open: exclude ``hi`` (require ``value < hi``).

    Returns:
      ``value`` unchanged when concrete; when traced, ``value`` wrapped in :func:`error_if`.

    Raises:
      ValueError: ``value`` is concrete and an entry lies outside the interval (the message shows the first
        one); under ``jit``, a run-time error.
    """
    interval = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"

    def bad(a, xp):
        a = xp.asarray(a, dtype=float) if xp is np else a
        return ~((a > lo if lo_open else a >= lo) & (a < hi if hi_open else a <= hi))

    if is_concrete(value):
        if _any_concrete(bad, value):
            arr = np.asarray(value, dtype=float)
            first = arr if arr.ndim == 0 else arr[bad(arr, np)].ravel()[0]
            raise ValueError(f"{name} must lie in {interval}, got {float(first)!r}")
        return value
    return error_if(value, jnp.any(bad(value, jnp)), f"{name} must lie in {interval}")


def check_int(value: Any, name: str, *, min_value: int | None = None, max_value: int | None = None) -> int:
    """Return ``value`` as a Python ``int`` after checking its bounds.

    Integers checked here are static (shapes, step counts), so tracers and arrays fail; ``bool`` is rejected.

    Args:
      value: a Python ``int`` or numpy integer scalar.
      name: argument name used in the error message.
      min_value: smallest allowed value, or ``None`` for no lower bound.
      max_value: largest allowed value, or ``None`` for no upper bound.

    Returns:
      ``int(value)``.

    Raises:
      TypeError: ``value`` is not a Python or numpy integer (or is a ``bool``).
      ValueError: ``value < min_value`` or ``value > max_value``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a Python int, got {_describe(value)}")
    v = int(value)
    if min_value is not None and v < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {v}")
    if max_value is not None and v > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {v}")
    return v


def check_simplex(w: Any, name: str, *, atol: float = 1e-6, axis: int = -1) -> Any:
    """Return ``w``; raise unless it is a probability vector along ``axis``.

    Valid means finite, every entry ``>= -atol`` and ``|Σ_axis w - 1| <= atol``.

    Args:
      w: real array (any rank; may be traced).
      name: argument name used in the error message.
      atol: absolute tolerance on the sum and on negative entries.
      axis: the axis that sums to 1.

    Returns:
      ``w`` unchanged when concrete; when traced, ``w`` wrapped in :func:`error_if`.

    Raises:
      ValueError: ``w`` is concrete and has a non-finite or negative (below ``-atol``) entry, or a sum off 1 by
        more than ``atol``; under ``jit``, a run-time error.
    """
    if is_concrete(w):
        arr = np.asarray(w, dtype=float)
        if np.any(arr < -atol) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be nonnegative and finite (a probability vector), got min {arr.min()!r}")
        s = arr.sum(axis=axis)
        if np.any(np.abs(s - 1.0) > atol):
            raise ValueError(f"{name} must sum to 1 along axis {axis} (within {atol}), got sum {s.ravel()[0]!r}")
        return w
    bad = (jnp.any(w < -atol) | ~jnp.all(jnp.isfinite(w))
           | jnp.any(jnp.abs(jnp.sum(w, axis=axis) - 1.0) > atol))
    return error_if(w, bad, f"{name} must be a probability vector: finite, nonnegative and summing to 1 along "
                    f"axis {axis} (within {atol})")


def check_symmetric(a: Any, name: str, *, atol: float = 1e-8) -> Any:
    """Return ``a``; raise unless it is a symmetric matrix: ``max |a - aᵀ| <= atol · max(1, max |a|)``.

    Args:
      a: ``(n, n)`` real array (may be traced).
      name: argument name used in the error message.
      atol: relative tolerance on the asymmetry.

    Returns:
      ``a`` unchanged when concrete; when traced, ``a`` wrapped in :func:`error_if`.

    Raises:
      ValueError: ``a`` is not 2-dimensional or not square (at trace time), or it is concrete and not symmetric
        within the tolerance (under ``jit``: a run-time error).
    """
    check_ndim(a, name, 2)
    n, m = jnp.shape(a)
    if n != m:
        raise ValueError(f"{name} must be square, got shape {(n, m)}")
    if is_concrete(a):
        arr = np.asarray(a, dtype=float)
        err = float(np.max(np.abs(arr - arr.T), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(arr), initial=0.0)))
        if err > atol * scale:
            raise ValueError(f"{name} must be symmetric, got max |a - a.T| = {err:.3g}")
        return a
    scale = jnp.maximum(1.0, jnp.max(jnp.abs(a), initial=0.0))
    return error_if(a, jnp.max(jnp.abs(a - a.T), initial=0.0) > atol * scale, f"{name} must be symmetric")


def check_psd(a: Any, name: str, *, atol: float = 1e-8, strict: bool = False) -> Any:
    """Return ``a``; raise unless it is symmetric positive semidefinite (definite with ``strict=True``).

    Symmetry as :func:`check_symmetric` (tolerance ``max(atol, 1e-12)``); then the smallest eigenvalue ``λ_min``
    of ``(a + aᵀ)/2`` must satisfy ``λ_min >= -atol · max(1, max |a|)``, or ``λ_min > 0`` with ``strict=True``.
    Under ``jit`` this costs an eigendecomposition: keep it off hot paths.

    Args:
      a: ``(n, n)`` real array (may be traced).
      name: argument name used in the error message.
      atol: tolerance on symmetry and on negative eigenvalues.
      strict: require positive definiteness.

    Returns:
      ``a`` unchanged when concrete; when traced, ``a`` wrapped in :func:`error_if`.

    Raises:
      ValueError: ``a`` is not a square matrix (at trace time), or it is concrete and not symmetric or not
        positive (semi)definite (under ``jit``: a run-time error).
    """
    a = check_symmetric(a, name, atol=max(atol, 1e-12))
    kind = "positive definite" if strict else "positive semidefinite"
    if is_concrete(a):
        arr = np.asarray(a, dtype=float)
        lam = float(np.linalg.eigvalsh((arr + arr.T) / 2).min()) if arr.size else 0.0
        scale = max(1.0, float(np.max(np.abs(arr), initial=0.0)))
        if (lam <= 0) if strict else (lam < -atol * scale):
            raise ValueError(f"{name} must be {kind}, got smallest eigenvalue {lam:.3g}")
        return a
    if a.size == 0:
        return a
    lam = jnp.linalg.eigvalsh((a + a.T) / 2)[0]
    scale = jnp.maximum(1.0, jnp.max(jnp.abs(a)))
    return error_if(a, (lam <= 0) if strict else (lam < -atol * scale), f"{name} must be {kind}")


def check_quadrature(nodes: Any, weights: Any, d: int, *, name: str = "quadrature", atol: float = 1e-8):
    """Validate a user quadrature rule ``Σ_q weights_q f(nodes_q)``.

    The weights must be nonnegative and sum to 1 within ``max(atol, 64 ε)``, ``ε`` the machine epsilon of the
    weights' dtype (a float32 rule cannot sum to 1 more closely).

    Args:
      nodes: ``(Q, d)`` float array of quadrature nodes.
      weights: ``(Q,)`` float array of weights.
      d: the dimension the nodes must have.
      name: prefix of the argument names in error messages (``"<name> nodes"``, ``"<name> weights"``).
      atol: tolerance on the sum of the weights.

    Returns:
      ``(nodes, weights)`` as JAX arrays; ``weights`` wrapped in :func:`error_if` when traced.

    Raises:
      TypeError: ``nodes`` or ``weights`` is not a float array.
      ValueError: ``nodes`` is not ``(Q, d)``, ``weights`` is not ``(Q,)``, or the weights are not a
        probability vector (under ``jit``: a run-time error).
    """
    nodes = as_array(nodes, f"{name} nodes", ndim=2, shape=(None, d))
    weights = as_array(weights, f"{name} weights", ndim=1, shape=(nodes.shape[0],))
    # A float32 rule cannot sum to 1 closer than its rounding allows.
    atol = max(atol, 64 * float(jnp.finfo(weights.dtype).eps))
    weights = check_simplex(weights, f"{name} weights", atol=atol)
    return nodes, weights


def error_if(x: Any, pred: Any, msg: str) -> Any:
    """Return ``x``, raising ``msg`` at run time (also under ``jit``) where ``pred`` is true.

    Built on :func:`equinox.error_if` and kept in one place so that every area uses the same runtime check. The
    check guards a scalar token rather than ``x`` itself: :func:`equinox.error_if` on ``x`` routes the whole
    array through the check's ``lax.cond``, which XLA materialises, and on a large input of a hot jitted call (a
    (4096, 4096) score matrix, say) that copy costs about as much as the work. Each leaf of ``x`` comes back as
    ``select(token == 1, leaf, fill)``: bitwise ``leaf`` (dtype and weak type kept), fused into its consumers,
    and still tied to the check. ``fill`` is what ``EQX_ON_ERROR=nan`` returns for the dtype (NaN, the integer
    maximum, ``True``); the token becomes NaN in that mode, so that mode behaves as :func:`equinox.error_if` does.
    Use it only for cheap predicates.

    Args:
      x: array or pytree of arrays the check is attached to.
      pred: boolean array of any shape; the error fires if any entry is true.
      msg: the error message; it names the argument and what was expected.

    Returns:
      ``x``, tied to the check: only computations that use the returned value trigger it.

    Raises:
      RuntimeError: (equinox's ``EquinoxRuntimeError``) when the computation using the result runs and ``pred``
        has a true entry; on concrete inputs this happens at once.
    """
    return _tie(x, jnp.any(pred), msg, _CHECK_MODE[0])


_CHECK_MODE = ["default"]  # equinox's on_error for the run-time checks; "default" follows EQX_ON_ERROR


@contextlib.contextmanager
def _runtime_checks(mode: str) -> Iterator[None]:
    """Within the block, the run-time checks that :func:`error_if` compiles into programs traced there take
    equinox's ``on_error=mode`` (``"default"``: the ``EQX_ON_ERROR`` setting, ``"raise"`` unless set; ``"nan"``: a
    failed check returns NaN instead of raising). ``jaxlab verify`` runs its claims in ``"nan"`` mode: a raising
    check calls back into Python, and XLA programs that do cannot be stored in JAX's persistent compilation cache,
    so every run would compile them again; a failed check then shows as a NaN result, which fails the claim."""
    previous = _CHECK_MODE[0]
    _CHECK_MODE[0] = mode
    try:
        yield
    finally:
        _CHECK_MODE[0] = previous


@functools.partial(jax.jit, static_argnums=(2, 3))
def _tie(x: Any, flag: jax.Array, msg: str, mode: str) -> Any:
    """The body of :func:`error_if`, one cached program (one dispatch where it runs op by op, under an eager
    ``vmap``; inlined under ``jit``)."""
    ok = eqx.error_if(jnp.ones((), jnp.float32), flag, msg, on_error=mode) == 1

    def tie(leaf):
        dt = leaf.dtype
        fill = (np.nan if jnp.issubdtype(dt, jnp.inexact) else
                np.iinfo(dt).max if jnp.issubdtype(dt, jnp.integer) else True)
        return jax.lax.select(jnp.broadcast_to(ok, leaf.shape), leaf, jax.lax.full_like(leaf, fill))

    return jax.tree_util.tree_map(tie, x)
