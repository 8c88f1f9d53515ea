"""Re-export of :mod:`jaxlab.serving.token_router.tiny_lm` at its former path (``from jaxlab.serving.tiny_lm import
TinyDecoder``)."""

from jaxlab.serving.token_router.tiny_lm import KVCache, TinyDecoder, decode_step, decode_step_flat, forward, init_cache

__all__ = ["KVCache", "TinyDecoder", "decode_step", "decode_step_flat", "forward", "init_cache"]
