"""Optimizers and gradient transformations (optax): the gradient denoisers of :mod:`jaxlab.optim.denoise`
(EMA, IGT, DiSK, two-point, their MLE counterparts) and DP-SGD helpers, re-exported here.

Example:
  >>> import optax
  >>> from jaxlab.optim import disk, find_state
  >>> den = disk(kappa=0.7, gamma=0.5); tx = optax.chain(den, optax.adam(1e-3))
"""

from jaxlab.optim import denoise
from jaxlab.optim.denoise import (
    DenoisedOptState,
    DenoiseInfo,
    Denoiser,
    DenoiseState,
    DPInfo,
    RLSInfo,
    RLSState,
    clip_and_noise,
    cubic_mle,
    denoised_optimizer_algorithm,
    denoiser_tracking_algorithm,
    disk,
    dp_denoised_algorithm,
    dp_query,
    dp_run,
    ema,
    find_state,
    gaussian_noise,
    harmonic,
    igt,
    noise_multiplier_for,
    quadratic_mle,
    rls_algorithm,
    rls_init,
    rls_step,
    run,
    track,
    two_point,
)

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
    "denoise",
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
