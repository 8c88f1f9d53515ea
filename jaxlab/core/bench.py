"""Helpers for ``bench/<area>.py`` scripts: timing after compilation, a machine calibration figure, and one
JSON line per case.

Timings are medians of repeats after a warm-up call (which is timed separately as the compile time), with
``block_until_ready`` on every output. Benchmarks compare jaxlab and a peer side by side in one process.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

__all__ = ["busy_cores", "calibration_gflops", "emit", "time_fn", "time_interleaved"]


def _block(x: Any) -> Any:
    return jax.tree_util.tree_map(lambda a: a.block_until_ready() if hasattr(a, "block_until_ready") else a, x)


def time_fn(fn: Callable[..., Any], *args: Any, repeats: int = 7, min_time: float = 0.0) -> dict[str, float]:
    """Time ``fn(*args)``: the first call separately (compile + run), then the median of ``repeats`` calls.

    Returns ``{"first_s", "median_s", "min_s"}``. ``min_time`` keeps repeating until that many seconds have
    been spent, for very fast functions.
    """
    t0 = time.perf_counter()
    _block(fn(*args))
    first = time.perf_counter() - t0
    times: list[float] = []
    spent = 0.0
    while len(times) < repeats or spent < min_time:
        t0 = time.perf_counter()
        _block(fn(*args))
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
    return {"first_s": first, "median_s": statistics.median(times), "min_s": min(times)}


def time_interleaved(calls: dict[str, tuple[Callable[..., Any], tuple]], repeats: int = 15,
                     between: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Time several ``name: (fn, args)`` calls round-robin, so that load changes on a shared machine hit them
    alike; each gets ``time_fn``'s ``{"first_s", "median_s", "min_s"}``. Ratios of medians taken this way are
    far steadier than ratios of separately timed medians. ``between(name)``, if given, runs untimed after each
    timed call (e.g. to let a peer's thread pool go idle before the next case)."""
    out: dict[str, dict] = {}
    for name, (fn, args) in calls.items():
        t0 = time.perf_counter()
        _block(fn(*args))
        out[name] = {"first_s": time.perf_counter() - t0, "times": []}
    for _ in range(repeats):
        for name, (fn, args) in calls.items():
            t0 = time.perf_counter()
            _block(fn(*args))
            out[name]["times"].append(time.perf_counter() - t0)
            if between is not None:
                between(name)
    return {k: {"first_s": v["first_s"], "median_s": statistics.median(v["times"]), "min_s": min(v["times"])}
            for k, v in out.items()}


@contextlib.contextmanager
def busy_cores(n: int | None = None) -> Iterator[None]:
    """Keep ``n`` other processes (default: one per core) spinning while the block runs: the "every core busy
    with another process" condition, e.g. a second seed running next to the benchmark.

    Args:
      n: int >= 1, the number of spinning processes; ``None`` means ``os.cpu_count()``.
    """
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n or os.cpu_count() or 1)]
    time.sleep(0.5)  # let them reach full speed
    try:
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def calibration_gflops(n: int = 1024, repeats: int = 5) -> float:
    """GFLOP/s of an ``n x n`` float32 numpy matmul on this machine, to compare runs across machines."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return 2 * n**3 / statistics.median(times) / 1e9


def emit(area: str, case: str, *, ours_s: float, peer: str, peer_s: float, compile_s: float,
         quality: dict[str, float] | None = None, calibration: float | None = None, **extra: Any) -> dict:
    """Print one JSON line for a case (``ratio`` = peer time / our time: > 1 means jaxlab is faster)."""
    row = {
        "area": area,
        "case": case,
        "ours_s": ours_s,
        "peer": peer,
        "peer_s": peer_s,
        "ratio": peer_s / ours_s if ours_s > 0 else float("inf"),
        "compile_s": compile_s,
        "calibration_gflops": calibration,
        "quality": quality or {},
        "backend": jax.default_backend(),
        **extra,
    }
    print(json.dumps(row), flush=True)
    return row
