"""Helpers for ``bench/<area>.py`` scripts: timing after compilation, a machine calibration figure, and one
JSON line per case.

Timings are medians of repeats after a warm-up call (which is timed separately as the compile time), with
``block_until_ready`` on every output. Benchmarks compare jaxlab and a peer side by side in one process. Every
row states its goal (a minimum speed-up, or a bound on another figure of the row) and :func:`emit` records
whether the measurement meets it; ``jaxlab bench --all`` gathers the rows into one table and
``bench/results/summary.json``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["GOAL_OPS", "LOAD_REFERENCES", "MAX_SLOWDOWN_UNDER_LOAD", "busy_cores", "calibration_gflops", "emit",
           "load_figures", "parse_goal", "time_fn", "time_interleaved", "time_under_load"]


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
                     between: Callable[[str], None] | None = None, warmup: int = 0) -> dict[str, dict]:
    """Time several ``name: (fn, args)`` calls round-robin, so that load changes on a shared machine hit them
    alike; each gets ``time_fn``'s ``{"first_s", "median_s", "min_s"}``. Ratios of medians taken this way are
    far steadier than ratios of separately timed medians. ``between(name)``, if given, runs untimed after each
    timed call (e.g. to let a peer's thread pool go idle before the next case). ``warmup`` untimed calls of the
    same case precede each timed one, so that it is timed in its steady state, as in a training loop: XLA's CPU
    worker threads, for one, go to sleep after a pause, and the first call after a 0.2 s pause ran on about one
    core (32 ms against 22 ms back to back for the SNN training step of ``bench/snn.py``)."""
    out: dict[str, dict] = {}
    for name, (fn, args) in calls.items():
        t0 = time.perf_counter()
        _block(fn(*args))
        out[name] = {"first_s": time.perf_counter() - t0, "times": []}
    for _ in range(repeats):
        for name, (fn, args) in calls.items():
            for _ in range(warmup):
                _block(fn(*args))
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


GOAL_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
MAX_SLOWDOWN_UNDER_LOAD = 1.5
"""The load goal of a row that calls LAPACK: every core busy with another process slows jaxlab by at most 1.5x."""

_CLAUSE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(x?)"
                     r"\s*(peer)?\s*$")


def parse_goal(text: str) -> list[tuple[str, str, float]]:
    """Read a free-text goal, as the bench scripts wrote them before structured goals, into clauses.

    Clauses are separated by ``;`` or ``,``. Each is ``METRIC OP NUMBER`` (``ratio >= 20``, ``time_ratio <=
    0.75``, ``compile_s < 10``, ``slowdown <= 1.5x``), or ``ours <= Kx peer``, which is the speed-up ``ratio >=
    1/K`` (``ratio`` = peer time / our time).

    Args:
      text: str, the goal, e.g. ``"ratio >= 10, rel_cumloss_diff <= 1e-12"`` or ``"ours <= 0.5x peer"``.

    Returns:
      A list of ``(metric, op, value)`` clauses: ``metric`` a key of the row (or of its ``quality`` dict),
      ``op`` one of ``>=``, ``<=``, ``>``, ``<``, ``value`` a float.

    Raises:
      ValueError: if a clause is not of one of those forms.
    """
    clauses = []
    for part in re.split(r"[;,]", text):
        if not part.strip():
            continue
        m = _CLAUSE.match(part)
        if m is None:
            raise ValueError(f"goal: cannot read {part.strip()!r} of {text!r}; expected 'METRIC OP NUMBER' "
                             "(e.g. 'ratio >= 20') or 'ours <= Kx peer'")
        metric, op, value, _, peer = m.groups()
        if metric == "ours" and peer:
            if op not in ("<=", "<"):
                raise ValueError(f"goal: {part.strip()!r} of {text!r} must bound our time from above")
            clauses.append(("ratio", ">=" if op == "<=" else ">", 1.0 / float(value)))
        elif peer:
            raise ValueError(f"goal: {part.strip()!r} of {text!r}: only 'ours' compares with 'peer'")
        else:
            clauses.append((metric, op, float(value)))
    if not clauses:
        raise ValueError(f"goal: {text!r} holds no clause")
    return clauses


def _metric(row: dict, name: str) -> Any:
    if name in row:
        return row[name]
    quality = row.get("quality") or {}
    if name in quality:
        return quality[name]
    raise ValueError(f"goal: the row {row['area']}:{row['case']} has no metric {name!r} (neither a field nor a "
                     f"quality entry); its fields: {sorted(row)}")


def _clause_text(metric: str, op: str, value: float) -> str:
    return f"{metric} {op} {value:g}"


def load_figures(quiet_s: float, busy_s: float, peer_busy_s: float | None = None,
                 max_slowdown: float = MAX_SLOWDOWN_UNDER_LOAD, *, slowdown: float | None = None,
                 floors: dict[str, float] | None = None) -> dict:
    """The ``under_load`` entry of a row that calls LAPACK: its time with every core busy (:func:`busy_cores`).

    ``slowdown`` = busy time / quiet time of jaxlab's side; the load goal is ``slowdown <= max_slowdown``.

    Args:
      quiet_s: float > 0, jaxlab's median seconds on a quiet machine (the row's ``ours_s``).
      busy_s: float > 0, jaxlab's median seconds of the same call with every core busy.
      peer_busy_s: float or None, the peer's median seconds with every core busy, if it was timed so.
      max_slowdown: float, the largest slowdown that meets the load goal (1.5: issue 27).
      slowdown: float > 0 or None, the slowdown when it was measured otherwise than as ``busy_s / quiet_s``
        (:func:`time_under_load` takes the median over rounds of quiet and busy timings made back to back).
      floors: ``{name: slowdown}`` or None, slowdowns of reference programs timed in the same rounds
        (:data:`LOAD_REFERENCES`): what the scheduler's fair share allows any CPU-bound program. Reported only.

    Returns:
      ``{"ours_s", "peer_s", "ratio", "slowdown", "max_slowdown", "met", "floors"}``: ``ratio`` =
      peer_busy_s / busy_s (``None`` without the peer's time), ``met`` whether ``slowdown <= max_slowdown``.

    Raises:
      ValueError: if ``quiet_s``, ``busy_s`` or a given ``slowdown`` is not positive.
    """
    if not (quiet_s > 0 and busy_s > 0 and (slowdown is None or slowdown > 0)):
        raise ValueError(f"load_figures: quiet_s, busy_s and slowdown must be positive, got {quiet_s}, {busy_s}, "
                         f"{slowdown}")
    slowdown = busy_s / quiet_s if slowdown is None else slowdown
    return {
        "ours_s": busy_s,
        "peer_s": peer_busy_s,
        "ratio": None if peer_busy_s is None else peer_busy_s / busy_s,
        "slowdown": slowdown,
        "max_slowdown": max_slowdown,
        "met": bool(slowdown <= max_slowdown),
        "floors": dict(floors or {}),
    }


def _one_thread_reference() -> None:
    """~20 ms of one-thread CPU work (numpy's sin runs on one thread): several of the scheduler's time slices, so
    that one timing averages over them (a 5 ms reference read slowdowns anywhere from 1.0 to 2.2)."""
    x = np.linspace(0.0, 1.0, 1 << 15)
    for _ in range(96):
        np.sin(x, out=x)


@functools.cache
def _matmul_program() -> tuple[Callable[[Any], Any], Any]:
    a = jnp.ones((1024, 1024), jnp.float32) / 1024
    return jax.jit(lambda a: (a @ a) @ a), a


def _all_threads_reference() -> Any:
    """~20 ms of XLA float32 matmuls, which XLA-CPU spreads over every core."""
    f, a = _matmul_program()
    return f(a)


def _time_references(repeats: int) -> dict[str, float]:
    """Median seconds of each of :data:`LOAD_REFERENCES` (at least 5 calls), timed one after the other."""
    return {name: time_fn(fn, repeats=max(repeats, 5))["median_s"] for name, fn in LOAD_REFERENCES.items()}


LOAD_REFERENCES: dict[str, Callable[[], Any]] = {
    "one_thread_numpy": _one_thread_reference,
    "all_threads_xla_matmul": _all_threads_reference,
}
"""Reference programs timed beside every load row: their slowdowns under :func:`busy_cores` are the floors that
the scheduler's fair share sets. With ``n`` spinning processes on ``n`` cores, a program of ``k`` busy threads
gets ``n k / (n + k)`` cores: a one-thread program slows down ``(n + 1) / n`` (1.5x on 2 cores), and one that
uses every core with parallel speed-up ``s`` slows down about ``s`` (2x for perfect scaling on 2 cores)."""


def time_under_load(cases: dict[str, tuple[Callable, tuple]], quiet_s: float, *, ours: str = "ours",
                    peer: str | None = None, repeats: int = 5, rounds: int = 3) -> dict:
    """Time ``cases`` round-robin (:func:`time_interleaved`) again with every core busy (:func:`busy_cores`),
    and return the ``under_load`` entry (:func:`load_figures`) of jaxlab's case ``ours``.

    The slowdown is the median over ``rounds`` of busy / quiet seconds timed back to back: the first round pairs
    ``quiet_s`` with the first busy timing, each later round times the cases quietly again, then busy. A single
    pair moved by up to 2x between runs of unchanged code; the machine's state drifts between a row's quiet
    timing and its busy one, and back-to-back pairs cancel that drift. The reference programs of
    :data:`LOAD_REFERENCES` are timed in the same rounds, each in a block of its own after the cases (interleaved
    with XLA calls, the one-thread reference shared the cores with XLA's worker threads, which spin for a while
    after each call, and read slowdowns of 1.0), and their median slowdowns are reported as ``floors``.

    Args:
      cases: ``{name: (fn, args)}`` as for :func:`time_interleaved`; it must hold ``ours`` (and ``peer``).
      quiet_s: float > 0, jaxlab's median seconds measured quietly just before (the row's ``ours_s``).
      ours: str, the name of jaxlab's case in ``cases``.
      peer: str or None, the name of the peer's case, to report its time and the ratio under load too.
      repeats: int >= 1, timed calls of each case per round.
      rounds: int >= 1, quiet/busy pairs; the figures are their medians.

    Returns:
      The dict of :func:`load_figures`: busy seconds, slowdown (median over the rounds), whether it is within
      :data:`MAX_SLOWDOWN_UNDER_LOAD`, and the reference floors.

    Raises:
      KeyError: ``ours`` or ``peer`` is not a key of ``cases``.
      ValueError: ``quiet_s`` is not positive, or ``rounds`` < 1.
    """
    missing = [k for k in (ours, peer) if k is not None and k not in cases]
    if missing:
        raise KeyError(f"time_under_load: no case named {missing[0]!r} in cases {sorted(cases)}")
    if rounds < 1:
        raise ValueError(f"time_under_load: rounds must be >= 1, got {rounds}")
    slow: dict[str, list[float]] = {name: [] for name in (ours, *LOAD_REFERENCES)}
    busy_ours, busy_peer = [], []
    for r in range(rounds):
        quiet = time_interleaved(cases, repeats=repeats) if r else {ours: {"median_s": quiet_s}}
        quiet_refs = _time_references(repeats)
        with busy_cores():
            busy = time_interleaved(cases, repeats=repeats)
            busy_refs = _time_references(repeats)
        slow[ours].append(busy[ours]["median_s"] / quiet[ours]["median_s"])
        for name in LOAD_REFERENCES:
            slow[name].append(busy_refs[name] / quiet_refs[name])
        busy_ours.append(busy[ours]["median_s"])
        if peer is not None:
            busy_peer.append(busy[peer]["median_s"])
    med = statistics.median
    return load_figures(quiet_s, med(busy_ours), med(busy_peer) if peer is not None else None,
                        slowdown=med(slow[ours]),
                        floors={name: med(slow[name]) for name in LOAD_REFERENCES})


_NO_GOAL = object()


def emit(area: str, case: str, *, ours_s: float, peer: str | None, peer_s: float | None, compile_s: float,
         quality: dict[str, Any] | None = None, calibration: float | None = None,
         goal_ratio: float | None = None, goal_metric: str | None = None, goal_op: str | None = None,
         goal_value: float | None = None, goal: Any = _NO_GOAL, no_goal_reason: str | None = None,
         lapack: bool = False, under_load: dict | None = None, **extra: Any) -> dict:
    """Print one JSON line for a case, with its goal and whether the measurement meets it.

    ``ratio`` = peer time / our time: above 1 means jaxlab is faster. Every row states a goal, in one of three
    ways:

    - ``goal_ratio=g``: a minimum speed-up, met when ``ratio >= g`` (``1.0``: ahead of the peer; ``2.0``: our
      time at most half the peer's);
    - ``goal_metric``, ``goal_op``, ``goal_value``: a bound on another number of the row (a field such as
      ``ours_s``, ``time_ratio`` or ``overhead_x``, or an entry of ``quality``), met when ``row[goal_metric]
      goal_op goal_value``. It may come with ``goal_ratio``; then both must hold;
    - ``goal="ratio >= 10, rel_cumloss_diff <= 1e-12"``: free text, as older scripts wrote it, read by
      :func:`parse_goal` into the same clauses; or ``goal=None`` with ``no_goal_reason`` for a row that is not
      a comparison with a target (kept rare).

    A row that calls LAPACK (Cholesky, solves, eigendecompositions: their threads contend with other processes)
    says so with ``lapack=True`` and reports ``under_load`` (:func:`load_figures`) where the script times it
    with every core busy, else ``None``; a measured load slowdown above its bound makes the row unmet.

    Args:
      area: str, the area the case belongs to (``msip``, ``cwr``, ...).
      case: str, the case's name, unique within the area.
      ours_s: float, jaxlab's median seconds after compilation (0.0 for a row that times nothing).
      peer: str or None, the peer's name (``None``: no peer).
      peer_s: float or None, the peer's median seconds on the same work.
      compile_s: float, jaxlab's compile seconds (the first call minus a later one).
      quality: dict or None, quality figures (how far jaxlab's answer is from the peer's, ...).
      calibration: float or None, :func:`calibration_gflops` of the machine.
      goal_ratio: float or None, the minimum speed-up ``peer_s / ours_s``.
      goal_metric: str or None, the row's field (or ``quality`` entry) the goal bounds.
      goal_op: str or None, ``">="``, ``"<="``, ``">"`` or ``"<"``, with ``goal_metric``.
      goal_value: float or None, the bound, with ``goal_metric``.
      goal: str or None, a free-text goal (see above), or ``None`` for a row without a goal.
      no_goal_reason: str or None, why a row has no goal; required with ``goal=None``.
      lapack: bool, whether jaxlab's side calls LAPACK (implied by ``under_load``).
      under_load: dict or None, :func:`load_figures` of the case.
      **extra: further fields of the row (sizes, throughput, flush-to-zero state, ...).

    Returns:
      The row as a dict (also printed as one JSON line): ``area``, ``case``, ``ours_s``, ``peer``, ``peer_s``,
      ``ratio`` (``None`` without a peer time, or when neither side was timed), ``compile_s``,
      ``calibration_gflops``, ``quality``, ``backend``, the extra fields, ``goal`` (the
      readable goal, ``None`` without one), ``goal_clauses`` (``[metric, op, value]`` lists), ``met`` (bool, or
      ``None`` without a goal), ``no_goal_reason``, ``lapack`` and ``under_load``.

    Raises:
      ValueError: if the goal is missing, given twice, malformed, or names a metric the row does not have.
    """
    if peer_s is None or (ours_s == 0 and peer_s == 0):
        ratio = None  # no peer, or nothing timed (an agreement row)
    else:
        ratio = peer_s / ours_s if ours_s > 0 else float("inf")
    row = {
        "area": area,
        "case": case,
        "ours_s": ours_s,
        "peer": peer,
        "peer_s": peer_s,
        "ratio": ratio,
        "compile_s": compile_s,
        "calibration_gflops": calibration,
        "quality": quality or {},
        "backend": jax.default_backend(),
        **extra,
    }
    structured = goal_ratio is not None or goal_metric is not None
    if goal_metric is not None and (goal_op is None or goal_value is None):
        raise ValueError(f"emit({area}:{case}): goal_metric={goal_metric!r} needs goal_op and goal_value")
    if goal_metric is None and (goal_op is not None or goal_value is not None):
        raise ValueError(f"emit({area}:{case}): goal_op and goal_value need goal_metric")
    if goal_op is not None and goal_op not in GOAL_OPS:
        raise ValueError(f"emit({area}:{case}): goal_op must be one of {sorted(GOAL_OPS)}, got {goal_op!r}")
    if structured and goal is not _NO_GOAL:
        raise ValueError(f"emit({area}:{case}): give goal_ratio / goal_metric or a goal text, not both")
    clauses: list[tuple[str, str, float]] = []
    if goal_ratio is not None:
        clauses.append(("ratio", ">=", float(goal_ratio)))
    if goal_metric is not None:
        clauses.append((goal_metric, goal_op, float(goal_value)))  # type: ignore[arg-type]
    if goal is _NO_GOAL and not structured:
        raise ValueError(f"emit({area}:{case}): every row states a goal: goal_ratio=..., goal_metric= with goal_op= "
                         "and goal_value=, or goal=None with no_goal_reason=")
    if goal is None:
        if not no_goal_reason:
            raise ValueError(f"emit({area}:{case}): goal=None needs no_goal_reason, a sentence saying why")
    elif goal is not _NO_GOAL:
        if not isinstance(goal, str):
            raise ValueError(f"emit({area}:{case}): goal must be a str or None, got {type(goal).__name__}")
        clauses = parse_goal(goal)
    elif no_goal_reason is not None:
        raise ValueError(f"emit({area}:{case}): no_goal_reason goes with goal=None only")
    met: bool | None = None
    if clauses:
        met = True
        for metric, op, value in clauses:
            measured = _metric(row, metric)
            met = met and measured is not None and bool(GOAL_OPS[op](float(measured), value))
    texts = [_clause_text(*c) for c in clauses]
    if under_load is not None:
        texts.append(f"under load: slowdown <= {under_load['max_slowdown']:g}")
        if met is not None:
            met = met and bool(under_load["met"])
    row.update(
        goal="; ".join(texts) if texts else None,
        goal_clauses=[list(c) for c in clauses],
        met=met,
        no_goal_reason=no_goal_reason if not clauses else None,
        lapack=bool(lapack or under_load is not None),
        under_load=under_load,
    )
    print(json.dumps(row), flush=True)
    return row
