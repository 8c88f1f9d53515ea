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
    """Arguments of :func:`wfr_vector_field` (the ``args`` of ``diffrax.diffeqsolve``).

    Attributes:
      estimator: ``est(key, Y, σ) -> (log v0, r)`` returning the **normalized** ``log v0``: a deterministic
        estimator such as :func:`~jaxlab.sampling.msip.exact_estimator`,
        :func:`~jaxlab.sampling.msip.gaussian_estimator` or :func:`~jaxlab.sampling.msip.empirical_estimator`.
      lengthscale: positive float (or 0-d array), the kernel bandwidth ``σ``.
      point_speed: float, the multiplier ``α_pt`` of the node velocity (``0`` freezes the nodes: a pure
        Fisher-Rao flow of the weights).
      key: PRNG key handed to the estimator; ``None`` means ``jax.random.key(0)``.
    """

    estimator: Estimator
    lengthscale: Any
    point_speed: Any = 1.0
    key: Any = None


@cites(QUANTIZATION)
def wfr_vector_field(t, y: tuple[Array, Array], args: WFRArgs) -> tuple[Array, Array]:
    """Right-hand side of the Wasserstein-Fisher-Rao MMD flow for ``diffrax.ODETerm``::

        ẏ_i = -α_pt [Σ_j w_j K_ij (y_j - y_i) - v0(y_i) r(y_i)] / σ²,   ẇ_i = -w_i [(K w)_i - v0(y_i)],

    using ``∇v0 = v0 r / σ²`` (Belhadji, Sharp, Marzouk, *Weighted quantization using MMD: From mean field to
    mean shift via gradient flows*, arXiv:2502.10600). No input validation: it runs inside the solver.

    Args:
      t: time (unused: the field is autonomous).
      y: ``(Y, w)``: ``(N, d)`` float array of nodes and ``(N,)`` float array of weights.
      args: :class:`WFRArgs`.

    Returns:
      ``(dY, dw)``: ``(N, d)`` and ``(N,)`` float arrays, the time derivatives of the nodes and the weights.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.msip import WFRArgs, gaussian_estimator, wfr_vector_field
      >>> Y, w = jax.random.normal(jax.random.key(0), (5, 2)), jnp.full(5, 0.2)
      >>> args = WFRArgs(gaussian_estimator(jnp.zeros(2), jnp.eye(2)), lengthscale=0.7)
      >>> dY, dw = jax.jit(lambda Y, w: wfr_vector_field(0.0, (Y, w), args))(Y, w)
      >>> dY.shape, dw.shape
      ((5, 2), (5,))
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
