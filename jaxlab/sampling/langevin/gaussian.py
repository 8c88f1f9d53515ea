r"""Gaussian closed forms for annealed Langevin with composite scores.

Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253; composite scores of Geffner, Papamakarios & Mnih (ICML 2023,
arXiv:2209.14249) and Linhart et al. (arXiv:2404.07593).

Prior ``N(μ_λ, Σ_λ)``, individual posteriors ``N(μ_j, Σ_j)`` (j = 1..n), VP diffusion
``θ_t = sqrt(α) θ_0 + sqrt(1-α) ε``:

- diffusing ``N(μ, Σ)`` gives ``N(sqrt(α) μ, αΣ + (1-α) I)``;
- tall posterior ``Σ_n^{-1} = (1-n) Σ_λ^{-1} + Σ_j Σ_j^{-1}``,
  ``μ_n = Σ_n [(1-n) Σ_λ^{-1} μ_λ + Σ_j Σ_j^{-1} μ_j]``;
- Geffner bridging density ``π^G_t = N(m^G_t, (Λ^G_t)^{-1})`` with
  ``Λ^G_t = (1-n)(αΣ_λ + (1-α)I)^{-1} + Σ_j (αΣ_j + (1-α)I)^{-1}`` and
  ``m^G_t = (Λ^G_t)^{-1} sqrt(α) [(1-n)(αΣ_λ + (1-α)I)^{-1} μ_λ + Σ_j (αΣ_j + (1-α)I)^{-1} μ_j]``,
  defined only when ``Λ^G_t ≻ 0`` (``1-n < 0``, so this can fail);
- Linhart bridging density (exact scores and covariances): the diffused tall posterior
  ``N(sqrt(α) μ_n, αΣ_n + (1-α) I)``;
- ``W2²(N(a, A), N(b, B)) = ||a-b||² + tr(A + B - 2 (A^{1/2} B A^{1/2})^{1/2})`` (square roots by ``eigh``);
- one ULA step ``θ ← θ + h s(θ) + sqrt(2h) ξ`` on the target ``N(μ, P^{-1})`` maps ``(m, C)`` to
  ``(μ + (I - hP)(m - μ), (I - hP) C (I - hP)ᵀ + 2h I)``; with ``P = Q diag(p) Qᵀ`` and ``r = 1 - h p``,
  ``k`` steps give ``m_k = μ + Q r^k Qᵀ (m - μ)`` and, in the eigenbasis,
  ``C̃_k = r^k C̃ r^k + diag(2h (1 - r^{2k}) / (1 - r²))`` (stationary variance ``1/(p (1 - hp/2))``).

All functions are pure and jit/vmap/grad-able; PD checks of concrete inputs run in the wrappers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_in_range, check_psd, error_if, is_concrete, value_check
from jaxlab.sampling.langevin.bounds import level_constants
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART, TOURON
from jaxlab.sampling.langevin.schedules import vp_alpha

__all__ = [
    "ald_gaussian_moments",
    "bridging_gaussians",
    "gaussian_diffuse",
    "gaussian_problem",
    "geffner_bridging_gaussian",
    "linhart_bridging_gaussian",
    "path_w2",
    "spd_inverse",
    "sqrtm_psd",
    "tall_posterior_gaussian",
    "ula_gaussian_moments",
    "w2_gaussian",
]


def spd_inverse(C: Float[Array, "d d"]) -> Float[Array, "d d"]:
    """Inverse of a symmetric positive definite matrix through its Cholesky factor (NaN if not PD)."""
    L = jnp.linalg.cholesky(C)
    inv = jax.scipy.linalg.cho_solve((L, True), jnp.eye(C.shape[-1], dtype=C.dtype))
    return 0.5 * (inv + jnp.swapaxes(inv, -1, -2))


def sqrtm_psd(A: Float[Array, "d d"]) -> Float[Array, "d d"]:
    """Symmetric square root of a PSD matrix via ``eigh`` (negative rounding eigenvalues clipped to 0)."""
    lam, Q = jnp.linalg.eigh(0.5 * (A + A.T))
    return (Q * jnp.sqrt(jnp.clip(lam, 0.0))) @ Q.T


def _cov(C, name, d=None, *, check=True):
    C = as_array(C, name, ndim=2, shape=(d, d) if d is not None else None)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"{name} must be a square (d, d) matrix, got shape {C.shape}")
    if check:
        C = check_psd(C, name, strict=True)
    return C


def _post_covs(covs, n, d, name="post_covs"):
    covs = as_array(covs, name, ndim=(2, 3))
    if covs.ndim == 2:
        _cov(covs, name, d)
        return jnp.broadcast_to(covs, (n, d, d))
    if covs.shape != (n, d, d):
        raise ValueError(f"{name} must have shape ({n}, {d}, {d}) or ({d}, {d}), got shape {covs.shape}")
    return _check_each_psd(covs, name)


def _check_each_psd(covs, name):
    """Return the stack ``covs (n, d, d)``; raise unless every ``covs[j]`` is positive definite (eagerly, or at
    run time under ``jit``; the checked slices are restacked only when traced, so concrete inputs cost nothing
    inside a compiled score)."""
    checked = [check_psd(covs[j], f"{name}[{j}]", strict=True) for j in range(covs.shape[0])]
    return covs if is_concrete(covs) else jnp.stack(checked)


def _alpha(alpha, name="alpha"):
    alpha = as_array(alpha, name, ndim=(0, 1))
    alpha = check_in_range(alpha, name, 0.0, 1.0, lo_open=True, hi_open=False)
    return alpha


def _gaussian_inputs(mu_prior, cov_prior, mus, covs):
    mu_prior = as_array(mu_prior, "mu_prior", ndim=1)
    d = mu_prior.shape[0]
    cov_prior = _cov(cov_prior, "cov_prior", d)
    mus = as_array(mus, "mus", ndim=2, shape=(None, d))
    n = mus.shape[0]
    if n < 1:
        raise ValueError(f"mus must hold n >= 1 posterior means, got n = {n}")
    covs = _post_covs(covs, n, d, "covs")
    return mu_prior, cov_prior, mus, covs


@cites(TOURON)
def gaussian_diffuse(mean: Float[Array, " d"], cov: Float[Array, "d d"], alpha) -> tuple[Array, Array]:
    """Law of ``θ_t = sqrt(α) θ_0 + sqrt(1-α) ε``, ``θ_0 ~ N(mean, cov)``: ``(sqrt(α) mean, αΣ + (1-α)I)``."""
    mean = as_array(mean, "mean", ndim=1)
    cov = _cov(cov, "cov", mean.shape[0], check=False)
    alpha = as_array(alpha, "alpha", ndim=0)
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0)
    return jnp.sqrt(alpha) * mean, alpha * cov + (1.0 - alpha) * jnp.eye(mean.shape[0], dtype=cov.dtype)


@cites(TOURON, LINHART)
def tall_posterior_gaussian(mu_prior, cov_prior, mus, covs) -> tuple[Array, Array]:
    """Tall posterior ``N(μ_n, Σ_n)`` from the prior and the n individual Gaussian posteriors.

    ``Σ_n^{-1} = (1-n) Σ_λ^{-1} + Σ_j Σ_j^{-1}``; raises ``ValueError`` if that precision is not PD.
    """
    mu_prior, cov_prior, mus, covs = _gaussian_inputs(mu_prior, cov_prior, mus, covs)
    n = mus.shape[0]
    P_l = spd_inverse(cov_prior)
    P_j = jax.vmap(spd_inverse)(covs)
    prec = (1 - n) * P_l + P_j.sum(0)
    prec = value_check(prec, lambda a: ~(jnp.linalg.eigvalsh(a)[0] > 0),
                       "tall posterior precision (1-n) Σ_λ^{-1} + Σ_j Σ_j^{-1} must be positive definite")
    cov_n = spd_inverse(prec)
    mean = cov_n @ ((1 - n) * P_l @ mu_prior + jnp.einsum("nij,nj->i", P_j, mus))
    return mean, cov_n


def _geffner_one(alpha, mu_prior, cov_prior, mus, covs):
    n, d = mus.shape
    eye = jnp.eye(d, dtype=cov_prior.dtype)
    P_l = spd_inverse(alpha * cov_prior + (1 - alpha) * eye)
    P_j = jax.vmap(spd_inverse)(alpha * covs + (1 - alpha) * eye)
    prec = (1 - n) * P_l + P_j.sum(0)
    rhs = jnp.sqrt(alpha) * ((1 - n) * P_l @ mu_prior + jnp.einsum("nij,nj->i", P_j, mus))
    return jnp.linalg.solve(prec, rhs), prec


@cites(GEFFNER, TOURON)
def geffner_bridging_gaussian(alpha, mu_prior, cov_prior, mus, covs) -> tuple[Array, Array]:
    """Geffner bridging density ``π^G_t ∝ λ_t^{1-n} Π_j p_t(· | x_j)`` as ``(mean, precision)``.

    ``alpha`` is a scalar or a vector of levels ``(L,)`` (outputs then gain a leading axis). Raises
    ``ValueError`` naming the first level whose precision ``Λ^G_t`` is not positive definite (concrete
    inputs; under ``jit`` an ``error_if`` check raises at run time).
    """
    alpha = _alpha(alpha)
    mu_prior, cov_prior, mus, covs = _gaussian_inputs(mu_prior, cov_prior, mus, covs)
    one = lambda a: _geffner_one(a, mu_prior, cov_prior, mus, covs)  # noqa: E731
    mean, prec = one(alpha) if alpha.ndim == 0 else jax.vmap(one)(alpha)
    lam_min = jnp.linalg.eigvalsh(prec)[..., 0]
    if is_concrete(lam_min):
        bad = jnp.atleast_1d(~(lam_min > 0))
        if bool(bad.any()):
            lvl = int(jnp.argmax(bad))
            a = float(jnp.atleast_1d(alpha)[lvl])
            raise ValueError(
                f"Geffner bridging precision is not positive definite at level {lvl} (alpha={a:.6g}): "
                f"smallest eigenvalue {float(jnp.atleast_1d(lam_min)[lvl]):.3g}; the density "
                "λ_t^(1-n) Π_j p_t(·|x_j) is not normalizable there"
            )
    else:
        mean = error_if(mean, jnp.any(~(lam_min > 0)), "Geffner bridging precision is not positive definite")
    return mean, prec


@cites(LINHART, TOURON)
def linhart_bridging_gaussian(alpha, mu_prior, cov_prior, mus, covs) -> tuple[Array, Array]:
    """Linhart bridging density (exact Gaussian scores): the diffused tall posterior ``(mean, precision)``.

    ``N(sqrt(α) μ_n, αΣ_n + (1-α)I)``; ``alpha`` scalar or ``(L,)``.
    """
    alpha = _alpha(alpha)
    mu_n, cov_n = tall_posterior_gaussian(mu_prior, cov_prior, mus, covs)
    eye = jnp.eye(mu_n.shape[0], dtype=cov_n.dtype)

    def one(a):
        return jnp.sqrt(a) * mu_n, spd_inverse(a * cov_n + (1 - a) * eye)

    return one(alpha) if alpha.ndim == 0 else jax.vmap(one)(alpha)


@cites(TOURON)
def w2_gaussian(
    m1: Float[Array, " d"], C1: Float[Array, "d d"], m2: Float[Array, " d"], C2: Float[Array, "d d"]
) -> Float[Array, ""]:
    """Exact 2-Wasserstein distance between ``N(m1, C1)`` and ``N(m2, C2)`` (square roots by ``eigh``)."""
    m1 = as_array(m1, "m1", ndim=1)
    d = m1.shape[0]
    m2 = as_array(m2, "m2", shape=(d,))
    C1 = _cov(C1, "C1", d, check=False)
    C2 = _cov(C2, "C2", d, check=False)
    R = sqrtm_psd(C1)
    cross = jnp.sqrt(jnp.clip(jnp.linalg.eigvalsh(R @ C2 @ R), 0.0)).sum()
    w2sq = jnp.sum((m1 - m2) ** 2) + jnp.trace(C1) + jnp.trace(C2) - 2.0 * cross
    return jnp.sqrt(jnp.clip(w2sq, 0.0))


def _ula_moments(mean, cov, target_mean, target_prec, h, k):
    p, Q = jnp.linalg.eigh(0.5 * (target_prec + target_prec.T))
    r = 1.0 - h * p
    k = jnp.asarray(k)
    rk = jnp.power(r, k.astype(jnp.int32))
    one_minus_r2 = 1.0 - r * r
    tiny = jnp.abs(one_minus_r2) < 1e-300
    geo = jnp.where(tiny, k.astype(r.dtype), (1.0 - rk * rk) / jnp.where(tiny, 1.0, one_minus_r2))
    new_mean = target_mean + Q @ (rk * (Q.T @ (mean - target_mean)))
    Ct = Q.T @ cov @ Q
    Ct = rk[:, None] * Ct * rk[None, :] + jnp.diag(2.0 * h * geo)
    new_cov = Q @ Ct @ Q.T
    return new_mean, 0.5 * (new_cov + new_cov.T)


@cites(TOURON)
def ula_gaussian_moments(mean, cov, target_mean, target_prec, h, k) -> tuple[Array, Array]:
    """Exact mean and covariance after ``k`` ULA steps of size ``h`` on ``N(target_mean, target_prec^{-1})``,
    started from ``N(mean, cov)`` with the exact score ``-P (θ - μ)``."""
    mean = as_array(mean, "mean", ndim=1)
    d = mean.shape[0]
    cov = _cov(cov, "cov", d, check=False)
    target_mean = as_array(target_mean, "target_mean", shape=(d,))
    target_prec = _cov(target_prec, "target_prec", d, check=False)
    h = as_array(h, "h", ndim=0)
    h = check_in_range(h, "h", 0.0, lo_open=True)
    k = as_array(k, "k", ndim=0, kind="int")
    k = check_in_range(k, "k", 0)
    return _ula_moments(mean, cov, target_mean, target_prec, h, k)


@cites(TOURON)
def ald_gaussian_moments(bridges, hs, ks, init_mean, init_cov) -> tuple[Array, Array]:
    """Exact law of annealed Langevin on Gaussian bridging densities, level by level.

    Args:
      bridges: ``(means (L, d), precs (L, d, d))`` of the bridging densities ``π_0 .. π_{L-1}``.
      hs: step sizes ``(L,)``; ``ks``: integer steps per level ``(L,)``.
      init_mean, init_cov: the initial law ``ρ_init``.

    Returns:
      ``(means (L, d), covs (L, d, d))``: the law of the particles after each level (the last is the output).
    """
    means, precs = bridges
    means = as_array(means, "bridges[0] (means)", ndim=2)
    L, d = means.shape
    precs = as_array(precs, "bridges[1] (precs)", shape=(L, d, d))
    hs = as_array(hs, "hs", shape=(L,))
    ks = as_array(ks, "ks", shape=(L,), kind="int")
    init_mean = as_array(init_mean, "init_mean", shape=(d,))
    init_cov = _cov(init_cov, "init_cov", d, check=False)

    def level(carry, xs):
        mu, P, h, k = xs
        out = _ula_moments(*carry, mu, P, h, k)
        return out, out

    _, (ms, Cs) = jax.lax.scan(level, (init_mean, init_cov), (means, precs, hs, ks))
    return ms, Cs


@cites(TOURON)
def path_w2(means, precs, init_mean, init_cov) -> Float[Array, " L"]:
    """W2 lengths of the bridging path: ``W_0 = W2(ρ_init, π_0)``, ``W_l = W2(π_{l-1}, π_l)`` (``(L,)``)."""
    means = as_array(means, "means", ndim=2)
    L, d = means.shape
    precs = as_array(precs, "precs", shape=(L, d, d))
    init_mean = as_array(init_mean, "init_mean", shape=(d,))
    init_cov = _cov(init_cov, "init_cov", d, check=False)
    covs = jax.vmap(spd_inverse)(precs)
    m_prev = jnp.concatenate([init_mean[None], means[:-1]], 0)
    C_prev = jnp.concatenate([init_cov[None], covs[:-1]], 0)
    return jax.vmap(w2_gaussian)(m_prev, C_prev, means, covs)


# ------------------------------------------------------------------- Gaussian level problems
@cites(TOURON)
def bridging_gaussians(kind: str, ts, mu_prior, cov_prior, mus, covs, *, alpha_fn: Callable = vp_alpha):
    """Means ``(L, d)`` and precisions ``(L, d, d)`` of the Gaussian bridging densities at levels ``ts``."""
    if kind not in ("geffner", "linhart"):
        raise ValueError(f"kind must be 'geffner' or 'linhart', got {kind!r}")
    ts = as_array(ts, "ts", ndim=1)
    fn = geffner_bridging_gaussian if kind == "geffner" else linhart_bridging_gaussian
    return fn(alpha_fn(ts), mu_prior, cov_prior, mus, covs)


@cites(TOURON)
def gaussian_problem(kind: str, mu_prior, cov_prior, mus, covs, *, alpha_fn: Callable = vp_alpha,
                     t_min: float = 1e-3, t_max: float = 1.0, init_mean=None, init_cov=None, eps=0.0):
    """``L -> (W, m, M, eps)`` on a uniform grid of L levels for Gaussian bridging densities (input of
    :func:`tune`, jitted per L); the initial law defaults to ``N(0, I)``. Inputs are validated (and the
    Geffner densities checked positive definite at ``t_max`` and ``t_min``) when it is built."""
    d = jnp.shape(mu_prior)[0]
    init_mean = jnp.zeros(d) if init_mean is None else init_mean
    init_cov = jnp.eye(d) if init_cov is None else init_cov

    bridging_gaussians(kind, jnp.array([t_max, t_min]), mu_prior, cov_prior, mus, covs, alpha_fn=alpha_fn)

    @functools.partial(jax.jit, static_argnums=0)
    def problem(L):
        ts = jnp.linspace(t_max, t_min, L)
        means, precs = bridging_gaussians(kind, ts, mu_prior, cov_prior, mus, covs, alpha_fn=alpha_fn)
        m, M = level_constants(precs)
        return path_w2(means, precs, init_mean, init_cov), m, M, jnp.broadcast_to(eps, (L,))

    return problem
