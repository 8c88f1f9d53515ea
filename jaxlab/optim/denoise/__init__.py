"""Optimizer-agnostic gradient denoisers as optax transformations (area ``denoise``).

EMA, implicit gradient transport (IGT), DiSK (X. Zhang, Z. Bu, B. Balle, M. Hong, M. Razaviyayn, V. Mirrokni,
*DiSK: Differentially Private Optimizer with Simplified Kalman Filter for Noise Reduction*, ICLR 2025,
arXiv:2410.03883) and a two-point recursion (:mod:`~jaxlab.optim.denoise.denoisers`); maximum-likelihood
denoisers for quadratic and cubic objectives and their recursive least-squares form
(:mod:`~jaxlab.optim.denoise.mle`); DP-SGD clipping, noise and accounting (:mod:`~jaxlab.optim.denoise.dp`).

Example:
  >>> import jax.numpy as jnp, optax
  >>> from jaxlab.optim import disk, find_state
  >>> params = jnp.ones(3)
  >>> tx = optax.chain(disk(kappa=0.7, gamma=0.5), optax.adam(1e-3)); state = tx.init(params)
  >>> find_state(state).count
  Array(0, dtype=int32)
"""

from jaxlab.optim.denoise.denoisers import (
    DenoisedOptState,
    DenoiseInfo,
    Denoiser,
    DenoiseState,
    denoised_optimizer_algorithm,
    denoiser_tracking_algorithm,
    disk,
    ema,
    find_state,
    gaussian_noise,
    harmonic,
    igt,
    run,
    track,
    two_point,
)
from jaxlab.optim.denoise.dp import (
    DPInfo,
    clip_and_noise,
    dp_denoised_algorithm,
    dp_query,
    dp_run,
    noise_multiplier_for,
)
from jaxlab.optim.denoise.mle import RLSInfo, RLSState, cubic_mle, quadratic_mle, rls_algorithm, rls_init, rls_step

__all__ = [
    "DPInfo",
    "DenoiseInfo",
    "DenoiseState",
    "DenoisedOptState",
    "Denoiser",
    "RLSInfo",
    "RLSState",
    "clip_and_noise",
    "cubic_mle",
    "denoised_optimizer_algorithm",
    "denoiser_tracking_algorithm",
    "disk",
    "dp_denoised_algorithm",
    "dp_query",
    "dp_run",
    "ema",
    "find_state",
    "gaussian_noise",
    "harmonic",
    "igt",
    "noise_multiplier_for",
    "quadratic_mle",
    "rls_algorithm",
    "rls_init",
    "rls_step",
    "run",
    "track",
    "two_point",
]
