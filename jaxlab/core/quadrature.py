"""Gauss-Hermite rules for Gaussian expectations: exact test oracles shared by every area.

``gauss_hermite(n, d)`` returns nodes ``z_q`` and weights ``ω_q`` (Σ ω_q = 1) of the tensor-product
probabilists' rule, so that ``Σ_q ω_q f(z_q) = E_{z~N(0, I_d)}[f(z)]`` exactly for polynomials of degree
``<= 2n - 1`` in each coordinate; ``gaussian_rule(mean, cov, n)`` maps it to ``N(mean, cov)``.
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np

from jaxlab.core.validation import as_array, check_int, check_psd

__all__ = ["gauss_hermite", "gaussian_rule"]


def gauss_hermite(n: int, d: int = 1, dtype=None):
    """Tensor-product probabilists' Gauss-Hermite rule for ``N(0, I_d)``: ``(nodes (n^d, d), weights (n^d,))``."""
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=1)
    if n**d > 2_000_000:
        raise ValueError(f"n**d = {n**d} nodes is too many for a tensor rule; lower n or d")
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    nodes = np.array(list(itertools.product(x, repeat=d)))
    weights = np.prod(np.array(list(itertools.product(w, repeat=d))), axis=1)
    dtype = dtype or jnp.result_type(float)
    return jnp.asarray(nodes, dtype=dtype), jnp.asarray(weights, dtype=dtype)


def gaussian_rule(mean, cov, n: int):
    """Gauss-Hermite rule for ``N(mean, cov)``: nodes ``mean + L z_q`` with ``L Lᵀ = cov``."""
    mean = as_array(mean, "mean", ndim=1, finite=True)
    cov = as_array(cov, "cov", ndim=2, shape=(mean.shape[0], mean.shape[0]))
    cov = check_psd(cov, "cov", strict=True)
    z, w = gauss_hermite(n, mean.shape[0], dtype=mean.dtype)
    L = jnp.linalg.cholesky(cov)
    return mean + z @ L.T, w
