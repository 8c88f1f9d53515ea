"""Benchmark of the shared kernels: Gaussian Gram matrix, N = 4096, d = 16, float32.

jaxlab's jitted ``gram`` (one matmul plus a fused exp) against numpy with the same Gram trick, side by side in one
process, medians after a warm-up call; the compile time is reported separately. Also times ``mmd2`` between two
2048-point samples against numpy. Goal: at least 5x numpy on the Gram matrix (issue 27; issue 2 asked for 4x).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_fn
from jaxlab.kernels import gram, mmd2

AREA = "core"


def numpy_gram(X: np.ndarray, Y: np.ndarray, ell: float) -> np.ndarray:
    xx = np.einsum("ij,ij->i", X, X)
    yy = np.einsum("ij,ij->i", Y, Y)
    d2 = np.maximum(xx[:, None] + yy[None, :] - 2.0 * (X @ Y.T), 0.0)
    return np.exp(d2 * np.float32(-0.5 / ell**2))


def numpy_mmd2(X: np.ndarray, Y: np.ndarray, ell: float) -> float:
    return numpy_gram(X, X, ell).mean() - 2 * numpy_gram(X, Y, ell).mean() + numpy_gram(Y, Y, ell).mean()


def main() -> None:
    calib = calibration_gflops()
    rng = np.random.default_rng(0)
    n, d, ell = 4096, 16, 2.0
    X = rng.standard_normal((n, d), dtype=np.float32)
    Xj = jnp.asarray(X)

    ours_fn = jax.jit(lambda A: gram(A, lengthscale=ell))
    ours = time_fn(ours_fn, Xj, repeats=9)
    peer = time_fn(numpy_gram, X, X, ell, repeats=9)
    err = float(np.max(np.abs(np.asarray(ours_fn(Xj)) - numpy_gram(X, X, ell))))
    emit(AREA, f"gram_gaussian_n{n}_d{d}_float32", ours_s=ours["median_s"], peer="numpy (Gram trick)",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff": err}, goal_ratio=5.0,  # issue 27 (issue 2 asked for 4x)
         # its roofline: the 2 n^2 d flops of the Gram matmul against this machine's numpy matmul GFLOP/s
         gflops=2 * n * n * d / ours["median_s"] / 1e9,
         roofline_fraction=2 * n * n * d / ours["median_s"] / 1e9 / calib)

    m = 2048
    A = rng.standard_normal((m, d), dtype=np.float32)
    B = rng.standard_normal((m, d), dtype=np.float32) + np.float32(0.2)
    mmd_fn = jax.jit(lambda P, Q: mmd2(P, None, Q, None, lengthscale=ell))
    ours = time_fn(mmd_fn, jnp.asarray(A), jnp.asarray(B), repeats=9)
    peer = time_fn(numpy_mmd2, A, B, ell, repeats=9)
    diff = abs(float(mmd_fn(jnp.asarray(A), jnp.asarray(B))) - float(numpy_mmd2(A, B, ell)))
    emit(AREA, f"mmd2_uniform_n{m}_d{d}_float32", ours_s=ours["median_s"], peer="numpy (Gram trick)",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"abs_diff": diff}, goal_ratio=1.0)


if __name__ == "__main__":
    main()
