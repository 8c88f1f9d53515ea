"""Solving many small linear systems at once on CPU.

Under ``vmap``, ``jnp.linalg.solve`` lowers to LAPACK's ``getrf`` called once per matrix, a pivot-permutation
loop and two ``trsm`` calls per matrix: for a batch of small systems the per-call overhead is most of the cost
(64 sequences x 1024 steps of VAW at d = 16: 168 ms; 128 Levenberg-Marquardt steps on 5 x 5 systems: about 10 %
of the step). :func:`solve` keeps LAPACK for one system and, under ``vmap`` with ``d <= 16``, runs the same
Gaussian elimination with partial pivoting (:func:`elimination_solve`) in array operations on every matrix of
the batch at once (the VAW batch above: 69 ms). The unrolled elimination costs a few kernels per pivot and
compile time growing with d: at d = 24 it is about as fast as LAPACK, at d = 32 mostly slower (0.9-1.9x the
time over four noisy runs), so larger systems keep LAPACK.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxlab.core.types import Array

__all__ = ["ELIMINATION_MAX_BATCH", "ELIMINATION_MAX_DIM", "elimination_solve", "solve"]

ELIMINATION_MAX_DIM = 16
"""Under ``vmap``, :func:`solve` eliminates in array operations up to this size and calls LAPACK above it."""

ELIMINATION_MAX_BATCH = 512
"""... and on batches of at most this many systems. The elimination's kernels work on the batch's leading axis
with rows of length d as the vector axis, which stops paying on large batches: 100 solves of 5 x 5 systems
take 0.021 / 0.025 ms (float32 / float64) per batch of 128 against LAPACK's 0.050 / 0.046 ms, but 0.76 / 0.33
ms per batch of 1000 against 0.38 / 0.34 ms (one process, 2-core machine)."""


def elimination_solve(A: Array, B: Array) -> Array:
    """``A^{-1} B`` by Gaussian elimination with partial pivoting on ``[A | B]`` and back substitution.

    LAPACK's ``getrf`` + ``getrs`` arithmetic (the pivot is the first entry of largest modulus in its column),
    in array operations so that ``vmap`` vectorises it across matrices. No check for a singular ``A``: a zero
    pivot gives infinities or NaNs, as LAPACK's solve does.

    Args:
      A: ``(d, d)`` float array.
      B: ``(d, r)`` float array of right-hand sides.

    Returns:
      ``(d, r)`` float array ``X`` with ``A X = B`` (to rounding).
    """
    d = A.shape[0]
    M = jnp.concatenate([A, B], axis=1)
    rows = []
    for k in range(d):
        p = jnp.argmax(jnp.abs(M[:, 0]))
        pivot_row = M[p]
        rows.append(jnp.pad(pivot_row, (k, 0)))
        if k < d - 1:
            M = jnp.where((jnp.arange(d - k) == p)[:, None], M[0], M)  # row p takes row 0's place
            M = M[1:, 1:] - (M[1:, 0] / pivot_row[0])[:, None] * pivot_row[1:]
    U = jnp.stack(rows)  # (d, d + r): the upper factor, then the forward-eliminated right-hand sides
    X = jnp.zeros_like(B)
    for i in reversed(range(d)):
        X = X.at[i].set((U[i, d:] - jnp.sum(U[i, :d, None] * X, axis=0)) / U[i, i])
    return X


@jax.custom_batching.custom_vmap
def _lu_solve(A: Array, B: Array) -> Array:
    return jnp.linalg.solve(A, B)


@_lu_solve.def_vmap
def _lu_solve_vmap(axis_size: int, in_batched, A: Array, B: Array):
    A, B = (x if batched else jnp.broadcast_to(x, (axis_size, *x.shape)) for x, batched in zip(
        (A, B), in_batched, strict=True))
    small = A.shape[-1] <= ELIMINATION_MAX_DIM and axis_size <= ELIMINATION_MAX_BATCH
    return jax.vmap(elimination_solve if small else jnp.linalg.solve)(A, B), True


@jax.custom_jvp
def _solve(A: Array, B: Array) -> Array:
    return _lu_solve(A, B)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    # custom_vmap has no reverse mode: the tangent dX = A^{-1} (dB - dA X) goes through jnp.linalg.solve.
    A, B = primals
    dA, dB = tangents
    X = _solve(A, B)
    return X, jnp.linalg.solve(A, dB - dA @ X)


def solve(A: Array, B: Array) -> Array:
    """``A^{-1} B`` by LU with partial pivoting: LAPACK for one system; under ``vmap`` with
    ``d <= ELIMINATION_MAX_DIM`` on a batch of at most ``ELIMINATION_MAX_BATCH`` systems (the innermost ``vmap``'s
    size), :func:`elimination_solve` on the whole batch in array operations.

    The two paths do the same arithmetic up to rounding. Differentiable (forward and reverse mode): the tangent
    ``dX = A^{-1} (dB - dA X)`` goes through ``jnp.linalg.solve``.

    Args:
      A: ``(d, d)`` float array.
      B: ``(d,)`` or ``(d, r)`` float array.

    Returns:
      ``X`` with the shape of ``B``, ``A X = B`` (to rounding).
    """
    if B.ndim == 1:
        return _solve(A, B[:, None])[:, 0]
    return _solve(A, B)
