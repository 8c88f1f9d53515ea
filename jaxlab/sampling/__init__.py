"""Particle and Langevin samplers, one package per area.

- :mod:`jaxlab.sampling.msip`: MSIP quadrature (Belhadji, Sharp, Marzouk, arXiv:2605.14142), with its benchmark
  targets in :mod:`jaxlab.sampling.msip.benchmarks` (also ``jaxlab.sampling.benchmarks``).
- :mod:`jaxlab.sampling.langevin`: annealed Langevin for compositional score-based inference (Touron, Cardoso,
  Arbel, Rodrigues, arXiv:2605.21253), also importable as ``jaxlab.sampling.annealed_langevin``.

The areas load on first use, so that importing one area does not import the other::

    from jaxlab.sampling import msip, benchmarks
    from jaxlab.sampling import annealed_langevin as al
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["annealed_langevin", "benchmarks", "langevin", "msip", "pde_inverse"]

# public names of this package -> the module they stand for
_ALIASES = {
    "annealed_langevin": "jaxlab.sampling.langevin",
    "benchmarks": "jaxlab.sampling.msip.benchmarks",
    "langevin": "jaxlab.sampling.langevin",
    "msip": "jaxlab.sampling.msip",
    "pde_inverse": "jaxlab.sampling.msip.pde_inverse",
}


def __getattr__(name: str) -> Any:
    if name in _ALIASES:
        return importlib.import_module(_ALIASES[name])
    raise AttributeError(f"module 'jaxlab.sampling' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
