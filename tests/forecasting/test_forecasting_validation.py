"""Value checks of the forecasting area and of its data code hold eagerly and under jit (issue 24, item 4)."""

import jax
import jax.numpy as jnp
import pytest

from jaxlab import forecasting as F

T, H, C = 16, 4, 2


def _both(fn, arg, match):
    with pytest.raises(ValueError, match=match):
        fn(arg)
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(arg))


def test_non_finite_series_and_windows():
    y = jnp.ones((40, C)).at[3, 1].set(jnp.nan)
    _both(lambda s: F.make_windows(s, T, H)[0], y, "series")
    model = F.Linear(T, H, key=jax.random.key(0))
    _both(lambda x: F.ef_forecast(model, x, 8), jnp.ones((T, C)).at[0, 0].set(jnp.inf), "x_hist must be finite")
    X = jnp.ones((3, T, C)).at[1, 2, 0].set(jnp.nan)
    _both(lambda x: F.forecast_loss(model, x, jnp.ones((3, H, C))), X, "X must be finite")


def test_constant_channel_in_standard_scale():
    train = jnp.stack([jnp.arange(10.0), jnp.ones(10)], axis=1)
    _both(lambda t: F.standard_scale(t)[0][0], train, "train must have non-constant channels")


def test_ar1_phi_out_of_range():
    with pytest.raises(ValueError, match=r"phi must satisfy \|phi\| < 1"):
        F.ar1_series(jax.random.key(0), 10, 1.0)
    with pytest.raises(Exception, match=r"phi must satisfy \|phi\| < 1"):
        jax.block_until_ready(jax.jit(lambda p: F.ar1_series(jax.random.key(0), 10, p))(1.5))
