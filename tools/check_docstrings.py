"""Check the docstrings of jaxlab's public callables, and that no docstring or comment points to a spec.

The public callables are the functions and classes named in the ``__all__`` of ``jaxlab.core``,
``jaxlab.kernels`` and every area package (the directories holding a ``claims.py``); an object re-exported
under several names is checked once. Each must have

- a docstring whose first line is a summary;
- an ``Args:`` section (Google style; ``Arguments:``, ``Keyword Args:`` and ``Attributes:`` count too) naming
  every parameter of its signature (for a class: its fields, or the parameters of its ``__init__``);
- for a function that returns something (no ``-> None`` annotation), a ``Returns:`` or ``Yields:`` section.

Separately, no comment or string under ``jaxlab/`` may mention "spec" (an external specification document, "the
spec's sizes", "specs/...", "§"): the library stands on its own and cites the papers.

Usage::

    python tools/check_docstrings.py            # report and exit 1 on any problem
    python tools/check_docstrings.py --summary  # counts per package only
    python tools/check_docstrings.py --area snn # only the packages whose dotted name contains "snn"
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
ARG_SECTIONS = {"Args", "Arguments", "Keyword Args", "Keyword Arguments", "Attributes", "Parameters", "Fields"}
RETURN_SECTIONS = {"Returns", "Yields"}
ENTRY = re.compile(r"^\s*(\*{0,2}\w+)(\s*\([^)]*\))?\s*:")
ARG_ENTRY_SPEC = re.compile(r"^\s*spec(\s*\([^)]*\))?:\s")  # the Args: entry of a parameter named spec
SPEC = re.compile(r"\bspec\b(?![.\[=])|\bspecs/|§")


def public_packages() -> list[str]:
    """``jaxlab.core`` (with ``jaxlab.core.distributed``), ``jaxlab.kernels`` and every area package, by name."""
    pkgs = {"jaxlab.core", "jaxlab.core.distributed", "jaxlab.kernels"}
    for claims in (ROOT / "jaxlab").rglob("claims.py"):
        pkgs.add(".".join(claims.parent.relative_to(ROOT).parts))
    return sorted(pkgs)


def sections(doc: str) -> dict[str, list[str]]:
    """Google-style sections of a cleaned docstring: section title -> the names its entries document."""
    out: dict[str, list[str]] = {}
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        m = SECTION.match(lines[i])
        if not m:
            i += 1
            continue
        title, indent = m.group(2), len(m.group(1))
        names = out.setdefault(title, [])
        i += 1
        entry_indent = None
        while i < len(lines):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            if line.strip():
                ind = len(line) - len(line.lstrip())
                if entry_indent is None:
                    entry_indent = ind
                if ind == entry_indent:
                    e = ENTRY.match(line)
                    if e:
                        names.extend(n.strip() for n in e.group(1).split(","))
            i += 1
    return out


def parameters(obj) -> list[str]:
    """The names a docstring has to document."""
    if inspect.isclass(obj):
        if hasattr(obj, "_fields"):  # NamedTuple
            return list(obj._fields)
        if dataclasses.is_dataclass(obj):
            return [f.name for f in dataclasses.fields(obj) if f.init]
        init = obj.__dict__.get("__init__")
        if init is None:
            return []
        obj = init
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    names = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        names.append(("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name)
    return names


def returns_something(fn) -> bool:
    try:
        ann = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return True
    return ann not in (None, "None", type(None))


def problems_of(obj) -> list[str]:
    doc = inspect.getdoc(obj) if obj.__doc__ else None
    if not doc or not doc.strip().splitlines()[0].strip():
        return ["no docstring"]
    if inspect.isclass(obj) and obj.__doc__ == getattr(obj.__mro__[1], "__doc__", None):
        return ["no docstring (inherited)"]
    found = sections(doc)
    documented = {n.lstrip("*") for t, ns in found.items() if t in ARG_SECTIONS for n in ns}
    missing = [p for p in parameters(obj) if p.lstrip("*") not in documented]
    out = []
    if missing:
        out.append("undocumented: " + ", ".join(missing))
    if not inspect.isclass(obj) and returns_something(obj) and not RETURN_SECTIONS & set(found):
        out.append("no Returns: section")
    return out


def check_callables(area_filter: str | None) -> tuple[dict[str, tuple[int, int]], list[str]]:
    seen: set[int] = set()
    counts: dict[str, tuple[int, int]] = {}
    report: list[str] = []
    for pkg in public_packages():
        if area_filter and area_filter not in pkg:
            continue
        mod = importlib.import_module(pkg)
        ok = total = 0
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            total += 1
            probs = problems_of(obj)
            if probs:
                report.append(f"{pkg}.{name}: {'; '.join(probs)}")
            else:
                ok += 1
        counts[pkg] = (ok, total)
    return counts, report


def spec_mentions() -> list[str]:
    """Comments and docstrings under ``jaxlab/`` that mention "spec" (code, error messages and ``Args:`` entries
    of a parameter named ``spec`` are fine)."""
    out = []
    for path in sorted((ROOT / "jaxlab").rglob("*.py")):
        rel = path.relative_to(ROOT)
        with path.open("rb") as fh:
            for tok in tokenize.tokenize(fh.readline):
                if tok.type == tokenize.COMMENT and SPEC.search(tok.string):
                    out.append(f"{rel}:{tok.start[0]}: {tok.string.strip()}")
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=False)
            if not doc:
                continue
            first = node.body[0].lineno
            for k, line in enumerate(doc.splitlines()):
                if SPEC.search(line) and not ARG_ENTRY_SPEC.match(line):
                    out.append(f"{rel}:{first + k}: {line.strip()}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", action="store_true", help="print only the counts per package")
    ap.add_argument("--area", help="check only packages whose dotted name contains this")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    counts, report = check_callables(args.area)
    specs = [] if args.area else spec_mentions()
    if not args.summary:
        for line in report + specs:
            print(line)
    ok = sum(c[0] for c in counts.values())
    total = sum(c[1] for c in counts.values())
    for pkg, (o, t) in counts.items():
        print(f"  {pkg:40s} {o:4d} / {t:4d}", file=sys.stderr)
    print(f"documented: {ok} / {total} public callables; spec mentions: {len(specs)}", file=sys.stderr)
    return 0 if ok == total and not specs else 1


if __name__ == "__main__":
    sys.exit(main())
