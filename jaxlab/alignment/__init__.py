"""Limits of KL-regularised alignment.

Paper: L. Monteiro Paes, N. Mackraz, B.-J. Theobald, F. Danieli, "Theoretical Limits of Language Model
Alignment", arXiv:2605.07105. The exact reward–KL frontier of the tilted policy ``π_β ∝ π₀ e^{r/β}``, its
estimator from base-model samples, best-of-N and proxy-reward gaps (:mod:`jaxlab.alignment.kl_limits`), the
shared boundary checks (:mod:`jaxlab.alignment.policy`) and a tabular REINFORCE baseline
(:mod:`jaxlab.alignment.reinforce`)::

    from jaxlab.alignment import frontier, best_of_n, beta_for_kl
"""

from jaxlab.alignment.kl_limits import (
    FrontierPoint,
    ProxyGap,
    SampleFrontierPoint,
    bernoulli_frontier,
    best_of_n,
    beta_for_kl,
    bon_from_samples,
    bon_kl_formula,
    covariance_gain,
    dataset_frontier,
    default_betas,
    ensemble_proxy,
    exponential_bon_gain,
    exponential_frontier,
    frontier,
    frontier_from_samples,
    frontier_point,
    gain_at_kl,
    gain_from_samples,
    gaussian_bon_gain,
    gaussian_frontier,
    kl_from_samples,
    kl_max,
    kl_regularized_objective,
    max_gain_at_kl,
    proxy_gaps,
    tilted_log_policy,
    uniform_bon_gain,
    uniform_frontier,
)
from jaxlab.alignment.reinforce import (
    ReinforceInfo,
    ReinforceState,
    reinforce_kl_algorithm,
    reinforce_kl_init,
    reinforce_kl_run,
    reinforce_kl_step,
)

__all__ = [
    "FrontierPoint",
    "ProxyGap",
    "ReinforceInfo",
    "ReinforceState",
    "SampleFrontierPoint",
    "bernoulli_frontier",
    "best_of_n",
    "beta_for_kl",
    "bon_from_samples",
    "bon_kl_formula",
    "covariance_gain",
    "dataset_frontier",
    "default_betas",
    "ensemble_proxy",
    "exponential_bon_gain",
    "exponential_frontier",
    "frontier",
    "frontier_from_samples",
    "frontier_point",
    "gain_at_kl",
    "gain_from_samples",
    "gaussian_bon_gain",
    "gaussian_frontier",
    "kl_from_samples",
    "kl_max",
    "kl_regularized_objective",
    "max_gain_at_kl",
    "proxy_gaps",
    "reinforce_kl_algorithm",
    "reinforce_kl_init",
    "reinforce_kl_run",
    "reinforce_kl_step",
    "tilted_log_policy",
    "uniform_bon_gain",
    "uniform_frontier",
]
