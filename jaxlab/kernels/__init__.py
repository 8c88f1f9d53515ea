"""Kernels and kernel discrepancies shared by every jaxlab area (see :mod:`jaxlab.kernels.gaussian`)."""

from jaxlab.kernels.distances import distance_matrix, pairwise_distance_quantile, safe_sqrt, sqdist
from jaxlab.kernels.gaussian import (
    KERNELS,
    energy_distance,
    foerstner_distance,
    gaussian_kernel,
    gram,
    ksd,
    mmd2,
    stein_gram,
    weighted_moments,
)

__all__ = [
    "KERNELS",
    "distance_matrix",
    "energy_distance",
    "foerstner_distance",
    "gaussian_kernel",
    "gram",
    "ksd",
    "mmd2",
    "pairwise_distance_quantile",
    "safe_sqrt",
    "sqdist",
    "stein_gram",
    "weighted_moments",
]
