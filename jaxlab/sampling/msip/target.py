"""The benchmark-target type of the MSIP area, shared by :mod:`~jaxlab.sampling.msip.benchmarks` and
:mod:`~jaxlab.sampling.msip.pde_inverse`.

A target is a pure log density on single points, ``log π̃: (d,) -> ()`` (unnormalized), plus an exact sampler and
the exact moments where they exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array

__all__ = ["Target", "check_point"]


class Target(NamedTuple):
    """A benchmark target of the MSIP area.

    Attributes:
      name: short name, e.g. ``"gmm3"`` or ``"funnel2"``.
      dim: the dimension ``d``.
      log_density: ``log π̃(x)`` for one point ``x`` of shape ``(d,)``, returning a scalar (unnormalized); it
        raises ``ValueError`` on a point of another shape.
      sample: exact sampler ``sample(key, n) -> (n, d)`` float array, or ``None`` where none exists.
      mean: ``(d,)`` float array, the exact mean, or ``None`` where unknown.
      cov: ``(d, d)`` float array, the exact covariance, or ``None`` where unknown.
    """

    name: str
    dim: int
    log_density: Callable[[Array], Array]
    sample: Callable[[Array, int], Array] | None = None
    mean: Array | None = None
    cov: Array | None = None


def check_point(x: Array, dim: int, name: str) -> Array:
    """Return ``x``; raise ``ValueError`` (at trace time) unless it is one point of shape ``(dim,)``.

    A target's log density is written for its own dimension: a point of another dimension would either fail
    deep inside its broadcasting or, worse, be silently accepted (a 2-D density reading ``x[0], x[1]``).

    Args:
      x: the point handed to the log density.
      dim: the target's dimension.
      name: the target's name, for the message.

    Returns:
      ``x`` unchanged.

    Raises:
      ValueError: ``x`` does not have shape ``(dim,)``.
    """
    if jnp.shape(x) != (dim,):
        raise ValueError(
            f"the {name} target's log_density takes points of shape ({dim},), got shape {jnp.shape(x)}: the "
            f"particles (Y0) must have d = {dim} columns"
        )
    return x
