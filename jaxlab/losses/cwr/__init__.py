"""Classification with rejection (area ``cwr``): the 0-1-c target and Chow's rule, convex calibrated surrogates
with their links, a registry of them by name, the conditional risk and its optax minimiser, an exact LP
calibration checker, and scorers trained with the surrogates on a known Gaussian mixture.

Modules: :mod:`~jaxlab.losses.cwr.target` (l_c and Chow's rule), :mod:`~jaxlab.losses.cwr.losses` (the
surrogates and links), :mod:`~jaxlab.losses.cwr.registry` (:func:`surrogate` by name),
:mod:`~jaxlab.losses.cwr.risk` (conditional risk and its minimiser), :mod:`~jaxlab.losses.cwr.check` (the
polyhedral geometry and the exact checker, also ``jaxlab.losses.cwr_check``) and
:mod:`~jaxlab.losses.cwr.train` (the mixture study, also ``jaxlab.losses.cwr_train``).

Example:
  >>> import jax.numpy as jnp
  >>> from jaxlab.losses import cwr
  >>> s = cwr.surrogate("cwr2d", K=50, c=0.2)                  # scores u = (m, r)
  >>> u, y = jnp.array([[3.0, 0.0], [7.4, 2.0]]), jnp.array([2, 6])
  >>> loss, decision = s.loss(u, y), s.link(u)                 # decision -1 = reject
  >>> rep = cwr.calibration_report("cwr2d", 5, 0.2, cwr.threshold_distributions(0, 5, 0.2, 8))
"""

from jaxlab.losses.cwr import check, train
from jaxlab.losses.cwr.check import (
    CalibrationReport,
    bayes_set,
    calibration_report,
    cwr2d_lattice_report,
    link_cells,
    lp_min,
    polyhedral_pieces,
    threshold_distributions,
)
from jaxlab.losses.cwr.losses import (
    bep_code,
    bep_link,
    bep_loss,
    ce_chow_link,
    ce_chow_loss,
    cs_link,
    cs_loss,
    cwr2d_default_a,
    cwr2d_link,
    cwr2d_loss,
    generalized_hinge_link,
    generalized_hinge_loss,
    ova_hinge_loss,
    ova_link,
    ref2d_link,
    ref2d_loss,
    ref2d_valid,
)
from jaxlab.losses.cwr.registry import SURROGATES, Surrogate, surrogate, surrogate_dim
from jaxlab.losses.cwr.risk import (
    MinimizerInfo,
    MinimizerState,
    conditional_risk,
    minimize,
    minimize_conditional_risk,
    minimizer_algorithm,
    minimizer_init,
    minimizer_step,
)
from jaxlab.losses.cwr.target import REJECT, bayes_decision, bayes_risk, cwr_target_loss
from jaxlab.losses.cwr.train import (
    CentreRadiusScorer,
    MixtureTask,
    cwr_metrics,
    evaluate,
    fit,
    make_centre_radius_scorer,
    make_mixture,
    make_scorer,
    mixture_bayes_risk,
    sample_mixture,
    scorer_train_algorithm,
)

__all__ = [
    "REJECT",
    "SURROGATES",
    "CalibrationReport",
    "CentreRadiusScorer",
    "MinimizerInfo",
    "MinimizerState",
    "MixtureTask",
    "Surrogate",
    "bayes_decision",
    "bayes_risk",
    "bayes_set",
    "bep_code",
    "bep_link",
    "bep_loss",
    "calibration_report",
    "ce_chow_link",
    "ce_chow_loss",
    "check",
    "conditional_risk",
    "cs_link",
    "cs_loss",
    "cwr2d_default_a",
    "cwr2d_lattice_report",
    "cwr2d_link",
    "cwr2d_loss",
    "cwr_metrics",
    "cwr_target_loss",
    "evaluate",
    "fit",
    "generalized_hinge_link",
    "generalized_hinge_loss",
    "link_cells",
    "lp_min",
    "make_centre_radius_scorer",
    "make_mixture",
    "make_scorer",
    "minimize",
    "minimize_conditional_risk",
    "minimizer_algorithm",
    "minimizer_init",
    "minimizer_step",
    "mixture_bayes_risk",
    "ova_hinge_loss",
    "ova_link",
    "polyhedral_pieces",
    "ref2d_link",
    "ref2d_loss",
    "ref2d_valid",
    "sample_mixture",
    "scorer_train_algorithm",
    "surrogate",
    "surrogate_dim",
    "threshold_distributions",
    "train",
]
