"""Fitting scaling laws: Huber loss on log-loss residuals, L-BFGS and Levenberg-Marquardt as
:class:`jaxlab.core.Algorithm` factories (:func:`lbfgs_algorithm`, :func:`lm_algorithm`) over init/step pairs,
multistart over the Hoffmann grid (vmapped, sharded over devices), asymptotic covariance and bootstrap.

Papers: Hoffmann et al., "Training Compute-Optimal Large Language Models" (arXiv:2203.15556), Approach 3;
Besiroglu, Erdil, Barnett, You, "Chinchilla Scaling: A replication attempt" (arXiv:2404.10102).

Objective on residuals r_i(theta) = ln L_hat(theta; N_i, D_i) - ln L_i, with optional weights w_i::

    F(theta) = sum_i w_i H_delta(r_i),   H_delta(r) = r^2/2 if |r| <= delta else delta (|r| - delta/2)

(``delta=None`` gives least squares, F = sum_i w_i r_i^2 / 2). Default delta = 1e-3, summed, not averaged.

Optimizers. L-BFGS: ``optax.lbfgs`` with its zoom line search; stop when
(F_k - F_{k+1}) / |F_k| <= tol or ||grad F|| <= tol.
Levenberg-Marquardt with J = dr/dtheta::

    (J^T W J + lam diag(J^T W J)) Delta = -J^T W r,
    accept if F(theta + Delta) < F(theta) (lam <- lam/10), else reject (lam <- 10 lam)

with W = I (least squares) or the Huber IRLS weights w_i = 1 if |r_i| <= delta else delta/|r_i| (then
J^T W r is exactly grad F). Each step evaluates the law once: r and J at the trial point come from one
forward-mode pass and are carried in the state when the step is accepted. Multistart LM compacts the
unconverged starts between chunks of steps (see :func:`fit_multistart`).

Hoffmann initialization grid (4500 starts): alpha, beta in {0, .5, 1, 1.5, 2},
e in {-1, -.5, 0, .5, 1}, a, b in {0, 5, ..., 25}.

Uncertainty: Cov(theta_hat) = s^2 (J^T J)^+, s^2 = sum r_i^2 / (n - p) (pseudo-inverse from the SVD of J);
nonparametric bootstrap = refits with multinomial resampling weights, started at the point estimate.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.flatten_util import ravel_pytree

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.sharding import sharded_vmap
from jaxlab.core.types import Array, Float, Key
from jaxlab.core.validation import as_array, check_int, check_positive, is_concrete
from jaxlab.scaling.conditioning import _float32_warning, jacobian
from jaxlab.scaling.laws import ChinchillaParams, Covariates, _check_X, chinchilla_log_loss, covariates, resolve_law
from jaxlab.scaling.papers import BESIROGLU, HOFFMANN

__all__ = [
    "FitResult",
    "LBFGSInfo",
    "LBFGSState",
    "LMInfo",
    "LMState",
    "asymptotic_covariance",
    "bootstrap",
    "fit_lbfgs",
    "fit_multistart",
    "hoffmann_init_grid",
    "huber",
    "lbfgs_algorithm",
    "lbfgs_init",
    "lbfgs_run",
    "lbfgs_step",
    "lm_algorithm",
    "lm_init",
    "lm_run",
    "lm_solve",
    "lm_step",
    "objective",
]


class FitResult(NamedTuple):
    """Outcome of one fit: parameters, final objective, gradient norm, iterations, convergence flag."""

    theta: Any
    value: Array
    grad_norm: Array
    steps: Array
    converged: Array


class LBFGSState(NamedTuple):
    """L-BFGS iterate: parameters, optax state, objective and gradient, step count, convergence flag."""

    theta: Any
    opt_state: Any
    value: Array
    grad: Any
    step: Array
    converged: Array


class LMState(NamedTuple):
    """Levenberg-Marquardt iterate: parameters, damping lam, objective, step count, convergence flag, and the
    residuals ``r`` and Jacobian ``J`` at ``theta`` (carried so that each step evaluates the law once)."""

    theta: Any
    lam: Array
    value: Array
    step: Array
    converged: Array
    r: Array
    J: Array


class LBFGSInfo(NamedTuple):
    """Diagnostics of one L-BFGS step: the objective F after the step."""

    value: Array


class LMInfo(NamedTuple):
    """Diagnostics of one Levenberg-Marquardt step: the objective F and the damping lam after the step."""

    value: Array
    lam: Array


def _check_delta(delta: Any) -> Any:
    return delta if delta is None else check_positive(delta, "delta")


@cites(HOFFMANN)
def huber(r: Any, delta: Any = 1e-3) -> Array:
    """H_delta(r) elementwise: r^2/2 for |r| <= delta, delta (|r| - delta/2) beyond (delta > 0)."""
    delta = _check_delta(delta)
    r = jnp.asarray(r)
    a = jnp.abs(r)
    return jnp.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


def _residuals(fn: Callable, theta: Any, X: Covariates, log_L: Array) -> Array:
    return fn(theta, X) - log_L


def _loss_sum(r: Array, delta: Any, weights: Array | None) -> Array:
    per = 0.5 * r**2 if delta is None else huber(r, delta)
    return jnp.sum(per if weights is None else weights * per)


def _check_data(law: Any, theta: Any, X: Any, log_L: Any, weights: Any = None, *, batched: bool = False):
    """Validate a fitting problem; returns (law_fn, X, log_L, weights, p)."""
    fn = resolve_law(law)
    X = _check_X(X)
    if X.log_N.ndim != 1:
        raise ValueError(f"X.log_N must be 1-dimensional (one entry per data point), got shape "
                         f"{X.log_N.shape}")
    n = X.log_N.shape[0]
    log_L = as_array(log_L, "log_L", shape=(n,), finite=True)
    if weights is not None:
        weights = as_array(weights, "weights", shape=(n,), finite=True)
    leaves = jax.tree_util.tree_leaves(theta)
    if not leaves:
        raise ValueError("theta must have at least one parameter, got an empty pytree")
    size = sum(int(np.size(leaf)) for leaf in leaves)
    p = size // int(np.shape(leaves[0])[0]) if batched else size
    if n < p:
        raise ValueError(f"need at least as many data points as parameters: got n={n} points for p={p} "
                         "parameters")
    return fn, X, log_L, weights, p


@cites(HOFFMANN, BESIROGLU)
def objective(law: str | Callable, theta: Any, X: Covariates, log_L: Any, delta: Any = 1e-3,
              weights: Any = None) -> Float[Array, ""]:
    """F(theta) = sum_i w_i H_delta(ln L_hat_i - ln L_i) (least squares sum r^2/2 when ``delta`` is None)."""
    delta = _check_delta(delta)
    fn, X, log_L, weights, _ = _check_data(law, theta, X, log_L, weights)
    return _loss_sum(_residuals(fn, theta, X, log_L), delta, weights)


@cites(HOFFMANN, BESIROGLU)
def hoffmann_init_grid(law: str = "chinchilla", reduced: bool = False) -> ChinchillaParams:
    """The Hoffmann/Besiroglu initialization grid (4500 starts), or a 243-start reduced grid
    (alpha, beta in {0, .5, 1}, e in {-1, 0, 1}, a, b in {0, 10, 20}) when ``reduced``.

    The leading axis of every field indexes the starts."""
    if law != "chinchilla":
        raise ValueError(f"hoffmann_init_grid is defined for law='chinchilla' only, got {law!r}")
    if reduced:
        ax = dict(alpha=[0.0, 0.5, 1.0], beta=[0.0, 0.5, 1.0], e=[-1.0, 0.0, 1.0], a=[0.0, 10.0, 20.0],
                  b=[0.0, 10.0, 20.0])
    else:
        ex = [0.0, 0.5, 1.0, 1.5, 2.0]
        ax = dict(alpha=ex, beta=ex, e=[-1.0, -0.5, 0.0, 0.5, 1.0], a=list(np.arange(0.0, 26.0, 5.0)),
                  b=list(np.arange(0.0, 26.0, 5.0)))
    rows = np.array(list(itertools.product(ax["a"], ax["b"], ax["e"], ax["alpha"], ax["beta"])))
    return ChinchillaParams(*(jnp.asarray(rows[:, j], dtype=float) for j in range(5)))


# ----------------------------------------------------------------------------------------------- L-BFGS


def _lbfgs():
    return optax.lbfgs()


def _tree_norm(t: Any) -> Array:
    return jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree_util.tree_leaves(t)))


@cites(HOFFMANN, BESIROGLU)
def lbfgs_init(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, *, delta: Any = 1e-3,
               weights: Any = None) -> LBFGSState:
    """Initial L-BFGS state at ``theta0`` (objective and gradient evaluated)."""
    fn, X, log_L, weights, _ = _check_data(law, theta0, X, log_L, weights)
    delta = _check_delta(delta)
    f = lambda th: _loss_sum(_residuals(fn, th, X, log_L), delta, weights)  # noqa: E731
    value, grad = jax.value_and_grad(f)(theta0)
    return LBFGSState(theta0, _lbfgs().init(theta0), value, grad, jnp.asarray(0), jnp.asarray(False))


@cites(HOFFMANN, BESIROGLU)
def lbfgs_step(law: str | Callable, state: LBFGSState, X: Covariates, log_L: Any, *, delta: Any = 1e-3,
               weights: Any = None, tol: float = 1e-10) -> tuple[LBFGSState, Array]:
    """One L-BFGS iteration (optax zoom line search); a converged state is returned unchanged.

    Returns ``(state, value)``.
    """
    fn = resolve_law(law)
    f = lambda th: _loss_sum(_residuals(fn, th, X, log_L), delta, weights)  # noqa: E731
    opt = _lbfgs()
    updates, opt_state = opt.update(state.grad, state.opt_state, state.theta, value=state.value,
                                    grad=state.grad, value_fn=f)
    theta = optax.apply_updates(state.theta, updates)
    value, grad = optax.value_and_grad_from_state(f)(theta, state=opt_state)
    decrease = (state.value - value) / jnp.maximum(jnp.abs(state.value), jnp.finfo(value.dtype).tiny)
    done = (decrease <= tol) | (_tree_norm(grad) <= tol) | ~jnp.isfinite(value)
    keep = ~jnp.isfinite(value) | state.converged
    new = LBFGSState(theta, opt_state, value, grad, state.step + 1, done)
    new = jax.tree_util.tree_map(lambda old, nw: jnp.where(keep, old, nw), state, new)
    new = new._replace(converged=state.converged | done)
    return new, new.value


def _lbfgs_result(s: LBFGSState) -> FitResult:
    return FitResult(s.theta, s.value, _tree_norm(s.grad), s.step, s.converged)


@cites(HOFFMANN, BESIROGLU)
def lbfgs_algorithm(law: str | Callable, X: Covariates, log_L: Any, *, delta: Any = 1e-3, weights: Any = None,
                    tol: float = 1e-10) -> Algorithm:
    """L-BFGS on F(theta) = sum_i w_i H_delta(ln L_hat_i - ln L_i) as an :class:`~jaxlab.core.Algorithm`.

    The data and hyperparameters are bound once; ``init(theta0)`` is :func:`lbfgs_init` and
    ``step(key, state) -> (state, LBFGSInfo(value))`` is one :func:`lbfgs_step` (deterministic: ``key`` is
    ignored). A converged state is returned unchanged.

    Args:
      law: a law name of :data:`jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      X: the design's log-covariates, ``X.log_N`` of shape ``(n,)``.
      log_L: observed log-losses, shape ``(n,)``, finite.
      delta: Huber threshold (> 0), or ``None`` for least squares.
      weights: optional per-point weights, shape ``(n,)``.
      tol: stop when the relative decrease of F or the gradient norm is <= ``tol``.

    Returns:
      ``Algorithm(init, step)`` over :class:`LBFGSState`.

    Example:
      >>> algo = lbfgs_algorithm("chinchilla", X, log_L)
      >>> state, info = algo.step(None, algo.init(theta0))
    """
    fn = resolve_law(law)
    X = _check_X(X)
    log_L = as_array(log_L, "log_L", ndim=1, finite=True)
    delta = _check_delta(delta)

    def init(theta0: Any) -> LBFGSState:
        return lbfgs_init(fn, theta0, X, log_L, delta=delta, weights=weights)

    def step(key: Any, state: LBFGSState) -> tuple[LBFGSState, LBFGSInfo]:
        del key
        state, value = lbfgs_step(fn, state, X, log_L, delta=delta, weights=weights, tol=tol)
        return state, LBFGSInfo(value)

    return Algorithm(init, step)


@cites(HOFFMANN, BESIROGLU)
def fit_lbfgs(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, *, delta: Any = 1e-3,
              weights: Any = None, max_steps: int = 1000, tol: float = 1e-10) -> FitResult:
    """Minimize F from ``theta0`` with L-BFGS until converged or ``max_steps`` (``lax.while_loop``)."""
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    algo = lbfgs_algorithm(law, X, log_L, delta=delta, weights=weights, tol=tol)
    final = jax.lax.while_loop(lambda s: ~s.converged & (s.step < max_steps), lambda s: algo.step(None, s)[0],
                               algo.init(theta0))
    return _lbfgs_result(final)


@cites(HOFFMANN, BESIROGLU)
def lbfgs_run(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, num_steps: int, *,
              delta: Any = 1e-3, weights: Any = None, tol: float = 1e-10) -> tuple[FitResult, RunTrace]:
    """``num_steps`` L-BFGS iterations with :func:`jaxlab.core.run`; the trace holds the objective values."""
    algo = lbfgs_algorithm(law, X, log_L, delta=delta, weights=weights, tol=tol)

    def step(key, s):
        s, info = algo.step(key, s)
        return s, info.value

    # the step is deterministic: the key only satisfies run's key-driven signature
    final, trace = run(step, algo.init(theta0), jax.random.key(0), num_steps)
    return _lbfgs_result(final), trace


# ---------------------------------------------------------------------------------- Levenberg-Marquardt


def _lm_value(fn, theta, X, log_L, huber_delta):
    return _loss_sum(_residuals(fn, theta, X, log_L), huber_delta, None)


def _residuals_and_jacobian(fn, flat, unravel, X, log_L):
    """``r(theta)`` and ``J = dr/dtheta`` from one forward-mode pass: the primal of the ``p`` Jacobian-vector
    products is shared, so the law's transcendental functions are evaluated once (they dominate a step)."""
    f = lambda v: fn(unravel(v), X).reshape(-1)  # noqa: E731
    basis = jnp.eye(flat.shape[0], dtype=flat.dtype)
    ln_hat, JT = jax.vmap(lambda t: jax.jvp(f, (flat,), (t,)), out_axes=(None, 0))(basis)
    return ln_hat - log_L.reshape(-1), JT.T


@cites(HOFFMANN)
def lm_init(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, lam0: float = 1e-3, *,
            huber_delta: Any = None) -> LMState:
    """Initial Levenberg-Marquardt state (objective: least squares, or Huber when ``huber_delta``)."""
    fn, X, log_L, _, _ = _check_data(law, theta0, X, log_L)
    lam0 = check_positive(lam0, "lam0")
    huber_delta = _check_delta(huber_delta)
    flat, unravel = ravel_pytree(theta0)
    r, J = _residuals_and_jacobian(fn, flat, unravel, X, log_L)
    value = _loss_sum(r, huber_delta, None)
    return LMState(theta0, jnp.asarray(lam0, dtype=value.dtype), value, jnp.asarray(0), jnp.asarray(False), r, J)


@cites(HOFFMANN)
def lm_step(law: str | Callable, state: LMState, X: Covariates, log_L: Any, huber_delta: Any = None, *,
            tol: float = 1e-12) -> LMState:
    """One damped Gauss-Newton step (IRLS-weighted when ``huber_delta``); accept only if F decreases."""
    fn = resolve_law(law)
    flat, unravel = ravel_pytree(state.theta)
    r, J = state.r, state.J
    if huber_delta is None:
        w = jnp.ones_like(r)
    else:
        w = jnp.where(jnp.abs(r) <= huber_delta, 1.0, huber_delta / jnp.maximum(jnp.abs(r), huber_delta))
    H = J.T @ (w[:, None] * J)
    g = J.T @ (w * r)
    d = jnp.diag(H)
    step = jnp.linalg.solve(H + state.lam * jnp.diag(jnp.maximum(d, 1e-30 * jnp.max(d))), -g)
    theta_new = unravel(flat + step)
    r_new, J_new = _residuals_and_jacobian(fn, flat + step, unravel, X, log_L)
    value_new = _loss_sum(r_new, huber_delta, None)
    accept = jnp.isfinite(value_new) & (value_new < state.value) & jnp.all(jnp.isfinite(step))
    rel = (state.value - value_new) / jnp.maximum(state.value, jnp.finfo(r.dtype).tiny)
    stalled = state.lam >= 1e15
    done = (accept & (rel <= tol)) | stalled | (state.value == 0)
    theta = jax.tree_util.tree_map(lambda a, b: jnp.where(accept, b, a), state.theta, theta_new)
    lam = jnp.clip(jnp.where(accept, state.lam / 10, state.lam * 10), 1e-15, 1e16)
    r, J = jnp.where(accept, r_new, r), jnp.where(accept, J_new, J)
    new = LMState(theta, lam, jnp.where(accept, value_new, state.value), state.step + 1, done, r, J)
    return jax.tree_util.tree_map(lambda a, b: jnp.where(state.converged, a, b), state, new)


def _lm_result(fn, s: LMState, X, log_L, huber_delta) -> FitResult:
    grad = jax.grad(lambda th: _lm_value(fn, th, X, log_L, huber_delta))(s.theta)
    return FitResult(s.theta, s.value, _tree_norm(grad), s.step, s.converged)


@cites(HOFFMANN)
def lm_algorithm(law: str | Callable, X: Covariates, log_L: Any, *, huber_delta: Any = None, lam0: float = 1e-3,
                 tol: float = 1e-12) -> Algorithm:
    """Levenberg-Marquardt on the log-loss residuals as an :class:`~jaxlab.core.Algorithm`.

    Each step solves (J^T W J + lam diag(J^T W J)) Delta = -J^T W r and accepts theta + Delta only if F
    decreases (lam <- lam/10, else lam <- 10 lam); W = I, or the Huber IRLS weights when ``huber_delta``.
    ``init(theta0)`` is :func:`lm_init`; ``step(key, state) -> (state, LMInfo(value, lam))`` is one
    :func:`lm_step` (deterministic: ``key`` is ignored).

    Args:
      law: a law name of :data:`jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      X: the design's log-covariates, ``X.log_N`` of shape ``(n,)``.
      log_L: observed log-losses, shape ``(n,)``, finite.
      huber_delta: Huber threshold (> 0) of the IRLS weights, or ``None`` for least squares.
      lam0: initial damping (> 0).
      tol: converged when an accepted step decreases F by a relative amount <= ``tol``.

    Returns:
      ``Algorithm(init, step)`` over :class:`LMState`.

    Example:
      >>> algo = lm_algorithm("chinchilla", X, log_L, huber_delta=1e-3)
      >>> state, info = algo.step(None, algo.init(theta0))
    """
    fn = resolve_law(law)
    X = _check_X(X)
    log_L = as_array(log_L, "log_L", ndim=1, finite=True)
    huber_delta = _check_delta(huber_delta)

    def init(theta0: Any) -> LMState:
        return lm_init(fn, theta0, X, log_L, lam0, huber_delta=huber_delta)

    def step(key: Any, state: LMState) -> tuple[LMState, LMInfo]:
        del key
        state = lm_step(fn, state, X, log_L, huber_delta, tol=tol)
        return state, LMInfo(state.value, state.lam)

    return Algorithm(init, step)


@cites(HOFFMANN)
def lm_solve(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, *, huber_delta: Any = None,
             lam0: float = 1e-3, max_steps: int = 200, tol: float = 1e-12) -> FitResult:
    """Levenberg-Marquardt until the accepted relative decrease is <= ``tol`` or ``max_steps``."""
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    fn = resolve_law(law)
    algo = lm_algorithm(fn, X, log_L, huber_delta=huber_delta, lam0=lam0, tol=tol)
    final = jax.lax.while_loop(lambda s: ~s.converged & (s.step < max_steps), lambda s: algo.step(None, s)[0],
                               algo.init(theta0))
    return _lm_result(fn, final, X, log_L, huber_delta)


@cites(HOFFMANN)
def lm_run(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, num_steps: int, *,
           huber_delta: Any = None, lam0: float = 1e-3, tol: float = 1e-12) -> tuple[FitResult, RunTrace]:
    """``num_steps`` Levenberg-Marquardt steps with :func:`jaxlab.core.run`; the trace holds the objective."""
    fn = resolve_law(law)
    algo = lm_algorithm(fn, X, log_L, huber_delta=huber_delta, lam0=lam0, tol=tol)

    def step(key, s):
        s, info = algo.step(key, s)
        return s, info.value

    # the step is deterministic: the key only satisfies run's key-driven signature
    final, trace = run(step, algo.init(theta0), jax.random.key(0), num_steps)
    return _lm_result(fn, final, X, log_L, huber_delta), trace


# ------------------------------------------------------------------------------------------- multistart


@functools.lru_cache(maxsize=64)
def _batched_fit(fn: Callable, method: str, options: tuple) -> Callable:
    kw = dict(options)
    if method == "lbfgs":
        one = lambda th, X, log_L: fit_lbfgs(fn, th, X, log_L, **kw)  # noqa: E731
    else:
        one = lambda th, X, log_L: lm_solve(fn, th, X, log_L, **kw)  # noqa: E731
    return sharded_vmap(one, in_axes=(0, None, None))


@cites(HOFFMANN, BESIROGLU)
def fit_multistart(law: str | Callable, thetas0: Any, X: Covariates, log_L: Any, *, method: str = "lbfgs",
                   compact: bool | None = None, **kw: Any) -> tuple[FitResult, FitResult]:
    """Fit from every start (leading axis of ``thetas0``) in one vmapped, device-sharded call; keep the best.

    ``method`` is ``"lbfgs"`` (keywords of :func:`fit_lbfgs`) or ``"lm"`` (keywords of :func:`lm_solve`).
    Returns ``(best, all)``; non-finite objectives never win.

    ``compact`` (``"lm"`` only; default: on when called outside ``jit``): a vmapped ``while_loop`` runs every
    start until the slowest has converged, so starts that finish early keep costing a full step. With
    ``compact`` the starts advance ``_LM_CHUNK`` steps at a time and only the unconverged ones (gathered on the
    host, padded to a power of two) are carried on, so the work is about the sum of the starts' own step
    counts instead of their maximum times their number. The iterates are the same as without it.
    """
    if method not in ("lbfgs", "lm"):
        raise ValueError(f"method must be 'lbfgs' or 'lm', got {method!r}")
    fn, X, log_L, _, _ = _check_data(law, thetas0, X, log_L, batched=True)
    for k in ("delta", "huber_delta"):
        _check_delta(kw.get(k))
    concrete = all(is_concrete(a) for a in jax.tree_util.tree_leaves((thetas0, X, log_L)))
    if compact is None:
        compact = method == "lm" and concrete
    if compact and method != "lm":
        raise ValueError(f"compact=True needs method='lm', got method={method!r}")
    if compact and not concrete:
        raise ValueError("compact=True gathers unconverged starts on the host: call fit_multistart outside jit "
                         "(or pass compact=False)")
    if compact:
        everything = _lm_multistart_compact(fn, thetas0, X, log_L, **kw)
    else:
        everything = _batched_fit(fn, method, tuple(sorted(kw.items())))(thetas0, X, log_L)
    i = jnp.argmin(jnp.where(jnp.isfinite(everything.value), everything.value, jnp.inf))
    best = jax.tree_util.tree_map(lambda a: a[i], everything)
    return best, everything


_LM_CHUNK = 8  # LM steps between two host-side compactions of the unconverged starts
_LM_BUCKET = 4  # active sets are padded to N / 4^k starts: a few shapes, so a few compilations


@functools.lru_cache(maxsize=64)
def _lm_programs(fn: Callable, huber_delta: Any, lam0: float, max_steps: int, tol: float):
    def advance(states, idx, X, log_L):
        """``_LM_CHUNK`` steps of the starts ``idx`` (padded with repeats of a live start), scattered back."""
        def body(_, s):
            nxt = lm_step(fn, s, X, log_L, huber_delta, tol=tol)
            return jax.tree_util.tree_map(lambda a, b: jnp.where(s.step >= max_steps, a, b), s, nxt)

        def run_one(s):
            return jax.lax.fori_loop(0, _LM_CHUNK, body, s)

        sub = jax.vmap(run_one)(jax.tree_util.tree_map(lambda a: a[idx], states))
        running = ~sub.converged & (sub.step < max_steps)
        return jax.tree_util.tree_map(lambda a, b: a.at[idx].set(b), states, sub), running

    init = sharded_vmap(lambda th, X, log_L: lm_init(fn, th, X, log_L, lam0, huber_delta=huber_delta),
                        in_axes=(0, None, None))
    result = jax.jit(jax.vmap(lambda s, X, log_L: _lm_result(fn, s, X, log_L, huber_delta), in_axes=(0, None, None)))
    return init, jax.jit(advance), result


def _lm_multistart_compact(fn, thetas0, X, log_L, *, huber_delta=None, lam0: float = 1e-3, max_steps: int = 200,
                           tol: float = 1e-12) -> FitResult:
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    lam0 = check_positive(lam0, "lam0")
    init, advance, result = _lm_programs(fn, huber_delta, float(lam0), max_steps, float(tol))
    states = init(thetas0, X, log_L)
    n = jax.tree_util.tree_leaves(thetas0)[0].shape[0]
    active = np.arange(n)
    while active.size:
        size = n
        while size % _LM_BUCKET == 0 and size // _LM_BUCKET >= max(active.size, 32):
            size //= _LM_BUCKET
        idx = np.concatenate([active, np.full(size - active.size, active[0])])
        states, running = advance(states, idx, X, log_L)
        active = active[np.asarray(running)[:active.size]]
    return result(states, X, log_L)


# ------------------------------------------------------------------------------------------ uncertainty


@cites(HOFFMANN, BESIROGLU)
def asymptotic_covariance(law: str | Callable, theta: Any, X: Covariates, log_L: Any,
                          rcond: float = 1e-15) -> Float[Array, "p p"]:
    """s^2 (J^T J)^+ with s^2 = sum r_i^2 / (n - p), J = d ln L_hat / d theta (flattened theta order).

    The pseudo-inverse drops singular values below ``rcond * s_max`` (a collinear design at alpha = beta).
    """
    fn, X, log_L, _, p = _check_data(law, theta, X, log_L)
    n = log_L.shape[0]
    if n == p:
        raise ValueError(f"need more data points than parameters for a residual variance: n = p = {n}")
    r = _residuals(fn, theta, X, log_L)
    J = jacobian(fn, theta, X)
    _, s, vt = jnp.linalg.svd(J, full_matrices=False)
    keep = s > rcond * s[0]
    inv_s2 = jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0) ** 2, 0.0)
    if is_concrete(s):
        _float32_warning((s[0] / s[-1]) ** 2, J.dtype)
    sigma2 = jnp.sum(r**2) / (n - p)
    return sigma2 * (vt.T * inv_s2) @ vt


@cites(BESIROGLU)
def bootstrap(key: Key, law: str | Callable, theta: Any, X: Covariates, log_L: Any, num: int = 1000, *,
              delta: Any = 1e-3, max_steps: int = 500, tol: float = 1e-10) -> Any:
    """``num`` nonparametric bootstrap refits (points resampled with replacement, as multinomial weights),
    each started at ``theta``, vmapped. Returns the refitted parameters with a leading axis ``num``."""
    num = check_int(num, "num", min_value=1)
    fn, X, log_L, _, _ = _check_data(law, theta, X, log_L)
    n = log_L.shape[0]
    idx = jax.random.randint(key, (num, n), 0, n)
    counts = jax.vmap(lambda i: jnp.bincount(i, length=n))(idx).astype(log_L.dtype)

    def refit(w):
        return fit_lbfgs(fn, theta, X, log_L, delta=delta, weights=w, max_steps=max_steps, tol=tol).theta

    return jax.jit(jax.vmap(refit))(counts)


# ------------------------------------------------------------------------------------------- registry


def _example_problem() -> tuple[Covariates, Array, ChinchillaParams]:
    """A noise-free 12-run factorial design of L1 and a start away from the truth (for the registry)."""
    N = jnp.array([1e8, 3e8, 1e9, 3e9])
    Ns = jnp.tile(N, 3)
    X = covariates(Ns, jnp.repeat(jnp.array([5.0, 20.0, 80.0]), 4) * Ns)
    truth = ChinchillaParams(*(jnp.asarray(v) for v in (6.0, 6.0, 0.5, 0.34, 0.28)))
    start = ChinchillaParams(*(jnp.asarray(v) for v in (5.0, 5.0, 0.3, 0.3, 0.3)))
    return X, chinchilla_log_loss(truth, X), start


def _lm_example(key: Key) -> tuple[Algorithm, LMState, None]:
    del key
    X, log_L, start = _example_problem()
    algo = lm_algorithm("chinchilla", X, log_L, huber_delta=1e-3)
    return algo, algo.init(start), None


def _lbfgs_example(key: Key) -> tuple[Algorithm, LBFGSState, None]:
    del key
    X, log_L, start = _example_problem()
    algo = lbfgs_algorithm("chinchilla", X, log_L)
    return algo, algo.init(start), None


register_algorithm("scaling_lm", lm_algorithm, _lm_example, area="scaling")
register_algorithm("scaling_lbfgs", lbfgs_algorithm, _lbfgs_example, area="scaling")
