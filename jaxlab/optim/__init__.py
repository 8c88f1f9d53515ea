"""Optimizers and gradient transformations (optax): gradient denoisers, their MLE counterparts, DP helpers."""

from jaxlab.optim.denoise import (
    Denoiser,
    DenoiseState,
    Info,
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
from jaxlab.optim.denoise_mle import RLSState, cubic_mle, quadratic_mle, rls_init, rls_step
from jaxlab.optim.dp import DPInfo, clip_and_noise, dp_query, dp_run, noise_multiplier_for

__all__ = [
    "DPInfo",
    "DenoiseState",
    "Denoiser",
    "Info",
    "RLSState",
    "clip_and_noise",
    "cubic_mle",
    "disk",
    "dp_query",
    "dp_run",
    "ema",
    "find_state",
    "gaussian_noise",
    "harmonic",
    "igt",
    "noise_multiplier_for",
    "quadratic_mle",
    "rls_init",
    "rls_step",
    "run",
    "track",
    "two_point",
]
