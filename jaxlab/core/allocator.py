"""Large buffers kept for reuse: glibc's malloc thresholds.

On Linux, XLA's CPU backend takes its buffers from ``malloc``. glibc serves a request larger than its mmap
threshold (adaptive, at most 32 MiB on 64-bit machines) with a fresh ``mmap`` and unmaps it when it is freed, so
every call that returns a large array pays one page fault per 4 KiB page the first time the array is written. A
4096 x 4096 float32 Gaussian Gram matrix (64 MiB) took 29.5 ms on a 2-core machine, of which about 21 ms were
page faults: 8.7 ms with the buffer kept in the heap between calls.

``import jaxlab`` therefore sets glibc's mmap threshold to 256 MiB and its trim threshold to 512 MiB
(:func:`keep_large_buffers`): freed buffers up to 256 MiB go back to the heap and serve the next call, and up
to 512 MiB of free heap is kept before memory is returned to the OS. The setting is process-wide (NumPy's large
arrays are served the same way). ``JAXLAB_MALLOC=off`` in the environment, before importing jaxlab, leaves glibc's
defaults; other C libraries (musl, macOS, Windows) are not touched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

from jaxlab.core.validation import check_int

__all__ = ["keep_large_buffers"]

ENV = "JAXLAB_MALLOC"
MMAP_THRESHOLD = 256 * 2**20
TRIM_THRESHOLD = 512 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def keep_large_buffers(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Serve allocations up to ``mmap_threshold`` bytes from glibc's heap, and keep up to ``trim_threshold``
    bytes of free heap, so that large buffers freed by one call are reused by the next without page faults.

    ``import jaxlab`` calls it with the defaults (see the module's description); call it again to change them.
    Setting the mmap threshold also turns off glibc's adaptive threshold.

    Args:
      mmap_threshold: int, ``0 <= mmap_threshold <= 2**30``: larger requests get their own ``mmap``.
      trim_threshold: int >= 0: free memory at the top of the heap beyond this is returned to the OS.

    Returns:
      True if glibc took both settings; False where the C library is not glibc (nothing changes).

    Raises:
      TypeError: a threshold is not an int.
      ValueError: a threshold is negative, or ``mmap_threshold > 2**30``.
    """
    mmap_threshold = check_int(mmap_threshold, "mmap_threshold", min_value=0)
    trim_threshold = check_int(trim_threshold, "trim_threshold", min_value=0)
    if mmap_threshold > 2**30:
        raise ValueError(f"mmap_threshold must be at most 2**30 bytes, got {mmap_threshold}")
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    ok_mmap = mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
    ok_trim = mallopt(_M_TRIM_THRESHOLD, min(trim_threshold, 2**31 - 1))
    return bool(ok_mmap and ok_trim)


def _apply_default() -> None:
    """jaxlab's import-time setting: the defaults of :func:`keep_large_buffers`, unless ``JAXLAB_MALLOC=off``."""
    if os.environ.get(ENV, "").strip().lower() in ("off", "0", "false", "no", "none"):
        return
    keep_large_buffers()
