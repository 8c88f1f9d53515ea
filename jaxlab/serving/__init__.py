"""Serving systems (spec ``agents_systems.md`` section A): token-level routed decoding with per-model subservers
and delayed batching (:mod:`~jaxlab.serving.token_router`). Import the submodules directly."""
