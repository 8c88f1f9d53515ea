"""Surrogate losses.

* ``jaxlab.losses.cwr``: classification with rejection (the area ``cwr``): target loss, Chow's rule,
  CE/OvA/Crammer-Singer/BEP surrogates with abstain links, a small-K 2-d fan embedding, jaxlab's 2-d
  interval-coverage surrogate, the exact LP calibration checker and the mixture training study;
* ``jaxlab.losses.cwr_check``: the checker module :mod:`jaxlab.losses.cwr.check` (the LP needs scipy);
* ``jaxlab.losses.cwr_train``: the training module :mod:`jaxlab.losses.cwr.train`.
"""

from jaxlab.losses import cwr
from jaxlab.losses.cwr import check as cwr_check
from jaxlab.losses.cwr import train as cwr_train

__all__ = ["cwr", "cwr_check", "cwr_train"]
