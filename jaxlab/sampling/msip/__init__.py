"""MSIP: mean shift interacting particles for MMD-optimal weighted quadrature of unnormalized densities.

Belhadji, Sharp, Marzouk, *To discretize continually: Mean shift interacting particle systems for Bayesian
inference*, arXiv:2605.14142, and *Weighted quantization using MMD: From mean field to mean shift via gradient
flows*, arXiv:2502.10600. Modules: :mod:`~jaxlab.sampling.msip.iteration` (the map, the weights and the MSIP
iteration), :mod:`~jaxlab.sampling.msip.estimators` (kernel-mean-embedding estimators),
:mod:`~jaxlab.sampling.msip.wfr` (the Wasserstein-Fisher-Rao flow), :mod:`~jaxlab.sampling.msip.benchmarks`
(targets and particle metrics) and :mod:`~jaxlab.sampling.msip.pde_inverse` (the 64-dimensional PDE target).

Example::

    import jax
    from jaxlab.sampling import benchmarks, msip
    target = benchmarks.gmm()
    est = msip.fredholm_estimator(target.log_density, gamma=0.9)
    Y0 = 3.0 * jax.random.normal(jax.random.key(0), (40, 2))
    state, trace = msip.msip(jax.random.key(1), Y0, est, num_steps=200, step_size=0.1, lengthscale=0.5)
    state.particles, state.weights    # the nodes and weights of the quadrature rule
"""

from jaxlab.sampling.msip import benchmarks, pde_inverse
from jaxlab.sampling.msip.estimators import (
    Estimator,
    empirical_estimator,
    exact_estimator,
    fredholm_estimator,
    gaussian_estimator,
    gradient_free_estimator,
    gradient_informed_estimator,
)
from jaxlab.sampling.msip.iteration import (
    MSIPInfo,
    MSIPState,
    default_lengthscale,
    mean_shift,
    msip,
    msip_algorithm,
    msip_init,
    msip_map,
    msip_step,
    optimal_weights,
    reduced_objective,
)
from jaxlab.sampling.msip.target import Target
from jaxlab.sampling.msip.wfr import WFRArgs, wfr_vector_field

__all__ = [
    "Estimator",
    "MSIPInfo",
    "MSIPState",
    "Target",
    "WFRArgs",
    "benchmarks",
    "default_lengthscale",
    "empirical_estimator",
    "exact_estimator",
    "fredholm_estimator",
    "gaussian_estimator",
    "gradient_free_estimator",
    "gradient_informed_estimator",
    "mean_shift",
    "msip",
    "msip_algorithm",
    "msip_init",
    "msip_map",
    "msip_step",
    "optimal_weights",
    "pde_inverse",
    "reduced_objective",
    "wfr_vector_field",
]
