r"""Forecasting backbones (equinox) and reversible instance normalisation, for :mod:`jaxlab.forecasting`.

Every model maps one history window to a block of future values, ``model(x (T, C)) -> (H, C)``: input length
``T = in_len``, output horizon ``H = out_len``, ``C`` channels (variates).

RevIN (T. Kim et al., "Reversible Instance Normalization for Accurate Time-Series Forecasting against
Distribution Shift", ICLR 2022), without the learnable affine: per window and channel

    μ_c = mean_t x_{t,c},   σ_c = sqrt(mean_t (x_{t,c} − μ_c)²),   x̃ = (x − μ) / (σ + 10⁻⁵),
    ŷ = f(x̃) · (σ + 10⁻⁵) + μ .

It is applied inside ``__call__`` (``revin=True``, the default), hence inside every evolution step of an EF
roll-out. It has no parameters, so it shares none across output steps.

Models **[sizes chosen for CPU]**:

- :class:`Linear`: ``ŷ_c = W x_c + b`` with ``W ∈ R^{H×T}`` shared across channels (channel independent).
- :class:`DLinear` (A. Zeng et al., arXiv:2205.13504): trend ``x^t = MA_25(x)`` (moving average with the ends
  replicated), seasonal ``x^s = x − x^t``, ``ŷ = W_s x^s + b_s + W_t x^t + b_t``.
- :class:`MLPForecaster`: ``T → 256 → 256 → H`` with GELU; the hidden layers are shared by all output steps.
- :class:`TinyPatchTST` (Y. Nie et al., arXiv:2211.14730): the series of a channel is padded at the end with
  ``stride`` copies of its last value and cut into ``N = (T − P)/S + 2`` patches (``P = 16, S = 8``); each
  patch is embedded linearly with a learned position embedding, passed through 2 pre-norm transformer
  encoder layers (``d_model = 32``, 4 heads, feed-forward 64, GELU) **[chosen: LayerNorm pre-norm instead of
  the paper's BatchNorm]**, flattened and mapped ``N·d → H``.
- :class:`TinyITransformer` (Y. Liu et al., arXiv:2310.06625): variates are tokens: each channel's whole window
  is embedded ``T → d`` (``d = 32``), 2 encoder layers attend across channels, a linear head maps ``d → H``.

Linear, DLinear and the MLP and PatchTST models are channel independent and accept any ``C`` unless
``channels`` is given; the iTransformer mixes channels (still any ``C``, as tokens).
"""

from __future__ import annotations

import abc
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int
from jaxlab.forecasting.papers import DLINEAR, EF, ITRANSFORMER, PATCHTST, REVIN

__all__ = ["DLinear", "Linear", "MLPForecaster", "RevINStats", "TinyITransformer", "TinyPatchTST", "moving_average",
           "revin_denorm", "revin_norm"]

REVIN_EPS = 1e-5


class RevINStats(NamedTuple):
    """Per-channel statistics of one window, as :func:`revin_norm` returns them.

    Attributes:
      mean: ``(C,)`` float array ``μ_c = mean_t x_{t,c}``.
      scale: ``(C,)`` float array ``σ_c + 10⁻⁵``, ``σ_c`` the (biased) standard deviation over time.
    """

    mean: Array
    scale: Array


@cites(REVIN)
def revin_norm(x: Float[Array, "T C"]) -> tuple[Float[Array, "T C"], RevINStats]:
    """Reversible instance normalisation of a window: ``x̃ = (x − μ) / (σ + 10⁻⁵)`` per channel over time.

    Without the learnable affine of Kim et al., "Reversible Instance Normalization for Accurate Time-Series Forecasting
    against Distribution Shift" (ICLR 2022; arXiv id not recorded).

    Args:
      x: ``(T, C)`` float array, one window.

    Returns:
      A tuple ``(x_norm, stats)``: the ``(T, C)`` normalised window and its :class:`RevINStats` ``(μ, σ + 10⁻⁵)``.

    Raises:
      TypeError: ``x`` not floating.
      ValueError: ``x`` not 2-d.
    """
    x = as_array(x, "x", ndim=2)
    mean = jnp.mean(x, axis=0)
    scale = jnp.sqrt(jnp.mean((x - mean) ** 2, axis=0)) + REVIN_EPS
    return (x - mean) / scale, RevINStats(mean, scale)


@cites(REVIN)
def revin_denorm(y: Float[Array, "H C"], stats: RevINStats) -> Float[Array, "H C"]:
    """Invert :func:`revin_norm` on an output block: ``y · (σ + 10⁻⁵) + μ``.

    Args:
      y: ``(H, C)`` float array, the normalised forecast.
      stats: the :class:`RevINStats` of the input window.

    Returns:
      ``(H, C)`` float array in the window's scale.

    Raises:
      TypeError: ``y`` not floating.
      ValueError: ``y`` not 2-d or with another number of channels than ``stats``.
    """
    y = as_array(y, "y", ndim=2)
    if y.shape[1] != stats.mean.shape[0]:
        raise ValueError(f"y must have {stats.mean.shape[0]} channels like the stats, got shape {y.shape}")
    return y * stats.scale + stats.mean


class _Forecaster(eqx.Module):
    """Shared boundary of every model: shape checks, RevIN around the network, channel-independent mapping."""

    in_len: int = eqx.field(static=True)
    out_len: int = eqx.field(static=True)
    channels: int | None = eqx.field(static=True)
    revin: bool = eqx.field(static=True)

    def _check(self, x):
        x = as_array(x, "x", ndim=2)
        if x.shape[0] != self.in_len:
            raise ValueError(f"x must have T = in_len = {self.in_len} rows, got shape {x.shape}")
        if self.channels is not None and x.shape[1] != self.channels:
            raise ValueError(f"x must have the model's {self.channels} channels, got shape {x.shape}")
        return x

    @abc.abstractmethod
    def _series_map(self, xs: Float[Array, "C T"]) -> Float[Array, "C H"]:
        """The network on the (normalised) channels, ``(C, T) -> (C, H)``."""

    def __call__(self, x: Float[Array, "T C"]) -> Float[Array, "H C"]:
        x = self._check(x)
        if self.revin:
            xn, stats = revin_norm(x)
            return revin_denorm(self._series_map(xn.T).T, stats)
        return self._series_map(x.T).T


class _ChannelIndependent(_Forecaster):
    """A forecaster that maps every channel with the same univariate network ``_one: (T,) -> (H,)``."""

    def _series_map(self, xs: Float[Array, "C T"]) -> Float[Array, "C H"]:
        return jax.vmap(self._one)(xs)

    @abc.abstractmethod
    def _one(self, x: Float[Array, " T"]) -> Float[Array, " H"]:
        """The univariate network on one (normalised) channel."""


def _init_fields(obj, in_len, out_len, channels, revin):
    obj.in_len = check_int(in_len, "in_len", min_value=1)
    obj.out_len = check_int(out_len, "out_len", min_value=1)
    obj.channels = None if channels is None else check_int(channels, "channels", min_value=1)
    obj.revin = bool(revin)


@cites(EF, DLINEAR)
class Linear(_ChannelIndependent):
    """Linear forecaster ``ŷ_c = W x_c + b``, ``W`` ``(H, T)`` shared across channels (channel independent).

    No parameter is shared across output steps, so the gradients of near and far steps are disjoint
    (:func:`~jaxlab.forecasting.gradient_conflict` gives 0). ``key=None`` gives zero weights, to be set (e.g. by
    :func:`~jaxlab.forecasting.fit_linear`). Call it on one window: ``model(x)`` maps ``x`` ``(T, C)`` to ``ŷ``
    ``(H, C)`` (``vmap`` for a batch); a window that is not ``(in_len, C)`` (or of another ``C`` than ``channels``)
    raises ``ValueError``.

    Args:
      in_len: input window length ``T`` (int ``≥ 1``).
      out_len: output horizon ``H`` (int ``≥ 1``).
      key: PRNG key of the weights. ``None`` gives zero weights.
      channels: the number of channels ``C`` the model accepts (``None``: any).
      revin: wrap the network in RevIN (:func:`revin_norm` / :func:`revin_denorm`).
      dtype: dtype of the weights (``None``: the default float dtype).

    Attributes:
      in_len: ``T`` (static).
      out_len: ``H`` (static).
      channels: ``C`` or ``None`` (static).
      revin: whether RevIN is applied (static).
      weight: ``(H, T)`` float array ``W``.
      bias: ``(H,)`` float array ``b``.

    Raises:
      TypeError: a size is not an int.
      ValueError: a size ``< 1``.
    """

    weight: Float[Array, "H T"]
    bias: Float[Array, " H"]

    def __init__(self, in_len: int, out_len: int, *, key, channels: int | None = None, revin: bool = True,
                 dtype=None):
        _init_fields(self, in_len, out_len, channels, revin)
        if key is None:  # zeros, to be overwritten (fit_linear)
            dt = jnp.result_type(float) if dtype is None else dtype
            self.weight, self.bias = jnp.zeros((self.out_len, self.in_len), dt), jnp.zeros(self.out_len, dt)
        else:
            lin = eqx.nn.Linear(self.in_len, self.out_len, key=key, dtype=dtype)
            self.weight, self.bias = lin.weight, lin.bias

    def _one(self, x):
        return self.weight @ x + self.bias


def moving_average(x: Float[Array, " T"], kernel: int) -> Float[Array, " T"]:
    """Centred moving average of odd width ``kernel``, the first/last value replicated at the ends.

    ``MA_k(x)_t = (1/k) Σ_{|j| ≤ (k−1)/2} x_{t+j}`` with ``x_t = x_0`` for ``t < 0`` and ``x_{T−1}`` for ``t ≥ T``:
    DLinear's trend (Zeng et al., arXiv:2205.13504).

    Args:
      x: ``(T,)`` float array, one channel.
      kernel: odd window width (int; not checked: an even width returns ``T − 1`` values).

    Returns:
      ``(T,)`` float array.
    """
    front = jnp.repeat(x[:1], (kernel - 1) // 2)
    back = jnp.repeat(x[-1:], (kernel - 1) // 2)
    padded = jnp.concatenate([front, x, back])
    return jnp.convolve(padded, jnp.full((kernel,), 1.0 / kernel, x.dtype), mode="valid")


def _moving_average_adjoint(d: Float[Array, "... T"], kernel: int) -> Float[Array, "... T"]:
    """``MA_kᵀ`` applied to each row of ``d`` (last axis), so that ``d @ MA_k = _moving_average_adjoint(d, k)``: the
    linear transpose of :func:`moving_average` itself (box filter in full mode, the padded ends summed back)."""
    rows = d.reshape(-1, d.shape[-1])
    ma_t = jax.linear_transpose(lambda x: moving_average(x, kernel), jax.ShapeDtypeStruct(rows.shape[1:], rows.dtype))
    return jax.vmap(lambda row: ma_t(row)[0])(rows).reshape(d.shape)


@cites(DLINEAR)
class DLinear(_ChannelIndependent):
    """DLinear: one linear map of the trend and one of the seasonal remainder, channel independent.

    Zeng, Chen, Zhang and Xu, "Are Transformers Effective for Time Series Forecasting?", arXiv:2205.13504. Trend
    ``x^t = MA_k(x)`` (:func:`moving_average`, ``k = 25``) and seasonal remainder ``x^s = x − x^t``, each mapped by its
    own linear layer ``T → H``: ``ŷ = W_s x^s + b_s + W_t x^t + b_t``, channel independent. The moving average is
    linear, so the model is evaluated as the one map ``ŷ = (W_s + (W_t − W_s) MA_k) x + b_s + b_t``, folded from the
    two layers at each call (equal to the two-branch form up to rounding). Call it on one window:
    ``model(x)`` maps ``x`` ``(T, C)`` to ``ŷ`` ``(H, C)`` (``vmap`` for a batch); a window that is not ``(in_len, C)``
    (or of another ``C`` than ``channels``) raises ``ValueError``.

    Args:
      in_len: input window length ``T`` (int ``≥ 1``).
      out_len: output horizon ``H`` (int ``≥ 1``).
      key: PRNG key of the weights.
      kernel: odd moving-average width ``k``.
      channels: the number of channels ``C`` the model accepts (``None``: any).
      revin: wrap the network in RevIN (:func:`revin_norm` / :func:`revin_denorm`).
      dtype: dtype of the weights (``None``: the default float dtype).

    Attributes:
      in_len: ``T`` (static).
      out_len: ``H`` (static).
      channels: ``C`` or ``None`` (static).
      revin: whether RevIN is applied (static).
      seasonal: the ``eqx.nn.Linear`` ``T → H`` of the seasonal part.
      trend: the ``eqx.nn.Linear`` ``T → H`` of the trend.
      kernel: ``k`` (static).

    Raises:
      TypeError: a size is not an int.
      ValueError: a size ``< 1``; an even ``kernel``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.forecasting import DLinear
      >>> model = DLinear(48, 24, key=jax.random.key(0))
      >>> model(jnp.ones((48, 3))).shape     # any number of channels
      (24, 3)
    """

    seasonal: eqx.nn.Linear
    trend: eqx.nn.Linear
    kernel: int = eqx.field(static=True)

    def __init__(self, in_len: int, out_len: int, *, key, kernel: int = 25, channels: int | None = None,
                 revin: bool = True, dtype=None):
        _init_fields(self, in_len, out_len, channels, revin)
        self.kernel = check_int(kernel, "kernel", min_value=1)
        if self.kernel % 2 == 0:
            raise ValueError(f"kernel must be odd (a centred moving average), got {kernel}")
        k1, k2 = jax.random.split(key)
        self.seasonal = eqx.nn.Linear(self.in_len, self.out_len, key=k1, dtype=dtype)
        self.trend = eqx.nn.Linear(self.in_len, self.out_len, key=k2, dtype=dtype)

    def _one(self, x):
        # ŷ = W_s (x − MA x) + W_t MA x + b_s + b_t = (W_s + (W_t − W_s) MA) x + b_s + b_t: the moving average is
        # linear, so the model is one (H, T) map, folded here from the two layers (O(H T k), once per call: it does
        # not depend on x, so vmap over windows and channels leaves it unbatched). Applying it costs one matmul
        # instead of a box filter and two matmuls per window (EF roll-out of 1,024 x 7 windows: see bench/generative)
        w = self.seasonal.weight + _moving_average_adjoint(self.trend.weight - self.seasonal.weight, self.kernel)
        return w @ x + (self.seasonal.bias + self.trend.bias)


@cites(EF)
class MLPForecaster(_ChannelIndependent):
    """MLP forecaster ``T → width → ... → H`` (GELU) **[chosen: width 256, depth 2]**, channel independent.

    The hidden layers are shared by every output step (so near and far steps compete for them, unlike :class:`Linear`).
    Call it on one window: ``model(x)`` maps ``x`` ``(T, C)`` to ``ŷ`` ``(H, C)`` (``vmap`` for a batch); a window that
    is not ``(in_len, C)`` (or of another ``C`` than ``channels``) raises ``ValueError``.

    Args:
      in_len: input window length ``T`` (int ``≥ 1``).
      out_len: output horizon ``H`` (int ``≥ 1``).
      key: PRNG key of the weights.
      width: hidden width (int ``≥ 1``).
      depth: number of hidden layers (int ``≥ 1``).
      channels: the number of channels ``C`` the model accepts (``None``: any).
      revin: wrap the network in RevIN (:func:`revin_norm` / :func:`revin_denorm`).
      dtype: dtype of the weights (``None``: the default float dtype).

    Attributes:
      in_len: ``T`` (static).
      out_len: ``H`` (static).
      channels: ``C`` or ``None`` (static).
      revin: whether RevIN is applied (static).
      mlp: the ``eqx.nn.MLP`` ``T → H``.

    Raises:
      TypeError: a size is not an int.
      ValueError: a size ``< 1``.
    """

    mlp: eqx.nn.MLP

    def __init__(self, in_len: int, out_len: int, *, key, width: int = 256, depth: int = 2,
                 channels: int | None = None, revin: bool = True, dtype=None):
        _init_fields(self, in_len, out_len, channels, revin)
        width = check_int(width, "width", min_value=1)
        depth = check_int(depth, "depth", min_value=1)
        self.mlp = eqx.nn.MLP(self.in_len, self.out_len, width, depth, activation=jax.nn.gelu, key=key,
                              dtype=dtype)

    def _one(self, x):
        return self.mlp(x)


class _EncoderLayer(eqx.Module):
    """Pre-norm transformer encoder layer: ``z + MHA(LN(z))``, then ``z + FFN(LN(z))``."""

    norm1: eqx.nn.LayerNorm
    attn: eqx.nn.MultiheadAttention
    norm2: eqx.nn.LayerNorm
    ff: eqx.nn.MLP

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, key, dtype=None):
        k1, k2 = jax.random.split(key)
        if d_model % num_heads:
            raise ValueError(f"d_model must be a multiple of num_heads={num_heads}, got {d_model}")
        self.norm1 = eqx.nn.LayerNorm(d_model, dtype=dtype)
        self.attn = eqx.nn.MultiheadAttention(num_heads, d_model, use_query_bias=True, use_key_bias=True,
                                              use_value_bias=True, use_output_bias=True, key=k1, dtype=dtype)
        self.norm2 = eqx.nn.LayerNorm(d_model, dtype=dtype)
        self.ff = eqx.nn.MLP(d_model, d_model, d_ff, 1, activation=jax.nn.gelu, key=k2, dtype=dtype)

    def __call__(self, z: Float[Array, "n d"]) -> Float[Array, "n d"]:
        h = jax.vmap(self.norm1)(z)
        z = z + self.attn(h, h, h)
        return z + jax.vmap(self.ff)(jax.vmap(self.norm2)(z))


@cites(PATCHTST)
class TinyPatchTST(_ChannelIndependent):
    """Channel-independent patch transformer after PatchTST **[sizes chosen for CPU]**.

    Nie, Nguyen, Sinthong and Kalagnanam, "A Time Series is Worth 64 Words: Long-term Forecasting with Transformers",
    arXiv:2211.14730. A channel's window is padded at the end with ``patch_stride`` copies of its last value and cut
    into ``N = ⌊(T − P)/S⌋ + 2`` patches (``P = patch_len``, ``S = patch_stride``); each patch is embedded linearly plus
    a learned position embedding, passed through pre-norm encoder layers **[chosen: LayerNorm instead of the paper's
    BatchNorm]**, flattened and mapped ``N·d → H``. Call it on one window: ``model(x)`` maps ``x`` ``(T, C)`` to ``ŷ``
    ``(H, C)`` (``vmap`` for a batch); a window that is not ``(in_len, C)`` (or of another ``C`` than ``channels``)
    raises ``ValueError``.

    Args:
      in_len: input window length ``T`` (int ``≥ 1``).
      out_len: output horizon ``H`` (int ``≥ 1``).
      key: PRNG key of the weights.
      patch_len: patch length ``P`` (int in ``[1, T]``).
      patch_stride: patch stride ``S`` (int ``≥ 1``).
      d_model: model dimension ``d`` (a multiple of ``num_heads``).
      num_heads: attention heads.
      num_layers: encoder layers (int ``≥ 1``).
      d_ff: hidden width of the feed-forward block (GELU).
      channels: the number of channels ``C`` the model accepts (``None``: any).
      revin: wrap the network in RevIN (:func:`revin_norm` / :func:`revin_denorm`).
      dtype: dtype of the weights (``None``: the default float dtype).

    Attributes:
      in_len: ``T`` (static).
      out_len: ``H`` (static).
      channels: ``C`` or ``None`` (static).
      revin: whether RevIN is applied (static).
      embed: the ``eqx.nn.Linear`` patch embedding ``P → d``.
      pos: ``(N, d)`` float array, the learned position embedding (initialised ``N(0, 0.02²)``).
      layers: tuple of pre-norm transformer encoder layers.
      head: the ``eqx.nn.Linear`` ``N·d → H``.
      patch_len: ``P`` (static).
      patch_stride: ``S`` (static).

    Raises:
      TypeError: a size is not an int.
      ValueError: a size below its minimum; ``patch_len > in_len``; ``d_model`` not a multiple of ``num_heads``.
    """

    embed: eqx.nn.Linear
    pos: Float[Array, "N d"]
    layers: tuple[_EncoderLayer, ...]
    head: eqx.nn.Linear
    patch_len: int = eqx.field(static=True)
    patch_stride: int = eqx.field(static=True)

    def __init__(self, in_len: int, out_len: int, *, key, patch_len: int = 16, patch_stride: int = 8,
                 d_model: int = 32, num_heads: int = 4, num_layers: int = 2, d_ff: int = 64,
                 channels: int | None = None, revin: bool = True, dtype=None):
        _init_fields(self, in_len, out_len, channels, revin)
        self.patch_len = check_int(patch_len, "patch_len", min_value=1, max_value=self.in_len)
        self.patch_stride = check_int(patch_stride, "patch_stride", min_value=1)
        d_model = check_int(d_model, "d_model", min_value=1)
        num_layers = check_int(num_layers, "num_layers", min_value=1)
        n = (self.in_len - self.patch_len) // self.patch_stride + 2
        keys = jax.random.split(key, num_layers + 3)
        self.embed = eqx.nn.Linear(self.patch_len, d_model, key=keys[0], dtype=dtype)
        dt = self.embed.weight.dtype
        self.pos = 0.02 * jax.random.normal(keys[1], (n, d_model), dt)
        self.layers = tuple(_EncoderLayer(d_model, check_int(num_heads, "num_heads", min_value=1),
                                          check_int(d_ff, "d_ff", min_value=1), key=k, dtype=dtype)
                            for k in keys[3:])
        self.head = eqx.nn.Linear(n * d_model, self.out_len, key=keys[2], dtype=dtype)

    def _one(self, x):
        x = jnp.concatenate([x, jnp.repeat(x[-1:], self.patch_stride)])
        n = self.pos.shape[0]
        idx = jnp.arange(n)[:, None] * self.patch_stride + jnp.arange(self.patch_len)[None, :]
        z = jax.vmap(self.embed)(x[idx]) + self.pos
        for layer in self.layers:
            z = layer(z)
        return self.head(z.reshape(-1))


@cites(ITRANSFORMER)
class TinyITransformer(_Forecaster):
    """Inverted transformer after iTransformer **[sizes chosen for CPU]**: each channel's window is one token.

    Liu et al., "iTransformer: Inverted Transformers Are Effective for Time Series Forecasting", arXiv:2310.06625. Each
    channel's whole window is embedded ``T → d``, pre-norm encoder layers attend across channels, then a LayerNorm and a
    linear head map ``d → H``; the only model here that mixes channels (any ``C``, as tokens). Call it on one window:
    ``model(x)`` maps ``x`` ``(T, C)`` to ``ŷ`` ``(H, C)`` (``vmap`` for a batch); a window that is not ``(in_len, C)``
    (or of another ``C`` than ``channels``) raises ``ValueError``.

    Args:
      in_len: input window length ``T`` (int ``≥ 1``).
      out_len: output horizon ``H`` (int ``≥ 1``).
      key: PRNG key of the weights.
      d_model: model dimension ``d`` (a multiple of ``num_heads``).
      num_heads: attention heads.
      num_layers: encoder layers (int ``≥ 1``).
      d_ff: hidden width of the feed-forward block (GELU).
      channels: the number of channels ``C`` the model accepts (``None``: any).
      revin: wrap the network in RevIN (:func:`revin_norm` / :func:`revin_denorm`).
      dtype: dtype of the weights (``None``: the default float dtype).

    Attributes:
      in_len: ``T`` (static).
      out_len: ``H`` (static).
      channels: ``C`` or ``None`` (static).
      revin: whether RevIN is applied (static).
      embed: the ``eqx.nn.Linear`` token embedding ``T → d``.
      layers: tuple of pre-norm transformer encoder layers.
      norm: the final ``eqx.nn.LayerNorm``.
      head: the ``eqx.nn.Linear`` ``d → H``.

    Raises:
      TypeError: a size is not an int.
      ValueError: a size below its minimum; ``d_model`` not a multiple of ``num_heads``.
    """

    embed: eqx.nn.Linear
    layers: tuple[_EncoderLayer, ...]
    norm: eqx.nn.LayerNorm
    head: eqx.nn.Linear

    def __init__(self, in_len: int, out_len: int, *, key, d_model: int = 32, num_heads: int = 4,
                 num_layers: int = 2, d_ff: int = 64, channels: int | None = None, revin: bool = True,
                 dtype=None):
        _init_fields(self, in_len, out_len, channels, revin)
        d_model = check_int(d_model, "d_model", min_value=1)
        num_layers = check_int(num_layers, "num_layers", min_value=1)
        keys = jax.random.split(key, num_layers + 2)
        self.embed = eqx.nn.Linear(self.in_len, d_model, key=keys[0], dtype=dtype)
        self.layers = tuple(_EncoderLayer(d_model, check_int(num_heads, "num_heads", min_value=1),
                                          check_int(d_ff, "d_ff", min_value=1), key=k, dtype=dtype)
                            for k in keys[2:])
        self.norm = eqx.nn.LayerNorm(d_model, dtype=dtype)
        self.head = eqx.nn.Linear(d_model, self.out_len, key=keys[1], dtype=dtype)

    def _series_map(self, xs):
        z = jax.vmap(self.embed)(xs)
        for layer in self.layers:
            z = layer(z)
        return jax.vmap(self.head)(jax.vmap(self.norm)(z))
