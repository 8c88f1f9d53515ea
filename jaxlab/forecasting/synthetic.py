r"""Synthetic series for Evolutionary Forecasting: AR(1) and its oracle block predictor, a sinusoid, an ETT-like series.

Paper: J. Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
arXiv:2601.23114 (2026); these series are the checks **[chosen]** for its claims.

- AR(1): ``y_{t+1} = φ y_t + e_t``, ``e_t ~ N(0, 1)``, stationary start ``y_0 ~ N(0, 1/(1 − φ²))``. Its
  conditional mean ``k`` steps ahead is ``φ^k y_t`` and the ``k``-step MSE is ``(1 − φ^{2k}) / (1 − φ²)``; the
  oracle block predictor ``f(W) = [φ, …, φ^H]·W[−1]`` rolled out by EF returns it for every ``H``.
- A sinusoid ``y_t = sin(2πt/24) + 0.5 sin(2πt/168 + 0.3)``: an exact linear recurrence of order 4.
- :func:`ett_like`: an hourly series with ETTh1's length (17420 rows) and 7 channels (see its docstring).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int, error_if, is_concrete
from jaxlab.forecasting.papers import EF, ETT

__all__ = ["ar1_oracle", "ar1_series", "ett_like", "sinusoid_series"]


@cites(EF)
def ar1_series(key: Any, n: int, phi: float, *, C: int = 1) -> Float[Array, "n C"]:
    """Stationary AR(1): ``y_0 ~ N(0, 1/(1−φ²))``, ``y_{t+1} = φ y_t + e_t``, ``e_t ~ N(0, 1)``.

    Args:
      key: PRNG key.
      n: length.
      phi: the coefficient, ``|φ| < 1``.
      C: number of independent channels.

    Returns:
      (n, C) array in the default float dtype.

    Raises:
      ValueError: ``|phi| >= 1`` (under ``jit`` at run time).
    """
    n = check_int(n, "n", min_value=1)
    C = check_int(C, "C", min_value=1)
    if is_concrete(phi) and not abs(float(phi)) < 1:
        raise ValueError(f"phi must satisfy |phi| < 1 (stationary AR(1)), got {phi}")
    if not is_concrete(phi):
        phi = error_if(phi, ~(jnp.abs(phi) < 1), "phi must satisfy |phi| < 1 (stationary AR(1))")
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
    """``y_t = sin(2πt/24) + 0.5 sin(2πt/168 + 0.3)``, t = 0..n−1: an exact linear recurrence of order 4.

    Args:
      n: length.

    Returns:
      (n, 1) array in the default float dtype.
    """
    n = check_int(n, "n", min_value=1)
    t = jnp.arange(n, dtype=jnp.result_type(float))
    return (jnp.sin(2 * jnp.pi * t / 24) + 0.5 * jnp.sin(2 * jnp.pi * t / 168 + 0.3))[:, None]


@cites(EF)
def ar1_oracle(phi: float, H: int) -> Callable[[Array], Array]:
    """The oracle block predictor of an AR(1): ``f(W) = [φ, φ², …, φ^H]·W[−1]`` (the conditional mean).

    Args:
      phi: the AR(1) coefficient (a Python float).
      H: the block length.

    Returns:
      ``f(W (T, C)) -> (H, C)``.
    """
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
    stationary std 0.3). ETTh1 has n = 17420 hourly rows and C = 7 channels; its splits are
    :func:`jaxlab.data.ett.ett_splits`.

    Args:
      key: PRNG key.
      n: number of rows.
      C: number of channels.

    Returns:
      (n, C) array in the default float dtype.
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
