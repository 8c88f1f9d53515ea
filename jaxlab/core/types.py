"""Shape-annotated type aliases shared by every area (jaxtyping).

``Float[Array, "n d"]`` documents the shape contract of a public function; jaxlab does not enable runtime
type checking globally, the validators of :mod:`jaxlab.core.validation` enforce the contract at the boundary.
"""

from __future__ import annotations

from jaxtyping import Array, ArrayLike, Bool, Complex, Float, Int, PRNGKeyArray, PyTree, Real, Scalar

Key = PRNGKeyArray
"""A JAX PRNG key (``jax.random.key`` or a legacy ``uint32[2]`` key)."""

FloatScalar = Float[Array, ""] | float
Points = Float[Array, "n d"]
Weights = Float[Array, " n"]

__all__ = [
    "Array",
    "ArrayLike",
    "Bool",
    "Complex",
    "Float",
    "FloatScalar",
    "Int",
    "Key",
    "PRNGKeyArray",
    "Points",
    "PyTree",
    "Real",
    "Scalar",
    "Weights",
]
