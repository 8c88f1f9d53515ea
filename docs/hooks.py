"""MkDocs hook: add the committed notebooks (``notebooks/*.ipynb``, outside ``docs/``) to the build.

The notebooks live next to their jupytext sources in ``notebooks/``; copying or symlinking them into ``docs/``
would leave a second copy to keep in sync. Instead each one is added to the build's files as
``notebooks/<name>.ipynb`` (read from the repository), before mkdocs-jupyter looks for notebooks, so the plugin
renders it (``execute: false``: the committed outputs are shown as they are).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@event_priority(100)  # before mkdocs-jupyter's on_files (priority 0) wraps the notebooks
def on_files(files: Files, config) -> Files:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        # a plain File whose source directory is the repository root (not File.generated: mkdocs-jupyter's
        # wrapper recomputes the source path from src_dir, which a generated file lacks)
        files.append(File(f"notebooks/{path.name}", src_dir=str(NOTEBOOKS.parent), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files
