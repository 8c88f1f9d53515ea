"""Generative, forecasting and 3D-scene methods (spec ``generative.md``): evolutionary forecasting
(:mod:`~jaxlab.generative.forecasting`) and active panoramic scene exploration
(:mod:`~jaxlab.generative.active_scene`). Import the submodules directly."""
