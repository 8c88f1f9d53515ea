r"""Annealed Langevin dynamics with composite scores for tall-data simulation-based inference.

Paper: Camille Touron, Gabriel V. Cardoso, Julyan Arbel, Pedro L. C. Rodrigues, *Theoretical guidelines for
annealed Langevin dynamics in compositional simulation-based inference*, arXiv:2605.21253 (2026). Composite
scores of Geffner, Papamakarios & Mnih, *Compositional score modeling for simulation-based inference*
(ICML 2023, arXiv:2209.14249) and of Linhart, Cardoso, Gramfort, Le Corff & Rodrigues, *Diffusion posterior
sampling for simulation-based inference in tall data settings* (arXiv:2404.07593). Spec: ``specs/sampling.md``
part B.

Tall posterior for n iid observations: ``π(θ | x_{1:n}) ∝ λ(θ)^{1-n} Π_j p(θ | x_j)``. VP diffusion
``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε`` with ``α_t = exp(-β_min t - (β_max - β_min) t²/2)``.

- Geffner (F-NPSE): ``s^G_t(θ) = (1-n) s_λ(θ, t) + Σ_j s_j(θ, t)``. With ``prior_mode="tempered"`` the prior
  factor is the undiffused prior tempered by ``(1 - t/t_max)``: ``(1-n)(1 - t/t_max) ∇log λ(θ)``.
- Linhart (GAUSS): ``Σ_{λ,t}^{-1} = Σ_λ^{-1} + α/(1-α) I``, ``Σ_{j,t}^{-1} = Σ_j^{-1} + α/(1-α) I``,
  ``Λ_t = (1-n) Σ_{λ,t}^{-1} + Σ_j Σ_{j,t}^{-1}``,
  ``s^L_t(θ) = Λ_t^{-1} [(1-n) Σ_{λ,t}^{-1} s_λ(θ,t) + Σ_j Σ_{j,t}^{-1} s_j(θ,t)]``.
  JAC variant: ``Σ_{·,t}`` replaced by the Tweedie covariance ``((1-α)/α) (I + (1-α) ∇_θ s(θ, t))``
  (state dependent, by ``jax.jacfwd``).
- ULA: ``θ ← θ + h s(θ) + sqrt(2h) ξ``, ``ξ ~ N(0, I)``.
- Annealed Langevin (ALD): levels ``t_0 = t_max > ... > t_{L-1} = t_min``; at level l run ``k_l`` ULA steps of
  size ``h_l`` on the composite score at ``t_l``; the output of a level starts the next one.
- Practical schedule (Geffner's and Linhart's code): ``h_l = τ (1 - γ_l)/sqrt(γ_l)``,
  ``γ_l = α_{t_l}/α_{t_{l+1}}`` (``γ = α_{t_min}`` at the last level), ``L = 400``, ``k = 5``, ``τ = 0.5``.

The Gaussian closed forms (:mod:`jaxlab.sampling.langevin_gaussian`) and the bounds and tuning rules
(:mod:`jaxlab.sampling.langevin_bounds`, **reconstructed**: only the paper's abstract was available) are
re-exported here so that the whole spec API lives under this module's name.

Divergence: ALD on a Geffner bridging density whose precision is not positive definite diverges (the
composite score is then the score of no density); :func:`geffner_bridging_gaussian` names such levels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.sharding import shard_batch
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive, check_psd, is_concrete
from jaxlab.sampling.langevin_bounds import (
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
from jaxlab.sampling.langevin_gaussian import (
    ald_gaussian_moments,
    gaussian_diffuse,
    geffner_bridging_gaussian,
    linhart_bridging_gaussian,
    path_w2,
    spd_inverse,
    tall_posterior_gaussian,
    ula_gaussian_moments,
    w2_gaussian,
)
from jaxlab.sampling.langevin_papers import GEFFNER, LINHART, TOURON

__all__ = [
    "DK_CONSTANT",
    "ALDInfo",
    "ALDState",
    "TuneResult",
    "ULAInfo",
    "ULAState",
    "ald_bound_terms",
    "ald_default_schedule",
    "ald_gaussian_moments",
    "ald_init",
    "ald_kernel",
    "ald_w2_bound",
    "annealed_langevin",
    "bridging_gaussians",
    "dk_level_term",
    "gaussian_diffuse",
    "gaussian_problem",
    "geffner_bridging_gaussian",
    "geffner_score",
    "geffner_score_error",
    "level_constants",
    "linhart_alpha",
    "linhart_bridging_gaussian",
    "linhart_score",
    "linhart_score_error",
    "linhart_weights",
    "make_composite_score",
    "path_w2",
    "stability_cap",
    "tall_posterior_gaussian",
    "tune",
    "tune_ald",
    "ula_gaussian_moments",
    "ula_init",
    "ula_kernel",
    "ula_run",
    "ula_step",
    "vp_alpha",
    "w2_gaussian",
]

ScoreFn = Callable[[Array, Array], Array]


# --------------------------------------------------------------------------- noise schedules
@cites(TOURON)
def vp_alpha(t, *, beta_min: float = 0.1, beta_max: float = 20.0):
    """VP schedule ``α_t = exp(-∫_0^t β)`` with ``β(s) = β_min + (β_max - β_min) s``."""
    t = jnp.asarray(t)
    return jnp.exp(-(beta_min * t + 0.5 * (beta_max - beta_min) * t * t))


@cites(LINHART)
def linhart_alpha(t):
    """The schedule of Linhart et al.'s code, ``β(s) = 32 s``: ``α_t = exp(-16 t²)``."""
    t = jnp.asarray(t)
    return jnp.exp(-16.0 * t * t)


# -------------------------------------------------------------------------- composite scores
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
    """Geffner's composite score ``(1-n) s_λ + Σ_j s_j`` (``n = 1`` gives the single posterior score)."""
    prior_score, post_scores, n = _scores(prior_score, post_scores, n)
    return (1 - n) * prior_score + post_scores.sum(0)


def _prec_t(prec, alpha):
    return prec + (alpha / (1.0 - alpha)) * jnp.eye(prec.shape[-1], dtype=prec.dtype)


@cites(LINHART)
def linhart_weights(prior_cov, post_covs, alpha, n: int | None = None) -> tuple[Array, Array, Array]:
    """Precisions of Linhart's GAUSS composite score at ``α``: ``(Λ_t, Σ_{λ,t}^{-1}, Σ_{j,t}^{-1})``.

    ``post_covs`` is ``(n, d, d)`` or one shared ``(d, d)`` covariance (then ``n`` is required and the
    returned ``post_precs_t`` stays ``(d, d)``: n copies are never materialised). Inverses use Cholesky.
    """
    prior_cov = as_array(prior_cov, "prior_cov", ndim=2)
    d = prior_cov.shape[0]
    if prior_cov.shape != (d, d):
        raise ValueError(f"prior_cov must be a square (d, d) matrix, got shape {prior_cov.shape}")
    check_psd(prior_cov, "prior_cov", strict=True)
    post_covs = as_array(post_covs, "post_covs", ndim=(2, 3))
    if post_covs.shape[-2:] != (d, d):
        raise ValueError(f"post_covs must have shape (n, {d}, {d}) or ({d}, {d}), got {post_covs.shape}")
    if post_covs.ndim == 3:
        if n is not None and check_int(n, "n", min_value=1) != post_covs.shape[0]:
            raise ValueError(f"n must equal post_covs.shape[0] = {post_covs.shape[0]}, got n = {n}")
        n = post_covs.shape[0]
        if is_concrete(post_covs):
            for j in range(n):
                check_psd(post_covs[j], f"post_covs[{j}]", strict=True)
    else:
        if n is None:
            raise ValueError("n is required when one shared post_covs (d, d) is given")
        n = check_int(n, "n", min_value=1)
        check_psd(post_covs, "post_covs", strict=True)
    alpha = as_array(alpha, "alpha", ndim=0)
    check_in_range(alpha, "alpha", 0.0, 1.0, lo_open=True, hi_open=True)
    prior_prec_t = _prec_t(spd_inverse(prior_cov), alpha)
    inv = jax.vmap(spd_inverse) if post_covs.ndim == 3 else spd_inverse
    post_precs_t = _prec_t(inv(post_covs), alpha)
    summed = post_precs_t.sum(0) if post_covs.ndim == 3 else n * post_precs_t
    return (1 - n) * prior_prec_t + summed, prior_prec_t, post_precs_t


@cites(LINHART)
def linhart_score(prior_score, post_scores, Lambda_t, prior_prec_t, post_precs_t, n: int | None = None):
    """Linhart's composite score ``Λ_t^{-1} [(1-n) Σ_{λ,t}^{-1} s_λ + Σ_j Σ_{j,t}^{-1} s_j]``.

    ``post_precs_t`` is ``(n, d, d)`` or one shared ``(d, d)`` matrix (as :func:`linhart_weights` returns).
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

    Args:
      kind: ``"geffner"``, ``"linhart"`` (GAUSS; needs ``prior_cov`` and ``post_covs``) or ``"linhart_jac"``.
      prior_score_fn: ``(θ, t) -> s_λ(θ, t)``, the diffused prior score (any callable or equinox module).
      post_score_fn: ``(θ, x, t) -> s(θ, t | x)``, the diffused single-observation posterior score.
      xs: the n observations, stacked on axis 0 (``post_score_fn`` is vmapped over them).
      prior_cov, post_covs: ``Σ_λ`` and ``Σ_j`` (``(n, d, d)`` or shared ``(d, d)``) for ``"linhart"``.
      alpha_fn: the noise schedule ``t -> α_t``.
      prior_mode: ``"diffused"`` (default) or ``"tempered"`` (Geffner's original
        ``(1-n)(1 - t/t_max) s_λ(θ, 0)``; Geffner only).

    The output shapes of the user functions are checked when ``score_fn`` is first traced.
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
    check_positive(t_max, "t_max")
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


# --------------------------------------------------------------------------------------- ULA
class ULAState(NamedTuple):
    """Positions of the chains, ``(d,)`` or ``(P, d)``."""

    position: Array


class ULAInfo(NamedTuple):
    """Diagnostics of one ULA step: the step size used."""

    step_size: Array


def _batched(score_fn, theta, *args):
    return score_fn(theta, *args) if theta.ndim == 1 else jax.vmap(lambda th: score_fn(th, *args))(theta)


@cites(TOURON)
def ula_step(key, theta: Float[Array, "*P d"], score: Float[Array, "*P d"], h) -> Float[Array, "*P d"]:
    """One unadjusted Langevin step ``θ + h s + sqrt(2h) ξ`` from the score ``s`` evaluated at ``θ``."""
    theta = jnp.asarray(theta)
    if jnp.shape(score) != theta.shape:
        raise ValueError(f"score must have the shape of theta {theta.shape}, got {jnp.shape(score)}")
    noise = jax.random.normal(key, theta.shape, dtype=theta.dtype)
    return theta + h * score + jnp.sqrt(2.0 * h) * noise


@cites(TOURON)
def ula_init(theta0: Float[Array, "*P d"]) -> ULAState:
    """Initial ULA state from positions ``(d,)`` (one chain) or ``(P, d)`` (P chains)."""
    return ULAState(as_array(theta0, "theta0", ndim=(1, 2)))


@cites(TOURON)
def ula_kernel(score_fn: Callable[[Array], Array], h) -> Callable[[Any, ULAState], tuple[ULAState, ULAInfo]]:
    """``step(key, state) -> (state, info)`` of ULA on ``score_fn(θ (d,)) -> (d,)`` (vmapped over chains)."""
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}")
    check_positive(h, "h")

    def step(key, state):
        theta = state.position
        s = _batched(score_fn, theta)
        return ULAState(ula_step(key, theta, s, h)), ULAInfo(jnp.asarray(h))

    return step


@cites(TOURON)
def ula_run(key, theta0, score_fn, h, num_steps: int, *, thin: int = 1, save_states: bool = False,
            shard: bool = False):
    """Run ULA for ``num_steps`` with :func:`jaxlab.core.run`; ``shard`` splits the chains over devices.

    Returns ``(final ULAState, RunTrace)``.
    """
    state = ula_init(theta0)
    if shard:
        state = shard_batch(state)
    return run(ula_kernel(score_fn, h), state, key, num_steps, thin=thin, save_states=save_states)


# ------------------------------------------------------------------------- annealed Langevin
class ALDState(NamedTuple):
    """Particles ``(P, d)`` and the index of the next level."""

    particles: Array
    level: Array


class ALDInfo(NamedTuple):
    """The level just run: its time ``t``, step size ``h`` and number of steps ``k``."""

    t: Array
    h: Array
    k: Array


def _schedule(ts, hs, ks):
    ts = as_array(ts, "ts", ndim=1)
    L = ts.shape[0]
    if L < 1:
        raise ValueError("ts must hold at least one level, got an empty array")
    hs = as_array(hs, "hs", ndim=1)
    ks = as_array(ks, "ks", ndim=1, kind="any")
    if not jnp.issubdtype(ks.dtype, jnp.integer):
        raise TypeError(f"ks must have an integer dtype, got dtype {ks.dtype}")
    if hs.shape != (L,) or ks.shape != (L,):
        raise ValueError(f"ts, hs and ks must have the same length, got {L}, {hs.shape[0]} and {ks.shape[0]}")
    check_in_range(hs, "hs", 0.0, lo_open=True)
    check_in_range(ks, "ks", 1)
    if is_concrete(ts) and L > 1 and not bool(np.all(np.diff(np.asarray(ts)) < 0)):
        raise ValueError("ts must be strictly decreasing (from the noisiest level to t_min)")
    check_in_range(ts, "ts", 0.0, lo_open=True)
    return ts, hs, ks


@cites(TOURON)
def ald_init(theta0: Float[Array, "P d"]) -> ALDState:
    """Initial ALD state: particles ``(P, d)`` at level 0."""
    return ALDState(as_array(theta0, "theta0", ndim=2), jnp.zeros((), jnp.int32))


@cites(TOURON)
def ald_kernel(score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None):
    """``step(key, state) -> (state, info)`` running the ``k_l`` ULA steps of level ``state.level``.

    The inner loop is a ``fori_loop`` with a dynamic trip count (no reverse-mode gradient), or, with
    ``max_k``, a static scan of ``max_k`` steps where steps beyond ``k_l`` are masked (differentiable).
    """
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}")
    ts, hs, ks = _schedule(ts, hs, ks)
    if max_k is not None:
        max_k = check_int(max_k, "max_k", min_value=1)
        if is_concrete(ks) and int(np.max(ks)) > max_k:
            raise ValueError(f"max_k must be >= max(ks) = {int(np.max(ks))}, got {max_k}")

    def step(key, state):
        lvl = state.level
        t, h, k = ts[lvl], hs[lvl], ks[lvl]

        def body(i, theta):
            s = _batched(score_fn, theta, t)
            return ula_step(jax.random.fold_in(key, i), theta, s, h)

        if max_k is None:
            theta = jax.lax.fori_loop(0, k, body, state.particles)
        else:
            def masked(theta, i):
                new = body(i, theta)
                return jnp.where(i < k, new, theta), None

            theta, _ = jax.lax.scan(masked, state.particles, jnp.arange(max_k))
        return ALDState(theta, lvl + 1), ALDInfo(t, h, k)

    return step


@cites(TOURON, GEFFNER, LINHART)
def annealed_langevin(
    key, theta0: Float[Array, "P d"], score_fn: ScoreFn, ts, hs, ks, *, max_k: int | None = None,
    shard: bool = False,
) -> Float[Array, "P d"]:
    """Annealed Langevin over the levels ``ts`` (outer scan by :func:`jaxlab.core.run`), returns ``θ_final``.

    Args:
      key: PRNG key.
      theta0: initial particles ``(P, d)`` (e.g. ``N(0, I)`` draws).
      score_fn: ``(θ (d,), t) -> (d,)``, e.g. from :func:`make_composite_score`; vmapped over particles.
      ts: strictly decreasing levels ``(L,)``; ``hs``: step sizes ``(L,)``; ``ks``: integer steps ``(L,)``.
      max_k: static inner scan with masking (see :func:`ald_kernel`).
      shard: lay the particles out over all devices (P must be a multiple of the device count).
    """
    state = ald_init(theta0)
    if shard:
        state = ALDState(shard_batch(state.particles), state.level)
    step = ald_kernel(score_fn, ts, hs, ks, max_k=max_k)
    final, _ = run(step, state, key, int(jnp.shape(ts)[0]))
    return final.particles


@cites(GEFFNER, LINHART)
def ald_default_schedule(
    L: int = 400, k: int = 5, tau: float = 0.5, *, alpha_fn: Callable = vp_alpha, t_min: float = 1e-3,
    t_max: float = 1.0,
) -> tuple[Float[Array, " L"], Float[Array, " L"], Int[Array, " L"]]:
    """The practical rule of Geffner's and Linhart's code: uniform ``ts`` from ``t_max`` to ``t_min``,
    ``h_l = τ (1 - γ_l)/sqrt(γ_l)`` with ``γ_l = α_{t_l}/α_{t_{l+1}}`` (``α_{t_min}`` at the last level), and
    ``k`` steps everywhere. Returns ``(ts, hs, ks)``."""
    L = check_int(L, "L", min_value=1)
    k = check_int(k, "k", min_value=1)
    check_positive(tau, "tau")
    check_in_range(t_min, "t_min", 0.0, lo_open=True)
    check_in_range(t_max, "t_max", t_min, lo_open=L > 1)
    ts = jnp.linspace(t_max, t_min, L)
    a = alpha_fn(ts)
    gamma = jnp.concatenate([a[:-1] / a[1:], a[-1:]])
    hs = tau * (1.0 - gamma) / jnp.sqrt(gamma)
    return ts, hs, jnp.full((L,), k, dtype=jnp.int32)


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

