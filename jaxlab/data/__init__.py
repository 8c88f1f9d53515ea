"""Data shipped with jaxlab and its loaders.

Loaders: :mod:`jaxlab.data.ett` (ETT time series: windows, splits, scaling), :mod:`jaxlab.data.chinchilla` (the
Chinchilla scaling-law runs), :mod:`jaxlab.data.digits` (scikit-learn's 8x8 digits, as images and spike events).

Data files (each with a ``<name>.README.md`` giving its source and licence):

- ``ETTh1.csv``: hourly Electricity Transformer Temperature data (Zhou et al., AAAI 2021), CC BY-ND 4.0,
  redistributed unmodified.
- ``chinchilla_fig4_epoch_extracted.csv``: 245 runs digitised from Hoffmann et al. 2022, Figure 4, as
  published by Besiroglu et al. 2024 (arXiv:2404.10102).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from jaxlab.data.chinchilla import ScalingData, load_chinchilla
from jaxlab.data.digits import digits_dataset, digits_events
from jaxlab.data.ett import (
    ETT_HOURLY_BORDERS,
    TimeSeries,
    as_series,
    ett_splits,
    load_csv,
    load_ett_csv,
    load_etth1,
    make_windows,
    split,
    standard_scale,
)

__all__ = [
    "ETT_HOURLY_BORDERS",
    "ScalingData",
    "TimeSeries",
    "as_series",
    "data_path",
    "digits_dataset",
    "digits_events",
    "ett_splits",
    "load_chinchilla",
    "load_csv",
    "load_ett_csv",
    "load_etth1",
    "make_windows",
    "split",
    "standard_scale",
]


def data_path(name: str) -> Path:
    """Path of a data file shipped in ``jaxlab/data`` (``FileNotFoundError`` naming what exists otherwise)."""
    path = Path(str(resources.files(__name__) / name))
    if not path.is_file():
        have = sorted(p.name for p in path.parent.iterdir() if p.suffix == ".csv")
        raise FileNotFoundError(f"jaxlab ships no data file {name!r}; available: {', '.join(have)}")
    return path

