"""Registry of the papers' numerical claims, run by ``jaxlab verify``.

A claim is a function without arguments that measures one figure and compares it with what the paper (or a
closed form) predicts, returning a :class:`ClaimResult`. Register it with::

    @claim(area="core", paper="gretton2012mmd", quick=True)
    def mmd_of_a_sample_with_itself_is_zero() -> ClaimResult:
        ...
        return ClaimResult.close(measured, expected=0.0, atol=1e-12)

Claims of an area live in the area's package, ``jaxlab/[<parent>/]<area>/claims.py``: the directory name is the
area's name, which is how ``jaxlab verify AREA`` finds them without importing any other area (and so none of
their heavy dependencies). ``jaxlab verify``
enables float64 before importing anything, so claims are checked in double precision;
``jaxlab verify --dtype float32`` leaves it off, so the same claims run in single precision, JAX's default. A claim
whose figure needs a different tolerance (or bound) in float32 says so with :func:`by_precision`, and one that
cannot hold in float32 at all says why with ``@claim(needs_float64="...")``: it is then reported as skipped, with
its reason, and never run with a loosened tolerance.
"""

from __future__ import annotations

import importlib
import math
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Claim",
    "ClaimResult",
    "Outcome",
    "by_precision",
    "claim",
    "discover_areas",
    "import_areas",
    "load_area",
    "mean_and_se",
    "precision",
    "registered",
    "run_claims",
    "run_claims_parallel",
    "set_precision",
]


def precision() -> str:
    """The precision claims run in: ``"float64"`` when JAX's x64 mode is on (``jaxlab verify``), else ``"float32"``.

    Returns:
      ``"float64"`` or ``"float32"``.
    """
    import jax

    return "float64" if jax.config.read("jax_enable_x64") else "float32"


def set_precision(dtype: str) -> None:
    """Run claims in ``dtype`` (``"float64"`` or ``"float32"``): JAX's x64 mode, set in this process and, through
    ``JAX_ENABLE_X64``, in the processes it starts."""
    import jax

    os.environ["JAX_ENABLE_X64"] = "1" if dtype == "float64" else "0"
    jax.config.update("jax_enable_x64", dtype == "float64")


def by_precision(float64: Any, float32: Any) -> Any:
    """A claim's tolerance (or bound, or problem size) for each precision: ``float64`` under x64, else ``float32``.

    A claim states its float32 value next to its float64 one, each from the error that precision is expected
    to leave (for instance a few ulps of the figure times the condition number it goes through), so that a
    float32 run checks the claim at its own tolerance instead of a silently loosened float64 one.

    Example:
      >>> from jaxlab.core.verification import by_precision
      >>> atol = by_precision(1e-12, 1e-5)  # 1e-12 under jaxlab verify, 1e-5 under --dtype float32

    Args:
      float64: the value used when the claims run in float64.
      float32: the value used when they run in float32.

    Returns:
      ``float64`` or ``float32``, following :func:`precision`.
    """
    return float64 if precision() == "float64" else float32


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of one claim: the measured figure, what was expected, the tolerance and the verdict.

    Build it with :meth:`close`, :meth:`at_most`, :meth:`at_least` or, for a Monte-Carlo figure,
    :meth:`within_se` rather than by hand.

    Attributes:
      measured: the figure the claim computed, as a Python float.
      expected: the predicted value (float), or a textual bound such as ``"<= 0.01"``.
      tolerance: the accepted deviation ``atol + rtol |expected|`` (float), or the bound itself.
      passed: the verdict; always ``False`` for a non-finite ``measured``.
      details: free text reported next to the verdict (sizes, seeds, the other side of a comparison).
    """

    measured: float
    expected: float | str
    tolerance: float | str
    passed: bool
    details: str = ""

    @classmethod
    def close(
        cls, measured: Any, expected: Any, *, atol: float = 0.0, rtol: float = 0.0, details: str = ""
    ) -> ClaimResult:
        """Pass when ``|measured - expected| <= atol + rtol * |expected|`` and ``measured`` is finite.

        Args:
          measured: the computed figure (anything ``float()`` accepts, e.g. a 0-d array).
          expected: the predicted value.
          atol: absolute tolerance.
          rtol: tolerance relative to ``|expected|``.
          details: free text for the report.

        Returns:
          The :class:`ClaimResult`.
        """
        m, e = float(measured), float(expected)
        tol = atol + rtol * abs(e)
        ok = math.isfinite(m) and abs(m - e) <= tol
        return cls(m, e, tol, ok, details)

    @classmethod
    def at_most(cls, measured: Any, bound: Any, *, details: str = "") -> ClaimResult:
        """Pass when ``measured <= bound`` and ``measured`` is finite (an error, a gap, a residual).

        Args:
          measured: the computed figure.
          bound: the largest accepted value.
          details: free text for the report.

        Returns:
          The :class:`ClaimResult`, with ``expected = "<= bound"``.
        """
        m, b = float(measured), float(bound)
        return cls(m, f"<= {b:.3g}", b, math.isfinite(m) and m <= b, details)

    @classmethod
    def at_least(cls, measured: Any, bound: Any, *, details: str = "") -> ClaimResult:
        """Pass when ``measured >= bound`` and ``measured`` is finite (a ratio, an overlap, a rate).

        Args:
          measured: the computed figure.
          bound: the smallest accepted value.
          details: free text for the report.

        Returns:
          The :class:`ClaimResult`, with ``expected = ">= bound"``.
        """
        m, b = float(measured), float(bound)
        return cls(m, f">= {b:.3g}", b, math.isfinite(m) and m >= b, details)

    @classmethod
    def within_se(cls, measured: Any, predicted: Any, se: Any, *, k: float = 4.0, atol: float = 0.0,
                  details: str = "") -> ClaimResult:
        """Pass when a Monte-Carlo estimate lies within ``k`` standard errors of the value theory predicts.

        With ``z = (measured - predicted) / se`` the claim passes when every ``measured`` is finite and
        ``|measured - predicted| <= k se + atol``, i.e. ``|z| <= k + atol / se``. ``se`` must be the estimate's own
        standard error, measured inside the claim (independent seeds, or batch means of one long chain, see
        :func:`mean_and_se`), and ``predicted`` the theoretical value, never another measured figure: then the
        tolerance shrinks with the sample size and a bias of a few SE fails. For a correct implementation ``z`` is
        close to standard normal, so ``k = 4`` fails a correct claim with probability ``6e-5`` (with the SE itself
        estimated from ``n`` seeds, ``z`` is Student-t with ``n - 1`` degrees of freedom: ``8e-4`` at ``n = 20``,
        ``3e-4`` at ``n = 40``), and ``k <= 5`` is enforced (a wider band would hide a bias). ``atol`` is an
        optional deterministic allowance (for instance float32 rounding of the estimator, derived in a comment at
        the call) added to ``k se``.

        ``measured``, ``predicted`` and ``se`` may be arrays of one shape (several estimates checked at once, each
        against its own prediction and SE, e.g. one per parameter value): all must pass, and the result reports the
        one with the largest ``|z|``.

        Example:
          >>> from jaxlab.core.verification import ClaimResult
          >>> r = ClaimResult.within_se(1.003, 1.0, se=0.002, k=4)
          >>> r.passed, r.details
          (True, 'z = +1.50 (SE 0.002, k = 4)')

        Args:
          measured: the Monte-Carlo estimate (a float, 0-d array, or an array of estimates).
          predicted: the value theory predicts, ``measured``'s shape (or a scalar).
          se: the standard error of ``measured``, finite and > 0, ``measured``'s shape (or a scalar).
          k: the accepted number of standard errors, ``0 < k <= 5``.
          atol: float >= 0, a deterministic error allowance added to ``k se`` (default 0).
          details: free text for the report, appended to the z-score.

        Returns:
          The :class:`ClaimResult`: ``measured`` and ``expected`` are the estimate and prediction with the largest
          ``|z|``, ``tolerance`` is its ``k se + atol``, and ``details`` starts with the z-score(s), the SE and ``k``.

        Raises:
          ValueError: if ``k`` is not in ``(0, 5]``, ``atol`` is negative or not finite, ``se`` is not finite and
            positive, ``predicted`` is not finite, or the shapes do not broadcast to ``measured``'s.
        """
        k, atol = float(k), float(atol)
        if not 0.0 < k <= 5.0:
            raise ValueError(f"k must be in (0, 5] (a wider band hides a bias of several SE), got k={k}")
        if not (math.isfinite(atol) and atol >= 0.0):
            raise ValueError(f"atol must be a finite float >= 0, got atol={atol}")
        m = np.asarray(measured, dtype=np.float64)
        try:
            p = np.broadcast_to(np.asarray(predicted, dtype=np.float64), m.shape)
            s = np.broadcast_to(np.asarray(se, dtype=np.float64), m.shape)
        except ValueError as exc:
            raise ValueError(f"predicted {np.shape(predicted)} and se {np.shape(se)} must broadcast to measured's "
                             f"shape {m.shape}") from exc
        if m.size == 0:
            raise ValueError("measured must hold at least one estimate, got an empty array")
        if not np.all(np.isfinite(s) & (s > 0)):
            raise ValueError(f"se must be finite and > 0, got {s.tolist()}")
        if not np.all(np.isfinite(p)):
            raise ValueError(f"predicted must be finite, got {p.tolist()}")
        z = (m - p) / s
        ok = bool(np.all(np.isfinite(m) & (np.abs(m - p) <= k * s + atol)))
        worst = int(np.argmax(np.where(np.isfinite(z), np.abs(z), np.inf)))
        mw, pw, sw = (float(a.reshape(-1)[worst]) for a in (m, p, s))
        if m.ndim == 0:
            text = f"z = {float(z):+.2f} (SE {sw:.3g}, k = {k:g}"
        else:
            zs = ", ".join(f"{v:+.2f}" for v in z.reshape(-1))
            ses = ", ".join(f"{v:.3g}" for v in s.reshape(-1))
            text = f"z = [{zs}] (largest |z| at index {worst}; SE [{ses}], k = {k:g}"
        text += f", atol {atol:.3g})" if atol else ")"
        return cls(mw, pw, k * sw + atol, ok, f"{text}; {details}" if details else text)


def mean_and_se(samples: Any, batches: int | None = None) -> tuple[Any, Any]:
    """Mean of Monte-Carlo samples and its standard error, from independent replicates or from batch means.

    Independent replicates (``batches=None``), ``x_1, ..., x_n`` along axis 0 (one per seed)::

        mean = (1/n) sum_i x_i,    SE = s / sqrt(n),    s^2 = (1/(n-1)) sum_i (x_i - mean)^2.

    Batch means (``batches=b``), for one correlated chain ``x_1, ..., x_N`` in time order: cut it into ``b``
    contiguous batches of ``N/b`` steps, with means ``y_1, ..., y_b``; when a batch is much longer than the chain's
    autocorrelation time the ``y_j`` are nearly independent, so ``SE = s_y / sqrt(b)`` with ``s_y`` the sample
    standard deviation of the ``y_j`` (Flegal and Jones, "Batch means and spectral variance estimators in Markov
    chain Monte Carlo", Ann. Statist. 38 (2010)). For independent draws both give ``sigma / sqrt(N)`` up to the
    noise of ``s``, whose relative SE is about ``1/sqrt(2 (n - 1))`` (``b - 1`` with batches): 20 replicates
    estimate the SE to about 16 %. Computed in float64 on the host.

    Example:
      >>> import numpy as np
      >>> from jaxlab.core.verification import mean_and_se
      >>> mean, se = mean_and_se(np.array([1.0, 2.0, 3.0, 4.0]))
      >>> mean, round(se, 4)
      (2.5, 0.6455)

    Args:
      samples: ``(n, ...)`` finite real array: replicates along axis 0 (or the chain, in time order, with
        ``batches``); trailing axes are separate quantities, each with its own mean and SE.
      batches: ``None`` for independent replicates, else an int ``b >= 2`` that divides ``n``.

    Returns:
      ``(mean, se)``: Python floats for 1-d ``samples``, else float64 arrays of shape ``samples.shape[1:]``.

    Raises:
      ValueError: if ``samples`` is 0-d, not finite, or has fewer than 2 replicates (batches); if ``batches`` is
        not an int >= 2 or does not divide ``n``.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim == 0:
        raise ValueError("samples must have a replicate axis (axis 0), got a 0-d value")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite, got a NaN or an infinity")
    n = x.shape[0]
    if batches is not None:
        if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)) or batches < 2:
            raise ValueError(f"batches must be an int >= 2 (or None for independent replicates), got {batches!r}")
        if n % batches:
            raise ValueError(f"batches={batches} must divide the number of samples along axis 0, got {n}")
        x = x.reshape(batches, n // batches, *x.shape[1:]).mean(axis=1)
        n = batches
    if n < 2:
        raise ValueError(f"samples must hold at least 2 replicates along axis 0, got {n}")
    mean = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / math.sqrt(n)
    if x.ndim == 1:
        return float(mean), float(se)
    return mean, se


@dataclass(frozen=True)
class Claim:
    area: str
    name: str
    paper: str
    quick: bool
    fn: Callable[[], ClaimResult]
    doc: str = ""
    needs_float64: str | None = None
    reproduced: bool = True


@dataclass
class Outcome:
    """A claim's result as ``jaxlab verify`` reports it.

    ``dtype`` is the precision it ran in; ``skipped`` holds the reason a float32 run left it out (its
    ``needs_float64``), in which case ``passed`` is ``False`` but the claim counts as skipped, not failed.
    ``not_reproduced`` marks a documented negative result (a claim registered with
    ``expected="not reproduced"``): its check asserts the measured opposite of the paper's statement, so
    ``passed`` means that the negative result still holds, and :attr:`verdict` reads ``NOT REPRODUCED``.
    """

    area: str
    claim: str
    paper: str
    measured: float | None
    expected: Any
    tolerance: Any
    passed: bool
    seconds: float
    details: str = ""
    error: str | None = field(default=None)
    dtype: str = "float64"
    skipped: str | None = None
    not_reproduced: bool = False

    @property
    def verdict(self) -> str:
        """``SKIP``, ``FAIL``, ``PASS`` or, for a documented negative result whose check holds, ``NOT REPRODUCED``.

        A negative result whose check fails is a ``FAIL``: the behaviour it documents has changed, and the claim
        (which may now reproduce) needs a look.
        """
        if self.skipped is not None:
            return "SKIP"
        if not self.passed:
            return "FAIL"
        return "NOT REPRODUCED" if self.not_reproduced else "PASS"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict
        return d


EXPECTED = ("reproduced", "not reproduced")


_REGISTRY: dict[tuple[str, str], Claim] = {}


def claim(*, area: str, paper: str, quick: bool = True, name: str | None = None, needs_float64: str | None = None,
          expected: str = "reproduced"):
    """Decorator registering a zero-argument function returning :class:`ClaimResult` as a claim.

    The claim is stored under ``(area, name)`` (a second registration under the same pair replaces the first)
    with the function's docstring as its description; ``jaxlab verify`` runs it.

    A paper's statement that jaxlab's reconstruction does not reproduce, after an experiment designed so that it
    should hold if true, is registered as a documented negative result, ``expected="not reproduced"``. Its check
    asserts the *measured opposite*, with its uncertainty (for instance that the paper's gain lies above the
    measured interval), and its docstring gives the diagnosis. ``jaxlab verify`` reports it as ``NOT REPRODUCED``
    while that holds, which does not fail the run, and as ``FAIL`` once the behaviour changes.

    Args:
      area: the area's name, the directory that holds its ``claims.py``.
      paper: key of the paper the claim comes from (as registered with :func:`register_paper`).
      quick: the claim runs in seconds and belongs to the default (quick) verification.
      name: the claim's name; ``None`` means the function's ``__name__``.
      needs_float64: why the claim cannot hold in float32 (for instance a figure below float32's resolution);
        ``jaxlab verify --dtype float32`` then skips it with this reason. ``None``: it runs in both precisions.
      expected: ``"reproduced"`` (the default: the check asserts the paper's statement) or ``"not reproduced"``
        (a documented negative result: the check asserts the measured opposite).

    Returns:
      The decorator, which returns the function unchanged.

    Raises:
      ValueError: if ``needs_float64`` is given but empty, or ``expected`` is neither ``"reproduced"`` nor
        ``"not reproduced"``.
    """
    if needs_float64 is not None and not str(needs_float64).strip():
        raise ValueError("needs_float64 must say why the claim needs float64 (got an empty reason)")
    if expected not in EXPECTED:
        raise ValueError(f"expected must be 'reproduced' or 'not reproduced', got {expected!r}")

    def register(fn: Callable[[], ClaimResult]) -> Callable[[], ClaimResult]:
        cname = name or fn.__name__
        _REGISTRY[(area, cname)] = Claim(area, cname, paper, quick, fn, (fn.__doc__ or "").strip(), needs_float64,
                                         expected == "reproduced")
        return fn

    return register


def registered(area: str | None = None) -> list[Claim]:
    """Registered claims (of one area), in registration order."""
    return [c for (a, _), c in _REGISTRY.items() if area is None or a == area]


def discover_areas() -> dict[str, str]:
    """Map area name -> claims module, from the files ``jaxlab/**/<area>/claims.py`` (nothing is imported)."""
    root = Path(__file__).resolve().parent.parent
    found: dict[str, str] = {}
    for path in sorted(root.rglob("claims.py"), key=lambda p: p.parent.name):
        rel = path.relative_to(root.parent).with_suffix("")
        found[path.parent.name] = ".".join(rel.parts)
    return found


def import_areas() -> None:
    """Import every area package (the directory of each ``claims.py``), not its claims."""
    for module in discover_areas().values():
        importlib.import_module(module.rsplit(".", 1)[0])


def load_area(area: str) -> list[Claim]:
    """Import an area's claims module and return its claims."""
    areas = discover_areas()
    if area not in areas:
        raise KeyError(f"unknown area {area!r}; known areas: {', '.join(sorted(areas)) or 'none'}")
    importlib.import_module(areas[area])
    return registered(area)


def _verify_check_mode() -> str:
    """How claims run jaxlab's run-time input checks: as NaN (programs stay cacheable, see
    :func:`jaxlab.core.validation._runtime_checks`) unless ``EQX_ON_ERROR`` chooses a mode explicitly."""
    return "default" if "EQX_ON_ERROR" in os.environ else "nan"


def run_claims(claims: list[Claim], *, on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run claims one by one in the current :func:`precision`; an exception is a failed claim with its traceback
    in ``error``, and in float32 a claim with ``needs_float64`` is skipped with its reason.

    The run-time input checks inside the claims' jitted programs return NaN rather than raise when they fail (a
    NaN result fails its claim): a raising check calls back into Python, which keeps the program out of JAX's
    persistent compilation cache. Setting ``EQX_ON_ERROR`` (``raise``, ``breakpoint``...) overrides this."""
    from jaxlab.core.validation import _runtime_checks

    outcomes = []
    dtype = precision()
    for c in claims:
        t0 = time.perf_counter()
        if dtype != "float64" and c.needs_float64:
            o = Outcome(c.area, c.name, c.paper, None, None, None, False, 0.0, dtype=dtype, skipped=c.needs_float64,
                        not_reproduced=not c.reproduced)
            outcomes.append(o)
            if on_done is not None:
                on_done(o)
            continue
        try:
            with _runtime_checks(_verify_check_mode()):
                r = c.fn()
            if not isinstance(r, ClaimResult):
                raise TypeError(f"claim {c.name} returned {type(r).__name__}, not ClaimResult")
            o = Outcome(c.area, c.name, c.paper, r.measured, r.expected, r.tolerance, bool(r.passed),
                        time.perf_counter() - t0, r.details, dtype=dtype, not_reproduced=not c.reproduced)
        except Exception as exc:
            o = Outcome(c.area, c.name, c.paper, None, None, None, False, time.perf_counter() - t0,
                        error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}", dtype=dtype,
                        not_reproduced=not c.reproduced)
        outcomes.append(o)
        if on_done is not None:
            on_done(o)
    return outcomes


def _plan(claims: list[Claim], jobs: int, seconds: dict[str, float]) -> list[list[Claim]]:
    """Work units for ``jobs`` workers, longest first: an area's claims stay together (its programs compile once),
    unless its estimated time exceeds a quarter of one worker's share, in which case it is cut into pieces of at
    most that size. ``seconds`` maps ``"area:claim"`` to a previous run's time (unknown claims count as the median).
    """
    known = sorted(seconds.values())
    typical = known[len(known) // 2] if known else 1.0
    est = {id(c): seconds.get(f"{c.area}:{c.name}", typical) for c in claims}
    cap = max(sum(est.values()) / (4 * jobs), typical)
    by_area: dict[str, list[Claim]] = {}
    for c in claims:
        by_area.setdefault(c.area, []).append(c)
    units: list[list[Claim]] = []
    for group in by_area.values():
        piece: list[Claim] = []
        for c in sorted(group, key=lambda c: -est[id(c)]):
            if piece and sum(est[id(x)] for x in piece) + est[id(c)] > cap:
                units.append(piece)
                piece = []
            piece.append(c)
        units.append(piece)
    return sorted(units, key=lambda u: -sum(est[id(c)] for c in u))


def _worker(dtype: str, cache: str | None, conn: Any) -> None:
    """A ``jaxlab verify`` worker process: asks for a unit, runs its claims, reports each outcome, until told to
    stop (``None``). Every message goes straight into the pipe, so nothing is lost if a claim kills the process."""
    import gc

    import jax

    set_precision(dtype)
    if cache is not None:
        from jaxlab.core.cache import enable_compilation_cache

        enable_compilation_cache(cache)
    conn.send(("ready", None))
    while (names := conn.recv()) is not None:
        try:
            claims = []
            for module, area, name in names:
                importlib.import_module(module)
                claims += [c for c in registered(area) if c.name == name]
        except Exception as exc:  # a module that cannot be imported fails its unit with the traceback
            conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"))
            claims = []
        run_claims(claims, on_done=lambda o: conn.send(("outcome", o)))
        jax.clear_caches()  # the next unit's programs differ: keep the worker's memory flat
        gc.collect()
        _release_free_heap()
        conn.send(("ready", None))


def _release_free_heap() -> None:
    """Hand the C heap's free pages back to the OS (glibc's ``malloc_trim``; a no-op elsewhere).

    The buffers and programs that a unit frees stay in the allocator's arenas otherwise, so a worker's resident
    memory would grow to the sum of its units' peaks rather than stay at the largest (measured on ``jaxlab verify
    --quick``: one worker at 1.98 GB of resident memory, against 0.4-0.9 GB for any one area run alone)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def run_claims_parallel(claims: list[Claim], *, jobs: int, on_done: Callable[[Outcome], None] | None = None,
                        seconds: dict[str, float] | None = None, cache: str | os.PathLike | None = None,
                        ) -> list[Outcome]:
    """Run claims in ``jobs`` worker processes, in the current :func:`precision`, with the results of
    :func:`run_claims` (in the order of ``claims``).

    Each worker is a fresh Python process (``spawn``, with this process's ``sys.path``) that imports only the
    modules that define its claims. Work goes out in units, longest first by ``seconds`` (a previous run's times,
    ``"area:claim" -> s``), each unit an area or a piece of a long one, to whichever worker is free; a worker
    clears JAX's caches between units, so memory stays that of one area per worker. A worker that dies (a crash,
    the out-of-memory killer) fails the claims of its unit that it had not reported, with its exit code, and a new
    worker takes its place; a worker that dies outside a unit (at start-up, say) is not replaced, and once none is
    left the claims not yet started fail with its exit code.

    Args:
      claims: the claims to run.
      jobs: int >= 1, the number of worker processes (at most one per unit is started).
      on_done: called in this process with each :class:`Outcome` as it arrives (completion order).
      seconds: previous times for the schedule; ``None`` keeps the order of ``claims``.
      cache: directory of JAX's persistent compilation cache for the workers; ``None``: none.

    Returns:
      One :class:`Outcome` per claim, in the order of ``claims``.

    Raises:
      ValueError: if ``jobs`` is not a positive integer.
    """
    import multiprocessing as mp
    from multiprocessing.connection import wait

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    dtype = precision()
    units = _plan(claims, jobs, dict(seconds or {}))
    todo = list(range(len(units)))[::-1]  # a stack: the next unit is todo.pop()
    pending = {uid: {(c.area, c.name) for c in unit} for uid, unit in enumerate(units)}
    got: dict[tuple[str, str], Outcome] = {}
    ctx = mp.get_context("spawn")
    cache_arg = None if cache is None else str(cache)
    workers: dict[Any, tuple[Any, Any]] = {}  # parent's end of the pipe -> (process, unit or None)

    def start() -> None:
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_worker, args=(dtype, cache_arg, theirs), daemon=True)
        p.start()
        theirs.close()
        workers[mine] = (p, None)

    def record(o: Outcome) -> None:
        got[(o.area, o.claim)] = o
        if on_done is not None:
            on_done(o)

    def fail(uid: int, error: str) -> None:
        for c in units[uid]:
            if (c.area, c.name) in pending[uid]:
                record(Outcome(c.area, c.name, c.paper, None, None, None, False, 0.0, error=error, dtype=dtype,
                               not_reproduced=not c.reproduced))
        pending[uid].clear()

    for _ in range(min(jobs, len(units))):
        start()
    try:
        while any(pending.values()):
            for conn in wait(list(workers)):
                p, uid = workers[conn]
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):  # the worker exited or died
                    p.join()
                    del workers[conn]
                    conn.close()
                    if uid is not None:  # a claim killed it: fail what it had not reported, and replace it
                        fail(uid, f"the worker process running it exited (exit code {p.exitcode})")
                        if todo:
                            start()
                    if not workers:  # workers that die on their own (at start-up, say) are not respawned
                        for u in todo:
                            fail(u, f"no worker process was left to run it (the last exited with code {p.exitcode})")
                        todo.clear()
                    continue
                if kind == "outcome":
                    pending[uid].discard((payload.area, payload.claim))
                    record(payload)
                elif kind == "error":
                    fail(uid, payload)
                elif kind == "ready":
                    if uid is not None:
                        fail(uid, "its unit ended without reporting it")
                    nxt = todo.pop() if todo else None
                    conn.send(None if nxt is None else [(c.fn.__module__, c.area, c.name) for c in units[nxt]])
                    workers[conn] = (p, nxt)
    finally:
        for conn, (p, _) in workers.items():
            try:
                conn.send(None)
            except OSError:
                pass
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
            conn.close()
    return [got[(c.area, c.name)] for c in claims]
