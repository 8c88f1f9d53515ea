r"""Evolutionary Forecasting (EF) and Direct Forecasting (DF) for long-term time series.

Paper: J. Ma, S. Mu, R. Tang, H. Ma, Q. Huang, Z. Zhou, P. Wang, B. Wang, Y. Wang, "To See Far, Look Close:
Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114 (2026). Only the abstract and the
introduction were readable; the spec (``generative.md`` section (c)) reconstructs the method. Backbones in
:mod:`jaxlab.generative.forecasting_models` (Linear, DLinear, MLP, tiny PatchTST, tiny iTransformer, RevIN).

Notation: input length ``T``, model output horizon ``H``, evaluation horizon ``L``, ``C`` channels. Windows
``X = y[t−T+1 : t] ∈ R^{T×C}``, targets ``Y = y[t+1 : t+L]``.

- Training (DF and EF): minimise ``MSE(f_θ(X), y[t+1 : t+H])`` over the windows of the train split; DF uses
  ``H = L`` (one model per ``L``), EF a short ``H``.
- EF roll-out with evolution stride ``s ≤ H`` (default ``s = H``; **[a stride s < H is the spec's
  generalisation]**)::

      W_0 = X,  K = ⌈L / s⌉;   Ŷ_k = f_θ(W_{k−1})[:s],   W_k = concat(W_{k−1}, Ŷ_k)[−T:];   Ŷ = concat(Ŷ_k)[:L]

  With ``H = s = L``, ``K = 1`` and EF is DF: :func:`df_forecast` is :func:`ef_forecast` with one step.
- Gradient-conflict diagnostic: for a model with output ``L`` and a split point ``H``,
  ``ℓ_near = MSE(Ŷ[:H], Y[:H])``, ``ℓ_far = MSE(Ŷ[H:L], Y[H:L])``, report ``cos(∇_θ ℓ_near, ∇_θ ℓ_far)`` per
  minibatch (mean and fraction < 0) and per parameter group. Models whose output steps share no parameters
  (Linear, DLinear) give exactly 0.
- Oracle identity (AR(1), ``y_{t+1} = φ y_t + e``, ``var e = 1``): EF with ``f(W) = [φ, …, φ^H]·W[−1]`` returns
  the conditional mean for every ``H``; the ``k``-step MSE is ``(1 − φ^{2k}) / (1 − φ²)``.
- Metrics: MSE and MAE on the train-split standard-scaled series, averaged over windows, steps and channels.

Data **[chosen]** (spec (c).3): :func:`ett_like` is an hourly synthetic series with ETTh1's length and splits
(12/4/4 months: train 8640, validation 2880, test 2880 rows; validation and test windows start ``T`` rows
before their border). :func:`load_ett_csv` reads ETTh1 (shipped in :mod:`jaxlab.data`) or any CSV of that
layout through :func:`jaxlab.online.timeseries.load_csv`, which names the line and column of a missing or
non-numeric cell.

Training uses optax AdamW (lr 1e-3, weight decay 1e-4, global-norm clipping 1.0) driven by
:func:`jaxlab.core.loop.run` (``lax.scan``). :func:`rollout_finetune` (spec (c).9, off by default) trains
through ``k`` evolution steps instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_finite, check_int, check_positive, is_concrete
from jaxlab.generative._papers import DLINEAR, EF, ETT
from jaxlab.generative.forecasting_models import (
    DLinear,
    Linear,
    MLPForecaster,
    RevINStats,
    TinyITransformer,
    TinyPatchTST,
    revin_denorm,
    revin_norm,
)
from jaxlab.online.timeseries import ETT_HOURLY_BORDERS, load_csv

__all__ = [
    "ETT_HOURLY_BORDERS",
    "DLinear",
    "Linear",
    "MLPForecaster",
    "RevINStats",
    "TinyITransformer",
    "TinyPatchTST",
    "TrainState",
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
    "mse",
    "revin_denorm",
    "revin_norm",
    "rollout_finetune",
    "rollout_loss",
    "sinusoid_series",
    "standard_scale",
    "train_forecaster",
]

Model = Callable[[Array], Array]


# ----------------------------------------------------------------------------------------------- series & data


def _series(series: Any, name: str, *, min_len: int = 1, nan_policy: str = "raise") -> Array:
    """A (N, C) float series with N >= min_len; NaNs raise, or are linearly interpolated per channel."""
    if nan_policy not in ("raise", "interpolate"):
        raise ValueError(f"nan_policy must be 'raise' or 'interpolate', got {nan_policy!r}")
    x = as_array(series, name, ndim=2)
    if x.shape[0] < min_len:
        raise ValueError(f"{name} must have at least {min_len} rows, got shape {x.shape}")
    if not is_concrete(x):
        return x
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


@cites(EF)
def make_windows(series: Float[Array, "N C"], T: int, H: int, stride: int = 1, *,
                 nan_policy: str = "raise") -> tuple[Float[Array, "n T C"], Float[Array, "n H C"]]:
    """All windows ``X_i = y[i s : i s + T]`` and targets ``Y_i = y[i s + T : i s + T + H]`` (``s = stride``).

    ``n = ⌊(N − T − H) / s⌋ + 1``. NaNs raise unless ``nan_policy="interpolate"``.
    """
    T = check_int(T, "T", min_value=1)
    H = check_int(H, "H", min_value=1)
    stride = check_int(stride, "stride", min_value=1)
    y = _series(series, "series", min_len=T + H, nan_policy=nan_policy)
    starts = np.arange(0, y.shape[0] - T - H + 1, stride)
    idx = starts[:, None] + np.arange(T + H)[None, :]
    w = y[idx]
    return w[:, :T], w[:, T:]


@cites(EF)
def ar1_series(key: Any, n: int, phi: float, *, C: int = 1) -> Float[Array, "n C"]:
    """Stationary AR(1): ``y_0 ~ N(0, 1/(1−φ²))``, ``y_{t+1} = φ y_t + e_t``, ``e_t ~ N(0, 1)``; shape (n, C)."""
    n = check_int(n, "n", min_value=1)
    C = check_int(C, "C", min_value=1)
    if is_concrete(phi) and not abs(float(phi)) < 1:
        raise ValueError(f"phi must satisfy |phi| < 1 (stationary AR(1)), got {phi}")
    k0, k1 = jax.random.split(key)
    dt = jnp.result_type(float)
    y0 = jax.random.normal(k0, (C,), dt) / jnp.sqrt(1 - phi**2)
    e = jax.random.normal(k1, (n - 1, C), dt)

    def step(y, e_t):
        y = phi * y + e_t
        return y, y

    _, ys = jax.lax.scan(step, y0, e)
    return jnp.concatenate([y0[None], ys])


@cites(EF)
def sinusoid_series(n: int) -> Float[Array, "n 1"]:
    """``y_t = sin(2πt/24) + 0.5 sin(2πt/168 + 0.3)``, t = 0..n−1: an exact linear recurrence of order 4."""
    n = check_int(n, "n", min_value=1)
    t = jnp.arange(n, dtype=jnp.result_type(float))
    return (jnp.sin(2 * jnp.pi * t / 24) + 0.5 * jnp.sin(2 * jnp.pi * t / 168 + 0.3))[:, None]


@cites(EF)
def ar1_oracle(phi: float, H: int) -> Callable[[Array], Array]:
    """The oracle block predictor of an AR(1): ``f(W) = [φ, φ², …, φ^H]·W[−1]`` (the conditional mean)."""
    H = check_int(H, "H", min_value=1)
    powers = float(phi) ** np.arange(1, H + 1)

    def f(w):
        return jnp.asarray(powers, w.dtype)[:, None] * w[-1][None, :]

    return f


@cites(EF, ETT)
def ett_like(key: Any, n: int = 17420, C: int = 7) -> Float[Array, "n C"]:
    """ETT-like hourly series **[chosen]**: per channel ``c``

        y_{t,c} = a_c sin(2πt/24 + p_c) + b_c sin(2πt/168 + q_c) + r_{t,c} + λ_c f_t + u_{t,c},

    daily and weekly sinusoids with random amplitudes (``a ~ U(0.5, 1.5)``, ``b ~ U(0.3, 1)``) and phases, a
    slow random-walk trend ``r`` (steps ``N(0, 0.02²)``), a latent factor ``f`` shared by all channels
    (AR(1), φ = 0.98, stationary std 1, loadings ``λ ~ U(0.3, 1)``) and AR(1) noise ``u`` (φ = 0.7,
    stationary std 0.3). ETTh1 has n = 17420 hourly rows and C = 7 channels.
    """
    return _ett_like(key, check_int(n, "n", min_value=1), check_int(C, "C", min_value=1))


@functools.partial(jax.jit, static_argnums=(1, 2))
def _ett_like(key, n: int, C: int):
    ks = jax.random.split(key, 8)
    dt = jnp.result_type(float)
    t = jnp.arange(n, dtype=dt)[:, None]
    a = jax.random.uniform(ks[0], (C,), dt, 0.5, 1.5)
    b = jax.random.uniform(ks[1], (C,), dt, 0.3, 1.0)
    p, q = (jax.random.uniform(k, (C,), dt, 0.0, 2 * jnp.pi) for k in ks[2:4])
    seasonal = a * jnp.sin(2 * jnp.pi * t / 24 + p) + b * jnp.sin(2 * jnp.pi * t / 168 + q)
    trend = jnp.cumsum(0.02 * jax.random.normal(ks[4], (n, C), dt), axis=0)
    factor = ar1_series(ks[5], n, 0.98) * jnp.sqrt(1 - 0.98**2)
    loading = jax.random.uniform(ks[6], (C,), dt, 0.3, 1.0)
    noise = ar1_series(ks[7], n, 0.7, C=C) * 0.3 * jnp.sqrt(1 - 0.7**2)
    return seasonal + trend + loading * factor + noise


@cites(ETT)
def ett_splits(series: Float[Array, "N C"], T: int, *, borders: Sequence[int] = ETT_HOURLY_BORDERS,
               nan_policy: str = "raise") -> tuple[Array, Array, Array]:
    """ETT's 12/4/4-month split: ``train = y[:b0]``, ``val = y[b0−T : b1]``, ``test = y[b1−T : b2]``.

    The validation and test parts start ``T`` rows before their border so that their first window's target
    is the split's first row (Informer / Time-Series-Library protocol). Default borders 8640, 11520, 14400.
    """
    T = check_int(T, "T", min_value=1)
    b0, b1, b2 = (check_int(b, "borders", min_value=1) for b in borders)
    if not (T <= b0 < b1 < b2):
        raise ValueError(f"borders must be increasing and start at >= T={T}, got {tuple(borders)}")
    y = _series(series, "series", min_len=b2, nan_policy=nan_policy)
    return y[:b0], y[b0 - T:b1], y[b1 - T:b2]


@cites(ETT)
def standard_scale(train: Float[Array, "N C"], *arrays: Array) -> tuple[tuple[Array, ...], tuple[Array, Array]]:
    """Standard-scale ``train`` and every array with the train split's per-channel mean and std.

    Returns ``((train_scaled, *arrays_scaled), (mean, std))``.
    """
    train = _series(train, "train", min_len=2)
    mean = jnp.mean(train, axis=0)
    std = jnp.std(train, axis=0)
    if is_concrete(std) and bool(jnp.any(std == 0)):
        raise ValueError("train must have non-constant channels, got a zero standard deviation")
    out = [(train - mean) / std]
    for i, a in enumerate(arrays):
        a = as_array(a, f"arrays[{i}]", ndim=(1, 2, 3))
        if a.shape[-1] != train.shape[1]:
            raise ValueError(f"arrays[{i}] must have {train.shape[1]} channels like train, got shape {a.shape}")
        out.append((a - mean) / std)
    return tuple(out), (mean, std)


@cites(ETT)
def load_ett_csv(path: str | Path | None = None, columns: Sequence[str] | None = None, *,
                 rows: int | None = None) -> np.ndarray:
    """ETTh1 (``path=None``: the copy shipped in :mod:`jaxlab.data`) or another ETT-layout CSV as (N, C) float64.

    ``columns`` defaults to every column but ``date`` (HUFL, HULL, MUFL, MULL, LUFL, LULL, OT for ETTh1). A
    missing or non-numeric cell raises ``ValueError`` naming the file, line and column.
    """
    if path is None:
        from jaxlab.data import data_path

        path = data_path("ETTh1.csv")
    return load_csv(path, columns, rows=rows).values


# ------------------------------------------------------------------------------------------------- forecasting


def _out_shape(model: Model, x: Array) -> tuple[int, ...]:
    out = jax.eval_shape(model, x)
    if len(out.shape) != 2 or out.shape[1] != x.shape[1]:
        raise ValueError(f"model must map x (T, C) = {x.shape} to an (H, C) block, got output shape {out.shape}")
    return out.shape


def _check_hist(model: Model, x_hist: Any) -> Array:
    x = as_array(x_hist, "x_hist", ndim=2)
    check_finite(x, "x_hist")
    for name in ("in_len", "channels"):
        want = getattr(model, name, None)
        got = x.shape[0] if name == "in_len" else x.shape[1]
        if want is not None and want != got:
            what = "rows (T)" if name == "in_len" else "channels"
            raise ValueError(f"x_hist must have the model's {want} {what}, got shape {x.shape}")
    return x


@cites(EF)
def ef_forecast(model: Model, x_hist: Float[Array, "T C"], L: int, *, stride: int | None = None
                ) -> Float[Array, "L C"]:
    """Evolutionary forecast of ``L`` steps: ``K = ⌈L/s⌉`` evolution steps, each keeps the first ``s`` outputs
    of ``model(W)`` and slides the window ``W`` (length ``T``) over them (``lax.scan``, static ``L``, ``s``).

    ``model`` is any callable ``(T, C) -> (H, C)`` (an equinox model or a plain function); ``stride`` defaults
    to ``H`` and must satisfy ``1 <= stride <= H``. With ``K = 1`` (``L <= s``) it is exactly one model call,
    so ``ef_forecast(f, x, H) == df_forecast(f, x, H)`` to the bit. vmap over ``x_hist`` for many histories.
    """
    x = _check_hist(model, x_hist)
    L = check_int(L, "L", min_value=1)
    H = _out_shape(model, x)[0]
    s = H if stride is None else check_int(stride, "stride", min_value=1)
    if s > H:
        raise ValueError(f"stride must be <= the model's horizon H={H}, got {s}")
    K = -(-L // s)
    if K == 1:
        return model(x)[:L]
    T = x.shape[0]

    def evolve(w, _):
        y = model(w)[:s]
        return jnp.concatenate([w, y])[-T:], y

    _, ys = jax.lax.scan(evolve, x, None, length=K)
    return ys.reshape(K * s, x.shape[1])[:L]


@cites(EF)
def df_forecast(model: Model, x_hist: Float[Array, "T C"], L: int) -> Float[Array, "L C"]:
    """Direct forecast: one call of a model whose horizon ``H`` equals ``L`` (``ValueError`` otherwise)."""
    x = _check_hist(model, x_hist)
    L = check_int(L, "L", min_value=1)
    H = _out_shape(model, x)[0]
    if H != L:
        raise ValueError(f"df_forecast needs a model with horizon H == L={L}, got H={H} (use ef_forecast)")
    return ef_forecast(model, x, L)


@cites(EF)
def mse(pred: Array, true: Array) -> Array:
    """Mean squared error over all entries (shapes must agree)."""
    pred, true = as_array(pred, "pred"), as_array(true, "true")
    if pred.shape != true.shape:
        raise ValueError(f"pred and true must have the same shape, got {pred.shape} and {true.shape}")
    return jnp.mean((pred - true) ** 2)


@cites(EF)
def mae(pred: Array, true: Array) -> Array:
    """Mean absolute error over all entries (shapes must agree)."""
    pred, true = as_array(pred, "pred"), as_array(true, "true")
    if pred.shape != true.shape:
        raise ValueError(f"pred and true must have the same shape, got {pred.shape} and {true.shape}")
    return jnp.mean(jnp.abs(pred - true))


def _check_windows(X: Any, Y: Any) -> tuple[Array, Array]:
    X = as_array(X, "X", ndim=3)
    Y = as_array(Y, "Y", ndim=3)
    if Y.shape[0] != X.shape[0] or Y.shape[2] != X.shape[2]:
        raise ValueError(f"Y must have X's {X.shape[0]} windows and {X.shape[2]} channels, got shape {Y.shape}")
    check_finite(X, "X")
    check_finite(Y, "Y")
    return X, Y


@cites(EF)
def forecast_loss(model: Model, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], *, H: int | None = None
                  ) -> Array:
    """``MSE(f_θ(X)[:, :H], Y[:, :H])`` (``H`` defaults to the model's horizon; a longer model is truncated)."""
    X, Y = _check_windows(X, Y)
    Hm = _out_shape(model, X[0])[0]
    H = Hm if H is None else check_int(H, "H", min_value=1)
    if H > Hm or H > Y.shape[1]:
        raise ValueError(f"H must be <= the model's horizon {Hm} and Y's length {Y.shape[1]}, got {H}")
    return jnp.mean((jax.vmap(model)(X)[:, :H] - Y[:, :H]) ** 2)


@cites(EF)
def rollout_loss(model: Model, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], *, stride: int | None = None
                 ) -> Array:
    """``MSE(EF(X; L), Y)`` through ``L / s`` evolution steps (spec (c).9); ``L = Y.shape[1]`` must be a multiple
    of the stride ``s`` (default the model's horizon) so that every step's output is supervised."""
    X, Y = _check_windows(X, Y)
    H = _out_shape(model, X[0])[0]
    s = H if stride is None else check_int(stride, "stride", min_value=1)
    L = Y.shape[1]
    if L % s:
        raise ValueError(f"the horizon L = Y.shape[1] = {L} must be a multiple of stride={s} for a roll-out loss")
    pred = jax.vmap(lambda x: ef_forecast(model, x, L, stride=s))(X)
    return jnp.mean((pred - Y) ** 2)


class TrainState(NamedTuple):
    """Trainable arrays of the model and the optax state."""

    params: Any
    opt_state: Any


def _sampler(train_windows: Any, T: int, need: int):
    """``sample(key, batch) -> (X, Y)`` from (X, Y) arrays or, lazily, from a (N, C) series."""
    if isinstance(train_windows, (tuple, list)):
        if len(train_windows) != 2:
            raise ValueError(f"train_windows must be a (X, Y) pair or a (N, C) series, got {len(train_windows)} "
                             "items")
        X, Y = _check_windows(*train_windows)
        if X.shape[1] != T or Y.shape[1] < need:
            raise ValueError(f"train_windows must have X of length T={T} and Y of length >= {need}, got "
                             f"{X.shape} and {Y.shape}")

        def sample(key, batch):
            i = jax.random.randint(key, (batch,), 0, X.shape[0])
            return X[i], Y[i, :need]

        return sample
    y = _series(train_windows, "train_windows", min_len=T + need)

    def sample(key, batch):
        starts = jax.random.randint(key, (batch,), 0, y.shape[0] - T - need + 1)
        idx = starts[:, None] + jnp.arange(T + need)[None, :]
        w = y[idx]
        return w[:, :T], w[:, T:]

    return sample


@cites(EF)
def train_forecaster(key: Any, model: eqx.Module, train_windows: Any, *, steps: int = 2000, batch: int = 64,
                     lr: float = 1e-3, weight_decay: float = 1e-4, clip: float = 1.0,
                     loss: Callable[[eqx.Module, Array, Array], Array] | None = None, target_len: int | None = None,
                     with_losses: bool = False):
    """Train ``model`` by AdamW (global-norm clipping ``clip``) on random minibatches, ``steps`` steps under jit.

    ``train_windows`` is an ``(X, Y)`` pair (see :func:`make_windows`) or a (N, C) series, from which windows
    are cut on the fly (no (n, T + H, C) copy). ``loss(model, X, Y)`` defaults to :func:`forecast_loss`;
    ``target_len`` (default the model's horizon) is the target length fed to it. Returns the trained model,
    and the per-step minibatch losses when ``with_losses``.
    """
    steps = check_int(steps, "steps", min_value=1)
    batch = check_int(batch, "batch", min_value=1)
    check_positive(lr, "lr")
    T = getattr(model, "in_len", None)
    H = getattr(model, "out_len", None)
    if T is None or H is None:
        raise ValueError("model must have in_len and out_len (a jaxlab forecasting model)")
    need = H if target_len is None else check_int(target_len, "target_len", min_value=1)
    sample = _sampler(train_windows, T, need)
    loss = forecast_loss if loss is None else loss
    optimizer = optax.chain(optax.clip_by_global_norm(clip), optax.adamw(lr, weight_decay=weight_decay))
    params, static = eqx.partition(model, eqx.is_array)

    def step(k, state: TrainState):
        Xb, Yb = sample(k, batch)
        value, grad = jax.value_and_grad(lambda p: loss(eqx.combine(p, static), Xb, Yb))(state.params)
        updates, opt_state = optimizer.update(grad, state.opt_state, state.params)
        return TrainState(optax.apply_updates(state.params, updates), opt_state), value

    @jax.jit
    def go(params, key):
        final, trace = run(step, TrainState(params, optimizer.init(params)), key, steps)
        return final.params, trace.infos

    params, losses = go(params, key)
    trained = eqx.combine(params, static)
    return (trained, losses) if with_losses else trained


@cites(EF)
def rollout_finetune(key: Any, model: eqx.Module, train_windows: Any, *, k_steps: int, stride: int | None = None,
                     **train_kwargs: Any):
    """Fine-tune through ``k_steps`` evolution steps (spec (c).9, not part of the plain EF scheme): minimise
    :func:`rollout_loss` with targets of length ``k_steps · stride``; other arguments as :func:`train_forecaster`."""
    k_steps = check_int(k_steps, "k_steps", min_value=1)
    s = model.out_len if stride is None else check_int(stride, "stride", min_value=1, max_value=model.out_len)
    return train_forecaster(key, model, train_windows, target_len=k_steps * s,
                            loss=lambda m, X, Y: rollout_loss(m, X, Y, stride=s), **train_kwargs)


@cites(DLINEAR)
def fit_linear(X: Float[Array, "n T C"], Y: Float[Array, "n H C"], *, ridge: float = 0.0, bias: bool = True
               ) -> Linear:
    """Least-squares :class:`Linear` (no RevIN) on channel-independent windows: ``min ‖W x + b − y‖² + ridge‖W‖²``
    over every window and channel, solved in closed form (NumPy ``lstsq`` in float64: the minimum-norm solution;
    not jit-able)."""
    X, Y = _check_windows(X, Y)
    check_positive(ridge, "ridge", strict=False)
    T, H = X.shape[1], Y.shape[1]
    # A closed form on concrete data: LAPACK's lstsq in float64 (XLA's SVD costs seconds of compilation).
    A = np.moveaxis(np.asarray(X, np.float64), 2, 1).reshape(-1, T)
    B = np.moveaxis(np.asarray(Y, np.float64), 2, 1).reshape(-1, H)
    if bias:
        A = np.concatenate([A, np.ones((A.shape[0], 1))], axis=1)
    if ridge > 0:
        reg = np.sqrt(ridge) * np.eye(T, A.shape[1])  # the bias is not penalised
        A, B = np.concatenate([A, reg]), np.concatenate([B, np.zeros((T, H))])
    sol = np.linalg.lstsq(A, B, rcond=None)[0]
    model = Linear(T, H, key=None, revin=False, dtype=X.dtype)
    b = sol[T] if bias else np.zeros(H)
    return eqx.tree_at(lambda m: (m.weight, m.bias), model, (jnp.asarray(sol[:T].T, X.dtype), jnp.asarray(b, X.dtype)))


# -------------------------------------------------------------------------------------------- diagnostics


@cites(EF)
def gradient_conflict(model: eqx.Module, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], H: int, *,
                      batch: int = 64) -> dict[str, Any]:
    """``cos(∇_θ ℓ_near, ∇_θ ℓ_far)`` per minibatch of ``batch`` windows (the last partial one is dropped).

    ``ℓ_near = MSE(Ŷ[:, :H], Y[:, :H])`` and ``ℓ_far = MSE(Ŷ[:, H:L], Y[:, H:L])`` for the model's output length
    ``L`` (``H < L <= Y.shape[1]``). Returns ``cos`` (per batch), ``cos_mean``, ``frac_negative`` and
    ``per_group`` (parameter path -> mean cosine; 0 where either gradient vanishes on that group).
    """
    X, Y = _check_windows(X, Y)
    H = check_int(H, "H", min_value=1)
    batch = check_int(batch, "batch", min_value=1, max_value=X.shape[0])
    L = _out_shape(model, X[0])[0]
    if not H < L <= Y.shape[1]:
        raise ValueError(f"H must be < the model's horizon L={L} (and Y must have >= L={L} steps), got H={H} "
                         f"and Y of length {Y.shape[1]}")
    nb = X.shape[0] // batch
    Xb = X[: nb * batch].reshape(nb, batch, *X.shape[1:])
    Yb = Y[: nb * batch, :L].reshape(nb, batch, L, Y.shape[2])
    params, static = eqx.partition(model, eqx.is_array)

    def grads(x, y):
        def part(p, lo, hi):
            pred = jax.vmap(eqx.combine(p, static))(x)
            return jnp.mean((pred[:, lo:hi] - y[:, lo:hi]) ** 2)

        return jax.grad(part)(params, 0, H), jax.grad(part)(params, H, L)

    def cos(a, b):
        dot = sum(jnp.vdot(u, v) for u, v in zip(a, b, strict=True))
        na = jnp.sqrt(sum(jnp.vdot(u, u) for u in a))
        nb_ = jnp.sqrt(sum(jnp.vdot(v, v) for v in b))
        return jnp.where((na > 0) & (nb_ > 0), dot / jnp.maximum(na * nb_, jnp.finfo(na.dtype).tiny), 0.0)

    @jax.jit
    def per_batch(xs, ys):
        def one(xy):
            gn, gf = grads(*xy)
            ln = jax.tree_util.tree_leaves_with_path(gn)
            lf = jax.tree_util.tree_leaves(gf)
            total = cos([v for _, v in ln], lf)
            return total, jnp.stack([cos([u], [v]) for (_, u), v in zip(ln, lf, strict=True)])

        return jax.lax.map(one, (xs, ys))

    total, groups = per_batch(Xb, Yb)
    names = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(params)]
    return {"cos": total, "cos_mean": jnp.mean(total), "frac_negative": jnp.mean(total < 0),
            "per_group": {n: jnp.mean(groups[:, i]) for i, n in enumerate(names)}}


def _batched(fn: Callable[[Array], Array], X: Array, batch_size: int) -> Array:
    return jax.jit(lambda xs: jax.lax.map(fn, xs, batch_size=min(batch_size, xs.shape[0])))(X)


@cites(EF)
def evaluate_horizons(model_or_models: Any, test_windows: Any, Ls: Sequence[int], mode: str = "ef", *,
                      stride: int | None = None, window_stride: int = 1, batch_size: int = 256
                      ) -> dict[int, dict[str, float]]:
    """MSE/MAE table ``{L: {"mse", "mae", "windows"}}`` over the horizons ``Ls``.

    ``test_windows``: a (N, C) test series (with its ``T`` lookback rows first; each ``L`` is scored on all its
    ``⌊(N − T − L)/window_stride⌋ + 1`` windows, the Time-Series-Library protocol) or an ``(X, Y)`` pair
    (every ``L <= Y.shape[1]`` on all windows). ``mode="ef"``: one model (or a mapping ``L -> model``) rolled
    out by :func:`ef_forecast` (one roll-out to ``max(Ls)`` per model); ``mode="df"``: a mapping or sequence of
    models aligned with ``Ls``, each of horizon ``L``, called once (:func:`df_forecast`).
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
        X, Y = _check_windows(*test_windows)
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
        y = _series(test_windows, "test_windows", min_len=T + max(Ls))
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
    """Plain-text MSE/MAE table of several :func:`evaluate_horizons` results (rows: horizons)."""
    names = list(tables)
    Ls = sorted({L for t in tables.values() for L in t})
    head = f"{'L':>6}" + "".join(f" {n + ' MSE':>14} {n + ' MAE':>14}" for n in names)
    rows = [head]
    for L in Ls:
        rows.append(f"{L:>6}" + "".join(f" {tables[n][L]['mse']:14.4f} {tables[n][L]['mae']:14.4f}"
                                         if L in tables[n] else f" {'':>14} {'':>14}" for n in names))
    return "\n".join(rows)

