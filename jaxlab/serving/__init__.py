"""Serving systems (spec ``agents_systems.md`` section A): token-level routed decoding with per-model subservers
and delayed batching: the throughput model and routers (:mod:`~jaxlab.serving.token_router`), a discrete-event
simulator (:mod:`~jaxlab.serving.simulator`), a tiny KV-cached decoder (:mod:`~jaxlab.serving.tiny_lm`) and the
real engine (:mod:`~jaxlab.serving.engine`). Import the submodules directly."""
