"""Citation registry: every public jaxlab function is tagged with the paper it implements.

``register_paper(key, bibtex)`` adds a paper; ``@cites(key)`` tags a function (or class) with one or more
paper keys; :func:`cite` returns the BibTeX of a paper key, of a tagged function (``"mmd2"`` or
``"jaxlab.kernels.gaussian.mmd2"``) or of every function of a module. ``jaxlab cite NAME`` is the CLI front.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from jaxlab.core.verification import import_areas

__all__ = ["Paper", "cite", "cites", "papers_of", "register_paper"]

F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class Paper:
    """A registered paper.

    Attributes:
      key: the registry key, e.g. ``"belhadji2026msip"``.
      bibtex: the BibTeX entry, stripped of surrounding whitespace.
    """

    key: str
    bibtex: str

    @property
    def title(self) -> str:
        for line in self.bibtex.splitlines():
            s = line.strip()
            if s.lower().startswith("title"):
                return s.split("=", 1)[1].strip().strip(",").strip("{}\"")
        return self.key


_PAPERS: dict[str, Paper] = {}
_TAGS: dict[str, tuple[str, ...]] = {}  # "module.qualname" -> paper keys


def register_paper(key: str, bibtex: str) -> Paper:
    """Register a paper under ``key`` so that :func:`cites` can tag functions with it.

    Re-registering the same entry (after stripping whitespace) is a no-op, so modules can be reloaded.

    Args:
      key: the registry key (an area's ``papers.py`` names it as a module constant).
      bibtex: the paper's BibTeX entry.

    Returns:
      The registered :class:`Paper`.

    Raises:
      ValueError: ``key`` is already registered with a different BibTeX entry.
    """
    bib = bibtex.strip()
    old = _PAPERS.get(key)
    if old is not None and old.bibtex != bib:
        raise ValueError(f"paper key {key!r} is already registered with a different BibTeX entry")
    paper = Paper(key, bib)
    _PAPERS[key] = paper
    return paper


def cites(*keys: str) -> Callable[[F], F]:
    """Decorator tagging a public function or class with the paper keys it implements.

    The tag is stored in the registry under ``"module.qualname"`` (what :func:`cite` looks up) and on the object
    as ``__jaxlab_papers__``; the object itself is returned unchanged.

    Args:
      *keys: one or more keys given to :func:`register_paper` before.

    Returns:
      The decorator ``tag(obj) -> obj``.

    Raises:
      ValueError: no key is given.
      KeyError: (at decoration) a key is not registered.
    """
    if not keys:
        raise ValueError("cites() needs at least one paper key")

    def tag(obj: F) -> F:
        for k in keys:
            if k not in _PAPERS:
                raise KeyError(f"unknown paper key {k!r}; register_paper it first")
        name = f"{obj.__module__}.{obj.__qualname__}"
        _TAGS[name] = tuple(keys)
        obj.__jaxlab_papers__ = tuple(keys)  # type: ignore[attr-defined]
        return obj

    return tag


def _import_all() -> None:
    """Import the shared kernels and every area package (their public modules tag what they implement)."""
    importlib.import_module("jaxlab.kernels")
    import_areas()


def papers_of(name: str, *, search_all: bool = True) -> list[Paper]:
    """Papers behind ``name``: a paper key, a (qualified) function name, or a module name."""
    if name in _PAPERS:
        return [_PAPERS[name]]
    found = _lookup(name)
    if not found and search_all:
        _import_all()
        found = _lookup(name)
    if not found:
        raise KeyError(f"no paper, function or module called {name!r} is registered")
    return [_PAPERS[k] for k in dict.fromkeys(found)]


def _lookup(name: str) -> list[str]:
    if name in _PAPERS:
        return [name]
    keys: list[str] = []
    for full, ks in _TAGS.items():
        module, _, qual = full.rpartition(".")
        if name in (full, qual) or full.startswith(name + ".") or module.endswith("." + name):
            keys.extend(ks)
    return keys


def cite(name: str | None = None) -> str:
    """BibTeX of the papers behind ``name`` (all registered papers when ``name`` is None).

    ``name`` is looked up as a paper key, then as a tagged function or class (bare ``"msip"`` or qualified
    ``"jaxlab.sampling.msip.iteration.msip"``), then as a module (every tagged object in it). When nothing is
    found among the modules imported so far, every area package is imported and the lookup repeated.

    Args:
      name: a paper key, a function or class name, a module name, or ``None``.

    Returns:
      The BibTeX entries, separated by blank lines, each paper once.

    Raises:
      KeyError: nothing is registered under ``name``.

    Example:
      >>> from jaxlab.core import cite
      >>> import jaxlab.sampling.langevin
      >>> print(cite("ula_step").splitlines()[0])
      @article{touron2026theoretical,
    """
    if name is None:
        _import_all()
        return "\n\n".join(p.bibtex for p in _PAPERS.values())
    return "\n\n".join(p.bibtex for p in papers_of(name))


def all_papers() -> dict[str, Paper]:
    """A copy of the registry (after importing every module)."""
    _import_all()
    return dict(_PAPERS)
