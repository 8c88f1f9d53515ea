"""Shared machinery: the iteration protocol (:class:`Algorithm`, :func:`run`, :func:`algorithms`), the trainer
(``jaxlab.core.train``), validation, multi-device sharding, citations, claims, JAX's persistent compilation
cache (``jaxlab.core.cache``), keyword deprecation, types, and ``jaxlab.core.random`` (bit-for-bit ``jax.random``
draws, fused on CPU)."""

from jaxlab.core.algorithm import Algorithm, AlgorithmSpec, algorithms, register_algorithm
from jaxlab.core.allocator import keep_large_buffers
from jaxlab.core.cache import enable_compilation_cache
from jaxlab.core.citations import cite, cites, register_paper
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import RunTrace, progress_meter, run
from jaxlab.core.sharding import batch_mesh, batch_sharding, shard_batch, sharded_vmap
from jaxlab.core.sorting import sort_floats
from jaxlab.core.threads import lapack_threads, set_lapack_threads, usable_cores
from jaxlab.core.train import TrainInfo, TrainState, make_train_step, train_init, trainer
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
    is_concrete,
    nonfinite_flag,
    tie_finite_checks,
    value_check,
)
from jaxlab.core.verification import ClaimResult, claim, mean_and_se

__all__ = [
    "Algorithm",
    "AlgorithmSpec",
    "ClaimResult",
    "RunTrace",
    "TrainInfo",
    "TrainState",
    "algorithms",
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
    "enable_compilation_cache",
    "error_if",
    "is_concrete",
    "keep_large_buffers",
    "lapack_threads",
    "make_train_step",
    "mean_and_se",
    "nonfinite_flag",
    "progress_meter",
    "register_algorithm",
    "register_paper",
    "renamed_kwargs",
    "run",
    "set_lapack_threads",
    "shard_batch",
    "sharded_vmap",
    "sort_floats",
    "tie_finite_checks",
    "train_init",
    "trainer",
    "usable_cores",
    "value_check",
]
