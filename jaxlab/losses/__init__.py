"""Surrogate losses.

* ``jaxlab.losses.cwr``: classification with rejection (target loss, Chow's rule, CE/OvA/Crammer-Singer/BEP
  surrogates with abstain links, a small-K 2-d fan embedding and jaxlab's 2-d interval-coverage surrogate);
* ``jaxlab.losses.cwr_check``: the exact LP calibration checker (needs scipy);
* ``jaxlab.losses.cwr_train``: scorers trained with any of them on a Gaussian-mixture task.

Import the submodules.
"""
