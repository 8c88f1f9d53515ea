r"""Evolutionary Forecasting (EF) and Direct Forecasting (DF): roll-outs, losses and metrics.

Paper: J. Ma, S. Mu, R. Tang, H. Ma, Q. Huang, Z. Zhou, P. Wang, B. Wang, Y. Wang, "To See Far, Look Close:
Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114 (2026). Only the abstract and the
introduction were readable; the method below is reconstructed from them.

Notation: input length ``T``, model output horizon ``H``, evaluation horizon ``L``, ``C`` channels. Windows
``X = y[t−T+1 : t] ∈ R^{T×C}``, targets ``Y = y[t+1 : t+L]``.

- Training (DF and EF): minimise ``MSE(f_θ(X), y[t+1 : t+H])`` over the windows of the train split; DF uses
  ``H = L`` (one model per ``L``), EF a short ``H``.
- EF roll-out with evolution stride ``s ≤ H`` (default ``s = H``; **[a stride s < H is our
  generalisation]**)::

      W_0 = X,  K = ⌈L / s⌉;   Ŷ_k = f_θ(W_{k−1})[:s],   W_k = concat(W_{k−1}, Ŷ_k)[−T:];   Ŷ = concat(Ŷ_k)[:L]

  With ``H = s = L``, ``K = 1`` and EF is DF: :func:`df_forecast` is :func:`ef_forecast` with one step.
- Roll-out loss (for fine-tuning through ``k`` evolution steps, **[our addition]**): ``MSE(EF(X; L), Y)``.
- Metrics: MSE and MAE averaged over windows, steps and channels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_finite, check_int
from jaxlab.forecasting.papers import EF

__all__ = [
    "Model",
    "check_windows",
    "df_forecast",
    "ef_forecast",
    "forecast_loss",
    "mae",
    "mse",
    "output_shape",
    "rollout_loss",
]

Model = Callable[[Array], Array]


def output_shape(model: Model, x: Array) -> tuple[int, ...]:
    """The (H, C) shape of ``model(x)`` for one window ``x`` (T, C), found by :func:`jax.eval_shape`.

    Raises:
      ValueError: the model does not map a (T, C) window to an (H, C) block with the same channels.
    """
    out = jax.eval_shape(model, x)
    if len(out.shape) != 2 or out.shape[1] != x.shape[1]:
        raise ValueError(f"model must map x (T, C) = {x.shape} to an (H, C) block, got output shape {out.shape}")
    return out.shape


def _check_hist(model: Model, x_hist: Any) -> Array:
    x = as_array(x_hist, "x_hist", ndim=2)
    x = check_finite(x, "x_hist")
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
    """Evolutionary forecast of ``L`` steps by rolling out a short-horizon model on its own outputs.

    With evolution stride ``s`` (default ``H``): ``W_0 = X``, ``K = ⌈L/s⌉``; ``Ŷ_k = f(W_{k−1})[:s]``,
    ``W_k = concat(W_{k−1}, Ŷ_k)[−T:]``; ``Ŷ = concat(Ŷ_k)[:L]``, in one ``lax.scan`` (static ``L``, ``s``). With
    ``K = 1`` (``L ≤ s``) it is exactly one model call, so ``ef_forecast(f, x, H) == df_forecast(f, x, H)`` to the bit;
    ``vmap`` over ``x_hist`` for many histories. Paper: Ma et al., "To See Far, Look Close: Evolutionary Forecasting for
    Long-term Time Series", arXiv:2601.23114. Only its abstract and introduction were readable: the roll-out is
    reconstructed from them, and a stride ``s < H`` is jaxlab's generalisation.

    Args:
      model: any callable ``(T, C) -> (H, C)`` (an equinox model or a plain function).
      x_hist: ``(T, C)`` finite float array, the history window (``T = model.in_len`` and ``C = model.channels``
        when the model has them).
      L: the forecast length (static int ``≥ 1``).
      stride: the evolution stride ``s`` (static int in ``[1, H]``; default ``H``).

    Returns:
      ``(L, C)`` float array.

    Raises:
      TypeError: ``x_hist`` not floating; ``L`` or ``stride`` not an int.
      ValueError: ``x_hist`` not 2-d, not finite (under ``jit``: at run time), or not of the model's ``T``/``C``;
        ``L < 1``; ``stride`` not in ``[1, H]``; ``model`` does not map ``(T, C)`` to ``(H, C)``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.forecasting import ar1_oracle, ef_forecast
      >>> f = ar1_oracle(0.9, 4)                     # block predictor of horizon H = 4
      >>> pred = ef_forecast(f, jnp.ones((16, 1)), 10)   # K = 3 evolution steps
      >>> pred[:, 0]                                 # the conditional mean 0.9^k, k = 1..10
    """
    x = _check_hist(model, x_hist)
    L = check_int(L, "L", min_value=1)
    H = output_shape(model, x)[0]
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
    """Direct forecast: one call of a model whose horizon ``H`` equals ``L`` (one model per ``L``).

    The baseline of Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
    arXiv:2601.23114; it equals :func:`ef_forecast` with ``K = 1``.

    Args:
      model: any callable ``(T, C) -> (H, C)`` (an equinox model or a plain function).
      x_hist: ``(T, C)`` finite float array, the history window.
      L: the forecast length (static int ``≥ 1``), which must equal the model's ``H``.

    Returns:
      ``(L, C)`` float array, ``model(x_hist)``.

    Raises:
      TypeError: ``x_hist`` not floating; ``L`` not an int.
      ValueError: ``H ≠ L``; otherwise as :func:`ef_forecast`.
    """
    x = _check_hist(model, x_hist)
    L = check_int(L, "L", min_value=1)
    H = output_shape(model, x)[0]
    if H != L:
        raise ValueError(f"df_forecast needs a model with horizon H == L={L}, got H={H} (use ef_forecast)")
    return ef_forecast(model, x, L)


@cites(EF)
def mse(pred: Array, true: Array) -> Array:
    """Mean squared error over all entries, ``mean (pred − true)²``.

    Args:
      pred: float array of predictions.
      true: float array of targets, of the shape of ``pred``.

    Returns:
      0-d float array.

    Raises:
      TypeError: an input not floating.
      ValueError: the shapes differ.
    """
    pred, true = as_array(pred, "pred"), as_array(true, "true")
    if pred.shape != true.shape:
        raise ValueError(f"pred and true must have the same shape, got {pred.shape} and {true.shape}")
    return jnp.mean((pred - true) ** 2)


@cites(EF)
def mae(pred: Array, true: Array) -> Array:
    """Mean absolute error over all entries, ``mean |pred − true|``.

    Args:
      pred: float array of predictions.
      true: float array of targets, of the shape of ``pred``.

    Returns:
      0-d float array.

    Raises:
      TypeError: an input not floating.
      ValueError: the shapes differ.
    """
    pred, true = as_array(pred, "pred"), as_array(true, "true")
    if pred.shape != true.shape:
        raise ValueError(f"pred and true must have the same shape, got {pred.shape} and {true.shape}")
    return jnp.mean(jnp.abs(pred - true))


def check_windows(X: Any, Y: Any) -> tuple[Array, Array]:
    """Validate a batch of windows ``X`` (n, T, C) and targets ``Y`` (n, L, C): same ``n`` and ``C``, finite.

    Returns:
      ``(X, Y)`` as JAX arrays.

    Raises:
      ValueError: wrong ndim, mismatched windows or channels, or non-finite entries.
    """
    X = as_array(X, "X", ndim=3)
    Y = as_array(Y, "Y", ndim=3)
    if Y.shape[0] != X.shape[0] or Y.shape[2] != X.shape[2]:
        raise ValueError(f"Y must have X's {X.shape[0]} windows and {X.shape[2]} channels, got shape {Y.shape}")
    X = check_finite(X, "X")
    Y = check_finite(Y, "Y")
    return X, Y


@cites(EF)
def forecast_loss(model: Model, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], *, H: int | None = None
                  ) -> Array:
    """Training loss ``MSE(f(X)[:, :H], Y[:, :H])`` over a batch of windows.

    ``H`` defaults to the model's horizon; a model of longer horizon is truncated (the DF and EF training objective of
    Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114).

    Args:
      model: any callable ``(T, C) -> (H, C)`` (an equinox model or a plain function).
      X: ``(n, T, C)`` float array of windows.
      Y: ``(n, L, C)`` float array of targets.
      H: the supervised horizon (int in ``[1, min(model H, L)]``; default the model's ``H``).

    Returns:
      0-d float array.

    Raises:
      TypeError: ``X`` or ``Y`` not floating.
      ValueError: ``X`` or ``Y`` not 3-d, with different numbers of windows or channels, or non-finite (under
        ``jit``: at run time); ``model`` does not map ``(T, C)`` to ``(H, C)``;
        ``H`` above the model's horizon or ``Y``'s length, or ``< 1``.
    """
    X, Y = check_windows(X, Y)
    Hm = output_shape(model, X[0])[0]
    H = Hm if H is None else check_int(H, "H", min_value=1)
    if H > Hm or H > Y.shape[1]:
        raise ValueError(f"H must be <= the model's horizon {Hm} and Y's length {Y.shape[1]}, got {H}")
    return jnp.mean((jax.vmap(model)(X)[:, :H] - Y[:, :H]) ** 2)


@cites(EF)
def rollout_loss(model: Model, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], *, stride: int | None = None
                 ) -> Array:
    """Roll-out loss ``MSE(EF(X; L), Y)`` through ``L / s`` evolution steps **[jaxlab's addition]**.

    ``L = Y.shape[1]`` must be a multiple of the stride ``s`` so that every step's output is supervised; gradients flow
    through the whole roll-out (:func:`ef_forecast`).

    Args:
      model: any callable ``(T, C) -> (H, C)`` (an equinox model or a plain function).
      X: ``(n, T, C)`` float array of windows.
      Y: ``(n, L, C)`` float array of targets.
      stride: the evolution stride ``s`` (int in ``[1, H]``; default the model's ``H``).

    Returns:
      0-d float array.

    Raises:
      TypeError: ``X`` or ``Y`` not floating.
      ValueError: ``X`` or ``Y`` not 3-d, with different numbers of windows or channels, or non-finite (under
        ``jit``: at run time); ``model`` does not map ``(T, C)`` to ``(H, C)``;
        ``L`` not a multiple of ``stride``; ``stride`` not in ``[1, H]``.
    """
    X, Y = check_windows(X, Y)
    H = output_shape(model, X[0])[0]
    s = H if stride is None else check_int(stride, "stride", min_value=1)
    L = Y.shape[1]
    if L % s:
        raise ValueError(f"the horizon L = Y.shape[1] = {L} must be a multiple of stride={s} for a roll-out loss")
    pred = jax.vmap(lambda x: ef_forecast(model, x, L, stride=s))(X)
    return jnp.mean((pred - Y) ** 2)
