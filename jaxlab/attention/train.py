"""Old import path of :mod:`jaxlab.attention.pe_spread.training` (kept for README and notebooks): a re-export."""

from jaxlab.attention.pe_spread.training import *  # noqa: F403
from jaxlab.attention.pe_spread.training import __all__  # noqa: F401
