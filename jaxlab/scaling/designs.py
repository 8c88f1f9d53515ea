"""Training designs (sets of (N, D) runs) and the collinear-versus-diverse extrapolation experiment.

Paper: Kricheli, Reid, Sarkar, Gandikota, Shakarian, "Tokens-per-Parameter Coverage Is Critical for Robust LLM
Scaling Law Extrapolation" (arXiv:2605.08541). A *collinear* design trains every run at one tokens-per-parameter
ratio k (D = k N, a ray in log space); a *diverse* (non-collinear) design spreads k. The experiment below is
a synthetic reproduction of the paper's experiment (its corpora were not available): simulate
ln L_i = ln L1(theta_true; N_i, D_i) + eps_i, eps_i ~ N(0, sigma^2), fit L1 by least squares on ln L from a few
starts, and score the fit by the RMSE of ln L on off-ray, extrapolated test points.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Key
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive
from jaxlab.scaling.fit import lm_solve
from jaxlab.scaling.laws import ChinchillaParams, Covariates, chinchilla_log_loss, covariates
from jaxlab.scaling.papers import KRICHELI

__all__ = [
    "ExtrapolationResult",
    "collinear_design",
    "cycled_design",
    "extrapolation_experiment",
    "factorial_design",
]


def _positive_vector(x: Any, name: str) -> Array:
    x = as_array(x, name, ndim=1, finite=True)
    return check_in_range(x, name, 0.0, float("inf"), lo_open=True)


@cites(KRICHELI)
def collinear_design(N: Any, k: Any) -> tuple[Array, Array]:
    """Every run at one tokens-per-parameter ratio: ``(N, k N)``."""
    N = _positive_vector(N, "N")
    k = check_positive(k, "k")
    return N, k * N


@cites(KRICHELI)
def factorial_design(N: Any, ks: Any) -> tuple[Array, Array]:
    """Every N at every k (``len(ks) * len(N)`` runs, k-major): ``(tile(N), repeat(ks) * tile(N))``."""
    N, ks = _positive_vector(N, "N"), _positive_vector(ks, "ks")
    Ns = jnp.tile(N, ks.shape[0])
    return Ns, jnp.repeat(ks, N.shape[0]) * Ns


@cites(KRICHELI)
def cycled_design(N: Any, ks: Any) -> tuple[Array, Array]:
    """One run per N, the ratio cycling through ``ks``: k_i = ks[i mod len(ks)]."""
    N, ks = _positive_vector(N, "N"), _positive_vector(ks, "ks")
    return N, ks[jnp.arange(N.shape[0]) % ks.shape[0]] * N


class ExtrapolationResult(NamedTuple):
    """Per-seed test RMSE of ln L for the collinear and the diverse design, and the fitted parameters."""

    rmse_collinear: Array
    rmse_diverse: Array
    theta_collinear: ChinchillaParams
    theta_diverse: ChinchillaParams


def _fit_best(theta0s: ChinchillaParams, X: Covariates, log_L: Array, max_steps: int) -> ChinchillaParams:
    fits = jax.vmap(lambda th: lm_solve(chinchilla_log_loss, th, X, log_L, max_steps=max_steps))(theta0s)
    i = jnp.argmin(jnp.where(jnp.isfinite(fits.value), fits.value, jnp.inf))
    return jax.tree_util.tree_map(lambda a: a[i], fits.theta)


@cites(KRICHELI)
def extrapolation_experiment(key: Key, theta_true: ChinchillaParams, train_collinear: tuple[Any, Any],
                             train_diverse: tuple[Any, Any], test: tuple[Any, Any], theta0s: ChinchillaParams,
                             *, num_seeds: int = 30, noise_sd: float = 0.005,
                             max_steps: int = 200) -> ExtrapolationResult:
    """Fit L1 (least squares on ln L, Levenberg-Marquardt from every start of ``theta0s``, best kept) to
    noisy simulations of both training designs, one noise draw per seed, and score each fit by
    RMSE(ln L_hat - ln L_true) on the ``test`` design. Designs are ``(N, D)`` pairs."""
    num_seeds = check_int(num_seeds, "num_seeds", min_value=1)
    noise_sd = check_positive(noise_sd, "noise_sd")
    Xc, Xd, Xt = covariates(*train_collinear), covariates(*train_diverse), covariates(*test)
    if Xc.log_N.shape != Xd.log_N.shape:
        raise ValueError(f"both training designs must have the same number of runs, got "
                         f"{Xc.log_N.shape[0]} and {Xd.log_N.shape[0]}")
    truth_test = chinchilla_log_loss(theta_true, Xt)
    clean_c, clean_d = chinchilla_log_loss(theta_true, Xc), chinchilla_log_loss(theta_true, Xd)

    def one(k):
        kc, kd = jax.random.split(k)
        th_c = _fit_best(theta0s, Xc, clean_c + noise_sd * jax.random.normal(kc, clean_c.shape), max_steps)
        th_d = _fit_best(theta0s, Xd, clean_d + noise_sd * jax.random.normal(kd, clean_d.shape), max_steps)
        rmse = lambda th: jnp.sqrt(jnp.mean((chinchilla_log_loss(th, Xt) - truth_test) ** 2))  # noqa: E731
        return rmse(th_c), rmse(th_d), th_c, th_d

    out = jax.jit(jax.vmap(one))(jax.random.split(key, num_seeds))
    return ExtrapolationResult(*out)
