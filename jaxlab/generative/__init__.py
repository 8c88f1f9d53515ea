"""Generative, forecasting and 3D-scene methods (spec ``generative.md``): rectified flow and a tiny MM-DiT
(:mod:`~jaxlab.generative.rectified_flow`), SemanticFlow customisation (:mod:`~jaxlab.generative.semantic_flow`),
conditional flow matching (:mod:`~jaxlab.generative.flow_matching`), FlowAgent tool planning
(:mod:`~jaxlab.generative.flow_agent`), evolutionary forecasting (:mod:`~jaxlab.generative.forecasting`) and
active panoramic scene exploration (:mod:`~jaxlab.generative.active_scene`). Import the submodules directly."""
