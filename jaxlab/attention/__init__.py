"""Attention and positional encodings. Areas: :mod:`jaxlab.attention.pe_spread` (positional spread of additive
positional encodings). The modules ``jaxlab.attention.pe``, ``jaxlab.attention.attention`` and
``jaxlab.attention.train`` re-export the area's modules under their earlier paths."""

from jaxlab.attention import pe_spread

__all__ = ["pe_spread"]
