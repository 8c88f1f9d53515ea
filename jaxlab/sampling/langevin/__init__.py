"""Annealed Langevin dynamics with composite scores for tall-data simulation-based inference.

Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253 (2026), with the composite scores of Geffner, Papamakarios & Mnih
(ICML 2023, arXiv:2209.14249) and Linhart et al. (arXiv:2404.07593). Modules:
:mod:`~jaxlab.sampling.langevin.schedules` (VP schedules, the practical ALD schedule),
:mod:`~jaxlab.sampling.langevin.scores` (composite scores), :mod:`~jaxlab.sampling.langevin.ula` (ULA),
:mod:`~jaxlab.sampling.langevin.ald` (annealed Langevin), :mod:`~jaxlab.sampling.langevin.gaussian` (Gaussian
closed forms and level problems), :mod:`~jaxlab.sampling.langevin.bounds` (W2 bounds and tuning rules),
:mod:`~jaxlab.sampling.langevin.models` (toy targets) and :mod:`~jaxlab.sampling.langevin.dsm` (a score network
trained by denoising score matching). ``jaxlab.sampling.annealed_langevin`` is this package.

Example::

    from jaxlab.sampling import annealed_langevin as al
    score = al.make_composite_score("linhart", prior_score_fn, post_score_fn, xs, prior_cov=S0, post_covs=Sj)
    ts, hs, ks = al.ald_default_schedule(L=400, k=5, tau=0.5)
    theta = al.annealed_langevin(key, jax.random.normal(key, (1000, d)), score, ts, hs, ks)
"""

from jaxlab.sampling.langevin.ald import ALDInfo, ALDState, ald_algorithm, ald_init, ald_kernel, annealed_langevin
from jaxlab.sampling.langevin.bounds import (
    DK_CONSTANT,
    TuneResult,
    ald_bound_terms,
    ald_w2_bound,
    dk_level_term,
    geffner_score_error,
    level_constants,
    linhart_score_error,
    stability_cap,
    tune,
    tune_ald,
)
from jaxlab.sampling.langevin.dsm import ScoreNet, dsm_loss, train_score_net
from jaxlab.sampling.langevin.gaussian import (
    ald_gaussian_moments,
    bridging_gaussians,
    gaussian_diffuse,
    gaussian_problem,
    geffner_bridging_gaussian,
    linhart_bridging_gaussian,
    path_w2,
    spd_inverse,
    sqrtm_psd,
    tall_posterior_gaussian,
    ula_gaussian_moments,
    w2_gaussian,
)
from jaxlab.sampling.langevin.models import (
    GaussianToy,
    GMMPrior,
    gaussian_score,
    gaussian_toy,
    gaussian_toy_scores,
    gmm_posterior,
    gmm_sample,
    gmm_score,
    gmm_toy_scores,
)
from jaxlab.sampling.langevin.schedules import ald_default_schedule, linhart_alpha, vp_alpha
from jaxlab.sampling.langevin.scores import (
    ScoreFn,
    geffner_score,
    linhart_score,
    linhart_weights,
    make_composite_score,
)
from jaxlab.sampling.langevin.ula import (
    ULAInfo,
    ULAState,
    ula_algorithm,
    ula_init,
    ula_kernel,
    ula_run,
    ula_step,
)

__all__ = [
    "DK_CONSTANT",
    "ALDInfo",
    "ALDState",
    "GMMPrior",
    "GaussianToy",
    "ScoreFn",
    "ScoreNet",
    "TuneResult",
    "ULAInfo",
    "ULAState",
    "ald_algorithm",
    "ald_bound_terms",
    "ald_default_schedule",
    "ald_gaussian_moments",
    "ald_init",
    "ald_kernel",
    "ald_w2_bound",
    "annealed_langevin",
    "bridging_gaussians",
    "dk_level_term",
    "dsm_loss",
    "gaussian_diffuse",
    "gaussian_problem",
    "gaussian_score",
    "gaussian_toy",
    "gaussian_toy_scores",
    "geffner_bridging_gaussian",
    "geffner_score",
    "geffner_score_error",
    "gmm_posterior",
    "gmm_sample",
    "gmm_score",
    "gmm_toy_scores",
    "level_constants",
    "linhart_alpha",
    "linhart_bridging_gaussian",
    "linhart_score",
    "linhart_score_error",
    "linhart_weights",
    "make_composite_score",
    "path_w2",
    "spd_inverse",
    "sqrtm_psd",
    "stability_cap",
    "tall_posterior_gaussian",
    "train_score_net",
    "tune",
    "tune_ald",
    "ula_algorithm",
    "ula_gaussian_moments",
    "ula_init",
    "ula_kernel",
    "ula_run",
    "ula_step",
    "vp_alpha",
    "w2_gaussian",
]
