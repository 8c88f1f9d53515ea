"""Data files shipped with jaxlab (each with a ``<name>.README.md`` giving its source and licence).

- ``ETTh1.csv``: hourly Electricity Transformer Temperature data (Zhou et al., AAAI 2021), CC BY-ND 4.0,
  redistributed unmodified.
- ``chinchilla_fig4_epoch_extracted.csv``: 245 runs digitised from Hoffmann et al. 2022, Figure 4, as
  published by Besiroglu et al. 2024 (arXiv:2404.10102).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["data_path"]


def data_path(name: str) -> Path:
    """Path of a data file shipped in ``jaxlab/data`` (``FileNotFoundError`` naming what exists otherwise)."""
    path = Path(str(resources.files(__name__) / name))
    if not path.is_file():
        have = sorted(p.name for p in path.parent.iterdir() if p.suffix == ".csv")
        raise FileNotFoundError(f"jaxlab ships no data file {name!r}; available: {', '.join(have)}")
    return path
