"""JAX's persistent compilation cache for ``jaxlab verify``, jaxlab's test suite and user programs that opt in.

XLA compilation dominates most of jaxlab's claims: the arithmetic of a claim takes milliseconds, compiling its
programs takes seconds. JAX can keep compiled executables on disk and load them in a later process instead of
compiling again (JAX's *persistent compilation cache*; its key covers the program, the JAX and XLA versions,
the backend and the compile options, so one directory serves every version and precision safely).

``jaxlab verify`` turns that cache on in a directory of the user's cache folder:

* ``$JAXLAB_CACHE_DIR`` when set (``off``, ``0``, ``false`` or ``no`` disable the cache);
* otherwise ``$XDG_CACHE_HOME/jaxlab`` (``~/.cache/jaxlab`` when unset) on Linux, ``~/Library/Caches/jaxlab``
  on macOS, ``%LOCALAPPDATA%\\jaxlab`` on Windows;

with the compiled programs in its ``jax`` subdirectory, kept under :data:`DEFAULT_MAX_BYTES`: when the cache is
turned on and the directory has grown past that size, the files used longest ago are deleted until it holds three
quarters of it. (JAX's own size cap keeps a lock and an access-time file per entry; with the thousands of small
programs of a ``jaxlab verify`` run, that cost 16 % of a cold run here (65 s against 56 s for four areas), against
nothing for this one scan.) The library itself never turns the cache on when it is imported: a user program opts in
with :func:`enable_compilation_cache` (or JAX's own ``jax_compilation_cache_dir`` option).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["DEFAULT_MAX_BYTES", "ENV", "cache_dir", "enable_compilation_cache", "prune"]

ENV = "JAXLAB_CACHE_DIR"
DEFAULT_MAX_BYTES = 2 * 1024**3
_OFF = frozenset({"off", "0", "false", "no", "none"})


def _user_cache_root() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if os.name == "nt":
        local = os.environ.get("LOCALAPPDATA")
        return Path(local) if local else Path.home() / "AppData" / "Local"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg else Path.home() / ".cache"


def cache_dir() -> Path | None:
    """jaxlab's cache directory: ``$JAXLAB_CACHE_DIR``, else ``jaxlab`` in the user's cache folder.

    Returns:
      The directory (it may not exist yet), or ``None`` when ``$JAXLAB_CACHE_DIR`` is ``off`` (or ``0``,
      ``false``, ``no``, ``none``; any case).
    """
    value = os.environ.get(ENV)
    if value is not None and value.strip():
        if value.strip().lower() in _OFF:
            return None
        return Path(value.strip()).expanduser()
    return _user_cache_root() / "jaxlab"


def enable_compilation_cache(path: str | os.PathLike | None = None, *, min_compile_seconds: float = 0.0,
                             max_bytes: int = DEFAULT_MAX_BYTES, children: bool = False) -> Path | None:
    """Turn on JAX's persistent compilation cache in ``path`` (default: ``jax`` under :func:`cache_dir`).

    Call it before the first ``jit`` compiles: JAX fixes the cache when it first compiles. Executables that took
    at least ``min_compile_seconds`` to compile are written; later processes (and this one) load them instead of
    compiling. Takes no effect, and returns ``None``, when ``$JAXLAB_CACHE_DIR`` is ``off`` and no ``path`` is given,
    or when the directory cannot be created (a read-only home, say): compiling then proceeds as without a cache.

    Args:
      path: the directory for the compiled programs; ``None`` for ``cache_dir() / "jax"``.
      min_compile_seconds: float >= 0, the shortest compile worth caching (JAX's default is 1 s; jaxlab's
        claims compile hundreds of programs of 0.05 to 1 s each, so the default here caches all of them).
      max_bytes: int > 0, the directory's size past which :func:`prune` deletes the entries used longest ago.
      children: also set JAX's environment variables (``JAX_COMPILATION_CACHE_DIR``,
        ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``; unless already set), so that the Python processes this one
        starts (subprocesses, notebook kernels, ``multiprocessing`` workers) use the same cache.

    Returns:
      The directory in use, or ``None`` when the cache stays off.

    Raises:
      ValueError: if ``min_compile_seconds`` is negative or not finite, or ``max_bytes`` < 1.
      TypeError: if ``min_compile_seconds`` is not a real number, or ``max_bytes`` is not an integer.
    """
    import jax

    from jaxlab.core.validation import check_int, check_positive

    min_compile_seconds = float(check_positive(min_compile_seconds, "min_compile_seconds", strict=False))
    max_bytes = check_int(max_bytes, "max_bytes", min_value=1)
    if path is None:
        root = cache_dir()
        if root is None:
            return None
        path = root / "jax"
    path = Path(path).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    prune(path, max_bytes)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    if children:
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(path))
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", str(min_compile_seconds))
    return path


def prune(path: str | os.PathLike, max_bytes: int) -> int:
    """Keep a cache directory under ``max_bytes``: past it, delete the files used longest ago (by access time,
    else modification time) until the rest fits in three quarters of ``max_bytes``.

    Args:
      path: the directory (its files, not subdirectories, are counted and deleted).
      max_bytes: int > 0, the size that triggers the pruning.

    Returns:
      The number of bytes deleted (0 when the directory is under the size, or missing).
    """
    try:
        entries = [(st.st_atime if st.st_atime >= st.st_mtime else st.st_mtime, st.st_size, f)
                   for f in Path(path).iterdir() if f.is_file() and (st := f.stat())]
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return 0
    freed = 0
    for _, size, f in sorted(entries):
        if total - freed <= 3 * max_bytes // 4:
            break
        try:
            f.unlink()
            freed += size
        except OSError:
            pass
    return freed
