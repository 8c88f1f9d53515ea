"""Griffe extension for the API pages: read jaxlab's ``Example:`` docstring sections as ``Examples:``.

jaxlab's docstrings (Google style) head their doctests ``Example:``; griffe's Google parser only knows the
plural, and would render the singular as an admonition of plain text (``>>>`` lines run together, and a
printed list such as ``['a', 'b']`` read as a Markdown link). Renaming the heading before parsing lets griffe
split the section into prose and highlighted doctest blocks. The source files are not touched.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename each docstring's ``Example:`` section heading to ``Examples:``."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
