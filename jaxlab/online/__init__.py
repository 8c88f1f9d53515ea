"""Online sequence prediction for linear dynamical systems: Universal Sequence Preconditioning (USP) with the
Vovk-Azoury-Warmuth forecaster (Marsden and Hazan, arXiv:2605.08390 and arXiv:2502.06545), plus baselines
(online gradient descent, online ridge, spectral filtering), LDS generators, regret tools and a CSV loader.

Modules: :mod:`~jaxlab.online.usp`, :mod:`~jaxlab.online.vaw`, :mod:`~jaxlab.online.lds`,
:mod:`~jaxlab.online.ogd`, :mod:`~jaxlab.online.spectral`, :mod:`~jaxlab.online.regret`,
:mod:`~jaxlab.online.timeseries`.
"""

from jaxlab.online import lds, ogd, regret, spectral, timeseries, usp, vaw

__all__ = ["lds", "ogd", "regret", "spectral", "timeseries", "usp", "vaw"]
