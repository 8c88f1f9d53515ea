r"""MSE/MAE tables of Evolutionary (EF) and Direct (DF) Forecasting over several horizons.

Paper: J. Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
arXiv:2601.23114 (2026). Each horizon ``L`` is scored on every test window (the Time-Series-Library protocol):
``MSE = mean_{i,k,c} (Ŷ_{i,k,c} − Y_{i,k,c})²`` and ``MAE = mean |Ŷ − Y|`` over windows ``i``, steps
``k <= L`` and channels ``c``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int
from jaxlab.data.ett import as_series, make_windows
from jaxlab.forecasting.evolutionary import check_windows, df_forecast, ef_forecast, mae, mse
from jaxlab.forecasting.papers import EF

__all__ = ["evaluate_horizons", "horizon_table"]


def _batched(fn: Callable[[Array], Array], X: Array, batch_size: int) -> Array:
    return jax.jit(lambda xs: jax.lax.map(fn, xs, batch_size=min(batch_size, xs.shape[0])))(X)


@cites(EF)
def evaluate_horizons(model_or_models: Any, test_windows: Any, Ls: Sequence[int], mode: str = "ef", *,
                      stride: int | None = None, window_stride: int = 1, batch_size: int = 256
                      ) -> dict[int, dict[str, float]]:
    """MSE/MAE table ``{L: {"mse", "mae", "windows"}}`` of EF or DF forecasts over the horizons ``Ls``.

    For each ``L``: ``MSE = mean_{i,k,c} (Ŷ_{i,k,c} − Y_{i,k,c})²`` and ``MAE = mean |Ŷ − Y|`` over the test windows
    ``i``, steps ``k ≤ L`` and channels ``c`` (the Time-Series-Library protocol), as in Ma et al., "To See Far, Look
    Close: Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114. ``mode="ef"``: one model (or a mapping
    ``L -> model``) rolled out by :func:`~jaxlab.forecasting.ef_forecast`, one roll-out to the largest ``L`` per model;
    ``mode="df"``: one model of horizon ``L`` per ``L``, called once (:func:`~jaxlab.forecasting.df_forecast`).

    Args:
      model_or_models: one model, a mapping ``L -> model`` or a sequence of models aligned with ``Ls`` (``"df"``
        needs one per distinct ``L``).
      test_windows: a ``(N, C)`` test series whose first ``T`` rows are lookback (each ``L`` is scored on its
        ``⌊(N − T − L)/window_stride⌋ + 1`` windows; the models need ``in_len``), or an ``(X, Y)`` pair of
        windows (every ``L ≤ Y.shape[1]`` on all windows).
      Ls: the horizons (ints ``≥ 1``, at least one).
      mode: ``"ef"`` or ``"df"``.
      stride: the EF evolution stride (default each model's horizon).
      window_stride: step between scored windows (int ``≥ 1``).
      batch_size: windows per batch of the compiled ``lax.map``.

    Returns:
      dict from each ``L`` to ``{"mse": float, "mae": float, "windows": int}``.

    Raises:
      TypeError: a horizon or ``window_stride`` not an int.
      ValueError: an unknown ``mode``; no horizons; a sequence of models of another length than ``Ls``; one
        model for several ``L`` in ``"df"``; an ``L`` beyond the targets or the series; models without ``in_len``
        for a series; a model of another horizon than ``L`` in ``"df"``; as :func:`~jaxlab.forecasting.ef_forecast`.
      KeyError: a mapping without a model for some ``L``.

    Example:
      >>> from jaxlab.forecasting import evaluate_horizons, fit_linear, make_windows, sinusoid_series
      >>> y = sinusoid_series(400)
      >>> model = fit_linear(*make_windows(y[:300], 48, 24))      # horizon H = 24, lookback T = 48
      >>> table = evaluate_horizons(model, y[300 - 48:], [24, 48], "ef")
      >>> table[48]["windows"]
      53
    """
    if mode not in ("ef", "df"):
        raise ValueError(f"mode must be 'ef' or 'df', got {mode!r}")
    Ls = [check_int(L, "Ls", min_value=1) for L in Ls]
    if not Ls:
        raise ValueError("Ls must name at least one horizon")
    window_stride = check_int(window_stride, "window_stride", min_value=1)
    if isinstance(model_or_models, Mapping):
        models = {L: model_or_models[L] for L in Ls}
    elif isinstance(model_or_models, (list, tuple)):
        if len(model_or_models) != len(Ls):
            raise ValueError(f"model_or_models must have one model per horizon ({len(Ls)}), got "
                             f"{len(model_or_models)}")
        models = dict(zip(Ls, model_or_models, strict=True))
    else:
        if mode == "df" and len(set(Ls)) > 1:
            raise ValueError("mode='df' needs one model per horizon (a mapping or a sequence aligned with Ls)")
        models = {L: model_or_models for L in Ls}

    if isinstance(test_windows, (tuple, list)):
        X, Y = check_windows(*test_windows)
        if max(Ls) > Y.shape[1]:
            raise ValueError(f"Ls must be <= the targets' length {Y.shape[1]}, got {max(Ls)}")
        X, Y = X[::window_stride], Y[::window_stride]
        T = X.shape[1]
        valid = {L: np.ones(X.shape[0], bool) for L in Ls}
    else:
        first = next(iter(models.values()))
        T = getattr(first, "in_len", None)
        if T is None:
            raise ValueError("a series test_windows needs models with in_len; pass (X, Y) windows otherwise")
        y = as_series(test_windows, "test_windows", min_len=T + max(Ls))
        X, Y = make_windows(jnp.concatenate([y, jnp.zeros((max(Ls) - min(Ls), y.shape[1]), y.dtype)]), T,
                            max(Ls), window_stride)
        starts = np.arange(X.shape[0]) * window_stride
        valid = {L: starts <= y.shape[0] - T - L for L in Ls}

    table: dict[int, dict[str, float]] = {}
    cache: dict[int, Array] = {}
    for L in Ls:
        m = models[L]
        if mode == "df":
            pred = _batched(lambda x, m=m, L=L: df_forecast(m, x, L), X, batch_size)
        else:
            Lmax = max(l_ for l_ in Ls if models[l_] is m)
            if id(m) not in cache:
                cache[id(m)] = _batched(lambda x, m=m, Lm=Lmax: ef_forecast(m, x, Lm, stride=stride), X, batch_size)
            pred = cache[id(m)]
        v = valid[L]
        p, t = pred[v, :L], Y[v, :L]
        table[L] = {"mse": float(mse(p, t)), "mae": float(mae(p, t)), "windows": int(v.sum())}
    return table


def horizon_table(tables: Mapping[str, Mapping[int, Mapping[str, float]]]) -> str:
    """Plain-text MSE/MAE table of several :func:`evaluate_horizons` results, one row per horizon.

    Args:
      tables: mapping from a column name (e.g. ``"EF"``, ``"DF"``) to an :func:`evaluate_horizons` result; a
        horizon missing from a result leaves its cells blank.

    Returns:
      The table as one string (a header line, then one line per horizon in increasing order).
    """
    names = list(tables)
    Ls = sorted({L for t in tables.values() for L in t})
    head = f"{'L':>6}" + "".join(f" {n + ' MSE':>14} {n + ' MAE':>14}" for n in names)
    rows = [head]
    for L in Ls:
        rows.append(f"{L:>6}" + "".join(f" {tables[n][L]['mse']:14.4f} {tables[n][L]['mae']:14.4f}"
                                         if L in tables[n] else f" {'':>14} {'':>14}" for n in names))
    return "\n".join(rows)
