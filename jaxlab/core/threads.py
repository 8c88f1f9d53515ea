"""The thread count of the LAPACK that XLA's CPU backend calls (Cholesky, LU solves, eigh, SVD).

On CPU, JAX runs its linear-algebra custom calls through SciPy's LAPACK, which is backed by OpenBLAS with one
worker thread per core. Those workers busy-wait for work and so compete with XLA's own thread pool: on a
2-core machine the MSIP step (N = 1000, d = 10, float32, a 1000 x 1000 solve) measured 14 ms quiet but 687 ms
with another process busy on every core, and 9.5 ms / 18 ms with one LAPACK thread. XLA already parallelises
across a batch (``vmap``) and between operations, so one LAPACK thread is also as fast or faster when the
machine is quiet, for the problem sizes jaxlab works with.

``import jaxlab`` therefore sets SciPy's OpenBLAS to **one thread** (only the copy that SciPy ships and JAX
calls; NumPy's own BLAS, used by ``numpy.matmul`` and ``numpy.linalg``, is not touched, except where SciPy and
NumPy share one system BLAS, as in conda environments, where the one setting serves both). Change it with
:func:`set_lapack_threads`, or before importing jaxlab with the environment variable ``JAXLAB_LAPACK_THREADS``:
a positive integer, or ``off`` to leave the library's default alone.
"""

from __future__ import annotations

import os
from typing import Any

from jaxlab.core.validation import check_int

__all__ = ["lapack_threads", "set_lapack_threads", "usable_cores"]

ENV = "JAXLAB_LAPACK_THREADS"


def usable_cores() -> int:
    """The number of CPU cores this process may run on (its affinity mask where the OS has one, else the
    machine's core count).

    Returns:
      int >= 1.

    Example:
      >>> from jaxlab.core import usable_cores
      >>> usable_cores() >= 1
      True
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _controllers() -> list[Any]:
    """threadpoolctl controllers of the BLAS libraries behind SciPy's LAPACK (loading that LAPACK first)."""
    import scipy
    import scipy.linalg.cython_lapack  # loads the library that JAX's CPU LAPACK calls resolve to
    from threadpoolctl import ThreadpoolController

    blas = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
    scipy_dir = os.path.dirname(os.path.dirname(os.path.abspath(scipy.__file__)))
    own = [c for c in blas if os.path.basename(os.path.dirname(c.filepath)).startswith("scipy")
           or os.path.abspath(c.filepath).startswith(os.path.join(scipy_dir, "scipy"))]
    if own:
        return own
    # SciPy linked against a shared BLAS (e.g. conda): that one library serves both NumPy and SciPy
    import numpy

    numpy_dir = os.path.dirname(os.path.abspath(numpy.__file__))
    return [c for c in blas if not os.path.abspath(c.filepath).startswith(numpy_dir)]


def lapack_threads() -> int | None:
    """The thread count of the BLAS behind JAX's CPU LAPACK.

    Returns:
      The number of threads (int), or ``None`` if no such library was found (for example a BLAS that
      threadpoolctl cannot control).
    """
    ctl = _controllers()
    return ctl[0].num_threads if ctl else None


def set_lapack_threads(n: int) -> int | None:
    """Set the thread count of the BLAS behind JAX's CPU LAPACK (process-wide; takes effect at the next call).

    Args:
      n: int >= 1, the number of threads (1, jaxlab's default, avoids contention with XLA's thread pool; a
        larger value can pay off for a single large factorisation on an otherwise idle many-core machine).

    Returns:
      The previous thread count, or ``None`` if no such library was found (then nothing changes).

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1``.

    Example:
      >>> from jaxlab.core import set_lapack_threads
      >>> previous = set_lapack_threads(2)
      >>> _ = set_lapack_threads(previous or 1)  # back to what it was
    """
    n = check_int(n, "n", min_value=1)
    ctl = _controllers()
    if not ctl:
        return None
    previous = ctl[0].num_threads
    for c in ctl:
        c.set_num_threads(n)
    return previous


def _apply_default() -> None:
    """jaxlab's import-time setting: ``JAXLAB_LAPACK_THREADS`` (an int, or ``off``), else one thread."""
    value = os.environ.get(ENV, "1").strip().lower()
    if value in ("off", "none", ""):
        return
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{ENV} must be a positive integer or 'off', got {value!r}")
    try:
        set_lapack_threads(n)
    except ImportError:  # SciPy or threadpoolctl missing: nothing to bound
        pass
