"""Limits of KL-regularised alignment (Monteiro Paes et al., arXiv:2605.07105): the exact reward–KL frontier,
its estimator from base-model samples, best-of-N, proxy-reward gaps (``jaxlab.alignment.kl_limits``) and a
tabular REINFORCE baseline (``jaxlab.alignment.reinforce``)."""

from jaxlab.alignment.kl_limits import *  # noqa: F403
from jaxlab.alignment.kl_limits import __all__ as _kl_all
from jaxlab.alignment.reinforce import *  # noqa: F403
from jaxlab.alignment.reinforce import __all__ as _rf_all

__all__ = [*_kl_all, *_rf_all]
