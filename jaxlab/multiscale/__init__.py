"""Multiscale single-index model (reconstructed from the paper's abstract and prior work; see
:mod:`jaxlab.multiscale.model`): data model, tensor-unfolding spectral estimator, online spherical SGD."""

from jaxlab.multiscale.metrics import overlaps, strong_recovery, weak_recovery_time
from jaxlab.multiscale.model import (
    LINKS,
    MSIMConfig,
    first_chaos_exact_k2,
    first_chaos_mc,
    link_moments,
    msim_forward,
    sample_data,
    sample_features,
)
from jaxlab.multiscale.sgd import (
    SGDState,
    kronecker_direction,
    lr_schedule,
    population_loss_linear,
    run_online_sgd,
    run_shallow_sgd,
    sgd_init,
    spherical_step,
)
from jaxlab.multiscale.spectral import (
    bbp_overlap_square,
    estimate_from_chaos,
    first_chaos_estimate,
    hopi_refine,
    rank_one_split,
    unfold,
    unfolding_estimator,
)

__all__ = [
    "LINKS",
    "MSIMConfig",
    "SGDState",
    "bbp_overlap_square",
    "estimate_from_chaos",
    "first_chaos_estimate",
    "first_chaos_exact_k2",
    "first_chaos_mc",
    "hopi_refine",
    "kronecker_direction",
    "link_moments",
    "lr_schedule",
    "msim_forward",
    "overlaps",
    "population_loss_linear",
    "rank_one_split",
    "run_online_sgd",
    "run_shallow_sgd",
    "sample_data",
    "sample_features",
    "sgd_init",
    "spherical_step",
    "strong_recovery",
    "unfold",
    "unfolding_estimator",
    "weak_recovery_time",
]
