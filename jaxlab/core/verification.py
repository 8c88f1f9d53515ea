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
enables float64 before importing anything, so claims are checked in double precision.
"""

from __future__ import annotations

import importlib
import math
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Claim",
    "ClaimResult",
    "Outcome",
    "claim",
    "discover_areas",
    "import_areas",
    "load_area",
    "registered",
    "run_claims",
]


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of one claim: the measured figure, what was expected, the tolerance and the verdict.

    Build it with :meth:`close`, :meth:`at_most` or :meth:`at_least` rather than by hand.

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


@dataclass(frozen=True)
class Claim:
    area: str
    name: str
    paper: str
    quick: bool
    fn: Callable[[], ClaimResult]
    doc: str = ""


@dataclass
class Outcome:
    """A claim's result as ``jaxlab verify`` reports it."""

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_REGISTRY: dict[tuple[str, str], Claim] = {}


def claim(*, area: str, paper: str, quick: bool = True, name: str | None = None):
    """Decorator registering a zero-argument function returning :class:`ClaimResult` as a claim.

    The claim is stored under ``(area, name)`` (a second registration under the same pair replaces the first)
    with the function's docstring as its description; ``jaxlab verify`` runs it.

    Args:
      area: the area's name, the directory that holds its ``claims.py``.
      paper: key of the paper the claim comes from (as registered with :func:`register_paper`).
      quick: the claim runs in seconds and belongs to the default (quick) verification.
      name: the claim's name; ``None`` means the function's ``__name__``.

    Returns:
      The decorator, which returns the function unchanged.
    """

    def register(fn: Callable[[], ClaimResult]) -> Callable[[], ClaimResult]:
        cname = name or fn.__name__
        _REGISTRY[(area, cname)] = Claim(area, cname, paper, quick, fn, (fn.__doc__ or "").strip())
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


def run_claims(claims: list[Claim], *, on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run claims one by one; an exception is a failed claim with its traceback in ``error``."""
    outcomes = []
    for c in claims:
        t0 = time.perf_counter()
        try:
            r = c.fn()
            if not isinstance(r, ClaimResult):
                raise TypeError(f"claim {c.name} returned {type(r).__name__}, not ClaimResult")
            o = Outcome(c.area, c.name, c.paper, r.measured, r.expected, r.tolerance, bool(r.passed),
                        time.perf_counter() - t0, r.details)
        except Exception as exc:
            o = Outcome(c.area, c.name, c.paper, None, None, None, False, time.perf_counter() - t0,
                        error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}")
        outcomes.append(o)
        if on_done is not None:
            on_done(o)
    return outcomes
