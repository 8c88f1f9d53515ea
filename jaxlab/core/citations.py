"""Citation registry: every public jaxlab function is tagged with the paper it implements.

``register_paper(key, bibtex)`` adds a paper; ``@cites(key)`` tags a function (or class) with one or more
paper keys; :func:`cite` returns the BibTeX of a paper key (the registry key or the key written inside the
BibTeX entry), of an area (the papers its ``papers.py`` registers), of a tagged function (``"mmd2"``,
``"jaxlab.kernels.mmd2"`` or ``"jaxlab.kernels.gaussian.mmd2"``) or of every function of a module.
``jaxlab cite NAME`` is the CLI front.
"""

from __future__ import annotations

import difflib
import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from jaxlab.core.verification import discover_areas, import_areas

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
    def bibkey(self) -> str:
        """The citation key written inside the entry (``@article{<bibkey>, ...``), or ``key`` if none is."""
        m = _BIBKEY.match(self.bibtex)
        return m.group(1) if m else self.key

    @property
    def title(self) -> str:
        for line in self.bibtex.splitlines():
            s = line.strip()
            if s.lower().startswith("title"):
                return s.split("=", 1)[1].strip().strip(",").strip("{}\"")
        return self.key


_PAPERS: dict[str, Paper] = {}
_TAGS: dict[str, tuple[str, ...]] = {}  # "module.qualname" -> paper keys
_ORIGINS: dict[str, list[str]] = {}  # paper key -> modules that called register_paper with it
_BIBKEY = re.compile(r"\s*@\w+\s*[{(]\s*([^,\s]+)\s*,")


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
    # the caller's module: an area's papers.py, so that ``cite(area)`` can list what it registers
    origin = sys._getframe(1).f_globals.get("__name__", "")
    if origin not in _ORIGINS.setdefault(key, []):
        _ORIGINS[key].append(origin)
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
    """Papers behind ``name``, each once, in registration order of the tags or of the area's ``papers.py``.

    ``name`` is tried, in this order, as

    1. a registry key (``"pe_vaswani2017attention"``);
    2. an area name (``"msip"``: every paper its ``papers.py`` registers or names as a module constant);
    3. a dotted name of a jaxlab object or module (``"jaxlab.kernels.mmd2"``, ``"jaxlab.kernels"``; the
       ``jaxlab.`` prefix may be left out): the papers tagged on the object, or on every tagged object of the
       module and of the areas inside it;
    4. the key written inside a BibTeX entry (``"vaswani2017attention"``);
    5. a bare function or class name (``"mmd2"``) or the last part of a module name (``"gaussian"``).

    When nothing matches among the modules imported so far, every area package is imported and the lookup
    repeated.

    Args:
      name: the name to look up (see above).
      search_all: import every area package before giving up; ``False`` looks only at what is imported.

    Returns:
      The matching :class:`Paper` entries (never empty).

    Raises:
      KeyError: nothing matches; the message lists the accepted forms and close matches.
    """
    found = _resolve(name)
    if not found and search_all:
        _import_all()
        found = _resolve(name)
    if not found:
        raise KeyError(_unknown_message(name))
    return [_PAPERS[k] for k in dict.fromkeys(found)]


def _resolve(name: str) -> list[str]:
    """Paper keys behind ``name`` among the modules imported so far (see :func:`papers_of`)."""
    if name in _PAPERS:
        return [name]
    areas = discover_areas()
    if name in areas:
        return _area_papers(areas[name].rsplit(".", 1)[0])
    keys = _dotted(name, areas)
    if keys:
        return keys
    keys = [k for k, p in _PAPERS.items() if p.bibkey == name]
    if keys:
        return keys
    return _lookup(name)


def _area_papers(package: str) -> list[str]:
    """Keys registered by (or named as module constants of) the area package's ``papers.py``."""
    module = importlib.import_module(package + ".papers")
    named = {v for v in vars(module).values() if isinstance(v, str) and v in _PAPERS}
    return [k for k in _PAPERS if k in named or module.__name__ in _ORIGINS.get(k, ())]


def _dotted(name: str, areas: dict[str, str]) -> list[str]:
    """Keys of the jaxlab object or module called ``name`` (with or without the ``jaxlab.`` prefix)."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return []
    full = name if name == "jaxlab" or name.startswith("jaxlab.") else "jaxlab." + name
    parts = full.split(".")
    for n in range(len(parts), 0, -1):
        modname = ".".join(parts[:n])
        try:
            obj = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (modname + ".").startswith(exc.name + "."):
                continue  # no such module: try a shorter prefix with attributes after it
            raise  # the module exists but one of its own imports is missing: show the user
        for attr in parts[n:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return []
        if n < len(parts):
            return list(getattr(obj, "__jaxlab_papers__", ()))
        return _module_papers(obj, areas)
    return []


def _module_papers(module, areas: dict[str, str]) -> list[str]:
    """Keys tagged on the objects of a module (its submodules and re-exports too) and of the areas inside it."""
    prefix = module.__name__ + "."
    keys: list[str] = []
    for claims in areas.values():
        package = claims.rsplit(".", 1)[0]
        if (package + ".").startswith(prefix):
            importlib.import_module(package)
            keys += _area_papers(package)
    for full, ks in _TAGS.items():
        if full.startswith(prefix):
            keys += ks
    for obj in vars(module).values():
        if callable(obj):
            keys += getattr(obj, "__jaxlab_papers__", ())
    return keys


def _lookup(name: str) -> list[str]:
    """Keys of tagged objects whose bare name is ``name`` or whose module ends in ``.name``."""
    keys: list[str] = []
    for full, ks in _TAGS.items():
        module, _, qual = full.rpartition(".")
        if name in (full, qual) or full.startswith(name + ".") or module.endswith("." + name):
            keys.extend(ks)
    return keys


def _unknown_message(name: str) -> str:
    areas = sorted(discover_areas())
    names = set(_PAPERS) | {p.bibkey for p in _PAPERS.values()} | set(areas)
    names |= {full.rpartition(".")[2] for full in _TAGS} | set(_TAGS)
    close = difflib.get_close_matches(name, sorted(names), n=5, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return (f"no paper, area, function or module called {name!r} is registered. `jaxlab cite` accepts a paper "
            "key (e.g. pe_vaswani2017attention) or the key inside its BibTeX entry (vaswani2017attention), an "
            f"area name ({', '.join(areas)}), a function's dotted name (jaxlab.kernels.mmd2) or bare name "
            f"(mmd2), or a module name (jaxlab.kernels).{hint}")


def cite(name: str | None = None) -> str:
    """BibTeX of the papers behind ``name`` (all registered papers when ``name`` is None).

    ``name`` is looked up as described in :func:`papers_of`: a paper key (the registry key or the key inside the
    BibTeX entry), an area name (``"msip"``: every paper of the area), a dotted function, class or module name
    (``"jaxlab.kernels.mmd2"``, ``"jaxlab.sampling.msip.iteration.msip"``) or a bare one (``"mmd2"``). When
    nothing is found among the modules imported so far, every area package is imported and the lookup repeated.

    Args:
      name: a paper key, a BibTeX key, an area name, a function or class name, a module name, or ``None``.

    Returns:
      The BibTeX entries, separated by blank lines, each paper once.

    Raises:
      KeyError: nothing is registered under ``name`` (the message lists the accepted forms).

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
