r"""Loading numeric time series from CSV files (ETTh1 and alike), with strict row checks, splits and z-scoring.

Data: ETTh1 from the ETDataset of H. Zhou et al., *Informer: Beyond Efficient Transformer for Long Sequence
Time-Series Forecasting* (AAAI 2021), shipped unmodified in :mod:`jaxlab.data` (CC BY-ND 4.0). The USP
experiments (A. Marsden and E. Hazan, arXiv:2502.06545) use its first rows of the ``OT`` column, z-scored.

The loader is generic: a header row, a time column kept as strings, numeric columns returned as a float64
numpy array. A malformed row (wrong number of fields, an empty, non-numeric or non-finite value) raises a
``ValueError`` naming the file, the line and the column. Normalised copies are derived in memory only.

Splits: :func:`split` cuts at given row borders; the customary ETT split (12/4/4 months of hourly rows) is
``ETT_HOURLY_BORDERS = (8640, 11520, 14400)`` (train, validation, test ends).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int
from jaxlab.online import _papers  # noqa: F401  (registers the BibTeX entries)

__all__ = ["ETT_HOURLY_BORDERS", "TimeSeries", "load_csv", "load_etth1", "split", "zscore"]

ETT_HOURLY_BORDERS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)


class TimeSeries(NamedTuple):
    """``times`` (T strings from the time column), ``values`` (T, k) float64, ``columns`` (k names)."""

    times: tuple[str, ...]
    values: np.ndarray
    columns: tuple[str, ...]


@cites("zhou2021informer")
def load_csv(path: str | Path, columns: Sequence[str] | None = None, *, time_column: str | None = "date",
             rows: int | None = None) -> TimeSeries:
    """Read a CSV with a header; keep ``columns`` (all but the time column when ``None``), the first ``rows``.

    Every kept row is checked: the field count must match the header, and each selected value must parse as a
    finite float.
    """
    path = Path(path)
    if rows is not None:
        rows = check_int(rows, "rows", min_value=1)
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if not header:
            raise ValueError(f"{path.name}: the file is empty (no header row)")
        header = [h.strip() for h in header]
        if time_column is not None and time_column not in header:
            raise ValueError(f"time_column {time_column!r} is not in the header of {path.name}: {header}")
        names = [h for h in header if h != time_column] if columns is None else list(columns)
        missing = [c for c in names if c not in header]
        if missing or not names:
            raise ValueError(f"columns must be a non-empty subset of the header of {path.name} {header}, "
                             f"got {list(columns) if columns is not None else names}")
        idx = [header.index(c) for c in names]
        t_idx = None if time_column is None else header.index(time_column)
        times: list[str] = []
        values: list[list[float]] = []
        for line, row in enumerate(reader, start=2):
            if rows is not None and len(values) >= rows:
                break
            if len(row) != len(header):
                raise ValueError(f"{path.name} line {line}: expected {len(header)} fields, got {len(row)}")
            vals = []
            for c, i in zip(names, idx, strict=True):
                try:
                    v = float(row[i])
                except ValueError:
                    raise ValueError(f"{path.name} line {line}, column {c!r}: not a number: {row[i]!r}") from None
                if not math.isfinite(v):
                    raise ValueError(f"{path.name} line {line}, column {c!r}: value must be finite, got {row[i]!r}")
                vals.append(v)
            values.append(vals)
            times.append(row[t_idx] if t_idx is not None else str(line - 2))
    if not values:
        raise ValueError(f"{path.name}: no data rows")
    if rows is not None and len(values) < rows:
        raise ValueError(f"rows must be <= the {len(values)} data rows of {path.name}, got {rows}")
    return TimeSeries(tuple(times), np.asarray(values, dtype=np.float64), tuple(names))


@cites("zhou2021informer")
def zscore(x: np.ndarray, *, reference: np.ndarray | None = None) -> np.ndarray:
    """``(x - mean) / std`` per column, the moments taken on ``reference`` (default ``x``; e.g. a train split)."""
    x = np.asarray(x, dtype=np.float64)
    ref = x if reference is None else np.asarray(reference, dtype=np.float64)
    sd = ref.std(axis=0)
    if np.any(sd == 0):
        raise ValueError("reference must have non-constant columns to z-score, got a zero standard deviation")
    return (x - ref.mean(axis=0)) / sd


def split(x: np.ndarray, borders: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Cut ``x`` along its first axis at increasing row ``borders``: ``x[:b0], x[b0:b1], ...`` (last is the end)."""
    b = [check_int(v, "borders", min_value=1) for v in borders]
    if any(q <= p for p, q in itertools.pairwise(b)) or b[-1] > len(x):
        raise ValueError(f"borders must be increasing and <= len(x)={len(x)}, got {list(borders)}")
    return tuple(x[p:q] for p, q in zip([0, *b[:-1]], b, strict=True))


@cites("zhou2021informer", "marsden2025usp")
def load_etth1(columns: Sequence[str] = ("OT",), *, rows: int | None = 5000, standardize: bool = True) -> np.ndarray:
    """ETTh1 ``columns`` (default the oil temperature ``OT``), first ``rows`` rows, z-scored over those rows.

    Returns a float64 array of shape (rows, len(columns)). The data file ships in :mod:`jaxlab.data`.
    """
    from jaxlab.data import data_path

    ts = load_csv(data_path("ETTh1.csv"), columns, rows=rows)
    return zscore(ts.values) if standardize else ts.values
