r"""ETT time series (ETTh1 and alike): a strict CSV loader, the customary splits, standard scaling and windowing.

Data: ETTh1 from the ETDataset of H. Zhou, S. Zhang, J. Peng, S. Zhang, J. Li, H. Xiong and W. Zhang,
*Informer: Beyond Efficient Transformer for Long Sequence Time-Series Forecasting* (AAAI 2021,
arXiv:2012.07436), shipped unmodified in :mod:`jaxlab.data` (CC BY-ND 4.0): 17420 hourly rows, a ``date``
column and 7 numeric columns (HUFL, HULL, MUFL, MULL, LUFL, LULL, OT).

Loader. :func:`load_csv` reads a header row, keeps the time column as strings and returns the numeric columns
as a float64 numpy array; a malformed row (wrong number of fields, an empty, non-numeric or non-finite value)
raises ``ValueError`` naming the file, the line and the column.

Splits. The customary ETT split is 12/4/4 months of hourly rows, ``ETT_HOURLY_BORDERS = (8640, 11520,
14400)`` (train, validation, test ends). :func:`split` cuts at given borders; :func:`ett_splits` follows the
Informer / Time-Series-Library protocol, where the validation and test parts start ``T`` rows before their
border so that their first window's target is the split's first row.

Scaling (per channel ``c``, moments of the train split): ``x̃_{t,c} = (x_{t,c} − μ_c) / σ_c`` with
``μ_c = mean_t y_{t,c}`` and ``σ_c = sqrt(mean_t (y_{t,c} − μ_c)²)`` over the train rows ``y``
(:func:`standard_scale`).

Windows (:func:`make_windows`, stride ``s``): ``X_i = y[i s : i s + T]``, ``Y_i = y[i s + T : i s + T + H]``,
``i = 0 .. ⌊(N − T − H)/s⌋``.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxlab.core.citations import cites, register_paper
from jaxlab.core.validation import as_array, check_finite, check_int, is_concrete, value_check

__all__ = [
    "ETT",
    "ETT_HOURLY_BORDERS",
    "TimeSeries",
    "as_series",
    "ett_splits",
    "load_csv",
    "load_ett_csv",
    "load_etth1",
    "make_windows",
    "split",
    "standard_scale",
]

ETT = "zhou2021informer"

register_paper(ETT, """
@inproceedings{zhou2021informer,
  title = {Informer: Beyond Efficient Transformer for Long Sequence Time-Series Forecasting},
  author = {Zhou, Haoyi and Zhang, Shanghang and Peng, Jieqi and Zhang, Shuai and Li, Jianxin and
            Xiong, Hui and Zhang, Wancai},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year = {2021},
}""")

ETT_HOURLY_BORDERS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)


class TimeSeries(NamedTuple):
    """A loaded CSV.

    Attributes:
      times: the ``T`` strings of the time column.
      values: (T, k) float64 numpy array of the kept numeric columns.
      columns: the ``k`` column names.
    """

    times: tuple[str, ...]
    values: np.ndarray
    columns: tuple[str, ...]


@cites(ETT)
def load_csv(path: str | Path, columns: Sequence[str] | None = None, *, time_column: str | None = "date",
             rows: int | None = None) -> TimeSeries:
    """Read a CSV with a header; keep ``columns`` (all but the time column when ``None``), the first ``rows``.

    Every kept row is checked: the field count must match the header, and each selected value must parse as a
    finite float.

    Args:
      path: the CSV file.
      columns: the numeric columns to keep (default every column but ``time_column``).
      time_column: the column kept as strings (``None``: the row numbers serve as times).
      rows: keep the first ``rows`` data rows (default all); must not exceed the file's rows.

    Returns:
      A :class:`TimeSeries`.

    Raises:
      ValueError: an empty file, an unknown column, a malformed row (naming the file, line and column), or
        ``rows`` larger than the file.
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


def split(x: np.ndarray, borders: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Cut ``x`` along its first axis at increasing row ``borders``: ``x[:b0], x[b0:b1], ...`` (last is the end).

    Args:
      x: an array with a leading time axis.
      borders: increasing row indices, the last one ``<= len(x)``.

    Returns:
      One part per border.

    Raises:
      ValueError: borders not increasing or past the end.
    """
    b = [check_int(v, "borders", min_value=1) for v in borders]
    if any(q <= p for p, q in itertools.pairwise(b)) or b[-1] > len(x):
        raise ValueError(f"borders must be increasing and <= len(x)={len(x)}, got {list(borders)}")
    return tuple(x[p:q] for p, q in zip([0, *b[:-1]], b, strict=True))


def as_series(series: Any, name: str, *, min_len: int = 1, nan_policy: str = "raise") -> Array:
    """A (N, C) float series with N >= ``min_len``; NaNs raise, or are linearly interpolated per channel.

    Args:
      series: array-like of shape (N, C).
      name: the argument's name, used in error messages.
      min_len: the least number of rows.
      nan_policy: ``"raise"`` or ``"interpolate"`` (concrete input only: linear interpolation per channel).

    Returns:
      The series as a JAX array (NaNs filled under ``"interpolate"``).

    Raises:
      ValueError: wrong ``nan_policy``, too few rows, infinities, NaNs under ``"raise"`` (naming the first row
        and channel) or an all-NaN channel. A traced input must be finite (checked when the program runs).
    """
    if nan_policy not in ("raise", "interpolate"):
        raise ValueError(f"nan_policy must be 'raise' or 'interpolate', got {nan_policy!r}")
    x = as_array(series, name, ndim=2)
    if x.shape[0] < min_len:
        raise ValueError(f"{name} must have at least {min_len} rows, got shape {x.shape}")
    if not is_concrete(x):
        return check_finite(x, name)
    arr = np.asarray(x)
    if np.isinf(arr).any():
        raise ValueError(f"{name} must not contain infinities")
    bad = np.isnan(arr)
    if bad.any():
        if nan_policy == "raise":
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"{name} has {int(bad.sum())} NaN entries (first at row {row}, channel {col}); "
                             "pass nan_policy='interpolate' to fill them linearly")
        if bad.all(axis=0).any():
            raise ValueError(f"{name} has a channel that is all NaN; nothing to interpolate from")
        t = np.arange(arr.shape[0])
        arr = arr.copy()
        for c in np.flatnonzero(bad.any(axis=0)):
            ok = ~bad[:, c]
            arr[:, c] = np.interp(t, t[ok], arr[ok, c])
        x = jnp.asarray(arr, x.dtype)
    return x


@cites(ETT)
def make_windows(series: Float[Array, "N C"], T: int, H: int, stride: int = 1, *,
                 nan_policy: str = "raise") -> tuple[Float[Array, "n T C"], Float[Array, "n H C"]]:
    """All windows ``X_i = y[i s : i s + T]`` and targets ``Y_i = y[i s + T : i s + T + H]`` (``s = stride``).

    ``n = ⌊(N − T − H) / s⌋ + 1``.

    Args:
      series: (N, C) series, ``N >= T + H``.
      T: window (lookback) length.
      H: target length.
      stride: step between window starts.
      nan_policy: ``"raise"`` (default) or ``"interpolate"`` (see :func:`as_series`).

    Returns:
      ``(X, Y)`` of shapes (n, T, C) and (n, H, C).
    """
    T = check_int(T, "T", min_value=1)
    H = check_int(H, "H", min_value=1)
    stride = check_int(stride, "stride", min_value=1)
    y = as_series(series, "series", min_len=T + H, nan_policy=nan_policy)
    starts = np.arange(0, y.shape[0] - T - H + 1, stride)
    idx = starts[:, None] + np.arange(T + H)[None, :]
    w = y[idx]
    return w[:, :T], w[:, T:]


@cites(ETT)
def ett_splits(series: Float[Array, "N C"], T: int, *, borders: Sequence[int] = ETT_HOURLY_BORDERS,
               nan_policy: str = "raise") -> tuple[Array, Array, Array]:
    """ETT's 12/4/4-month split: ``train = y[:b0]``, ``val = y[b0−T : b1]``, ``test = y[b1−T : b2]``.

    The validation and test parts start ``T`` rows before their border so that their first window's target
    is the split's first row (Informer / Time-Series-Library protocol).

    Args:
      series: (N, C) series with ``N >= b2``.
      T: lookback length.
      borders: ``(b0, b1, b2)``, default ``ETT_HOURLY_BORDERS = (8640, 11520, 14400)``.
      nan_policy: see :func:`as_series`.

    Returns:
      ``(train, val, test)``.
    """
    T = check_int(T, "T", min_value=1)
    b0, b1, b2 = (check_int(b, "borders", min_value=1) for b in borders)
    if not (T <= b0 < b1 < b2):
        raise ValueError(f"borders must be increasing and start at >= T={T}, got {tuple(borders)}")
    y = as_series(series, "series", min_len=b2, nan_policy=nan_policy)
    return y[:b0], y[b0 - T:b1], y[b1 - T:b2]


@cites(ETT)
def standard_scale(train: Float[Array, "N C"], *arrays: Array) -> tuple[tuple[Array, ...], tuple[Array, Array]]:
    """Standard-scale ``train`` and every array with the train split's per-channel mean and std.

    ``x̃ = (x − μ) / σ`` with ``μ``, ``σ`` the per-channel mean and (population) standard deviation of
    ``train``. NumPy inputs (all of them) are scaled with NumPy on the host and keep their dtype (float64 data
    stay float64 whatever JAX's default float); otherwise the result is a JAX array, and the checks also hold
    under ``jit``.

    Args:
      train: (N, C) series, ``N >= 2``, finite, no constant channel.
      *arrays: arrays of shape (..., C) scaled with the same moments.

    Returns:
      ``((train_scaled, *arrays_scaled), (mean, std))``.

    Raises:
      ValueError: a constant channel in ``train`` (zero standard deviation; under ``jit`` at run time), a
        non-finite ``train`` or an array with another number of channels.
    """
    host = isinstance(train, np.ndarray) and all(isinstance(a, np.ndarray) for a in arrays)
    checked = as_series(train, "train", min_len=2)
    for i, a in enumerate(arrays):
        a = as_array(a, f"arrays[{i}]", ndim=(1, 2, 3))
        if a.shape[-1] != checked.shape[1]:
            raise ValueError(f"arrays[{i}] must have {checked.shape[1]} channels like train, got shape {a.shape}")
    xp, train = (np, train) if host else (jnp, checked)
    mean = xp.mean(train, axis=0)
    std = xp.std(train, axis=0)
    std = value_check(std, lambda s: s == 0, "train must have non-constant channels, got a zero standard deviation")
    out = [(train - mean) / std]
    out += [(a - mean) / std for a in (arrays if host else (jnp.asarray(a) for a in arrays))]
    return tuple(out), (mean, std)


@cites(ETT)
def load_ett_csv(path: str | Path | None = None, columns: Sequence[str] | None = None, *,
                 rows: int | None = None) -> np.ndarray:
    """ETTh1 (``path=None``: the copy shipped in :mod:`jaxlab.data`) or another ETT-layout CSV as (N, C) float64.

    Args:
      path: the CSV (default the shipped ETTh1).
      columns: default every column but ``date`` (HUFL, HULL, MUFL, MULL, LUFL, LULL, OT for ETTh1).
      rows: keep the first ``rows`` rows (default all).

    Returns:
      (N, C) float64 numpy array.

    Raises:
      ValueError: a missing or non-numeric cell, naming the file, line and column.
    """
    return load_csv(_ett_path() if path is None else path, columns, rows=rows).values


def _ett_path() -> Path:
    return Path(__file__).with_name("ETTh1.csv")


@cites(ETT)
def load_etth1(columns: Sequence[str] = ("OT",), *, rows: int | None = 5000, standardize: bool = True) -> np.ndarray:
    """ETTh1 ``columns`` (default the oil temperature ``OT``), first ``rows`` rows, standard-scaled over those
    rows (:func:`standard_scale`), as used by the USP experiments (A. Marsden and E. Hazan, arXiv:2502.06545).

    Args:
      columns: the columns to keep.
      rows: the number of leading rows (default 5000).
      standardize: scale each column to mean 0 and standard deviation 1 over the kept rows.

    Returns:
      float64 numpy array of shape (rows, len(columns)).
    """
    values = load_csv(_ett_path(), columns, rows=rows).values
    if not standardize:
        return values
    return standard_scale(values)[0][0]
