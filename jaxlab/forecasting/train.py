r"""Training forecasters for Evolutionary Forecasting: minibatch AdamW, roll-out fine-tuning, closed-form Linear.

Paper: J. Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
arXiv:2601.23114 (2026); DLinear's linear model: A. Zeng, M. Chen, L. Zhang, Q. Xu, "Are Transformers Effective
for Time Series Forecasting?", arXiv:2205.13504.

Training minimises ``MSE(f_θ(X)[:H], Y[:H])`` over random minibatches of windows by optax AdamW (learning rate
1e-3, weight decay 1e-4, global-norm clipping 1.0), driven by :func:`jaxlab.core.run` (``lax.scan``).
:func:`rollout_finetune` (**[our addition]**, off by default) trains through ``k`` evolution steps instead.
:func:`fit_linear` solves ``min ‖W x + b − y‖² + ρ‖W‖²`` in closed form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import run
from jaxlab.core.train import trainer
from jaxlab.core.validation import check_int, check_positive
from jaxlab.data.ett import as_series
from jaxlab.forecasting.evolutionary import check_windows, forecast_loss, rollout_loss
from jaxlab.forecasting.models import Linear
from jaxlab.forecasting.papers import DLINEAR, EF

__all__ = ["fit_linear", "rollout_finetune", "train_forecaster"]


def _sampler(train_windows: Any, T: int, need: int):
    """``sample(key, batch) -> (X, Y)`` from (X, Y) arrays or, lazily, from a (N, C) series."""
    if isinstance(train_windows, (tuple, list)):
        if len(train_windows) != 2:
            raise ValueError(f"train_windows must be a (X, Y) pair or a (N, C) series, got {len(train_windows)} "
                             "items")
        X, Y = check_windows(*train_windows)
        if X.shape[1] != T or Y.shape[1] < need:
            raise ValueError(f"train_windows must have X of length T={T} and Y of length >= {need}, got "
                             f"{X.shape} and {Y.shape}")

        def sample(key, batch):
            i = jax.random.randint(key, (batch,), 0, X.shape[0])
            return X[i], Y[i, :need]

        return sample
    y = as_series(train_windows, "train_windows", min_len=T + need)

    def sample(key, batch):
        starts = jax.random.randint(key, (batch,), 0, y.shape[0] - T - need + 1)
        idx = starts[:, None] + jnp.arange(T + need)[None, :]
        w = y[idx]
        return w[:, :T], w[:, T:]

    return sample


@cites(EF)
@renamed_kwargs(steps="num_steps", batch="batch_size", lr="learning_rate")
def train_forecaster(key: Any, model: eqx.Module, train_windows: Any, *, num_steps: int = 2000,
                     batch_size: int = 64, learning_rate: float = 1e-3, weight_decay: float = 1e-4,
                     clip: float = 1.0, loss: Callable[[eqx.Module, Array, Array], Array] | None = None,
                     target_len: int | None = None, with_losses: bool = False):
    """Train ``model`` by AdamW with global-norm clipping on random minibatches, ``num_steps`` steps under jit.

    Each step draws ``batch_size`` windows (uniformly, with replacement) and takes one step of
    ``optax.chain(clip_by_global_norm(clip), adamw(learning_rate, weight_decay))`` on ``loss(model, X, Y)``
    through the trainer of :mod:`jaxlab.core.train`, driven by :func:`jaxlab.core.run`. The default loss is
    ``MSE(f(X)[:H], Y[:H])``, the training objective of both DF (``H = L``) and EF (short ``H``) in Ma et al., "To
    See Far, Look Close: Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114; the optimiser
    settings (AdamW 1e-3, weight decay 1e-4, clipping 1.0) are **[chosen]** (only the paper's abstract and
    introduction were readable).

    Args:
      key: PRNG key (one split per step draws the minibatch).
      model: a jaxlab forecasting model (with ``in_len`` and ``out_len``).
      train_windows: an ``(X, Y)`` pair (see :func:`jaxlab.data.ett.make_windows`) or a (N, C) series, from
        which windows are cut on the fly (no (n, T + H, C) copy).
      num_steps: number of optimiser steps (old name ``steps``).
      batch_size: windows per minibatch (old name ``batch``).
      learning_rate: AdamW learning rate (old name ``lr``).
      weight_decay: AdamW weight decay.
      clip: global-norm clipping threshold.
      loss: ``loss(model, X, Y)``, default :func:`~jaxlab.forecasting.evolutionary.forecast_loss`.
      target_len: the target length fed to ``loss`` (default the model's horizon).
      with_losses: also return the per-step minibatch losses.

    Returns:
      The trained model, and the (num_steps,) minibatch losses when ``with_losses``.

    Raises:
      ValueError: non-positive ``num_steps``, ``batch_size`` or ``learning_rate``, a model without
        ``in_len``/``out_len``, or windows that do not fit the model.

    Example:
      >>> import jax
      >>> from jaxlab.forecasting import Linear, sinusoid_series, train_forecaster
      >>> model = Linear(48, 24, key=jax.random.key(0))
      >>> model, losses = train_forecaster(jax.random.key(1), model, sinusoid_series(300), num_steps=20,
      ...                                  batch_size=8, with_losses=True)
      >>> losses.shape
      (20,)
    """
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    learning_rate = check_positive(learning_rate, "learning_rate")
    T = getattr(model, "in_len", None)
    H = getattr(model, "out_len", None)
    if T is None or H is None:
        raise ValueError("model must have in_len and out_len (a jaxlab forecasting model)")
    need = H if target_len is None else check_int(target_len, "target_len", min_value=1)
    sample = _sampler(train_windows, T, need)
    loss = forecast_loss if loss is None else loss
    optimizer = optax.chain(optax.clip_by_global_norm(clip), optax.adamw(learning_rate, weight_decay=weight_decay))
    params, static = eqx.partition(model, eqx.is_array)

    def minibatch_loss(p, k, _batch):
        Xb, Yb = sample(k, batch_size)
        return loss(eqx.combine(p, static), Xb, Yb)

    algo = trainer(minibatch_loss, optimizer)

    @jax.jit
    def go(params, key):
        final, trace = run(algo.step, algo.init(params), key, num_steps)
        return final.params, trace.infos.loss

    params, losses = go(params, key)
    trained = eqx.combine(params, static)
    return (trained, losses) if with_losses else trained


@cites(EF)
def rollout_finetune(key: Any, model: eqx.Module, train_windows: Any, *, k_steps: int, stride: int | None = None,
                     **train_kwargs: Any):
    """Fine-tune through ``k_steps`` evolution steps **[jaxlab's addition]**, not part of the plain EF scheme.

    Minimises :func:`~jaxlab.forecasting.rollout_loss` (``MSE(EF(X; k s), Y)``, stride ``s``) on targets of length
    ``k_steps · s`` with the loop of :func:`train_forecaster`, so that the model learns from its own fed-back outputs
    (an extension of Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
    arXiv:2601.23114).

    Args:
      key: PRNG key (minibatches).
      model: a jaxlab forecasting model (with ``in_len`` and ``out_len``).
      train_windows: an ``(X, Y)`` pair with targets of length ``≥ k_steps · s``, or a ``(N, C)`` series.
      k_steps: evolution steps ``k`` per roll-out (int ``≥ 1``).
      stride: the evolution stride ``s`` (int in ``[1, H]``; default the model's ``H``).
      **train_kwargs: the other keyword arguments of :func:`train_forecaster` (``num_steps``, ``batch_size``,
        ``learning_rate``, ``weight_decay``, ``clip``, ``with_losses``).

    Returns:
      As :func:`train_forecaster`: the fine-tuned model, and the per-step losses when ``with_losses``.

    Raises:
      TypeError: ``k_steps`` or ``stride`` not an int; ``loss`` or ``target_len`` passed in ``train_kwargs``.
      ValueError: ``k_steps < 1``; ``stride`` not in ``[1, H]``; otherwise as :func:`train_forecaster`.
      AttributeError: ``model`` has no ``out_len``.

    Example:
      >>> import jax
      >>> from jaxlab.forecasting import Linear, rollout_finetune, sinusoid_series
      >>> model = Linear(48, 24, key=jax.random.key(0))
      >>> model = rollout_finetune(jax.random.key(1), model, sinusoid_series(300), k_steps=2, num_steps=10,
      ...                          batch_size=8)
    """
    k_steps = check_int(k_steps, "k_steps", min_value=1)
    s = model.out_len if stride is None else check_int(stride, "stride", min_value=1, max_value=model.out_len)
    return train_forecaster(key, model, train_windows, target_len=k_steps * s,
                            loss=lambda m, X, Y: rollout_loss(m, X, Y, stride=s), **train_kwargs)


@cites(DLINEAR)
def fit_linear(X: Float[Array, "n T C"], Y: Float[Array, "n H C"], *, ridge: float = 0.0, bias: bool = True
               ) -> Linear:
    """Least-squares :class:`~jaxlab.forecasting.Linear` (no RevIN) on channel-independent windows, in closed form.

    ``min_{W,b} Σ_{i,c} ‖W x_{i,c} + b − y_{i,c}‖² + ridge ‖W‖_F²`` over every window ``i`` and channel ``c`` (the bias
    is not penalised), solved by NumPy's ``lstsq`` in float64 (the minimum-norm solution); not jit-able. The linear
    model is that of Zeng et al., arXiv:2205.13504, fitted here without gradient descent.

    Args:
      X: ``(n, T, C)`` finite float array of windows.
      Y: ``(n, H, C)`` finite float array of targets.
      ridge: the ridge penalty ``≥ 0``.
      bias: fit the bias ``b`` (else ``b = 0``).

    Returns:
      A :class:`~jaxlab.forecasting.Linear` ``T → H`` with ``revin=False``, weights in ``X``'s dtype.

    Raises:
      TypeError: ``X`` or ``Y`` not floating.
      ValueError: ``X`` or ``Y`` not 3-d, with different numbers of windows or channels, or non-finite;
        ``ridge`` negative or not finite.

    Example:
      >>> from jaxlab.forecasting import ef_forecast, fit_linear, make_windows, sinusoid_series
      >>> X, Y = make_windows(sinusoid_series(400), 48, 24)
      >>> model = fit_linear(X, Y)
      >>> ef_forecast(model, X[0], 96).shape   # 4 evolution steps of H = 24
      (96, 1)
    """
    X, Y = check_windows(X, Y)
    ridge = check_positive(ridge, "ridge", strict=False)
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
