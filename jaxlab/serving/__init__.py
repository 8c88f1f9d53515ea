"""Serving systems: token-level routed decoding with per-model subservers and delayed batching
(:mod:`~jaxlab.serving.token_router`: the throughput model and routers, a discrete-event simulator, a tiny
KV-cached decoder and the real engine). ``jaxlab.serving.engine`` and ``jaxlab.serving.tiny_lm`` re-export the
engine and the decoder at their former paths."""

from jaxlab.serving import token_router

__all__ = ["token_router"]
