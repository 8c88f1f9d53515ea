r"""Wasserstein-Fisher-Rao gradient flow of MMD² on particle nodes and weights, as a diffrax vector field.

Paper: A. Belhadji, D. Sharp, Y. M. Marzouk, *Weighted quantization using MMD: From mean field to mean shift via
gradient flows*, arXiv:2502.10600 (2025). With the Gaussian kernel ``k_σ`` of bandwidth ``σ``, nodes ``y_i``,
weights ``w_i``, ``K_ij = k_σ(y_i, y_j)`` and the kernel mean embedding ``v0`` of the target::

    ẏ_i = -α_pt ∇_y [Σ_j w_j k_σ(y, y_j) - v0(y)]_{y = y_i},     ẇ_i = -w_i [(K w)_i - v0(y_i)],

the Wasserstein (nodes, speed multiplier ``α_pt``) and Fisher-Rao (weights) gradient flow of
``MMD²(Σ_i w_i δ_{y_i}, π)``. Integrate it with ``diffrax.ODETerm(wfr_vector_field)``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array

from jaxlab.core.citations import cites
from jaxlab.kernels import gram
from jaxlab.sampling.msip.estimators import Estimator
from jaxlab.sampling.msip.papers import QUANTIZATION

__all__ = ["WFRArgs", "wfr_vector_field"]


class WFRArgs(NamedTuple):
    """Arguments of :func:`wfr_vector_field`: a deterministic estimator of the **normalized** ``v0`` (exact,
    Gaussian or empirical), the bandwidth, the point-speed multiplier ``α_pt`` and the estimator's key."""

    estimator: Estimator
    lengthscale: Any
    point_speed: Any = 1.0
    key: Any = None


@cites(QUANTIZATION)
def wfr_vector_field(t, y: tuple[Array, Array], args: WFRArgs) -> tuple[Array, Array]:
    """Right-hand side of the Wasserstein-Fisher-Rao MMD flow for ``diffrax.ODETerm``::

        ẏ_i = -α_pt [Σ_j w_j K_ij (y_j - y_i) - v0(y_i) r(y_i)] / σ²,   ẇ_i = -w_i [(K w)_i - v0(y_i)],

    using ``∇v0 = v0 r / σ²``. ``y = (Y (N, d), w (N,))``.
    """
    Y, w = y
    sigma = args.lengthscale
    key = jax.random.key(0) if args.key is None else args.key
    log_v0, r = args.estimator(key, Y, sigma)
    v0 = jnp.exp(log_v0)
    K = gram(Y, lengthscale=sigma)
    Kw = K @ w
    attract = (K * w[None, :]) @ Y - Kw[:, None] * Y
    dY = -args.point_speed * (attract - v0[:, None] * r) / sigma**2
    dw = -w * (Kw - v0)
    return dY, dw
