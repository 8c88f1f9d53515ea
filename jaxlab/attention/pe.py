"""Old import path of :mod:`jaxlab.attention.pe_spread.pe` (kept for README and notebooks): a re-export."""

from jaxlab.attention.pe_spread.pe import *  # noqa: F403
from jaxlab.attention.pe_spread.pe import __all__  # noqa: F401
