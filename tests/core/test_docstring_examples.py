"""Every public callable is documented (tools/check_docstrings.py), and every ``Example:`` in its docstring runs.

The example is the ``>>>`` / ``...`` lines of the docstring's ``Example:`` (or ``Examples:``) section, executed in a
fresh namespace; the lines without a prompt show what it prints and are read, not compared (floats differ in the
last digits between machines). The public callables are those ``tools/check_docstrings.py`` checks.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _checker():
    spec = importlib.util.spec_from_file_location("check_docstrings", ROOT / "tools" / "check_docstrings.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["check_docstrings"] = mod
    spec.loader.exec_module(mod)
    return mod


def example_source(doc: str) -> str | None:
    """The code of the ``Example:`` section of a cleaned docstring, prompts removed; None if there is none."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip() in ("Example:", "Examples:"):
            indent = len(line) - len(line.lstrip())
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            code = []
            for b in textwrap.dedent("\n".join(body)).splitlines():
                s = b.strip()
                if s.startswith(">>>") or s.startswith("..."):
                    code.append(b.lstrip()[4:])
            return "\n".join(code) if code else None
    return None


def _examples():
    chk = _checker()
    seen, out = set(), []
    for pkg in chk.public_packages():
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            src = example_source(inspect.getdoc(obj) or "")
            if src:
                out.append(pytest.param(src, id=f"{pkg}.{name}"))
    return out


def test_example_source_strips_prompts():
    doc = ("Sum.\n\nExample:\n    >>> x = 1\n    >>> for i in range(2):\n    ...     x += i\n    >>> print(x)\n"
           "    2\n\nReturns:\n  y\n")
    assert example_source(doc) == "x = 1\nfor i in range(2):\n    x += i\nprint(x)"
    assert example_source("No example.\n\nArgs:\n  x: a number.\n") is None


@pytest.mark.parametrize("source", _examples())
def test_docstring_example_runs(source):
    exec(compile(source, "<docstring example>", "exec"), {"__name__": "__docstring_example__"})


def test_every_public_callable_is_documented_and_no_docstring_points_to_a_spec():
    chk = _checker()
    _, report = chk.check_callables(None)
    assert report == [], "\n".join(report)
    assert chk.spec_mentions() == []


def test_the_docstring_checker_catches_an_undocumented_parameter():
    chk = _checker()

    def f(x, y):
        """Sum.

        Args:
          x: a number.

        Returns:
          x + y.
        """
        return x + y

    def g(x):
        """Twice.

        Args:
          x: a number.
        """
        return 2 * x

    assert chk.problems_of(f) == ["undocumented: y"]
    assert chk.problems_of(g) == ["no Returns: section"]
