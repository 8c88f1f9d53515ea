"""Shared primitives: validation, the scan driver, multi-device sharding, citations, claims, types, and
``jaxlab.core.random`` (bit-for-bit ``jax.random`` draws, fused on CPU)."""

from jaxlab.core.citations import cite, cites, register_paper
from jaxlab.core.claims import ClaimResult, claim
from jaxlab.core.loop import RunTrace, progress_meter, run
from jaxlab.core.sharding import batch_mesh, batch_sharding, shard_batch, sharded_vmap
from jaxlab.core.sorting import sort_floats
from jaxlab.core.validation import (
    as_array,
    check_finite,
    check_in_range,
    check_int,
    check_ndim,
    check_positive,
    check_psd,
    check_quadrature,
    check_shape,
    check_simplex,
    check_symmetric,
    error_if,
)

__all__ = [
    "ClaimResult",
    "RunTrace",
    "as_array",
    "batch_mesh",
    "batch_sharding",
    "check_finite",
    "check_in_range",
    "check_int",
    "check_ndim",
    "check_positive",
    "check_psd",
    "check_quadrature",
    "check_shape",
    "check_simplex",
    "check_symmetric",
    "cite",
    "cites",
    "claim",
    "error_if",
    "progress_meter",
    "register_paper",
    "run",
    "shard_batch",
    "sharded_vmap",
    "sort_floats",
]
