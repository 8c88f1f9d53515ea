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
    """Inverse of a symmetric positive definite matrix through its Cholesky factor, symmetrised.

    No check: a matrix that is not positive definite gives NaN.

    Args:
      C: ``(d, d)`` float array, symmetric positive definite.

    Returns:
      ``(d, d)`` float array ``C⁻¹``, exactly symmetric.
    """
    L = jnp.linalg.cholesky(C)
    inv = jax.scipy.linalg.cho_solve((L, True), jnp.eye(C.shape[-1], dtype=C.dtype))
    return 0.5 * (inv + jnp.swapaxes(inv, -1, -2))


def sqrtm_psd(A: Float[Array, "d d"]) -> Float[Array, "d d"]:
    """Symmetric square root ``A^{1/2} = Q diag(sqrt(max(λ, 0))) Qᵀ`` of a PSD matrix, by ``eigh`` of ``(A + Aᵀ)/2``.

    Negative eigenvalues (rounding) are clipped to 0; no check.

    Args:
      A: ``(d, d)`` float array, symmetric positive semidefinite.

    Returns:
      ``(d, d)`` float array ``A^{1/2}``.
    """
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
    """Law of ``θ_t = sqrt(α) θ_0 + sqrt(1-α) ε``, ``θ_0 ~ N(mean, cov)``: ``N(sqrt(α) mean, α cov + (1-α) I)``.

    Args:
      mean: ``(d,)`` float array.
      cov: ``(d, d)`` float array (not checked for positive semidefiniteness).
      alpha: float in ``[0, 1]`` (or 0-d array), ``α_t``.

    Returns:
      ``(mean_t, cov_t)``: ``(d,)`` and ``(d, d)`` float arrays.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``mean`` is not 1-d, ``cov`` is not ``(d, d)``, or ``alpha`` is not a scalar in ``[0, 1]``.
    """
    mean = as_array(mean, "mean", ndim=1)
    cov = _cov(cov, "cov", mean.shape[0], check=False)
    alpha = as_array(alpha, "alpha", ndim=0)
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0)
    return jnp.sqrt(alpha) * mean, alpha * cov + (1.0 - alpha) * jnp.eye(mean.shape[0], dtype=cov.dtype)


@cites(TOURON, LINHART)
def tall_posterior_gaussian(mu_prior, cov_prior, mus, covs) -> tuple[Array, Array]:
    """Tall posterior ``N(μ_n, Σ_n)`` from the prior ``N(μ_λ, Σ_λ)`` and the n individual posteriors ``N(μ_j, Σ_j)``.

    ``π(θ | x_{1:n}) ∝ λ(θ)^{1-n} Π_j p(θ | x_j)`` gives ``Σ_n^{-1} = (1-n) Σ_λ^{-1} + Σ_j Σ_j^{-1}`` and
    ``μ_n = Σ_n [(1-n) Σ_λ^{-1} μ_λ + Σ_j Σ_j^{-1} μ_j]``.

    Args:
      mu_prior: ``(d,)`` float array ``μ_λ``, the prior mean.
      cov_prior: ``(d, d)`` float array ``Σ_λ``, the prior covariance (symmetric positive definite).
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      covs: ``(n, d, d)`` float array of the individual posterior covariances ``Σ_j``, or one shared ``(d, d)``.

    Returns:
      ``(mean, cov)``: ``(d,)`` and ``(d, d)`` float arrays ``μ_n``, ``Σ_n``.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``mu_prior`` is not 1-d, ``cov_prior`` is not ``(d, d)``, ``mus`` is not ``(n, d)`` with
        ``n >= 1``, ``covs`` is not ``(n, d, d)`` or ``(d, d)``, or a covariance is not symmetric positive
        definite (under ``jit``: at run time), or the tall precision is not positive definite.
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

    The density whose score is Geffner's composite score with exact Gaussian scores (Touron et al.,
    arXiv:2605.21253, for Geffner et al., arXiv:2209.14249)::

        Λ^G_t = (1-n)(αΣ_λ + (1-α)I)^{-1} + Σ_j (αΣ_j + (1-α)I)^{-1},
        m^G_t = (Λ^G_t)^{-1} sqrt(α) [(1-n)(αΣ_λ + (1-α)I)^{-1} μ_λ + Σ_j (αΣ_j + (1-α)I)^{-1} μ_j],

    defined only where ``Λ^G_t`` is positive definite.

    Args:
      alpha: float in ``(0, 1]`` or ``(L,)`` float array of levels ``α_t`` (outputs then gain a leading axis).
      mu_prior: ``(d,)`` float array ``μ_λ``, the prior mean.
      cov_prior: ``(d, d)`` float array ``Σ_λ``, the prior covariance (symmetric positive definite).
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      covs: ``(n, d, d)`` float array of the individual posterior covariances ``Σ_j``, or one shared ``(d, d)``.

    Returns:
      ``(mean, prec)``: ``(d,)`` and ``(d, d)`` float arrays (``(L, d)`` and ``(L, d, d)`` for a vector
      ``alpha``).

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``mu_prior`` is not 1-d, ``cov_prior`` is not ``(d, d)``, ``mus`` is not ``(n, d)`` with
        ``n >= 1``, ``covs`` is not ``(n, d, d)`` or ``(d, d)``, or a covariance is not symmetric positive
        definite (under ``jit``: at run time); ``alpha`` is not in ``(0, 1]``; or ``Λ^G_t`` is not
        positive definite at some level (the message names the first; under ``jit`` a run-time error).
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

    ``N(sqrt(α) μ_n, αΣ_n + (1-α)I)`` with ``(μ_n, Σ_n)`` from :func:`tall_posterior_gaussian`: with exact
    Gaussian scores, Linhart et al.'s GAUSS composite score (arXiv:2404.07593) is the score of the diffused
    tall posterior (Touron et al., arXiv:2605.21253).

    Args:
      alpha: float in ``(0, 1]`` or ``(L,)`` float array of levels ``α_t`` (outputs then gain a leading axis).
      mu_prior: ``(d,)`` float array ``μ_λ``, the prior mean.
      cov_prior: ``(d, d)`` float array ``Σ_λ``, the prior covariance (symmetric positive definite).
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      covs: ``(n, d, d)`` float array of the individual posterior covariances ``Σ_j``, or one shared ``(d, d)``.

    Returns:
      ``(mean, prec)``: ``(d,)`` and ``(d, d)`` float arrays (``(L, d)`` and ``(L, d, d)`` for a vector
      ``alpha``).

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``mu_prior`` is not 1-d, ``cov_prior`` is not ``(d, d)``, ``mus`` is not ``(n, d)`` with
        ``n >= 1``, ``covs`` is not ``(n, d, d)`` or ``(d, d)``, or a covariance is not symmetric positive
        definite (under ``jit``: at run time); ``alpha`` is not in ``(0, 1]``; or the tall
        precision is not positive definite.
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
    """Exact 2-Wasserstein distance between ``N(m1, C1)`` and ``N(m2, C2)``.

    ``W2² = ||m1 - m2||² + tr(C1 + C2 - 2 (C1^{1/2} C2 C1^{1/2})^{1/2})``, square roots by ``eigh`` (negative
    rounding eigenvalues clipped to 0).

    Args:
      m1: ``(d,)`` float array.
      C1: ``(d, d)`` float array, positive semidefinite (not checked).
      m2: ``(d,)`` float array.
      C2: ``(d, d)`` float array, positive semidefinite (not checked).

    Returns:
      0-d float array ``W2 >= 0``.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``m1`` is not 1-d, or another input does not have the matching shape.
    """
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
    """Exact mean and covariance after ``k`` ULA steps of size ``h`` on ``N(μ, P⁻¹)`` from ``N(mean, cov)``.

    With the exact score ``-P(θ - μ)``, ``P = Q diag(p) Qᵀ`` and ``r = 1 - hp``::

        m_k = μ + Q r^k Qᵀ (m - μ),     C̃_k = r^k C̃ r^k + diag(2h (1 - r^{2k}) / (1 - r²))  (eigenbasis),

    (module docstring); ``k = 0`` returns the input law.

    Args:
      mean: ``(d,)`` float array, the initial mean ``m``.
      cov: ``(d, d)`` float array, the initial covariance ``C``.
      target_mean: ``(d,)`` float array ``μ``.
      target_prec: ``(d, d)`` float array ``P`` (symmetric; not checked for definiteness).
      h: positive float (or 0-d array), the step size.
      k: int ``>= 0`` (or 0-d int array), the number of steps.

    Returns:
      ``(mean_k, cov_k)``: ``(d,)`` and ``(d, d)`` float arrays.

    Raises:
      TypeError: an input has the wrong dtype (``k`` must be an integer).
      ValueError: a shape does not match, ``h <= 0`` or ``k < 0``.
    """
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

    :func:`ula_gaussian_moments` chained over the levels: the law after level ``l`` starts level ``l + 1``.

    Args:
      bridges: ``(means, precs)``: ``(L, d)`` and ``(L, d, d)`` float arrays of the bridging densities
        ``π_0 .. π_{L-1}`` (e.g. from :func:`bridging_gaussians`).
      hs: ``(L,)`` float array of step sizes (not validated).
      ks: ``(L,)`` integer array of steps per level.
      init_mean: ``(d,)`` float array, the mean of the initial law ``ρ_init``.
      init_cov: ``(d, d)`` float array, its covariance.

    Returns:
      ``(means, covs)``: ``(L, d)`` and ``(L, d, d)`` float arrays, the law of the particles after each level
      (the last is the output of annealed Langevin).

    Raises:
      TypeError: an input has the wrong dtype (``ks`` must be integer).
      ValueError: a shape does not match.
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
    """W2 lengths of the bridging path: ``W_0 = W2(ρ_init, π_0)``, ``W_l = W2(π_{l-1}, π_l)``.

    The path term of the chained bound of :func:`jaxlab.sampling.langevin.ald_w2_bound`.

    Args:
      means: ``(L, d)`` float array of the bridging means.
      precs: ``(L, d, d)`` float array of the bridging precisions (inverted by Cholesky; NaN if not PD).
      init_mean: ``(d,)`` float array, the mean of ``ρ_init``.
      init_cov: ``(d, d)`` float array, the covariance of ``ρ_init``.

    Returns:
      ``(L,)`` float array of ``W_l``.

    Raises:
      TypeError: an input is not a float array.
      ValueError: a shape does not match.
    """
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
    """Means and precisions of the Gaussian bridging densities at the levels ``ts`` (``α = alpha_fn(ts)``).

    :func:`geffner_bridging_gaussian` or :func:`linhart_bridging_gaussian` at every level.

    Args:
      kind: ``"geffner"`` or ``"linhart"``.
      ts: ``(L,)`` float array of levels.
      mu_prior: ``(d,)`` float array ``μ_λ``, the prior mean.
      cov_prior: ``(d, d)`` float array ``Σ_λ``, the prior covariance (symmetric positive definite).
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      covs: ``(n, d, d)`` float array of the individual posterior covariances ``Σ_j``, or one shared ``(d, d)``.
      alpha_fn: the noise schedule ``t -> α_t`` (vectorised).

    Returns:
      ``(means, precs)``: ``(L, d)`` and ``(L, d, d)`` float arrays.

    Raises:
      ValueError: unknown ``kind``, ``ts`` not 1-d, and what the chosen bridging function raises.
      TypeError: ``ts`` or another input is not a float array.
    """
    if kind not in ("geffner", "linhart"):
        raise ValueError(f"kind must be 'geffner' or 'linhart', got {kind!r}")
    ts = as_array(ts, "ts", ndim=1)
    fn = geffner_bridging_gaussian if kind == "geffner" else linhart_bridging_gaussian
    return fn(alpha_fn(ts), mu_prior, cov_prior, mus, covs)


@cites(TOURON)
def gaussian_problem(kind: str, mu_prior, cov_prior, mus, covs, *, alpha_fn: Callable = vp_alpha,
                     t_min: float = 1e-3, t_max: float = 1.0, init_mean=None, init_cov=None, eps=0.0):
    """The level problem ``L -> (W, m, M, eps)`` of Gaussian bridging densities, the input of :func:`tune`.

    For ``L`` uniform levels from ``t_max`` to ``t_min``: the path lengths ``W`` (:func:`path_w2`), the
    strong log-concavity ``m`` and smoothness ``M`` of every level (:func:`level_constants`) and the score
    errors ``eps`` broadcast to ``(L,)``; jitted per ``L``. Inputs are validated (and the Geffner densities
    checked positive definite at ``t_max`` and ``t_min``) when it is built.

    Args:
      kind: ``"geffner"`` or ``"linhart"``.
      mu_prior: ``(d,)`` float array ``μ_λ``, the prior mean.
      cov_prior: ``(d, d)`` float array ``Σ_λ``, the prior covariance (symmetric positive definite).
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      covs: ``(n, d, d)`` float array of the individual posterior covariances ``Σ_j``, or one shared ``(d, d)``.
      alpha_fn: the noise schedule ``t -> α_t``.
      t_min: the last level.
      t_max: the first level.
      init_mean: ``(d,)`` float array, the mean of ``ρ_init``; ``None`` means 0.
      init_cov: ``(d, d)`` float array, the covariance of ``ρ_init``; ``None`` means ``I``.
      eps: score error per level, a float or an array broadcastable to ``(L,)``.

    Returns:
      ``problem(L) -> (W (L,), m (L,), M (L,), eps (L,))``, ``L`` a static int.

    Raises:
      ValueError: unknown ``kind`` or invalid Gaussian inputs (as :func:`bridging_gaussians`).
      TypeError: an input is not a float array.
    """
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
