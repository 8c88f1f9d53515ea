"""Small batched linear solves (``jaxlab.core.linalg``): the array-op elimination used under ``vmap`` equals
LAPACK's LU solve, pivoting included, and the unbatched path is LAPACK's own."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.linalg import ELIMINATION_MAX_BATCH, ELIMINATION_MAX_DIM, elimination_solve, solve


def test_elimination_solve_pivots_like_lapack():
    """The vmapped small-d solve equals numpy's LU solve, also where pivoting is needed (a zero leading entry),
    vmapped over A only, for vector right-hand sides and above the elimination size (LAPACK per matrix)."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 6, 6))
    A[:, 0, 0] = 0.0
    B = rng.standard_normal((5, 6, 2))
    np.testing.assert_allclose(elimination_solve(A[0], B[0]), np.linalg.solve(A[0], B[0]), rtol=1e-12)
    batched = jax.jit(jax.vmap(solve))(A, B)
    np.testing.assert_allclose(batched, np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    shared_b = jax.vmap(solve, in_axes=(0, None))(A, B[0])
    np.testing.assert_allclose(shared_b, np.linalg.solve(A, B[0][None]), rtol=1e-10, atol=1e-12)
    vec = jax.vmap(solve)(A, B[..., 0])
    np.testing.assert_allclose(vec, np.linalg.solve(A, B[..., :1])[..., 0], rtol=1e-10, atol=1e-12)
    big = rng.standard_normal((3, ELIMINATION_MAX_DIM + 1, ELIMINATION_MAX_DIM + 1))
    rhs = rng.standard_normal((3, ELIMINATION_MAX_DIM + 1, 1))
    np.testing.assert_allclose(jax.vmap(solve)(big, rhs), np.linalg.solve(big, rhs), rtol=1e-9)
    # a batch larger than ELIMINATION_MAX_BATCH, and one system: LAPACK, bitwise jnp.linalg.solve
    many = jnp.asarray(rng.standard_normal((ELIMINATION_MAX_BATCH + 1, 3, 3)))
    many_b = jnp.asarray(rng.standard_normal((ELIMINATION_MAX_BATCH + 1, 3)))
    np.testing.assert_array_equal(jax.vmap(solve)(many, many_b), jax.vmap(jnp.linalg.solve)(many, many_b))
    np.testing.assert_array_equal(solve(jnp.asarray(A[1]), jnp.asarray(B[1])), jnp.linalg.solve(A[1], B[1]))


def test_solve_gradients_match_jnp_linalg_solve():
    rng = np.random.default_rng(4)
    A = jnp.asarray(rng.standard_normal((4, 5, 5)) + 5 * np.eye(5))
    b = jnp.asarray(rng.standard_normal((4, 5)))

    def loss(f, A, b):
        return jnp.sum(jax.vmap(f)(A, b) ** 2)

    ga = jax.grad(lambda A, b: loss(solve, A, b), argnums=(0, 1))(A, b)
    gr = jax.grad(lambda A, b: loss(jnp.linalg.solve, A, b), argnums=(0, 1))(A, b)
    for x, y in zip(ga, gr, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
