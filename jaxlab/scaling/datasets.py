"""The Chinchilla Figure 4 runs as extracted by Besiroglu et al. (arXiv:2404.10102) from Hoffmann et al.
(arXiv:2203.15556), shipped as ``jaxlab/data/chinchilla_fig4_epoch_extracted.csv`` (provenance in its README).

Conventions of the replication: D_i = C_i / (6 N_i) (C = training FLOP); the 5 highest-loss runs are dropped
(rows with loss strictly below the 5th-largest loss are kept: 240 of 245).
"""

from __future__ import annotations

import csv
import math
from os import PathLike
from typing import NamedTuple

import numpy as np

from jaxlab.core.citations import cites
from jaxlab.data import data_path
from jaxlab.scaling.papers import BESIROGLU, HOFFMANN

__all__ = ["CHINCHILLA_FILE", "ScalingData", "load_chinchilla"]

CHINCHILLA_FILE = "chinchilla_fig4_epoch_extracted.csv"
_COLUMNS = {"N": "Model Size", "C": "Training FLOP", "L": "loss"}


class ScalingData(NamedTuple):
    """Training runs in natural units: parameters N, tokens D, final loss L (float64 numpy arrays)."""

    N: np.ndarray
    D: np.ndarray
    L: np.ndarray


@cites(BESIROGLU, HOFFMANN)
def load_chinchilla(path: str | PathLike | None = None, *, drop_outliers: bool = True) -> ScalingData:
    """Read the Epoch extraction (or a CSV with the same columns), D = C/(6N), optionally drop the 5
    highest-loss runs. Raises ``ValueError`` naming the line and column of a missing, non-numeric,
    non-finite or non-positive entry, or the columns that are absent."""
    path = data_path(CHINCHILLA_FILE) if path is None else path
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in _COLUMNS.values() if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected {list(_COLUMNS.values())}, "
                             f"got {reader.fieldnames}")
        rows = []
        for line, rec in enumerate(reader, start=2):
            vals = []
            for col in _COLUMNS.values():
                raw = rec.get(col)
                try:
                    v = float(raw)
                except (TypeError, ValueError):
                    msg = f"{path}, line {line}: column {col!r} must be a number, got {raw!r}"
                    raise ValueError(msg) from None
                if not math.isfinite(v) or v <= 0:
                    raise ValueError(f"{path}, line {line}: column {col!r} must be finite and > 0, "
                                     f"got {raw!r}")
                vals.append(v)
            rows.append(vals)
    if len(rows) < 6:
        raise ValueError(f"{path}: need at least 6 rows, got {len(rows)}")
    N, C, L = np.asarray(rows, dtype=np.float64).T
    if drop_outliers:
        keep = L < np.sort(L)[-5]
        N, C, L = N[keep], C[keep], L[keep]
    return ScalingData(N, C / (6.0 * N), L)
