"""Refresh notebooks from their jupytext sources: a thin wrapper on ``jupytext --sync`` plus an nbclient run.

Every ``notebooks/<name>.ipynb`` is paired with ``notebooks/src/<name>.py`` (jupytext percent format, cells
``# %%`` and ``# %% [markdown]``, no header); the pairing is declared once in ``notebooks/jupytext.toml``.
The source is what one edits and reviews; the notebook is committed with its outputs, and
``tests/core/test_notebook_sources.py`` checks that the two hold the same cells. The workflow, with plain
jupytext (``pip install jupytext``)::

    # edit notebooks/src/<name>.py, then copy its cells into the notebook (outputs of unchanged cells are kept)
    jupytext --sync notebooks/src/<name>.py
    # or, equivalently, explicitly:
    jupytext --to ipynb --update notebooks/src/<name>.py -o notebooks/<name>.ipynb
    # new notebook: write the source, then create the notebook from it and set the kernel
    jupytext --sync --set-kernel python3 notebooks/src/<name>.py
    # a notebook edited in Jupyter: the paired source is rewritten on save (jupytext's Jupyter extension), or by
    jupytext --sync notebooks/<name>.ipynb

``--sync`` takes the cells from whichever of the pair was modified last, so touch the file you edited if
in doubt. Then execute the notebook so that its outputs match the new cells, which is what this script does::

    python tools/make_notebook.py notebooks/src/00_quickstart.py [more sources ...]   # sync, then execute
    python tools/make_notebook.py --no-execute notebooks/src/*.py                     # sync only

Execution runs in ``notebooks/`` (like nbmake in CI) with the ``python3`` kernel, 600 s per cell.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat
from jupytext.cli import jupytext as jupytext_cli

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def notebook_of(source: Path) -> Path:
    """The notebook paired with ``source``: ``notebooks/src/<name>.py`` -> ``notebooks/<name>.ipynb``.

    Args:
        source: path of a jupytext source (absolute or relative to the working directory).

    Returns:
        The path of the paired ``.ipynb`` (it need not exist yet).
    """
    return source.resolve().parent.parent / f"{source.stem}.ipynb"


def sync(source: Path) -> Path:
    """Copy the cells of ``source`` into its paired notebook (``jupytext --sync``), keeping existing outputs.

    A notebook that does not exist yet is created with the ``python3`` kernel.

    Args:
        source: path of a jupytext source in ``notebooks/src``.

    Returns:
        The path of the updated notebook.
    """
    source.touch()  # the source is the side that was edited: --sync takes the cells of the newer file
    target = notebook_of(source)
    args = ["--sync", str(source)]
    if not target.exists():
        args[1:1] = ["--set-kernel", "python3"]
    jupytext_cli(args)
    return target


def execute(notebook: Path) -> None:
    """Execute ``notebook`` in place in ``notebooks/``, so it is committed with outputs of its current cells.

    Args:
        notebook: path of the ``.ipynb`` to run.
    """
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    nbformat.write(nb, notebook)  # now the newer file of the pair, with the same cells: a later --sync is a no-op


def main(argv: list[str] | None = None) -> None:
    """Sync each given source into its notebook and, unless ``--no-execute``, execute the notebook.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path, help="notebooks/src/<name>.py files")
    parser.add_argument("--no-execute", action="store_true", help="only copy the cells, keep the old outputs")
    args = parser.parse_args(argv)
    for source in args.sources:
        notebook = sync(source)
        if not args.no_execute:
            execute(notebook)


if __name__ == "__main__":
    main()
