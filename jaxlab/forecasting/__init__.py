r"""Evolutionary Forecasting (EF) for long-term time series (area ``forecasting``).

Paper: J. Ma, S. Mu, R. Tang, H. Ma, Q. Huang, Z. Zhou, P. Wang, B. Wang, Y. Wang, "To See Far, Look Close:
Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114 (2026). A model of short horizon ``H`` is
rolled out to a long horizon ``L`` by feeding its own forecasts back into the window
(:func:`ef_forecast`); direct forecasting (:func:`df_forecast`) trains one model per ``L``.

Modules: :mod:`~jaxlab.forecasting.evolutionary` (roll-outs, losses, metrics), :mod:`~jaxlab.forecasting.models`
(Linear, DLinear, MLP, tiny PatchTST, tiny iTransformer, RevIN), :mod:`~jaxlab.forecasting.train`,
:mod:`~jaxlab.forecasting.evaluate`, :mod:`~jaxlab.forecasting.diagnostics`, :mod:`~jaxlab.forecasting.synthetic`.
The ETT loader, splits, scaling and windowing live in :mod:`jaxlab.data.ett` and are re-exported here.

Example:
  >>> import jax
  >>> from jaxlab import forecasting as F
  >>> tr, va, te = F.ett_splits(F.ett_like(jax.random.key(0)), 336)
  >>> (tr, va, te), _ = F.standard_scale(tr, va, te)
  >>> model = F.train_forecaster(jax.random.key(1), F.DLinear(336, 96, key=jax.random.key(2)), tr, num_steps=200)
  >>> table = F.evaluate_horizons(model, te, [96, 192, 336, 720], "ef")
"""

from jaxlab.data.ett import ETT_HOURLY_BORDERS, ett_splits, load_ett_csv, make_windows, standard_scale
from jaxlab.forecasting.diagnostics import gradient_conflict
from jaxlab.forecasting.evaluate import evaluate_horizons, horizon_table
from jaxlab.forecasting.evolutionary import df_forecast, ef_forecast, forecast_loss, mae, mse, rollout_loss
from jaxlab.forecasting.models import (
    DLinear,
    Linear,
    MLPForecaster,
    RevINStats,
    TinyITransformer,
    TinyPatchTST,
    moving_average,
    revin_denorm,
    revin_norm,
)
from jaxlab.forecasting.synthetic import ar1_oracle, ar1_series, ett_like, sinusoid_series
from jaxlab.forecasting.train import fit_linear, rollout_finetune, train_forecaster

__all__ = [
    "ETT_HOURLY_BORDERS",
    "DLinear",
    "Linear",
    "MLPForecaster",
    "RevINStats",
    "TinyITransformer",
    "TinyPatchTST",
    "ar1_oracle",
    "ar1_series",
    "df_forecast",
    "ef_forecast",
    "ett_like",
    "ett_splits",
    "evaluate_horizons",
    "fit_linear",
    "forecast_loss",
    "gradient_conflict",
    "horizon_table",
    "load_ett_csv",
    "mae",
    "make_windows",
    "moving_average",
    "mse",
    "revin_denorm",
    "revin_norm",
    "rollout_finetune",
    "rollout_loss",
    "sinusoid_series",
    "standard_scale",
    "train_forecaster",
]
