r"""Mean shift interacting particles (MSIP): MMD-optimal weighted quadrature for unnormalized densities.

Papers:

- A. Belhadji, D. Sharp, Y. M. Marzouk, *To discretize continually: Mean shift interacting particle systems for
  Bayesian inference*, arXiv:2605.14142 (2026): MSIP for continuous targets known up to a constant.
- A. Belhadji, D. Sharp, Y. M. Marzouk, *Weighted quantization using MMD: From mean field to mean shift via
  gradient flows*, arXiv:2502.10600 (2025): MSIP for empirical targets and the WFR gradient-flow ODE.

Only the abstract of arXiv:2605.14142 was available. The fixed-point map and the normalizing-constant invariance
below are **derived** (from the stationarity of the reduced objective) and checked by the tests and claims of
this area; the kernel-mean-embedding estimators are in :mod:`jaxlab.sampling.msip.estimators`.

Notation: ``Y ∈ R^{N×d}`` the nodes (particles), Gaussian kernel ``k_σ(x, y) = exp(-||x-y||²/(2σ²))`` with
bandwidth ``σ`` (``lengthscale``), ``K = K(Y) + δ I`` (``δ`` = ``jitter``), target ``π = π̃/Z``.

Kernel expectations and the mean shift vector::

    v0(y) = ∫ k_σ(y, x) π(dx),   v1(y) = ∫ x k_σ(y, x) π(dx),   r(y) = v1(y)/v0(y) - y = σ² ∇log v0(y).

MMD objective, optimal weights and reduced objective::

    MMD²(Σ w_i δ_{y_i}, π) = wᵀ K w - 2 wᵀ v0(Y) + c_π,   w* = K⁻¹ v0(Y),   F(Y) = c_π - v0ᵀ K⁻¹ v0.

Stationarity of ``F`` gives ``K diag(w*) Y = V1``, i.e. the MSIP fixed-point map (derived)::

    T(Y)_i = Σ_j (K⁻¹)_{ij} v1(y_j) / Σ_j (K⁻¹)_{ij} v0(y_j)
           = [K⁻¹ (v̂0 ⊙ (Y + R))]_i / [K⁻¹ v̂0]_i,     v̂0 = exp(log v0 - max_j log v0_j),

computed with **one** Cholesky factorisation of ``K`` (symmetric positive definite with the jitter; LAPACK's
``potrf`` through ``jax.scipy.linalg.cho_factor``, half the flops of LU) and one solve with ``d + 1``
right-hand sides (never an explicit inverse). The last column
of that solve is ``K⁻¹ v̂0``, so the normalized weights ``w̄ = w*/Σ_i w*_i`` at the same nodes come for free.
Both ``T`` and ``w̄`` are ratios of linear combinations
of ``v̂0``: adding a constant to ``log π̃`` (multiplying ``Z``) changes nothing, even when ``exp(log π̃)``
overflows, because only ``log v0 - max log v0`` is ever exponentiated. Relaxed iteration with step ``η``::

    Y_{t+1} = (1 - η) Y_t + η T(Y_t).

With ``N = 1``, ``T(y) = y + r(y)``: the classical Gaussian-kernel mean shift (:func:`mean_shift`).

Bandwidth: fixed, ``σ = sqrt(d/N)`` (default), or a quantile of the pairwise particle distances recomputed
every step (``lengthscale_rule=q``; bisection selection, no sort in the loop).

Failure modes: inside ``jit`` NaN cannot raise. If ``log π̃ = -inf`` at every inner point of a particle (all
quadrature points outside the support) its ``log v0`` is ``-inf`` and its shift NaN; ``msip(..., checks=True)``
runs :mod:`jax.experimental.checkify` checks and reports the first failing particle and step. Duplicate
particles make ``K`` singular: the jitter handles it; with ``jitter = 0`` the wrappers raise. In float32 the
default ``δ = 1e-7`` (the authors' float64 value) is below rounding: with many particles per bandwidth
(e.g. N = 160, σ = 0.5 in 2-D) the solve returns NaN; use ``jitter ≈ 1e-4`` in float32.

The step returns ``(state, info)`` (the :class:`jaxlab.core.Algorithm` protocol); :class:`MSIPState` carries
``image`` (``T(Y)`` at the current nodes, from the same solve as the weights, so that a step costs one
factorisation and one estimator call); ``msip`` returns ``(state, RunTrace)`` with the thinned trajectory in
``trace.states`` when ``return_trajectory=True``.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify
from jaxtyping import Array, Float

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.validation import (
    as_array,
    check_finite,
    check_in_range,
    check_int,
    check_positive,
    error_if,
    is_concrete,
    value_check,
)
from jaxlab.kernels import gram, pairwise_distance_quantile
from jaxlab.sampling.msip.estimators import Estimator, check_estimator, gaussian_estimator
from jaxlab.sampling.msip.papers import MSIP, QUANTIZATION

__all__ = [
    "MSIPInfo",
    "MSIPState",
    "default_lengthscale",
    "mean_shift",
    "msip",
    "msip_algorithm",
    "msip_init",
    "msip_map",
    "msip_step",
    "optimal_weights",
    "reduced_objective",
]


class MSIPState(NamedTuple):
    """MSIP state at the current nodes (every field is consistent with ``particles``).

    Attributes:
      particles: ``(N, d)`` float array, the nodes ``Y``.
      log_v0: ``(N,)`` float array, ``log v0(y_i)`` up to an additive constant (as the estimator returns it).
      shift: ``(N, d)`` float array, the mean shift vectors ``r(y_i)``.
      weights: ``(N,)`` float array, the normalized MMD-optimal weights ``w̄ = w*/Σ_i w*_i`` (may be negative).
      image: ``(N, d)`` float array, the map ``T(Y)`` at the current nodes.
      lengthscale: 0-d float array, the bandwidth ``σ`` used at these nodes.
      step: 0-d int32 array, the number of steps taken.
    """

    particles: Array
    log_v0: Array
    shift: Array
    weights: Array
    image: Array
    lengthscale: Array
    step: Array


class MSIPInfo(NamedTuple):
    """Per-step diagnostics of :func:`msip_algorithm`'s step.

    Attributes:
      displacement: 0-d float array, the largest particle move ``max_i ||y_i^{t+1} - y_i^t||``.
      lengthscale: 0-d float array, the bandwidth ``σ`` at the new nodes.
      negative_weight: 0-d float array, the negative weight mass ``Σ_i max(-w̄_i, 0)`` at the new nodes.
    """

    displacement: Array
    lengthscale: Array
    negative_weight: Array




def default_lengthscale(n: int, d: int) -> float:
    """The default bandwidth ``σ = sqrt(d / N)`` of Belhadji, Sharp, Marzouk (arXiv:2605.14142), taken from the
    authors' public run script (the paper's text was not available).

    Args:
      n: number of particles ``N >= 1``.
      d: dimension ``d >= 1``.

    Returns:
      ``sqrt(d / n)`` as a Python float.
    """
    return math.sqrt(d / n)


# ----------------------------------------------------------------------------------------- map and weights


def _spd_solve(K, B):
    """``K⁻¹ B`` for the (jittered) Gram matrix: a Cholesky solve, half the flops of LU."""
    return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(K, lower=True), B)


def _solve_map(Y, log_v0, r, lengthscale, jitter):
    """One linear solve ``K [A | b] = [v̂0 ⊙ (Y + R) | v̂0]``; returns ``(T(Y), K⁻¹ v̂0)``.

    Where ``[K⁻¹ v̂0]_i`` is exactly 0 (``v0_i`` underflowed and no neighbour carries weight) the ratio is
    undefined; the particle then moves by its own mean shift ``y_i + r_i`` (the ``N = 1`` map).
    """
    n = Y.shape[0]
    K = gram(Y, lengthscale=lengthscale) + jitter * jnp.eye(n, dtype=Y.dtype)
    v = jnp.exp(log_v0 - jnp.max(log_v0))
    sol = _spd_solve(K, jnp.concatenate([v[:, None] * (Y + r), v[:, None]], axis=1))
    den = sol[:, -1]
    ok = den != 0
    image = jnp.where(ok[:, None], sol[:, :-1] / jnp.where(ok, den, 1.0)[:, None], Y + r)
    return image, den


_solve_map_jit = jax.jit(_solve_map)


def _check_nodes(Y, name="Y"):
    Y = check_finite(as_array(Y, name, ndim=2), name)
    if Y.shape[0] < 1 or Y.shape[1] < 1:
        raise ValueError(f"{name} must have N >= 1 rows and d >= 1 columns, got shape {Y.shape}")
    return Y


def _check_jitter(jitter, Y):
    jitter = check_positive(jitter, "jitter", strict=False)
    if is_concrete((jitter, Y)) and float(jitter) == 0.0 and Y.shape[0] > 1:
        Yn = np.asarray(Y)
        d2 = ((Yn[:, None] - Yn[None]) ** 2).sum(-1) + np.eye(Y.shape[0])
        if np.any(d2 == 0.0):
            i, j = np.argwhere(d2 == 0.0)[0]
            raise ValueError(f"particles {i} and {j} coincide, so the Gram matrix is singular with jitter=0; "
                             "use jitter > 0")
    return jitter


@cites(MSIP, QUANTIZATION)
def msip_map(
    Y: Float[Array, "N d"],
    log_v0: Float[Array, " N"],
    r: Float[Array, "N d"],
    *,
    lengthscale,
    jitter: float = 1e-7,
) -> Float[Array, "N d"]:
    """The MSIP fixed-point map at the nodes ``Y`` (derived, see the module docstring).

    ``T(Y)_i = [K⁻¹(v̂0 ⊙ (Y + R))]_i / [K⁻¹ v̂0]_i`` with ``K = K_σ(Y) + δ I`` and ``v̂0 = exp(log v0 - max log
    v0)``: one Cholesky factorisation and one solve with ``d + 1`` right-hand sides. Adding a constant to
    ``log_v0`` leaves ``T`` unchanged. A particle whose ``[K⁻¹ v̂0]_i`` is exactly 0 moves to ``y_i + r_i``.
    From Belhadji, Sharp, Marzouk, *To discretize continually: Mean shift interacting particle systems for
    Bayesian inference*, arXiv:2605.14142, and *Weighted quantization using MMD*, arXiv:2502.10600.

    Args:
      Y: ``(N, d)`` float array of nodes, finite.
      log_v0: ``(N,)`` float array, ``log v0(y_i)`` up to an additive constant.
      r: ``(N, d)`` float array, the mean shift vectors ``r(y_i)``.
      lengthscale: positive float (or 0-d array), the Gaussian kernel bandwidth ``σ``.
      jitter: ``δ >= 0`` added to the diagonal of the Gram matrix. The default ``1e-7`` suits float64; use
        about ``1e-4`` in float32.

    Returns:
      ``(N, d)`` float array ``T(Y)``, dtype of the inputs.

    Raises:
      TypeError: an array argument has a non-float dtype, or ``lengthscale``/``jitter`` is not real.
      ValueError: ``Y`` is not a finite ``(N, d)`` array with ``N, d >= 1``; ``log_v0`` or ``r`` has the wrong
        shape; ``lengthscale <= 0``; ``jitter < 0``; or two particles coincide with ``jitter = 0``.
    """
    Y = _check_nodes(Y)
    n, d = Y.shape
    log_v0 = as_array(log_v0, "log_v0", shape=(n,))
    r = as_array(r, "r", shape=(n, d))
    lengthscale = check_positive(lengthscale, "lengthscale")
    jitter = _check_jitter(jitter, Y)
    return _solve_map_jit(Y, log_v0, r, lengthscale, jitter)[0]


@cites(MSIP, QUANTIZATION)
def optimal_weights(
    Y: Float[Array, "N d"], log_v0: Float[Array, " N"], *, lengthscale, jitter: float = 1e-7, normalize: bool = True
) -> Float[Array, " N"]:
    """MMD-optimal weights at fixed nodes: ``w* = K⁻¹ v0(Y)``, normalized ``w̄ = w*/Σ_i w*_i`` by default.

    ``w*`` minimises ``MMD²(Σ_i w_i δ_{y_i}, π) = wᵀ K w - 2 wᵀ v0(Y) + c_π`` with ``K = K_σ(Y) + δ I``
    (Belhadji, Sharp, Marzouk, arXiv:2605.14142 and arXiv:2502.10600). The normalized weights are computed from
    ``exp(log v0 - max log v0)`` and do not depend on the normalizing constant of ``π``.

    Args:
      Y: ``(N, d)`` float array of nodes, finite.
      log_v0: ``(N,)`` float array, ``log v0(y_i)`` (up to an additive constant when ``normalize=True``).
      lengthscale: positive float (or 0-d array), the Gaussian kernel bandwidth ``σ``.
      jitter: ``δ >= 0`` added to the diagonal of the Gram matrix.
      normalize: return ``w̄``; ``False`` returns ``K⁻¹ exp(log_v0)``, meaningful only when ``log_v0`` is the
        log of the true (normalized) kernel mean embedding.

    Returns:
      ``(N,)`` float array of weights (they may be negative).

    Raises:
      TypeError: an array argument has a non-float dtype, or ``lengthscale``/``jitter`` is not real.
      ValueError: ``Y`` is not a finite ``(N, d)`` array with ``N, d >= 1``; ``log_v0`` is not ``(N,)``;
        ``lengthscale <= 0``; ``jitter < 0``; or two particles coincide with ``jitter = 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.msip import optimal_weights
      >>> Y = jax.random.normal(jax.random.key(0), (6, 2))
      >>> log_v0 = -0.5 * jnp.sum(Y**2, axis=1) / (1 + 0.8**2)  # π = N(0, I), σ = 0.8, up to a constant
      >>> w = optimal_weights(Y, log_v0, lengthscale=0.8)
      >>> round(float(w.sum()), 5)
      1.0
    """
    Y = _check_nodes(Y)
    log_v0 = as_array(log_v0, "log_v0", shape=(Y.shape[0],))
    lengthscale = check_positive(lengthscale, "lengthscale")
    jitter = _check_jitter(jitter, Y)
    return _weights_jit(Y, log_v0, lengthscale, jitter, normalize)


@partial(jax.jit, static_argnums=4)
def _weights_jit(Y, log_v0, lengthscale, jitter, normalize):
    K = gram(Y, lengthscale=lengthscale) + jitter * jnp.eye(Y.shape[0], dtype=Y.dtype)
    if not normalize:
        return _spd_solve(K, jnp.exp(log_v0))
    w = _spd_solve(K, jnp.exp(log_v0 - jnp.max(log_v0)))
    return w / jnp.sum(w)


@cites(MSIP, QUANTIZATION)
def reduced_objective(
    Y: Float[Array, "N d"], log_v0: Float[Array, " N"], c_pi, *, lengthscale, jitter: float = 0.0
) -> Float[Array, ""]:
    """Reduced objective ``F(Y) = c_π - v0ᵀ K⁻¹ v0``: the MMD² of the optimally weighted rule at the nodes ``Y``.

    ``K = K_σ(Y) + δ I``; minimising ``F`` over ``Y`` is what MSIP does (Belhadji, Sharp, Marzouk,
    arXiv:2605.14142 and arXiv:2502.10600). Differentiable in ``Y``. Needs the true (normalized) ``v0`` and
    ``c_π = ∫∫ k_σ(x, x') π(dx) π(dx')``.

    Args:
      Y: ``(N, d)`` float array of nodes.
      log_v0: ``(N,)`` float array, the log of the true kernel mean embedding ``v0(y_i)``.
      c_pi: float (or 0-d array), ``c_π`` for the same bandwidth.
      lengthscale: positive float (or 0-d array), the bandwidth ``σ`` (not validated here).
      jitter: ``δ >= 0`` added to the diagonal of the Gram matrix (default ``0``, unlike the other functions
        of this module).

    Returns:
      0-d float array ``F(Y)``.

    Raises:
      TypeError: ``Y`` or ``log_v0`` has a non-float dtype.
      ValueError: ``Y`` is not 2-dimensional or ``log_v0`` is not ``(N,)``.
    """
    Y = as_array(Y, "Y", ndim=2)
    log_v0 = as_array(log_v0, "log_v0", shape=(Y.shape[0],))
    K = gram(Y, lengthscale=lengthscale) + jitter * jnp.eye(Y.shape[0], dtype=Y.dtype)
    v = jnp.exp(log_v0)
    return c_pi - v @ _spd_solve(K, v)


# ------------------------------------------------------------------------------------------ init/step/run


def _lengthscale_of(Y, lengthscale, rule_q):
    if rule_q is not None:
        return pairwise_distance_quantile(Y, rule_q, method="select")
    return jnp.asarray(lengthscale, Y.dtype)


def _state_at(key, Y, estimator, lengthscale, jitter, step):
    log_v0, r = estimator(key, Y, lengthscale)
    # the particles' dtype is the carry's: a user's log density with float64 constants returns float64 under x64
    log_v0, r = jnp.asarray(log_v0, Y.dtype), jnp.asarray(r, Y.dtype)
    if log_v0.shape != Y.shape[:1] or r.shape != Y.shape:
        raise ValueError(f"estimator must return log_v0 of shape {Y.shape[:1]} and r of shape {Y.shape}, got "
                         f"{log_v0.shape} and {r.shape} (does log_density return a scalar per point?)")
    image, den = _solve_map(Y, log_v0, r, lengthscale, jitter)
    return MSIPState(Y, log_v0, r, den / jnp.sum(den), image, jnp.asarray(lengthscale, Y.dtype), step)


def _check_common(Y0, lengthscale, lengthscale_rule, jitter, step_size=1.0, bounds=None):
    """The checked ``(Y0, lengthscale, lengthscale_rule, jitter, step_size, bounds)``."""
    Y0 = _check_nodes(Y0, "Y0")
    if lengthscale_rule is None:
        lengthscale = check_positive(lengthscale, "lengthscale")
    else:
        if Y0.shape[0] < 2:
            raise ValueError(f"lengthscale_rule needs at least 2 particles, got Y0 of shape {Y0.shape}")
        lengthscale_rule = check_in_range(lengthscale_rule, "lengthscale_rule", 0.0, 1.0)
    step_size = check_in_range(step_size, "step_size", 0.0, 1.0, lo_open=True)
    jitter = _check_jitter(jitter, Y0)
    return Y0, lengthscale, lengthscale_rule, jitter, step_size, _check_bounds(bounds)


def _check_bounds(bounds):
    if bounds is None:
        return None
    if len(bounds) != 2:
        raise ValueError(f"bounds must be a (lo, hi) pair, got {bounds!r}")
    lo, hi = bounds
    lo = value_check(lo, lambda a: ~(a < hi), f"bounds must satisfy lo < hi, got {bounds!r}")
    return lo, hi


_INITIAL_MSG = "the log density is not finite around an initial particle; start the particles inside the support"


def _initial_bad(state):
    """Per particle: ``log v0`` or the shift is not finite."""
    return ~jnp.isfinite(state.log_v0) | ~jnp.all(jnp.isfinite(state.shift), axis=1)


def _check_initial_state(state):
    """Return ``state``; raise unless ``log v0``, the shifts and the weights at the initial nodes are finite
    (eagerly naming the first bad particle; under ``jit`` at run time)."""
    if is_concrete(state.log_v0):
        bad = np.asarray(_initial_bad(state))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"the log density is not finite around initial particle {i} "
                             f"(log_v0={float(state.log_v0[i])!r}); start the particles inside the support")
        check_finite(state.weights, "initial weights")
        return state
    log_v0 = error_if(state.log_v0, jnp.any(_initial_bad(state)), _INITIAL_MSG)
    return state._replace(log_v0=log_v0, weights=check_finite(state.weights, "initial weights"))


@cites(MSIP)
def msip_init(
    Y0: Float[Array, "N d"],
    estimator: Estimator,
    *,
    lengthscale=None,
    key,
    jitter: float = 1e-7,
    lengthscale_rule: float | None = None,
) -> MSIPState:
    """Initial :class:`MSIPState`: the estimator, the map ``T`` and the weights at the initial nodes ``Y0``.

    The ``init`` of :func:`msip_algorithm`.

    Args:
      Y0: ``(N, d)`` float array of initial particles, finite, ``d`` the target's dimension.
      estimator: ``est(key, Y, σ) -> (log v0 (N,), r (N, d))`` from one of the estimator factories.
      lengthscale: positive float, the bandwidth ``σ``; ``None`` means :func:`default_lengthscale`
        ``sqrt(d/N)``. Ignored when ``lengthscale_rule`` is given.
      key: PRNG key handed to the estimator.
      jitter: ``δ >= 0`` added to the Gram diagonal.
      lengthscale_rule: ``q ∈ [0, 1]``: the bandwidth is the ``q``-quantile of the pairwise distances of
        ``Y0`` (needs ``N >= 2``); ``None`` keeps ``lengthscale``.

    Returns:
      The :class:`MSIPState` at ``Y0`` with ``step = 0``.

    Raises:
      TypeError: ``estimator`` is not callable, or ``Y0`` is not a float array.
      ValueError: ``Y0`` is not a finite ``(N, d)`` array; a hyperparameter is out of range; particles coincide
        with ``jitter = 0``; the estimator returns arrays of the wrong shape; or ``log v0``, the shifts or the
        weights are not finite at an initial particle (the message names the first one).
    """
    check_estimator(estimator)
    Y0 = _check_nodes(Y0, "Y0")
    if lengthscale is None:
        lengthscale = default_lengthscale(*Y0.shape)
    Y0, lengthscale, lengthscale_rule, jitter, _, _ = _check_common(Y0, lengthscale, lengthscale_rule, jitter)
    rule = None if lengthscale_rule is None else jnp.asarray(lengthscale_rule, Y0.dtype)
    state = _init_jit(key, Y0, jnp.asarray(lengthscale, Y0.dtype), jnp.asarray(jitter, Y0.dtype), rule,
                      estimator=estimator)
    return _check_initial_state(state)


def _initial_state(key, Y0, lengthscale, jitter, rule_q, estimator):
    sigma = _lengthscale_of(Y0, lengthscale, rule_q)
    return _state_at(key, Y0, estimator, sigma, jitter, jnp.zeros((), jnp.int32))


_init_jit = jax.jit(_initial_state, static_argnames=("estimator",))


def _step(key, state, estimator, step_size, jitter, rule_q, bounds, checks):
    Y = state.particles
    Y_new = (1.0 - step_size) * Y + step_size * state.image
    if bounds is not None:
        Y_new = jnp.clip(Y_new, bounds[0], bounds[1])
    sigma = _lengthscale_of(Y_new, state.lengthscale, rule_q)
    new = _state_at(key, Y_new, estimator, sigma, jitter, state.step + 1)
    if checks:
        bad = ~jnp.isfinite(new.log_v0) | ~jnp.all(jnp.isfinite(new.shift), axis=1)
        checkify.check(~jnp.any(bad), "MSIP: non-finite log v0 or shift at particle {i} after step {t} "
                       "(log density -inf at every inner point?)", i=jnp.argmax(bad), t=new.step)
        checkify.check(jnp.all(jnp.isfinite(new.weights)), "MSIP: non-finite weights after step {t}", t=new.step)
    info = MSIPInfo(jnp.max(jnp.linalg.norm(Y_new - Y, axis=1)), sigma, jnp.sum(jnp.maximum(-new.weights, 0.0)))
    return new, info


@cites(MSIP)
@renamed_kwargs(lr="step_size")
def msip_step(
    key,
    state: MSIPState,
    *,
    estimator: Estimator,
    step_size=0.1,
    jitter: float = 1e-7,
    lengthscale_rule=None,
    bounds: tuple | None = None,
) -> tuple[MSIPState, MSIPInfo]:
    """One relaxed MSIP step ``Y ← (1-η) Y + η T(Y)``, ``η = step_size`` (Belhadji, Sharp, Marzouk,
    arXiv:2605.14142).

    After the move the particles are clamped to ``bounds``, the bandwidth rule is applied and the estimator
    (with ``key``), the map and the weights are evaluated at the new nodes. Prefer :func:`msip_algorithm`,
    which validates and binds these hyperparameters once; this function checks only ``estimator``.

    Args:
      key: PRNG key handed to the estimator.
      state: the current :class:`MSIPState`.
      estimator: ``est(key, Y, σ) -> (log v0, r)`` from one of the estimator factories.
      step_size: relaxation ``η ∈ (0, 1]`` (``lr`` is its deprecated name).
      jitter: ``δ >= 0`` added to the Gram diagonal.
      lengthscale_rule: ``q ∈ [0, 1]``: recompute ``σ`` as the ``q``-quantile of the pairwise distances of the
        new nodes; ``None`` keeps ``state.lengthscale``.
      bounds: optional ``(lo, hi)`` (scalars or ``(d,)`` arrays) clamping the particles after the move.

    Returns:
      ``(new_state, info)``: the :class:`MSIPState` at the new nodes and the step's :class:`MSIPInfo`.

    Raises:
      TypeError: ``estimator`` is not callable.
      ValueError: the estimator returns arrays of the wrong shape.
    """
    check_estimator(estimator)
    return _step(key, state, estimator, step_size, jitter, lengthscale_rule, bounds, False)


@cites(MSIP, QUANTIZATION)
def msip_algorithm(
    estimator: Estimator,
    *,
    step_size=0.1,
    lengthscale=None,
    lengthscale_rule=None,
    jitter=1e-7,
    bounds: tuple | None = None,
    checks: bool = False,
) -> Algorithm:
    """MSIP with its estimator and hyperparameters bound once, as a :class:`jaxlab.core.Algorithm`.

    ``init(Y0, key)`` evaluates the estimator, the map ``T`` and the weights at the initial nodes ``Y0 (N, d)``
    (:func:`msip_init`); ``step(key, state)`` takes one relaxed step ``Y ← (1-η) Y + η T(Y)``, ``η = step_size``,
    clamps to ``bounds``, applies the bandwidth rule and re-evaluates the estimator (with ``key``), the map and
    the weights at the new nodes, returning ``(MSIPState, MSIPInfo)``.

    Belhadji, Sharp, Marzouk, *To discretize continually: Mean shift interacting particle systems for Bayesian
    inference*, arXiv:2605.14142. Only the abstract was available: the map ``T`` is derived from the
    stationarity of the reduced objective (module docstring) and the estimators are reconstructed from
    arXiv:2502.10600 and the authors' public code.

    Args:
      estimator: ``est(key, Y, σ) -> (log v0, r)`` from one of the estimator factories.
      step_size: relaxation ``η ∈ (0, 1]`` (may be traced).
      lengthscale: fixed bandwidth ``σ > 0``; ``None`` means ``sqrt(d/N)`` at ``init``.
      lengthscale_rule: ``q ∈ [0, 1]``: recompute ``σ`` every step as the ``q``-quantile of pairwise distances.
      jitter: ``δ >= 0`` added to the Gram diagonal.
      bounds: optional ``(lo, hi)`` clamp of the particles after each step.
      checks: add :mod:`jax.experimental.checkify` checks of non-finite ``log v0``, shifts and weights to the
        step (run it under ``checkify.checkify``).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``estimator`` is not callable.
      ValueError: a hyperparameter is out of range (under ``jit``: at run time).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.msip import gaussian_estimator, msip_algorithm
      >>> algo = msip_algorithm(gaussian_estimator(jnp.zeros(2), jnp.eye(2)), step_size=0.5)
      >>> state = algo.init(jax.random.normal(jax.random.key(0), (8, 2)), jax.random.key(1))
      >>> state, info = jax.jit(algo.step)(jax.random.key(2), state)
      >>> state.particles.shape, state.weights.shape
      ((8, 2), (8,))
    """
    check_estimator(estimator)
    if lengthscale is not None:
        lengthscale = check_positive(lengthscale, "lengthscale")
    if lengthscale_rule is not None:
        lengthscale_rule = check_in_range(lengthscale_rule, "lengthscale_rule", 0.0, 1.0)
    step_size = check_in_range(step_size, "step_size", 0.0, 1.0, lo_open=True)
    jitter = check_positive(jitter, "jitter", strict=False)
    bounds = _check_bounds(bounds)

    def init(Y0: Float[Array, "N d"], key) -> MSIPState:
        return msip_init(Y0, estimator, lengthscale=lengthscale, key=key, jitter=jitter,
                         lengthscale_rule=lengthscale_rule)

    def step(key, state: MSIPState) -> tuple[MSIPState, MSIPInfo]:
        return _step(key, state, estimator, step_size, jitter, lengthscale_rule, bounds, checks)

    return Algorithm(init, step)


def _msip_run(key, Y0, lengthscale, step_size, jitter, rule_q, bounds, *, estimator, num_steps, thin, save, checks,
              progress):
    algo = msip_algorithm(estimator, step_size=step_size, lengthscale=lengthscale, lengthscale_rule=rule_q,
                          jitter=jitter, bounds=bounds, checks=checks)
    k0, k1 = jax.random.split(key)
    # the initial state without its eager checks: msip() checks it once the compiled run returns
    state = _initial_state(k0, Y0, lengthscale, jitter, rule_q, estimator)
    final, trace = run(algo.step, state, k1, num_steps, thin=thin, save_states=save, progress=progress,
                       label="msip")
    return state, final, trace


_STATIC = ("estimator", "num_steps", "thin", "save", "checks", "progress")
_msip_jit = jax.jit(_msip_run, static_argnames=_STATIC)
_msip_checked = jax.jit(checkify.checkify(_msip_run), static_argnames=_STATIC)


@cites(MSIP, QUANTIZATION)
@renamed_kwargs(n_steps="num_steps", lr="step_size")
def msip(
    key,
    Y0: Float[Array, "N d"],
    estimator: Estimator,
    *,
    num_steps: int,
    step_size=0.1,
    lengthscale=None,
    lengthscale_rule=None,
    jitter=1e-7,
    bounds: tuple | None = None,
    return_trajectory: bool = False,
    thin: int = 1,
    checks: bool = False,
    progress: bool = False,
) -> tuple[MSIPState, RunTrace]:
    """Run ``num_steps`` MSIP steps from ``Y0`` under ``lax.scan`` (:func:`jaxlab.core.run`), jitted.

    MSIP (Belhadji, Sharp, Marzouk, *To discretize continually: Mean shift interacting particle systems for
    Bayesian inference*, arXiv:2605.14142) moves ``N`` particles by the relaxed fixed-point iteration
    ``Y ← (1-η) Y + η T(Y)`` of the map ``T`` of :func:`msip_map` and weights them by :func:`optimal_weights`,
    which makes ``Σ_i w̄_i δ_{y_i}`` an MMD-optimal quadrature rule for ``π ∝ exp(log π̃)``. Only the paper's
    abstract was available: the map is derived from the stationarity of the reduced objective (module
    docstring) and the estimators are reconstructed from arXiv:2502.10600 and the authors' public code. The
    step is that of :func:`msip_algorithm` with the same hyperparameters.

    Args:
      key: PRNG key (one split for the initial estimate, one per step).
      Y0: initial particles ``(N, d)``, ``d`` the target's dimension.
      estimator: ``est(key, Y, σ) -> (log v0, r)`` from one of the factories (static: reuse the same object to
        reuse the compiled program).
      num_steps: number of steps (static; ``n_steps`` is its deprecated name).
      step_size: relaxation ``η ∈ (0, 1]``; may be traced (vmap over it). ``lr`` is its deprecated name.
      lengthscale: fixed bandwidth ``σ > 0`` (may be traced); ``None`` means ``sqrt(d/N)``.
      lengthscale_rule: ``q ∈ [0, 1]``: recompute ``σ`` every step as the ``q``-quantile of pairwise distances.
      jitter: ``δ >= 0`` added to the Gram diagonal.
      bounds: optional ``(lo, hi)`` clamp of the particles after each step.
      return_trajectory: keep every ``thin``-th state in ``trace.states``.
      thin: record every ``thin``-th state and info.
      checks: run checkify checks (non-finite ``log v0``/shift/weights) and raise with the failing particle.
      progress: print a progress meter from inside the compiled loop.

    Returns:
      ``(final_state, RunTrace(states or None, infos))``; ``final_state.weights`` are the normalized weights at
      the final nodes.

    Raises:
      TypeError: ``estimator`` is not callable (e.g. the string ``"gaussian"``), or ``Y0`` is not a float array.
      ValueError: ``Y0`` is not ``(N, d)`` and finite, its ``d`` is not the target's dimension, a hyperparameter
        is out of range, particles coincide with ``jitter = 0``, or the log density is not finite around an
        initial particle.

    Example:
      >>> import jax
      >>> from jaxlab.sampling.msip import benchmarks, fredholm_estimator, msip
      >>> target = benchmarks.gmm()
      >>> est = fredholm_estimator(target.log_density, gamma=0.9)
      >>> Y0 = 3.0 * jax.random.normal(jax.random.key(0), (16, 2))
      >>> state, trace = msip(jax.random.key(1), Y0, est, num_steps=20, step_size=0.5, lengthscale=0.5)
      >>> state.particles.shape, trace.infos.displacement.shape
      ((16, 2), (20,))
    """
    check_estimator(estimator)
    Y0 = _check_nodes(Y0, "Y0")
    if lengthscale is None:
        lengthscale = default_lengthscale(*Y0.shape)
    Y0, lengthscale, lengthscale_rule, jitter, step_size, bounds = _check_common(
        Y0, lengthscale, lengthscale_rule, jitter, step_size, bounds)
    num_steps = check_int(num_steps, "num_steps", min_value=0)
    thin = check_int(thin, "thin", min_value=1)
    if bounds is not None:
        bounds = (jnp.asarray(bounds[0], Y0.dtype), jnp.asarray(bounds[1], Y0.dtype))
    args = (key, Y0, jnp.asarray(lengthscale, Y0.dtype), jnp.asarray(step_size, Y0.dtype),
            jnp.asarray(jitter, Y0.dtype),
            None if lengthscale_rule is None else jnp.asarray(lengthscale_rule, Y0.dtype), bounds)
    kw = dict(estimator=estimator, num_steps=num_steps, thin=thin, save=bool(return_trajectory),
              checks=bool(checks), progress=bool(progress))
    if checks:
        err, (state0, final, trace) = _msip_checked(*args, **kw)
        _check_initial_state(state0)
        err.throw()
    else:
        state0, final, trace = _msip_jit(*args, **kw)
        if is_concrete(state0.log_v0):
            _check_initial_state(state0)
        else:  # under jit: the run-time check must feed the result, or it is dropped
            bad = jnp.any(_initial_bad(state0)) | ~jnp.all(jnp.isfinite(state0.weights))
            final = final._replace(particles=error_if(final.particles, bad, _INITIAL_MSG))
    return final, trace


@cites(MSIP)
@renamed_kwargs(n_steps="num_steps")
def mean_shift(
    key, y0: Float[Array, " d"], estimator: Estimator, *, num_steps: int, lengthscale, return_trajectory: bool = False
) -> tuple[Float[Array, " d"], Float[Array, "T d"] | None]:
    """Classical Gaussian-kernel mean shift ``y ← y + r(y) = v1(y)/v0(y)`` (MSIP with ``N = 1``, ``η = 1``).

    The ``N = 1`` case of the MSIP map (Belhadji, Sharp, Marzouk, arXiv:2605.14142): the single particle climbs
    ``log v0``, the target smoothed by the kernel, since ``r = σ² ∇log v0``. Vmappable over ``y0`` and ``key``.

    Args:
      key: PRNG key, split into one key per step for the estimator.
      y0: ``(d,)`` float array, the starting point, finite.
      estimator: ``est(key, Y, σ) -> (log v0, r)`` from one of the estimator factories (called with ``Y`` of
        shape ``(1, d)``).
      num_steps: number of steps, a static int ``>= 0`` (``n_steps`` is its deprecated name).
      lengthscale: positive float (or 0-d array), the bandwidth ``σ``.
      return_trajectory: also return the point after every step.

    Returns:
      ``(y_final, trajectory)``: ``(d,)`` float array, and ``(num_steps, d)`` float array or ``None``.

    Raises:
      TypeError: ``estimator`` is not callable, ``y0`` is not a float array, or ``num_steps`` is not an int.
      ValueError: ``y0`` is not a finite 1-d array, ``lengthscale <= 0`` or ``num_steps < 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.msip import gaussian_estimator, mean_shift
      >>> est = gaussian_estimator(jnp.array([1.0, -1.0]), jnp.eye(2))
      >>> y, _ = mean_shift(jax.random.key(0), jnp.zeros(2), est, num_steps=50, lengthscale=1.0)
      >>> y.round(3)
      Array([ 1., -1.], dtype=float32)
    """
    check_estimator(estimator)
    y0 = check_finite(as_array(y0, "y0", ndim=1), "y0")
    lengthscale = check_positive(lengthscale, "lengthscale")
    num_steps = check_int(num_steps, "num_steps", min_value=0)

    return _mean_shift_jit(key, y0, jnp.asarray(lengthscale, y0.dtype), estimator=estimator, num_steps=num_steps,
                           save=bool(return_trajectory))


@partial(jax.jit, static_argnames=("estimator", "num_steps", "save"))
def _mean_shift_jit(key, y0, lengthscale, *, estimator, num_steps, save):
    def step(k, y):
        return y + estimator(k, y[None], lengthscale)[1][0].astype(y.dtype), None

    final, trace = run(step, y0, key, num_steps, save_states=save)
    return final, trace.states


def _msip_example(key):
    k0, k1 = jax.random.split(key)
    algo = msip_algorithm(gaussian_estimator(jnp.zeros(2), jnp.eye(2)), step_size=0.5, lengthscale=0.7)
    return algo, algo.init(jax.random.normal(k0, (5, 2)), k1), None


register_algorithm("msip", msip_algorithm, _msip_example, area="msip")
