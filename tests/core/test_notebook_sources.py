"""Every notebook in notebooks/ has a jupytext source in notebooks/src/ with the same cells.

The source ``notebooks/src/<name>.py`` (percent format) is what is edited and reviewed; the notebook
``notebooks/<name>.ipynb`` is committed with its outputs. They must hold the same cells (type and source text;
outputs and metadata are ignored), so an edit made on one side only fails here. Fix with
``jupytext --sync notebooks/src/<name>.py`` (or ``python tools/make_notebook.py``, which also executes).
"""

import shutil
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK_PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def source_of(notebook: Path) -> Path:
    return notebook.parent / "src" / f"{notebook.stem}.py"


def notebook_cells(notebook: Path) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in nbformat.read(notebook, as_version=4).cells]


def source_cells(source: Path) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in jupytext.read(source, fmt="py:percent").cells]


def mismatch(notebook: Path, source: Path) -> str | None:
    """None if the two hold the same cells, else a description of the first difference."""
    a, b = notebook_cells(notebook), source_cells(source)
    for i, (cell_a, cell_b) in enumerate(zip(a, b, strict=False)):
        if cell_a != cell_b:
            return f"cell {i}: notebook has {cell_a!r}, source has {cell_b!r}"
    if len(a) != len(b):
        return f"the notebook has {len(a)} cells, the source {len(b)}"
    return None


def test_every_notebook_is_found_and_paired_by_the_jupytext_config():
    assert len(NOTEBOOK_PATHS) >= 20
    config = tomllib.loads((NOTEBOOKS / "jupytext.toml").read_text())
    assert config["formats"] == "ipynb,src//py:percent"
    orphans = {p.stem for p in (NOTEBOOKS / "src").glob("*.py")} - {p.stem for p in NOTEBOOK_PATHS}
    assert not orphans, f"sources without a notebook: {sorted(orphans)}"


@pytest.mark.parametrize("notebook", NOTEBOOK_PATHS, ids=lambda p: p.stem)
def test_notebook_cells_equal_its_source(notebook):
    source = source_of(notebook)
    assert source.is_file(), f"{notebook.name} has no source {source}: run `jupytext --sync {notebook}`"
    diff = mismatch(notebook, source)
    assert diff is None, f"{notebook.name} and {source.name} differ at {diff}; run `jupytext --sync` on the edited one"


@pytest.fixture
def pair(tmp_path):
    notebook = NOTEBOOKS / "00_quickstart.ipynb"
    (tmp_path / "src").mkdir()
    shutil.copy(notebook, tmp_path / notebook.name)
    shutil.copy(source_of(notebook), tmp_path / "src" / source_of(notebook).name)
    return tmp_path / notebook.name, tmp_path / "src" / source_of(notebook).name


def edit_notebook(path: Path, edit) -> None:
    nb = nbformat.read(path, as_version=4)
    edit(nb)
    nbformat.write(nb, path)


def test_outputs_and_metadata_are_ignored(pair):
    notebook, source = pair

    def strip(nb):
        nb.metadata = {}
        for cell in nb.cells:
            cell.metadata = {"tags": ["changed"]}
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None

    edit_notebook(notebook, strip)
    assert mismatch(notebook, source) is None


@pytest.mark.parametrize("kind", ["markdown", "code"])
def test_a_cell_edited_in_the_notebook_only_is_caught(pair, kind):
    notebook, source = pair
    assert mismatch(notebook, source) is None

    def edit(nb):
        cell = next(c for c in nb.cells if c.cell_type == kind)
        cell.source += "\nprint('edited')" if kind == "code" else "\nEdited."

    edit_notebook(notebook, edit)
    assert mismatch(notebook, source) is not None


@pytest.mark.parametrize("kind", ["markdown", "code"])
def test_a_cell_edited_in_the_source_only_is_caught(pair, kind):
    notebook, source = pair
    text = source.read_text()
    if kind == "markdown":
        edited = text.replace("# ## A Gram matrix and its spectrum", "# ## A Gram matrix and its eigenvalues", 1)
    else:
        edited = text.replace("lengthscale=1.0", "lengthscale=2.0", 1)
    assert edited != text
    source.write_text(edited)
    assert mismatch(notebook, source) is not None


def test_a_cell_added_or_removed_on_one_side_is_caught(pair):
    notebook, source = pair
    source.write_text(source.read_text() + "\n# %%\nprint('one more cell')\n")
    assert "cells" in mismatch(notebook, source)
    edit_notebook(notebook, lambda nb: nb.cells.append(nbformat.v4.new_code_cell("print('one more cell')")))
    assert mismatch(notebook, source) is None
    edit_notebook(notebook, lambda nb: nb.cells.pop(0))
    assert mismatch(notebook, source) is not None
