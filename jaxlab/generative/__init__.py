"""Generative and 3D-scene methods, one package per area:

- :mod:`jaxlab.generative.semantic_flow`: rectified flow, a tiny MM-DiT and SemanticFlow's probe-guided sampling
  (:mod:`~jaxlab.generative.semantic_flow.rectified_flow` is also reachable as ``jaxlab.generative.rectified_flow``);
- :mod:`jaxlab.generative.flow_agent`: conditional flow matching and FlowAgent tool planning
  (:mod:`~jaxlab.generative.flow_agent.flow_matching` is also ``jaxlab.generative.flow_matching``);
- :mod:`jaxlab.generative.active_scene`: ActPano3D's active panoramic scene exploration.

Evolutionary forecasting moved to :mod:`jaxlab.forecasting` (still reachable as ``jaxlab.generative.forecasting``).
The subpackages are imported on first access, so importing one area does not import the others.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["active_scene", "flow_agent", "flow_matching", "forecasting", "rectified_flow", "semantic_flow"]

_MODULES = {
    "active_scene": "jaxlab.generative.active_scene",
    "flow_agent": "jaxlab.generative.flow_agent",
    "flow_matching": "jaxlab.generative.flow_agent.flow_matching",
    "forecasting": "jaxlab.forecasting",
    "rectified_flow": "jaxlab.generative.semantic_flow.rectified_flow",
    "semantic_flow": "jaxlab.generative.semantic_flow",
}


def __getattr__(name: str) -> ModuleType:
    """Import the area package (or module) ``name`` on first access (PEP 562)."""
    if name in _MODULES:
        module = importlib.import_module(_MODULES[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazily imported subpackages included (PEP 562)."""
    return sorted(set(globals()) | set(__all__))
