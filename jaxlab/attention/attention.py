"""Old import path of :mod:`jaxlab.attention.pe_spread.attention` (kept for README and notebooks): a re-export."""

from jaxlab.attention.pe_spread.attention import *  # noqa: F403
from jaxlab.attention.pe_spread.attention import __all__  # noqa: F401
