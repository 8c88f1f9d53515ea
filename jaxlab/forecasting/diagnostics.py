r"""The gradient-conflict diagnostic of Evolutionary Forecasting.

Paper: J. Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series",
arXiv:2601.23114 (2026). For a model with output ``L`` and a split point ``H``,
``ℓ_near = MSE(Ŷ[:H], Y[:H])`` and ``ℓ_far = MSE(Ŷ[H:L], Y[H:L])``; the diagnostic is
``cos(∇_θ ℓ_near, ∇_θ ℓ_far)`` per minibatch (mean and fraction < 0) and per parameter group. Models whose
output steps share no parameters (Linear, DLinear) give exactly 0.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.validation import check_int
from jaxlab.forecasting.evolutionary import check_windows, output_shape
from jaxlab.forecasting.papers import EF

__all__ = ["gradient_conflict"]


@cites(EF)
@renamed_kwargs(batch="batch_size")
def gradient_conflict(model: eqx.Module, X: Float[Array, "n T C"], Y: Float[Array, "n L C"], H: int, *,
                      batch_size: int = 64) -> dict[str, Any]:
    """Gradient conflict of near and far output steps: ``cos(∇_θ ℓ_near, ∇_θ ℓ_far)`` per minibatch.

    ``ℓ_near = MSE(Ŷ[:, :H], Y[:, :H])`` and ``ℓ_far = MSE(Ŷ[:, H:L], Y[:, H:L])`` for the model's output length ``L``;
    the cosine is over all parameters, and per parameter group. Models whose output steps share no parameters
    (:class:`~jaxlab.forecasting.Linear`, :class:`~jaxlab.forecasting.DLinear`) give exactly 0. The diagnostic of Ma et
    al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114 (only its
    abstract and introduction were readable; the split at ``H`` and the per-group breakdown are reconstructed).

    Args:
      model: an equinox forecasting model ``(T, C) -> (L, C)``.
      X: ``(n, T, C)`` float array of windows.
      Y: ``(n, L', C)`` float array of targets, ``L' ≥ L``.
      H: the split point (int with ``1 ≤ H < L``).
      batch_size: windows per minibatch (int in ``[1, n]``; the last partial batch is dropped).

    Returns:
      dict with ``"cos"`` (the ``(⌊n / batch_size⌋,)`` cosines), ``"cos_mean"`` and ``"frac_negative"`` (0-d
      float arrays) and ``"per_group"`` (parameter path → mean cosine; 0 where either gradient vanishes).

    Raises:
      TypeError: ``X`` or ``Y`` not floating; ``H`` or ``batch_size`` not an int.
      ValueError: ``X`` or ``Y`` not 3-d, mismatched or non-finite; ``H ≥ L`` or ``H < 1``; ``Y`` shorter than
        ``L``; ``batch_size`` not in ``[1, n]``.

    Example:
      >>> import jax
      >>> from jaxlab.forecasting import Linear, gradient_conflict, make_windows, sinusoid_series
      >>> X, Y = make_windows(sinusoid_series(200), 48, 24)
      >>> out = gradient_conflict(Linear(48, 24, key=jax.random.key(0)), X, Y, 8, batch_size=32)
      >>> float(out["cos_mean"])   # no parameter is shared across output steps
      0.0
    """
    X, Y = check_windows(X, Y)
    H = check_int(H, "H", min_value=1)
    batch = check_int(batch_size, "batch_size", min_value=1, max_value=X.shape[0])
    L = output_shape(model, X[0])[0]
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
    return {"cos": total, "cos_mean": jnp.mean(total), "frac_negative": jnp.mean(total < 0, dtype=total.dtype),
            "per_group": {n: jnp.mean(groups[:, i]) for i, n in enumerate(names)}}
