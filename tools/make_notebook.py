"""Build a notebook from a Python script with ``# %%`` cell markers (``# %% [markdown]`` for text) and
execute it in place, so it is committed with its outputs.

    python tools/make_notebook.py notebooks/src/00_quickstart.py notebooks/00_quickstart.ipynb
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def cells_of(source: str):
    cells, kind, buf = [], None, []

    def flush():
        text = "\n".join(buf).strip("\n")
        if kind is not None and text:
            if kind == "markdown":
                text = "\n".join(line.removeprefix("# ").removeprefix("#") for line in text.splitlines())
                cells.append(nbformat.v4.new_markdown_cell(text))
            else:
                cells.append(nbformat.v4.new_code_cell(text))

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, buf = ("markdown" if "[markdown]" in line else "code"), []
        else:
            buf.append(line)
    flush()
    return cells


def main(src: str, dst: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells_of(Path(src).read_text())
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "notebooks"}}).execute()
    nbformat.write(nb, dst)


if __name__ == "__main__":
    main(*sys.argv[1:3])
