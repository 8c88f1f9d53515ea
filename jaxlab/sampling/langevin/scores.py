r"""Composite scores for tall-data simulation-based inference (Geffner's F-NPSE and Linhart's GAUSS).

Papers: Geffner, Papamakarios & Mnih, *Compositional score modeling for simulation-based inference* (ICML 2023,
arXiv:2209.14249); Linhart, Cardoso, Gramfort, Le Corff & Rodrigues, *Diffusion posterior sampling for
simulation-based inference in tall data settings* (arXiv:2404.07593); analysed by Touron, Cardoso, Arbel,
Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional simulation-based inference*,
arXiv:2605.21253 (2026).

Tall posterior for n iid observations: ``π(θ | x_{1:n}) ∝ λ(θ)^{1-n} Π_j p(θ | x_j)``, diffused by the VP
process ``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε``.

- Geffner (F-NPSE): ``s^G_t(θ) = (1-n) s_λ(θ, t) + Σ_j s_j(θ, t)``. With ``prior_mode="tempered"`` the prior
  factor is the undiffused prior tempered by ``(1 - t/t_max)``: ``(1-n)(1 - t/t_max) ∇log λ(θ)``.
- Linhart (GAUSS): ``Σ_{λ,t}^{-1} = Σ_λ^{-1} + α/(1-α) I``, ``Σ_{j,t}^{-1} = Σ_j^{-1} + α/(1-α) I``,
  ``Λ_t = (1-n) Σ_{λ,t}^{-1} + Σ_j Σ_{j,t}^{-1}``,
  ``s^L_t(θ) = Λ_t^{-1} [(1-n) Σ_{λ,t}^{-1} s_λ(θ,t) + Σ_j Σ_{j,t}^{-1} s_j(θ,t)]``.
  JAC variant: ``Σ_{·,t}`` replaced by the Tweedie covariance ``((1-α)/α) (I + (1-α) ∇_θ s(θ, t))``
  (state dependent, by ``jax.jacfwd``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive, check_psd
from jaxlab.sampling.langevin.gaussian import _check_each_psd, spd_inverse
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART
from jaxlab.sampling.langevin.schedules import vp_alpha

__all__ = ["ScoreFn", "geffner_score", "linhart_score", "linhart_weights", "make_composite_score"]

ScoreFn = Callable[[Array, Array], Array]
"""``score_fn(θ (d,), t) -> (d,)``: a (composite) diffused score at level ``t``."""


def _scores(prior_score, post_scores, n):
    prior_score = as_array(prior_score, "prior_score", ndim=1)
    d = prior_score.shape[0]
    post_scores = as_array(post_scores, "post_scores", ndim=2)
    if post_scores.shape[1] != d or post_scores.shape[0] < 1:
        raise ValueError(f"post_scores must have shape (n, {d}) with n >= 1, got shape {post_scores.shape}")
    if n is None:
        n = post_scores.shape[0]
    n = check_int(n, "n", min_value=1)
    if n != post_scores.shape[0]:
        raise ValueError(f"n must equal post_scores.shape[0] = {post_scores.shape[0]}, got n = {n}")
    return prior_score, post_scores, n


@cites(GEFFNER)
def geffner_score(
    prior_score: Float[Array, " d"], post_scores: Float[Array, "n d"], n: int | None = None
) -> Float[Array, " d"]:
    """Geffner's composite (F-NPSE) score ``s^G = (1-n) s_λ + Σ_j s_j`` at one point and level.

    Geffner, Papamakarios & Mnih, *Compositional score modeling for simulation-based inference*, ICML 2023,
    arXiv:2209.14249. ``n = 1`` gives the single posterior score.

    Args:
      prior_score: ``(d,)`` float array, the (diffused) prior score ``s_λ``.
      post_scores: ``(n, d)`` float array, the (diffused) single-observation posterior scores ``s_j``.
      n: the number of observations; ``None`` means ``post_scores.shape[0]`` (which it must equal).

    Returns:
      ``(d,)`` float array, the composite score.

    Raises:
      TypeError: a score is not a float array, or ``n`` is not an int.
      ValueError: ``prior_score`` is not 1-d, ``post_scores`` is not ``(n, d)`` with ``n >= 1``, or ``n``
        differs from ``post_scores.shape[0]``.
    """
    prior_score, post_scores, n = _scores(prior_score, post_scores, n)
    return (1 - n) * prior_score + post_scores.sum(0)


def _prec_t(prec, alpha):
    return prec + (alpha / (1.0 - alpha)) * jnp.eye(prec.shape[-1], dtype=prec.dtype)


@cites(LINHART)
def linhart_weights(prior_cov, post_covs, alpha, n: int | None = None) -> tuple[Array, Array, Array]:
    """Precisions of Linhart's GAUSS composite score at ``α``: ``(Λ_t, Σ_{λ,t}^{-1}, Σ_{j,t}^{-1})``.

    ``Σ_{λ,t}^{-1} = Σ_λ^{-1} + α/(1-α) I``, ``Σ_{j,t}^{-1} = Σ_j^{-1} + α/(1-α) I`` and
    ``Λ_t = (1-n) Σ_{λ,t}^{-1} + Σ_j Σ_{j,t}^{-1}`` (Linhart, Cardoso, Gramfort, Le Corff, Rodrigues, *Diffusion
    posterior sampling for simulation-based inference in tall data settings*, arXiv:2404.07593). Inverses use
    Cholesky.

    Args:
      prior_cov: ``(d, d)`` float array ``Σ_λ``, symmetric positive definite.
      post_covs: ``(n, d, d)`` float array of ``Σ_j``, or one shared ``(d, d)`` covariance (then ``n`` is
        required and the returned ``post_precs_t`` stays ``(d, d)``: ``n`` copies are never materialised);
        each symmetric positive definite.
      alpha: float in ``(0, 1)`` (or 0-d array), ``α_t``.
      n: the number of observations; required with a shared ``(d, d)`` ``post_covs``, else it must equal
        ``post_covs.shape[0]`` (or be ``None``).

    Returns:
      ``(Lambda_t, prior_prec_t, post_precs_t)``: ``(d, d)``, ``(d, d)`` and ``(n, d, d)`` (or ``(d, d)``)
      float arrays.

    Raises:
      TypeError: an input is not a float array, or ``n`` is not an int.
      ValueError: a covariance has the wrong shape or is not symmetric positive definite (under ``jit``: at
        run time); ``n`` is missing or inconsistent; ``alpha`` is not a scalar in ``(0, 1)``.
    """
    prior_cov = as_array(prior_cov, "prior_cov", ndim=2)
    d = prior_cov.shape[0]
    if prior_cov.shape != (d, d):
        raise ValueError(f"prior_cov must be a square (d, d) matrix, got shape {prior_cov.shape}")
    prior_cov = check_psd(prior_cov, "prior_cov", strict=True)
    post_covs = as_array(post_covs, "post_covs", ndim=(2, 3))
    if post_covs.shape[-2:] != (d, d):
        raise ValueError(f"post_covs must have shape (n, {d}, {d}) or ({d}, {d}), got {post_covs.shape}")
    if post_covs.ndim == 3:
        if n is not None and check_int(n, "n", min_value=1) != post_covs.shape[0]:
            raise ValueError(f"n must equal post_covs.shape[0] = {post_covs.shape[0]}, got n = {n}")
        n = post_covs.shape[0]
        post_covs = _check_each_psd(post_covs, "post_covs")
    else:
        if n is None:
            raise ValueError("n is required when one shared post_covs (d, d) is given")
        n = check_int(n, "n", min_value=1)
        post_covs = check_psd(post_covs, "post_covs", strict=True)
    alpha = as_array(alpha, "alpha", ndim=0)
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, lo_open=True, hi_open=True)
    prior_prec_t = _prec_t(spd_inverse(prior_cov), alpha)
    inv = jax.vmap(spd_inverse) if post_covs.ndim == 3 else spd_inverse
    post_precs_t = _prec_t(inv(post_covs), alpha)
    summed = post_precs_t.sum(0) if post_covs.ndim == 3 else n * post_precs_t
    return (1 - n) * prior_prec_t + summed, prior_prec_t, post_precs_t


@cites(LINHART)
def linhart_score(prior_score, post_scores, Lambda_t, prior_prec_t, post_precs_t, n: int | None = None):
    """Linhart's composite (GAUSS) score ``s^L = Λ_t^{-1} [(1-n) Σ_{λ,t}^{-1} s_λ + Σ_j Σ_{j,t}^{-1} s_j]``.

    Linhart et al., arXiv:2404.07593; the precisions come from :func:`linhart_weights` (or, for the JAC
    variant, from Tweedie covariances).

    Args:
      prior_score: ``(d,)`` float array, the diffused prior score ``s_λ``.
      post_scores: ``(n, d)`` float array, the diffused single-observation posterior scores ``s_j``.
      Lambda_t: ``(d, d)`` float array ``Λ_t`` (inverted explicitly: it is shared across particles).
      prior_prec_t: ``(d, d)`` float array ``Σ_{λ,t}^{-1}``.
      post_precs_t: ``(n, d, d)`` float array of ``Σ_{j,t}^{-1}``, or one shared ``(d, d)`` matrix.
      n: the number of observations; ``None`` means ``post_scores.shape[0]`` (which it must equal).

    Returns:
      ``(d,)`` float array, the composite score.

    Raises:
      TypeError: an input is not a float array, or ``n`` is not an int.
      ValueError: an input has the wrong shape, or ``n`` differs from ``post_scores.shape[0]``.
    """
    prior_score, post_scores, n = _scores(prior_score, post_scores, n)
    d = prior_score.shape[0]
    Lambda_t = as_array(Lambda_t, "Lambda_t", shape=(d, d))
    prior_prec_t = as_array(prior_prec_t, "prior_prec_t", shape=(d, d))
    post_precs_t = as_array(post_precs_t, "post_precs_t", ndim=(2, 3))
    if post_precs_t.shape not in ((d, d), (n, d, d)):
        raise ValueError(
            f"post_precs_t must have shape ({n}, {d}, {d}) or ({d}, {d}), got {post_precs_t.shape}"
        )
    if post_precs_t.ndim == 3:
        post = jnp.einsum("nij,nj->i", post_precs_t, post_scores)
    else:
        post = post_precs_t @ post_scores.sum(0)
    # an explicit inverse: under vmap over θ with a shared Λ_t it is computed once, whereas solve/lu_solve
    # broadcast Λ_t and factorise it per particle (10x slower in bench/sampling.py)
    return jnp.linalg.inv(Lambda_t) @ ((1 - n) * prior_prec_t @ prior_score + post)


def _tweedie_prec(score_fn, theta, alpha):
    """Inverse of the Tweedie covariance ``((1-α)/α)(I + (1-α) ∇s)`` of ``θ_0 | θ_t``."""
    J = jax.jacfwd(score_fn)(theta)
    J = 0.5 * (J + J.T)
    cov = ((1.0 - alpha) / alpha) * (jnp.eye(theta.shape[0], dtype=J.dtype) + (1.0 - alpha) * J)
    return jnp.linalg.inv(cov)


@cites(GEFFNER, LINHART)
def make_composite_score(
    kind: str,
    prior_score_fn: Callable[[Array, Array], Array],
    post_score_fn: Callable[[Array, Array, Array], Array],
    xs: Float[Array, "n ..."],
    *,
    prior_cov=None,
    post_covs=None,
    alpha_fn: Callable[[Array], Array] = vp_alpha,
    prior_mode: str = "diffused",
    t_max: float = 1.0,
) -> ScoreFn:
    """Build ``score_fn(θ (d,), t) -> (d,)`` composing user score models over the observations ``xs``.

    The composite scores of the module docstring: Geffner's F-NPSE (arXiv:2209.14249), Linhart's GAUSS with
    fixed covariances, or GAUSS-JAC with state-dependent Tweedie covariances ``((1-α)/α)(I + (1-α) ∇_θ s)``
    (arXiv:2404.07593; one ``jax.jacfwd`` per score model and evaluation). The output shapes of the user
    functions are checked when ``score_fn`` is first traced.

    Args:
      kind: ``"geffner"``, ``"linhart"`` (GAUSS; needs ``prior_cov`` and ``post_covs``) or ``"linhart_jac"``.
      prior_score_fn: ``(θ (d,), t) -> (d,)``, the diffused prior score ``s_λ(θ, t)`` (any callable or equinox
        module).
      post_score_fn: ``(θ (d,), x, t) -> (d,)``, the diffused single-observation posterior score ``s(θ, t | x)``.
      xs: ``(n, ...)`` array of the ``n`` observations stacked on axis 0 (``post_score_fn`` is vmapped over
        them).
      prior_cov: ``(d, d)`` float array ``Σ_λ`` for ``"linhart"`` (symmetric positive definite).
      post_covs: ``(n, d, d)`` float array of ``Σ_j``, or one shared ``(d, d)``, for ``"linhart"``.
      alpha_fn: the noise schedule ``t -> α_t`` (GAUSS only).
      prior_mode: ``"diffused"`` (default) or ``"tempered"``: Geffner's original prior factor
        ``(1-n)(1 - t/t_max) ∇log λ(θ)``, evaluated as ``prior_score_fn(θ, 0)`` (``kind="geffner"`` only).
      t_max: positive float, the first level (used by ``"tempered"``).

    Returns:
      ``score_fn(θ (d,), t) -> (d,)``, a :data:`ScoreFn` for :func:`jaxlab.sampling.langevin.annealed_langevin`.

    Raises:
      TypeError: a score function is not callable, ``xs`` is not numeric, or a covariance is not a float
        array.
      ValueError: unknown ``kind`` or ``prior_mode``; ``"tempered"`` with a GAUSS kind; ``xs`` without an
        observation; ``t_max`` not positive; ``"linhart"`` without ``prior_cov``/``post_covs`` or with
        covariances of the wrong shape or not positive definite. When ``score_fn`` is first traced: ``θ`` is
        not 1-d or a score function returns a wrong shape.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import make_composite_score
      >>> prior = lambda theta, t: -theta
      >>> post = lambda theta, x, t: -(theta - x)
      >>> score = make_composite_score("geffner", prior, post, jnp.ones((3, 2)))
      >>> score(jnp.zeros(2), 0.5)
      Array([3., 3.], dtype=float32)
    """
    if kind not in ("geffner", "linhart", "linhart_jac"):
        raise ValueError(f"kind must be 'geffner', 'linhart' or 'linhart_jac', got {kind!r}")
    if prior_mode not in ("diffused", "tempered"):
        raise ValueError(f"prior_mode must be 'diffused' or 'tempered', got {prior_mode!r}")
    if prior_mode == "tempered" and kind != "geffner":
        raise ValueError(f"prior_mode='tempered' is defined for kind='geffner' only, got kind={kind!r}")
    for name, fn in (("prior_score_fn", prior_score_fn), ("post_score_fn", post_score_fn)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    xs = as_array(xs, "xs", kind="number")
    if xs.ndim < 1 or xs.shape[0] < 1:
        raise ValueError(f"xs must stack n >= 1 observations on axis 0, got shape {xs.shape}")
    n = xs.shape[0]
    t_max = check_positive(t_max, "t_max")
    if kind == "linhart":
        if prior_cov is None or post_covs is None:
            raise ValueError("kind='linhart' needs prior_cov and post_covs (the GAUSS covariances)")
        linhart_weights(prior_cov, post_covs, 0.5, n=n)  # validates shapes and positive definiteness now
        prior_cov, post_covs = jnp.asarray(prior_cov), jnp.asarray(post_covs)

    def score_fn(theta, t):
        theta = as_array(theta, "theta", ndim=1)
        d = theta.shape[0]
        t = jnp.asarray(t, dtype=theta.dtype)
        if prior_mode == "tempered":
            s_prior = (1.0 - t / t_max) * prior_score_fn(theta, jnp.zeros_like(t))
        else:
            s_prior = prior_score_fn(theta, t)
        s_posts = jax.vmap(lambda x: post_score_fn(theta, x, t))(xs)
        if jnp.shape(s_prior) != (d,):
            raise ValueError(f"prior_score_fn must return shape ({d},) like theta, got {jnp.shape(s_prior)}")
        if jnp.shape(s_posts) != (n, d):
            raise ValueError(
                f"post_score_fn must return shape ({d},) like theta, got {jnp.shape(s_posts)[1:]} "
                "per observation"
            )
        if kind == "geffner":
            return geffner_score(s_prior, s_posts, n)
        alpha = alpha_fn(t)
        if kind == "linhart":
            return linhart_score(s_prior, s_posts, *linhart_weights(prior_cov, post_covs, alpha, n=n), n)
        P_prior = _tweedie_prec(lambda th: prior_score_fn(th, t), theta, alpha)
        P_posts = jax.vmap(lambda x: _tweedie_prec(lambda th: post_score_fn(th, x, t), theta, alpha))(xs)
        Lam = (1 - n) * P_prior + P_posts.sum(0)
        return linhart_score(s_prior, s_posts, Lam, P_prior, P_posts, n)

    return score_fn
