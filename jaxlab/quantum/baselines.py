r"""Classical baselines for the spectral-bias comparison: an MLP, a Fourier-feature MLP and their empirical NTK.

MLP ``1 → 64 → 64 → 64 → 1`` (tanh or ReLU), whose NTK in the Fourier basis decays
polynomially in |ω| (Rahaman et al., "On the Spectral Bias of Neural Networks", arXiv:1806.08734), and the
Fourier-feature MLP of Tancik et al. (arXiv:2006.10739) with ``γ(x) = [cos(2πBx), sin(2πBx)]``,
``B_i ~ N(0, s²)``. Parameters are plain pytrees (a list of ``(W, b)`` pairs); the empirical NTK
``K(x, x') = Σ_j ∂_j f(x) ∂_j f(x')`` is :func:`jaxlab.quantum.qntk.empirical_ntk`, re-exported here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int
from jaxlab.quantum.papers import RAHAMAN, TANCIK
from jaxlab.quantum.qntk import empirical_ntk

__all__ = [
    "ACTIVATIONS",
    "empirical_ntk",
    "ff_mlp_apply",
    "fourier_features",
    "mlp_apply",
    "mlp_init",
    "sample_ff_matrix",
]

ACTIVATIONS = {"tanh": jnp.tanh, "relu": jax.nn.relu}


@cites(RAHAMAN)
def mlp_init(key, widths=(1, 64, 64, 64, 1), dtype=None) -> list[tuple[jax.Array, jax.Array]]:
    """Initial MLP parameters: LeCun-normal weights W ~ N(0, 1/fan_in) and zero biases.

    The classical baseline of the spectral-bias comparison (Rahaman et al., "On the Spectral Bias of Neural
    Networks", arXiv:1806.08734); the default ``1 → 64 → 64 → 64 → 1`` is **[chosen]** here.

    Args:
      key: a PRNG key.
      widths: sequence of ints >= 1, the layer widths from input to output (at least two).
      dtype: float dtype (default: the default float dtype).

    Returns:
      List of ``(W, b)`` pairs, ``W`` of shape ``(widths[i], widths[i + 1])`` and ``b`` of shape
      ``(widths[i + 1],)``.

    Raises:
      TypeError: a width that is not an int.
      ValueError: a width < 1, or fewer than two widths.
    """
    widths = tuple(check_int(w, "widths", min_value=1) for w in widths)
    if len(widths) < 2:
        raise ValueError(f"widths must list at least an input and an output width, got {widths}")
    dtype = dtype or jnp.result_type(float)
    keys = jax.random.split(key, len(widths) - 1)
    return [
        (jax.random.normal(k, (a, b), dtype) / jnp.sqrt(a), jnp.zeros(b, dtype))
        for k, a, b in zip(keys, widths[:-1], widths[1:], strict=True)
    ]


@cites(RAHAMAN)
def mlp_apply(params, x, activation: str = "tanh") -> Float[Array, "..."]:
    """The MLP on one input: h ← act(h W + b) for every hidden layer, then a linear output layer.

    Args:
      params: list of ``(W, b)`` pairs (from :func:`mlp_init`).
      x: float scalar or ``(d,)`` float array, one input (``d`` = the first width); ``jax.vmap`` for batches.
      activation: ``"tanh"`` or ``"relu"``.

    Returns:
      Float scalar when the last width is 1, else a ``(widths[-1],)`` float array.

    Raises:
      TypeError: an integer-dtype ``x``.
      ValueError: an unknown ``activation``; ``x`` neither 0-d nor 1-d.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}, got {activation!r}")
    act = ACTIVATIONS[activation]
    h = jnp.atleast_1d(as_array(x, "x", ndim=(0, 1)))
    for W, b in params[:-1]:
        h = act(h @ W + b)
    W, b = params[-1]
    out = h @ W + b
    return out[0] if out.shape == (1,) else out


def sample_ff_matrix(key, m: int, s: float, dtype=None) -> Float[Array, " m"]:
    """The frequencies of a Fourier-feature map: B ∈ ℝ^m with B_i ~ N(0, s²), i.i.d. (fixed, not trained).

    Tancik et al., "Fourier Features Let Networks Learn High Frequency Functions in Low Dimensional
    Domains" (arXiv:2006.10739): a larger ``s`` lets the MLP fit higher frequencies.

    Args:
      key: a PRNG key.
      m: int >= 1, the number of frequencies.
      s: float, the standard deviation (not validated; its sign does not matter in distribution).
      dtype: float dtype (default: the default float dtype).

    Returns:
      ``(m,)`` float array.

    Raises:
      TypeError: ``m`` not an int.
      ValueError: ``m < 1``.
    """
    m = check_int(m, "m", min_value=1)
    return s * jax.random.normal(key, (m,), dtype or jnp.result_type(float))


@cites(TANCIK)
def fourier_features(x, B) -> Float[Array, " 2m"]:
    """The Fourier-feature embedding γ(x) = [cos(2πBx), sin(2πBx)] of Tancik et al. (arXiv:2006.10739).

    Args:
      x: float scalar (0-d), one input.
      B: ``(m,)`` float array of frequencies (e.g. from :func:`sample_ff_matrix`).

    Returns:
      ``(2m,)`` float array, the m cosines then the m sines.

    Raises:
      TypeError: integer-dtype inputs.
      ValueError: ``x`` not 0-d or ``B`` not 1-d.
    """
    x = as_array(x, "x", ndim=0)
    B = as_array(B, "B", ndim=1)
    z = 2 * jnp.pi * B * x
    return jnp.concatenate([jnp.cos(z), jnp.sin(z)])


@cites(TANCIK)
def ff_mlp_apply(params, x, B, activation: str = "relu") -> Float[Array, ""]:
    """The Fourier-feature MLP f(x) = MLP(γ(x)) of Tancik et al. (arXiv:2006.10739).

    Args:
      params: list of ``(W, b)`` pairs (from :func:`mlp_init` with first width ``2m``).
      x: float scalar (0-d), one input; ``jax.vmap`` for batches.
      B: ``(m,)`` float array of frequencies.
      activation: ``"tanh"`` or ``"relu"``.

    Returns:
      Float scalar when the last width is 1, else a ``(widths[-1],)`` float array.

    Raises:
      TypeError: integer-dtype inputs.
      ValueError: an unknown ``activation``; ``x`` not 0-d; ``B`` not 1-d.
    """
    return mlp_apply(params, fourier_features(x, B), activation)
