"""Online sequence prediction for linear dynamical systems (area ``online``).

Universal Sequence Preconditioning (USP) with the Vovk-Azoury-Warmuth forecaster: A. Marsden and E. Hazan,
*The Power of Second Order Methods for Sequence Preconditioning* (arXiv:2605.08390) and *Universal Sequence
Preconditioning* (arXiv:2502.06545); baselines (online gradient descent, online ridge, spectral filtering),
LDS generators and regret tools.

Modules: :mod:`~jaxlab.online.usp`, :mod:`~jaxlab.online.vaw`, :mod:`~jaxlab.online.lds`,
:mod:`~jaxlab.online.ogd`, :mod:`~jaxlab.online.spectral`, :mod:`~jaxlab.online.regret`. The ETTh1 loader is
:mod:`jaxlab.data.ett` (also reachable as ``jaxlab.online.timeseries``).

Every online learner is an :class:`~jaxlab.core.Algorithm` with ``step(key, state, (a_t, y_t))``:
:func:`vaw_algorithm`, :func:`ridge_ftl_algorithm`, :func:`ogd_algorithm`, :func:`usp_vaw_algorithm` and
:func:`spectral_ogd_algorithm` (the last two over ``(a_t, y~_t, y_t)``, see :func:`usp_stream`).

Example:
  >>> import jax
  >>> from jaxlab.online import lds, usp
  >>> params = lds.random_lds(jax.random.key(0), 20)
  >>> u = jax.random.normal(jax.random.key(1), (500, 1))
  >>> y, _ = lds.simulate(jax.random.key(2), params, u, obs_noise=0.1)
  >>> state, info = usp.usp_vaw_run(y[:, 0], u, n=8, lam=1.0)
"""

from jaxlab.data import ett as timeseries
from jaxlab.online import lds, ogd, regret, spectral, usp, vaw
from jaxlab.online.lds import LDSParams, deterministic_lds, random_lds, simulate
from jaxlab.online.ogd import OGDInfo, OGDState, ogd_algorithm
from jaxlab.online.regret import best_fixed_loss, regret_vs_best_fixed, regret_vs_predictor, vaw_regret_bound
from jaxlab.online.spectral import hankel_filters, spectral_features, spectral_ogd_algorithm, spectral_ogd_run
from jaxlab.online.usp import (
    arx_features,
    chebyshev_coeffs,
    coeffs,
    precondition,
    usp_predictor,
    usp_stream,
    usp_vaw_algorithm,
    usp_vaw_run,
)
from jaxlab.online.vaw import VAWGramState, VAWInfo, VAWState, ridge_ftl_algorithm, ridge_ftl_run, vaw_algorithm

__all__ = [
    "LDSParams",
    "OGDInfo",
    "OGDState",
    "VAWGramState",
    "VAWInfo",
    "VAWState",
    "arx_features",
    "best_fixed_loss",
    "chebyshev_coeffs",
    "coeffs",
    "deterministic_lds",
    "hankel_filters",
    "lds",
    "ogd",
    "ogd_algorithm",
    "precondition",
    "random_lds",
    "regret",
    "regret_vs_best_fixed",
    "regret_vs_predictor",
    "ridge_ftl_algorithm",
    "ridge_ftl_run",
    "simulate",
    "spectral",
    "spectral_features",
    "spectral_ogd_algorithm",
    "spectral_ogd_run",
    "timeseries",
    "usp",
    "usp_predictor",
    "usp_stream",
    "usp_vaw_algorithm",
    "usp_vaw_run",
    "vaw",
    "vaw_algorithm",
    "vaw_regret_bound",
]
