r"""Target models of the annealed-Langevin experiments, with analytic diffused scores.

Gaussian toy (the authors' preliminary experiments for arXiv:2605.21253): ``d = 2``, prior ``N(μ_λ = 1, Σ_λ)``
with ``Σ_λ = R diag(exp(g)) Rᵀ``, ``g ~ N(1, 1)``, ``R`` a random rotation; likelihood ``x | θ ~ N(θ, 2 I)``;
n iid observations drawn at ``θ* ~ λ``. Individual posteriors ``N(μ_j, Σ_post)`` with
``Σ_post^{-1} = Σ_λ^{-1} + Σ_x^{-1}`` and ``μ_j = Σ_post (Σ_λ^{-1} μ_λ + Σ_x^{-1} x_j)``; diffused scores
``∇log N(θ; sqrt(α) μ, αΣ + (1-α) I)``. An optional deterministic perturbation ``ε e_{c_j}`` (one random
coordinate per observation) and ``eps_prior e_0`` on the prior score model inexact score networks.

Gaussian-mixture prior (the non-Gaussian check): prior ``Σ_k w_k N(m_k, S_k)``, same Gaussian
likelihood. Every diffused density is a Gaussian mixture (the posterior of a GMM prior under a Gaussian
likelihood is a GMM with reweighted components), so all scores are analytic and exact tall-posterior samples
exist.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int, check_positive, check_psd
from jaxlab.sampling.langevin.gaussian import _check_each_psd, spd_inverse
from jaxlab.sampling.langevin.papers import TOURON

__all__ = [
    "GMMPrior",
    "GaussianToy",
    "gaussian_score",
    "gaussian_toy",
    "gaussian_toy_scores",
    "gmm_posterior",
    "gmm_sample",
    "gmm_score",
    "gmm_toy_scores",
]


class GaussianToy(NamedTuple):
    """The Gaussian toy: prior, likelihood covariance, observations and individual posteriors.

    Attributes:
      mu_prior: ``(d,)`` float array, the prior mean ``μ_λ``.
      cov_prior: ``(d, d)`` float array, the prior covariance ``Σ_λ``.
      lik_cov: ``(d, d)`` float array, the likelihood covariance ``Σ_x`` (``lik_var · I``).
      theta_true: ``(d,)`` float array, the parameter ``θ*`` that generated the data.
      xs: ``(n, d)`` float array of observations.
      mus: ``(n, d)`` float array of the individual posterior means ``μ_j``.
      post_cov: ``(d, d)`` float array, the common individual posterior covariance ``Σ_post``.
    """

    mu_prior: Float[Array, " d"]
    cov_prior: Float[Array, "d d"]
    lik_cov: Float[Array, "d d"]
    theta_true: Float[Array, " d"]
    xs: Float[Array, "n d"]
    mus: Float[Array, "n d"]
    post_cov: Float[Array, "d d"]


def _diffused_gaussian_score(theta, mean, cov, alpha):
    d = mean.shape[0]
    C = alpha * cov + (1.0 - alpha) * jnp.eye(d, dtype=cov.dtype)
    # an explicit inverse: C depends on t only, so under vmap over θ or x it is factorised once
    return -spd_inverse(C) @ (theta - jnp.sqrt(alpha) * mean)


@cites(TOURON)
def gaussian_score(theta: Float[Array, " d"], mean: Float[Array, " d"], cov: Float[Array, "d d"], alpha):
    """Score of the diffused Gaussian ``N(sqrt(α) mean, α cov + (1-α) I)`` at ``θ``.

    ``s(θ) = -(α cov + (1-α) I)⁻¹ (θ - sqrt(α) mean)``.

    Args:
      theta: ``(d,)`` float array.
      mean: ``(d,)`` float array.
      cov: ``(d, d)`` float array, symmetric positive semidefinite (not checked; NaN if the diffused
        covariance is not positive definite).
      alpha: float (or 0-d array) in ``[0, 1]``, ``α_t`` (not checked).

    Returns:
      ``(d,)`` float array.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``theta`` is not 1-d, or ``mean``/``cov`` does not have the matching shape.
    """
    theta = as_array(theta, "theta", ndim=1)
    mean = as_array(mean, "mean", shape=theta.shape)
    cov = as_array(cov, "cov", shape=theta.shape * 2)
    return _diffused_gaussian_score(theta, mean, cov, jnp.asarray(alpha, dtype=theta.dtype))


@cites(TOURON)
def gaussian_toy(key, n: int, d: int = 2, *, lik_var: float = 2.0, prior_mean: float = 1.0) -> GaussianToy:
    """Draw the Gaussian toy of the module docstring with ``n`` observations.

    Prior ``N(prior_mean · 1, R diag(e^g) Rᵀ)``, ``g ~ N(1, I)``, ``R`` a random rotation; ``θ* ~`` prior;
    ``x_j | θ* ~ N(θ*, lik_var I)``; individual posteriors in closed form. The toy of the authors' preliminary
    workshop code for Touron et al., arXiv:2605.21253 (whose full text was not available).

    Args:
      key: PRNG key.
      n: number of observations, int ``>= 1``.
      d: dimension, int ``>= 1``.
      lik_var: positive float, the likelihood variance.
      prior_mean: float, every coordinate of the prior mean.

    Returns:
      :class:`GaussianToy`.

    Raises:
      TypeError: ``n`` or ``d`` is not an int.
      ValueError: ``n`` or ``d`` is below 1, or ``lik_var`` is not positive and finite.

    Example:
      >>> import jax
      >>> from jaxlab.sampling.langevin import gaussian_toy
      >>> toy = gaussian_toy(jax.random.key(0), n=10)
      >>> toy.xs.shape, toy.post_cov.shape
      ((10, 2), (2, 2))
    """
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=1)
    lik_var = check_positive(lik_var, "lik_var")
    return _draw_toy(key, n, d, float(lik_var), float(prior_mean))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _draw_toy(key, n, d, lik_var, prior_mean):
    k_rot, k_eig, k_theta, k_x = jax.random.split(key, 4)
    R, _ = jnp.linalg.qr(jax.random.normal(k_rot, (d, d)))
    cov_prior = (R * jnp.exp(1.0 + jax.random.normal(k_eig, (d,)))) @ R.T
    cov_prior = 0.5 * (cov_prior + cov_prior.T)
    mu_prior = jnp.full((d,), prior_mean, dtype=cov_prior.dtype)
    lik_cov = lik_var * jnp.eye(d, dtype=cov_prior.dtype)
    theta_true = mu_prior + jnp.linalg.cholesky(cov_prior) @ jax.random.normal(k_theta, (d,))
    xs = theta_true + jnp.sqrt(lik_var) * jax.random.normal(k_x, (n, d))
    P_prior = spd_inverse(cov_prior)
    post_cov = spd_inverse(P_prior + jnp.eye(d) / lik_var)
    mus = (P_prior @ mu_prior + xs / lik_var) @ post_cov
    return GaussianToy(mu_prior, cov_prior, lik_cov, theta_true, xs, mus, post_cov)


@cites(TOURON)
def gaussian_toy_scores(
    toy: GaussianToy, alpha_fn: Callable, *, eps: float = 0.0, eps_prior: float = 0.0
) -> tuple[Callable, Callable]:
    """Exact diffused scores of the toy, ``prior_score_fn(θ, t)`` and ``post_score_fn(θ, x, t)``, optionally
    perturbed by ``eps`` on one random coordinate per observation and ``eps_prior`` on the prior's first one.

    The perturbed coordinate of observation ``x`` is ``argmax_c |x_c - θ*_c|`` (random through the noise of
    ``x``), so that ``post_score_fn`` stays a function of ``(θ, x, t)`` only. The perturbations model score
    networks with an error of norm ``eps`` (``eps_prior``), as in the bounds of
    :mod:`jaxlab.sampling.langevin.bounds`.

    Args:
      toy: :class:`GaussianToy` from :func:`gaussian_toy`.
      alpha_fn: the noise schedule ``t -> α_t``.
      eps: float ``>= 0``, the perturbation of each posterior score.
      eps_prior: float ``>= 0``, the perturbation of the prior score.

    Returns:
      ``(prior_score_fn, post_score_fn)``: ``(θ (d,), t) -> (d,)`` and ``(θ (d,), x (d,), t) -> (d,)``, for
      :func:`jaxlab.sampling.langevin.make_composite_score`.

    Raises:
      ValueError: ``eps`` or ``eps_prior`` is negative or not finite.
    """
    eps = check_positive(eps, "eps", strict=False)
    eps_prior = check_positive(eps_prior, "eps_prior", strict=False)
    d = toy.mu_prior.shape[0]
    P_prior = spd_inverse(toy.cov_prior)
    P_lik = spd_inverse(toy.lik_cov)

    def prior_score_fn(theta, t):
        s = _diffused_gaussian_score(theta, toy.mu_prior, toy.cov_prior, alpha_fn(t))
        return s + eps_prior * jnp.eye(d, dtype=s.dtype)[0]

    def post_score_fn(theta, x, t):
        mu = toy.post_cov @ (P_prior @ toy.mu_prior + P_lik @ x)
        s = _diffused_gaussian_score(theta, mu, toy.post_cov, alpha_fn(t))
        coord = jnp.argmax(jnp.abs(x - toy.theta_true))
        return s + eps * jax.nn.one_hot(coord, d, dtype=s.dtype)

    return prior_score_fn, post_score_fn


class GMMPrior(NamedTuple):
    """Gaussian mixture ``Σ_k w_k N(means_k, covs_k)``.

    Attributes:
      weights: ``(K,)`` float array of mixture weights, positive and summing to 1.
      means: ``(K, d)`` float array of component means.
      covs: ``(K, d, d)`` float array of component covariances (symmetric positive definite).
    """

    weights: Float[Array, " K"]
    means: Float[Array, "K d"]
    covs: Float[Array, "K d d"]


def _check_gmm(gmm: GMMPrior) -> GMMPrior:
    w = as_array(gmm.weights, "weights", ndim=1)
    K = w.shape[0]
    means = as_array(gmm.means, "means", ndim=2, shape=(K, None))
    d = means.shape[1]
    covs = as_array(gmm.covs, "covs", shape=(K, d, d))
    return GMMPrior(w, means, _check_each_psd(covs, "covs"))  # each covs[k] PSD, eagerly and under jit


@cites(TOURON)
def gmm_score(theta: Float[Array, " d"], gmm: GMMPrior, alpha) -> Float[Array, " d"]:
    """Score at ``θ`` of the diffused mixture ``Σ_k w_k N(sqrt(α) m_k, α S_k + (1-α) I)``.

    ``s(θ) = -Σ_k p_k(θ) C_k⁻¹ (θ - sqrt(α) m_k)`` with ``C_k = α S_k + (1-α) I`` and the responsibilities
    ``p_k ∝ w_k N(θ; sqrt(α) m_k, C_k)``. No input validation (it runs inside score functions).

    Args:
      theta: ``(d,)`` float array.
      gmm: :class:`GMMPrior`.
      alpha: float (or 0-d array) in ``[0, 1]``, ``α_t``.

    Returns:
      ``(d,)`` float array.
    """
    d = theta.shape[0]
    C = alpha * gmm.covs + (1.0 - alpha) * jnp.eye(d)
    r = theta - jnp.sqrt(alpha) * gmm.means
    sol = jnp.einsum("kij,kj->ki", jax.vmap(spd_inverse)(C), r)
    logdet = jnp.linalg.slogdet(C)[1]
    logp = jnp.log(gmm.weights) - 0.5 * jnp.sum(r * sol, -1) - 0.5 * logdet
    return -(jax.nn.softmax(logp) @ sol)


@cites(TOURON)
def gmm_posterior(gmm: GMMPrior, x_sum: Float[Array, " d"], n: int, lik_cov: Float[Array, "d d"]) -> GMMPrior:
    """Posterior of a GMM prior given ``n`` observations ``x_j ~ N(θ, lik_cov)`` with sum ``x_sum``.

    Component ``k`` becomes ``N(C_k (S_k⁻¹ m_k + Σ_x⁻¹ x_sum), C_k)``, ``C_k = (S_k⁻¹ + n Σ_x⁻¹)⁻¹``, with
    weight ``∝ w_k N(x̄; m_k, S_k + Σ_x/n)``, ``x̄ = x_sum/n``. No input validation.

    Args:
      gmm: :class:`GMMPrior`, the prior.
      x_sum: ``(d,)`` float array, the sum of the observations.
      n: number of observations (``>= 1``).
      lik_cov: ``(d, d)`` float array ``Σ_x``, symmetric positive definite.

    Returns:
      :class:`GMMPrior`, the posterior mixture.
    """
    P_lik = spd_inverse(lik_cov)

    def comp(w, m, S):
        P = spd_inverse(S)
        C = spd_inverse(P + n * P_lik)
        mean = C @ (P @ m + P_lik @ x_sum)
        # marginal likelihood of the sufficient statistic x̄ ~ N(m, S + lik_cov / n), up to a shared factor
        xbar = x_sum / n
        V = S + lik_cov / n
        r = xbar - m
        logz = jnp.log(w) - 0.5 * r @ jnp.linalg.solve(V, r) - 0.5 * jnp.linalg.slogdet(V)[1]
        return logz, mean, C

    logz, means, covs = jax.vmap(comp)(gmm.weights, gmm.means, gmm.covs)
    return GMMPrior(jax.nn.softmax(logz), means, covs)


@cites(TOURON)
def gmm_sample(key, gmm: GMMPrior, num: int) -> Float[Array, "num d"]:
    """``num`` exact draws from a Gaussian mixture: a component ``k ~ w``, then ``m_k + chol(S_k) z``.

    Args:
      key: PRNG key.
      gmm: :class:`GMMPrior` (not validated).
      num: number of draws, int ``>= 1``.

    Returns:
      ``(num, d)`` float array.

    Raises:
      TypeError: ``num`` is not an int.
      ValueError: ``num < 1``.
    """
    num = check_int(num, "num", min_value=1)
    k_c, k_z = jax.random.split(key)
    comp = jax.random.choice(k_c, gmm.weights.shape[0], (num,), p=gmm.weights)
    z = jax.random.normal(k_z, (num, gmm.means.shape[1]))
    chol = jnp.linalg.cholesky(gmm.covs)
    return gmm.means[comp] + jnp.einsum("nij,nj->ni", chol[comp], z)


@cites(TOURON)
def gmm_toy_scores(gmm: GMMPrior, lik_cov, alpha_fn: Callable) -> tuple[Callable, Callable]:
    """Exact diffused prior and single-observation posterior scores for a GMM prior and a Gaussian likelihood.

    The non-Gaussian check of the module docstring: the prior score is :func:`gmm_score` of ``gmm``, the
    posterior score given ``x`` that of :func:`gmm_posterior` with ``n = 1``.

    Args:
      gmm: :class:`GMMPrior`, the prior.
      lik_cov: ``(d, d)`` float array, the likelihood covariance, symmetric positive definite.
      alpha_fn: the noise schedule ``t -> α_t``.

    Returns:
      ``(prior_score_fn, post_score_fn)``: ``(θ (d,), t) -> (d,)`` and ``(θ (d,), x (d,), t) -> (d,)``.

    Raises:
      TypeError: an array of ``gmm`` or ``lik_cov`` is not a float array.
      ValueError: ``gmm``'s arrays are not ``(K,)``, ``(K, d)``, ``(K, d, d)``; a component covariance or
        ``lik_cov`` is not symmetric positive definite; or ``lik_cov`` is not ``(d, d)``.
    """
    gmm = _check_gmm(gmm)
    lik_cov = as_array(lik_cov, "lik_cov", shape=(gmm.means.shape[1],) * 2)
    lik_cov = check_psd(lik_cov, "lik_cov", strict=True)

    def prior_score_fn(theta, t):
        return gmm_score(theta, gmm, alpha_fn(t))

    def post_score_fn(theta, x, t):
        return gmm_score(theta, gmm_posterior(gmm, x, 1, lik_cov), alpha_fn(t))

    return prior_score_fn, post_score_fn
