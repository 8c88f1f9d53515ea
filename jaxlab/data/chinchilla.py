"""The Chinchilla Figure 4 training runs, as extracted by Besiroglu, Erdil, Barnett, You, "Chinchilla Scaling: A
replication attempt" (arXiv:2404.10102) from Hoffmann et al., "Training Compute-Optimal Large Language Models"
(arXiv:2203.15556), shipped as ``jaxlab/data/chinchilla_fig4_epoch_extracted.csv`` (provenance in its README).

Conventions of the replication: the number of training tokens is D_i = C_i / (6 N_i) (C = training FLOP,
N = parameters); the 5 highest-loss runs are dropped (rows with loss strictly below the 5th-largest loss are
kept: 240 of 245).

The two papers are registered here, with the data they describe; :mod:`jaxlab.scaling.papers` re-exports their
keys.
"""

from __future__ import annotations

import csv
import math
from os import PathLike
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jaxlab.core.citations import cites, register_paper

__all__ = ["BESIROGLU", "CHINCHILLA_FILE", "HOFFMANN", "ScalingData", "load_chinchilla"]

HOFFMANN = "hoffmann2022chinchilla"
BESIROGLU = "besiroglu2024replication"

register_paper(HOFFMANN, """
@article{hoffmann2022chinchilla,
  title = {Training Compute-Optimal Large Language Models},
  author = {Hoffmann, Jordan and Borgeaud, Sebastian and Mensch, Arthur and others},
  journal = {arXiv preprint arXiv:2203.15556},
  year = {2022}
}""")
register_paper(BESIROGLU, """
@article{besiroglu2024replication,
  title = {Chinchilla Scaling: A replication attempt},
  author = {Besiroglu, Tamay and Erdil, Ege and Barnett, Matthew and You, Josh},
  journal = {arXiv preprint arXiv:2404.10102},
  year = {2024}
}""")

CHINCHILLA_FILE = "chinchilla_fig4_epoch_extracted.csv"
_COLUMNS = {"N": "Model Size", "C": "Training FLOP", "L": "loss"}


class ScalingData(NamedTuple):
    """Training runs in natural units, one entry per run.

    Attributes:
      N: ``(runs,)`` float64 numpy array, the parameter counts.
      D: ``(runs,)`` float64 numpy array, the training tokens.
      L: ``(runs,)`` float64 numpy array, the final losses (nats per token).
    """

    N: np.ndarray
    D: np.ndarray
    L: np.ndarray


@cites(BESIROGLU, HOFFMANN)
def load_chinchilla(path: str | PathLike | None = None, *, drop_outliers: bool = True) -> ScalingData:
    """Read the Epoch extraction (or a CSV with the same columns) in natural units.

    D = C / (6 N) from the training FLOP C and the parameter count N; optionally drop the 5 highest-loss runs.

    Args:
      path: a CSV with the columns ``Model Size``, ``Training FLOP`` and ``loss``; ``None`` reads the shipped
        ``chinchilla_fig4_epoch_extracted.csv``.
      drop_outliers: drop the 5 highest-loss runs, as the replication does (245 -> 240 rows).

    Returns:
      :class:`ScalingData` ``(N, D, L)`` of float64 numpy arrays, one entry per run.

    Raises:
      ValueError: naming the line and column of a missing, non-numeric, non-finite or non-positive entry,
        the columns that are absent, or a file with fewer than 6 rows.
    """
    # the shipped file sits next to this module; not through jaxlab.data.data_path, so that jaxlab.data can
    # re-export this loader without an import cycle
    path = Path(__file__).with_name(CHINCHILLA_FILE) if path is None else path
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
