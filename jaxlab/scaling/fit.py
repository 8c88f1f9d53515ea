"""Fitting scaling laws: Huber loss on log-loss residuals, L-BFGS and Levenberg-Marquardt as
:class:`jaxlab.core.Algorithm` factories (:func:`lbfgs_algorithm`, :func:`lm_algorithm`) over init/step pairs,
BFGS from optimistix (:func:`fit_bfgs`), multistart over the Hoffmann grid (vmapped, sharded over devices),
asymptotic covariance and bootstrap.

Papers: Hoffmann et al., "Training Compute-Optimal Large Language Models" (arXiv:2203.15556), Approach 3;
Besiroglu, Erdil, Barnett, You, "Chinchilla Scaling: A replication attempt" (arXiv:2404.10102).

Objective on residuals r_i(theta) = ln L_hat(theta; N_i, D_i) - ln L_i, with optional weights w_i::

    F(theta) = sum_i w_i H_delta(r_i),   H_delta(r) = r^2/2 if |r| <= delta else delta (|r| - delta/2)

(``delta=None`` gives least squares, F = sum_i w_i r_i^2 / 2). Default delta = 1e-3, summed, not averaged.

Optimizers. L-BFGS: ``optax.lbfgs`` with its zoom line search; stop when
(F_k - F_{k+1}) / |F_k| <= tol or ||grad F|| <= tol.
BFGS: ``optimistix.BFGS`` (dense inverse-Hessian estimate H, direction d = -H grad F, backtracking Armijo line
search F(theta + t d) <= F(theta) + 0.1 t grad F^T d, t = 1, 1/2, ...), with the same stopping tests and
optimistix's own (see :func:`fit_bfgs`).
Levenberg-Marquardt with J = dr/dtheta::

    (J^T W J + lam diag(J^T W J)) Delta = -J^T W r,
    accept if F(theta + Delta) < F(theta) (lam <- lam/10), else reject (lam <- 10 lam)

with W = I (least squares) or the Huber IRLS weights w_i = 1 if |r_i| <= delta else delta/|r_i| (then
J^T W r is exactly grad F). With Huber, once lam <= 1e-6 the model matrix J^T W J (and its diagonal in the
damping) is replaced by the exact Hessian J^T diag(rho'') J + sum_i rho'(r_i) grad^2 r_i (see :func:`lm_step`):
IRLS alone converges linearly near the optimum. Each step evaluates the law once: r and J at the trial point
come from one forward-mode pass (or a closed form) and are carried in the state when the step is accepted.
Multistart LM runs the starts in a refilled pool and compacts the unconverged ones (see :func:`fit_multistart`).

Hoffmann initialization grid (4500 starts): alpha, beta in {0, .5, 1, 1.5, 2},
e in {-1, -.5, 0, .5, 1}, a, b in {0, 5, ..., 25}.

Uncertainty: Cov(theta_hat) = s^2 (J^T J)^+, s^2 = sum r_i^2 / (n - p) (pseudo-inverse from the SVD of J);
nonparametric bootstrap = refits with multinomial resampling weights, started at the point estimate.
"""

from __future__ import annotations

import concurrent.futures
import functools
import inspect
import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optimistix as optx
from jax.flatten_util import ravel_pytree

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.distributed import gather
from jaxlab.core.linalg import solve
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.sharding import sharded_vmap
from jaxlab.core.threads import usable_cores
from jaxlab.core.types import Array, Float, Key
from jaxlab.core.validation import as_array, check_int, check_positive, is_concrete
from jaxlab.scaling.conditioning import _float32_warning, jacobian
from jaxlab.scaling.laws import (
    VALUE_AND_JACOBIAN,
    WEIGHTED_CURVATURE,
    ChinchillaParams,
    Covariates,
    _check_X,
    chinchilla_log_loss,
    covariates,
    resolve_law,
)
from jaxlab.scaling.papers import BESIROGLU, HOFFMANN

__all__ = [
    "BFGSState",
    "FitResult",
    "LBFGSInfo",
    "LBFGSState",
    "LMInfo",
    "LMState",
    "asymptotic_covariance",
    "bfgs_algorithm",
    "bootstrap",
    "fit_bfgs",
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
    """Outcome of one fit. Under ``vmap`` (:func:`fit_multistart`, :func:`bootstrap`) every field gains a
    leading axis over the starts.

    Attributes:
      theta: the final parameters, a pytree like the start (e.g. :class:`~jaxlab.scaling.ChinchillaParams`).
      value: float scalar, the objective F(theta) that was minimized.
      grad_norm: float scalar, ||grad F(theta)||_2 (of the Huber objective when one was used).
      steps: int scalar, iterations taken.
      converged: bool scalar, True when the stopping test fired before the step limit (this includes
        stopping on a non-finite trial point or, for Levenberg-Marquardt, on a damping lam >= 1e15).
    """

    theta: Any
    value: Array
    grad_norm: Array
    steps: Array
    converged: Array


class LBFGSState(NamedTuple):
    """State of :func:`lbfgs_algorithm` (a pytree: it jits, vmaps and scans).

    Attributes:
      theta: the current parameters, a pytree of float arrays.
      opt_state: the state of ``optax.lbfgs()`` (memory of past steps and the line search's state).
      value: float scalar, F(theta).
      grad: pytree like ``theta``, grad F(theta).
      step: int scalar, iterations taken.
      converged: bool scalar, the stopping test has fired; later steps leave the state unchanged.
    """

    theta: Any
    opt_state: Any
    value: Array
    grad: Any
    step: Array
    converged: Array


class LMState(NamedTuple):
    """State of :func:`lm_algorithm`. The residuals and Jacobian at ``theta`` are carried so that each step
    evaluates the law once (at the trial point).

    Attributes:
      theta: the current parameters, a pytree of float arrays with ``p`` entries in all.
      lam: float scalar, the damping lam (kept in [1e-15, 1e16]).
      value: float scalar, F(theta) (least squares, or Huber when the algorithm has ``huber_delta``).
      step: int scalar, steps taken (accepted or rejected).
      converged: bool scalar, the stopping test has fired; later steps leave the state unchanged.
      r: ``(n,)`` float array, residuals ln L_hat(theta) - ln L.
      J: ``(n, p)`` float array, dr/dtheta with theta flattened by ``ravel_pytree`` (field order).
    """

    theta: Any
    lam: Array
    value: Array
    step: Array
    converged: Array
    r: Array
    J: Array


class LBFGSInfo(NamedTuple):
    """Diagnostics of one L-BFGS step.

    Attributes:
      value: float scalar, the objective F after the step.
    """

    value: Array


class LMInfo(NamedTuple):
    """Diagnostics of one Levenberg-Marquardt step.

    Attributes:
      value: float scalar, the objective F after the step.
      lam: float scalar, the damping after the step.
    """

    value: Array
    lam: Array


def _check_delta(delta: Any) -> Any:
    return delta if delta is None else check_positive(delta, "delta")


@cites(HOFFMANN)
def huber(r: Any, delta: Any = 1e-3) -> Array:
    """The Huber loss, elementwise: H_delta(r) = r^2/2 for |r| <= delta, delta (|r| - delta/2) beyond.

    Quadratic near 0 and linear in the tails, so outlying runs pull on the fit with a bounded force; with
    delta = 1e-3 on log-loss residuals it is the objective of Hoffmann et al. (arXiv:2203.15556, Approach 3)
    and of the Besiroglu et al. replication (arXiv:2404.10102).

    Args:
      r: float array (any shape) of residuals.
      delta: positive float scalar, the threshold between the quadratic and the linear part.

    Returns:
      Float array of the shape of ``r``.

    Raises:
      ValueError: ``delta`` not a positive finite scalar (under ``jit``: at run time).
    """
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
    """The fitting objective F(theta) = sum_i w_i H_delta(r_i), r_i = ln L_hat(theta; N_i, D_i) - ln L_i.

    With ``delta=None`` it is least squares, F = sum_i w_i r_i^2 / 2. The sum is not averaged; this is the
    objective of Hoffmann et al. (arXiv:2203.15556, Approach 3) and Besiroglu et al. (arXiv:2404.10102).

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta: the law's parameters (a pytree, e.g. :class:`~jaxlab.scaling.ChinchillaParams`).
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights w_i (default all 1).

    Returns:
      Float scalar F(theta).

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: an unknown law; ``X`` not 1-d; ``log_L`` or ``weights`` of the wrong shape or non-finite;
        an empty ``theta``; fewer data points than parameters; ``delta`` not positive.
    """
    delta = _check_delta(delta)
    fn, X, log_L, weights, _ = _check_data(law, theta, X, log_L, weights)
    return _loss_sum(_residuals(fn, theta, X, log_L), delta, weights)


@cites(HOFFMANN, BESIROGLU)
def hoffmann_init_grid(law: str = "chinchilla", reduced: bool = False) -> ChinchillaParams:
    """The L1 initialization grid of Hoffmann et al. (arXiv:2203.15556) as used by Besiroglu et al.
    (arXiv:2404.10102), or a smaller grid chosen here.

    Full grid (4500 starts): alpha, beta in {0, .5, 1, 1.5, 2}, e in {-1, -.5, 0, .5, 1}, a, b in
    {0, 5, ..., 25}. Reduced grid (243 starts, **[chosen]**): alpha, beta in {0, .5, 1}, e in {-1, 0, 1},
    a, b in {0, 10, 20}. Starts are the Cartesian product in the order (a, b, e, alpha, beta), ``a`` slowest.

    Args:
      law: must be ``"chinchilla"`` (the grid is defined for L1 only).
      reduced: return the 243-start grid instead of the 4500-start one.

    Returns:
      :class:`~jaxlab.scaling.ChinchillaParams` whose fields are float arrays of shape ``(4500,)`` (or
      ``(243,)``), in the default float dtype; pass it to :func:`fit_multistart`.

    Raises:
      ValueError: ``law`` is not ``"chinchilla"``.
    """
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
    """Initial L-BFGS state at ``theta0``: F(theta0) and grad F(theta0) evaluated, ``optax.lbfgs()`` state.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights.

    Returns:
      :class:`LBFGSState` with ``step = 0`` and ``converged = False``.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: an unknown law; ``X`` not 1-d; ``log_L`` or ``weights`` of the wrong shape or non-finite;
        an empty ``theta0``; fewer data points than parameters; ``delta`` not positive.
    """
    fn, X, log_L, weights, _ = _check_data(law, theta0, X, log_L, weights)
    delta = _check_delta(delta)
    f = lambda th: _loss_sum(_residuals(fn, th, X, log_L), delta, weights)  # noqa: E731
    value, grad = jax.value_and_grad(f)(theta0)
    return LBFGSState(theta0, _lbfgs().init(theta0), value, grad, jnp.asarray(0), jnp.asarray(False))


@cites(HOFFMANN, BESIROGLU)
def lbfgs_step(law: str | Callable, state: LBFGSState, X: Covariates, log_L: Any, *, delta: Any = 1e-3,
               weights: Any = None, tol: float = 1e-10) -> tuple[LBFGSState, Array]:
    """One L-BFGS iteration on F (``optax.lbfgs`` with its zoom line search).

    Stops (sets ``converged``) when (F_k - F_{k+1}) / |F_k| <= ``tol``, ||grad F|| <= ``tol``, or the new
    objective is not finite; in the last case the previous iterate is kept. A converged state is returned
    unchanged. No input checks: it is the inner step of :func:`lbfgs_algorithm`, which validates once.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      state: the current :class:`LBFGSState`.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses.
      delta: Huber threshold, or ``None`` for least squares (the one used by :func:`lbfgs_init`).
      weights: optional ``(n,)`` float array of per-point weights.
      tol: float, the tolerance of the stopping tests.

    Returns:
      ``(state, value)``: the new :class:`LBFGSState` and its float scalar objective.
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

    Hoffmann et al. (arXiv:2203.15556, Approach 3) and Besiroglu et al. (arXiv:2404.10102) fit L1 this way.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      X: :class:`~jaxlab.scaling.Covariates` of the design, ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights (validated by ``init``).
      tol: float, stop when the relative decrease of F or the gradient norm is <= ``tol``.

    Returns:
      ``Algorithm(init, step)`` over :class:`LBFGSState`; drive it with :func:`jaxlab.core.run`.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: an unknown law; non-finite or non-1-d ``log_L``; ``delta`` not positive. ``init`` raises
        as :func:`lbfgs_init`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.scaling import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import factorial_design, lbfgs_algorithm
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> theta0 = ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))
      >>> algo = lbfgs_algorithm("chinchilla", X, log_L)
      >>> state, trace = run(algo.step, algo.init(theta0), jax.random.key(0), 10)
      >>> trace.infos.value.shape  # F after each step
      (10,)
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
    """Minimize F(theta) = sum_i w_i H_delta(ln L_hat_i - ln L_i) from ``theta0`` with L-BFGS.

    Runs :func:`lbfgs_algorithm`'s step in a ``lax.while_loop`` until converged or ``max_steps``; it jits
    and vmaps (over starts in :func:`fit_multistart`, over resampling weights in :func:`bootstrap`).

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights.
      max_steps: int >= 1, the iteration limit.
      tol: float, the tolerance of the stopping tests (relative decrease of F, gradient norm).

    Returns:
      :class:`FitResult` ``(theta, value, grad_norm, steps, converged)``.

    Raises:
      TypeError: ``max_steps`` not an int; ``X`` not a :class:`~jaxlab.scaling.Covariates`.
      ValueError: ``max_steps < 1``, and the input errors of :func:`lbfgs_init`.
    """
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    algo = lbfgs_algorithm(law, X, log_L, delta=delta, weights=weights, tol=tol)
    final = jax.lax.while_loop(lambda s: ~s.converged & (s.step < max_steps), lambda s: algo.step(None, s)[0],
                               algo.init(theta0))
    return _lbfgs_result(final)


@cites(HOFFMANN, BESIROGLU)
def lbfgs_run(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, num_steps: int, *,
              delta: Any = 1e-3, weights: Any = None, tol: float = 1e-10) -> tuple[FitResult, RunTrace]:
    """Exactly ``num_steps`` L-BFGS iterations with :func:`jaxlab.core.run`, recording F after each one.

    Steps after convergence leave the state unchanged, so the trace is flat from there on.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      num_steps: int >= 0, the number of iterations.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights.
      tol: float, the tolerance of the stopping tests.

    Returns:
      ``(result, trace)``: the :class:`FitResult` of the final state and a :class:`~jaxlab.core.RunTrace`
      whose ``infos`` is the ``(num_steps,)`` float array of F after each step.

    Raises:
      TypeError: ``num_steps`` not an int.
      ValueError: ``num_steps < 0``, and the input errors of :func:`lbfgs_init`.
    """
    algo = lbfgs_algorithm(law, X, log_L, delta=delta, weights=weights, tol=tol)

    def step(key, s):
        s, info = algo.step(key, s)
        return s, info.value

    # the step is deterministic: the key only satisfies run's key-driven signature
    final, trace = run(step, algo.init(theta0), jax.random.key(0), num_steps)
    return _lbfgs_result(final), trace


# ------------------------------------------------------------------------------------------------ BFGS


class BFGSState(NamedTuple):
    """State of :func:`bfgs_algorithm` and :func:`fit_bfgs` (a pytree: it jits, vmaps and scans).

    Attributes:
      theta: the last accepted parameters, a pytree of float arrays.
      solver: the state of ``optimistix.BFGS`` on theta flattened by ``ravel_pytree`` (the trial point, its
        line-search step size, F, grad F and the inverse-Hessian estimate at ``theta``).
      step: int scalar, the trial points evaluated after the start.
      converged: bool scalar, the stopping test of :func:`fit_bfgs`.
    """

    theta: Any
    solver: Any
    step: Array
    converged: Array


class _BFGS(optx.BFGS):
    """``optimistix.BFGS`` with a scale-free curvature test: the inverse-Hessian update is skipped when
    u^T s <= eps ||u|| ||s|| (eps of the dtype) instead of u^T s <= eps. optimistix's absolute test stops all
    updates once u^T s falls below 1.2e-7 in float32, which on a small objective (F ~ 1e-5) freezes the estimate
    long before convergence. The update formula is optimistix's own, applied to s and u scaled by
    k = (||u|| ||s||)^(-1/2): the BFGS update is unchanged by s, u -> k s, k u, and u^T s becomes the cosine."""

    def update_hessian(self, y, y_eval, f_info, f_eval_info, hessian_update_state):
        s, u = y_eval - y, f_eval_info.grad - f_info.grad
        k = jax.lax.rsqrt(jnp.maximum(jnp.linalg.norm(s) * jnp.linalg.norm(u), jnp.finfo(s.dtype).tiny))
        info, update_state = super().update_hessian(
            k * y, k * y_eval, eqx.tree_at(lambda i: i.grad, f_info, k * f_info.grad),
            optx.FunctionInfo.EvalGrad(f_eval_info.f, k * f_eval_info.grad), hessian_update_state)
        return eqx.tree_at(lambda i: i.grad, info, f_eval_info.grad), update_state


def _bfgs_problem(fn: Callable, theta0: Any, delta: Any, tol: float):
    """The flat objective ``f(y, (X, log_L, weights)) -> (F, None)`` of ``optimistix.BFGS``, its solver, the flat
    start and the map back to ``theta``."""
    flat, unravel = ravel_pytree(theta0)

    def f(y, args):
        X, log_L, weights = args
        return _loss_sum(_residuals(fn, unravel(y), X, log_L), delta, weights), None

    return f, _BFGS(rtol=tol, atol=tol), flat, unravel


def _bfgs_init(fn: Callable, theta0: Any, X: Covariates, log_L: Array, delta: Any, weights: Any,
               tol: float) -> BFGSState:
    f, solver, flat, unravel = _bfgs_problem(fn, theta0, delta, tol)
    args = (X, log_L, weights)
    f_struct = jax.eval_shape(lambda y: f(y, args)[0], flat)
    state = solver.init(f, flat, args, {}, f_struct, None, frozenset())
    # optimistix's first step evaluates F and grad F at the start and always accepts it
    y, state, _ = solver.step(f, flat, args, {}, state, frozenset())
    # strong types throughout, so that the state has one type before and after a step (one compiled program)
    state = jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=a.dtype), _keep_dtype(state, flat.dtype))
    return BFGSState(unravel(y), state, jnp.asarray(0), ~jnp.isfinite(state.f_info.f))


def _keep_dtype(state: Any, dtype: Any) -> Any:
    """The trial point and step size in theta's dtype: with x64 on, optimistix's step size starts as a float64
    scalar and would turn a float32 trial point into a float64 one."""
    return eqx.tree_at(lambda st: (st.y_eval, st.search_state.step_size), state,
                       (state.y_eval.astype(dtype), state.search_state.step_size.astype(dtype)))


def _bfgs_step(fn: Callable, s: BFGSState, X: Covariates, log_L: Array, delta: Any, weights: Any,
               tol: float) -> BFGSState:
    """One ``optimistix.BFGS`` step (one trial point) and the stopping tests; a converged state is kept."""
    f, solver, flat, unravel = _bfgs_problem(fn, s.theta, delta, tol)
    args = (X, log_L, weights)
    y, state, _ = solver.step(f, flat, args, {}, s.solver, frozenset())
    state = _keep_dtype(state, flat.dtype)
    stop, _ = solver.terminate(f, y, args, {}, state, frozenset())
    accepted = state.num_accepted_steps > s.solver.num_accepted_steps
    f_old, f_new = s.solver.f_info.f, state.f_info.f
    decrease = (f_old - f_new) / jnp.maximum(jnp.abs(f_old), jnp.finfo(f_new.dtype).tiny)
    # the line search has shrunk the step below the spacing of floats at y: no trial point differs from y
    stalled = jnp.all(state.y_eval == y)
    done = stop | (accepted & (decrease <= tol)) | (_tree_norm(state.f_info.grad) <= tol) | stalled
    new = BFGSState(unravel(y), state, s.step + 1, done)
    return jax.tree_util.tree_map(lambda a, b: jnp.where(s.converged, a, b), s, new)


def _bfgs_result(s: BFGSState) -> FitResult:
    return FitResult(s.theta, s.solver.f_info.f, _tree_norm(s.solver.f_info.grad), s.step, s.converged)


@cites(HOFFMANN, BESIROGLU)
def fit_bfgs(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, *, delta: Any = 1e-3,
             weights: Any = None, max_steps: int = 1000, tol: float = 1e-10) -> FitResult:
    """Minimize F(theta) = sum_i w_i H_delta(ln L_hat_i - ln L_i) from ``theta0`` with BFGS
    (``optimistix.BFGS``: dense inverse-Hessian estimate, backtracking Armijo line search).

    theta is flattened to a vector y of ``p`` entries. With g_k = grad F(y_k) and the inverse-Hessian estimate
    H_k (H_0 = I), each iteration tries y_k + t d_k along d_k = -H_k g_k, with t = 1, 1/2, 1/4, ... until
    the Armijo condition F(y_k + t d_k) <= F(y_k) + 0.1 t g_k^T d_k holds; that point is y_{k+1}. With
    s = y_{k+1} - y_k, u = g_{k+1} - g_k and rho = 1 / (u^T s) the estimate is updated by::

        H_{k+1} = (I - rho s u^T) H_k (I - rho u s^T) + rho s s^T

    (skipped when u^T s <= eps ||u|| ||s||, eps of the dtype, which keeps H positive definite; optimistix's own
    test, u^T s <= eps, is absolute and in float32 freezes H on small objectives). Each trial point costs one
    evaluation of F and its linearization (grad F is formed from it where the point is accepted). The solver's own
    ``init``/``step``/``terminate`` are run here in a ``lax.while_loop`` (and by :func:`fit_multistart` with
    ``method="bfgs"``, chunk by chunk).

    Stops (``converged``) at the first of:

    - optimistix's test with rtol = atol = ``tol`` after an accepted step: |y_{k+1,j} - y_{k,j}| <
      tol (1 + |y_{k+1,j}|) for every entry j, and |F_{k+1} - F_k| < tol (1 + |F_{k+1}|);
    - an accepted step with (F_k - F_{k+1}) / |F_k| <= ``tol`` (the relative-decrease test of
      :func:`fit_lbfgs`), or ||grad F|| <= ``tol``;
    - a line search that has shrunk t until y_k + t d_k = y_k in floating point (no progress is possible),
      or a non-finite F at the start.

    Non-finite trial points fail the Armijo test, so the line search backs away from them. Fits the L1 law
    of Hoffmann et al. (arXiv:2203.15556, Approach 3) as Besiroglu et al. (arXiv:2404.10102) do, with BFGS
    in place of L-BFGS (for p = 5 parameters the dense 5 x 5 estimate costs nothing).

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays (``p`` entries in all).
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights.
      max_steps: int >= 1, the limit on trial points (function evaluations) after the start.
      tol: positive float, the tolerance of the stopping tests.

    Returns:
      :class:`FitResult` ``(theta, value, grad_norm, steps, converged)``: ``theta`` the last accepted point (a
      pytree like ``theta0``), ``value`` F there, ``grad_norm`` ||grad F|| there, ``steps`` the trial points
      evaluated after the start (accepted or not).

    Raises:
      TypeError: ``max_steps`` not an int; ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: ``max_steps < 1``; ``tol`` or ``delta`` not positive; an unknown law; ``X`` not 1-d;
        ``log_L`` or ``weights`` of the wrong shape or non-finite (under ``jit``: at run time); an empty
        ``theta0``; fewer data points than parameters.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.scaling import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import factorial_design, fit_bfgs
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> theta0 = ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))
      >>> fit = fit_bfgs("chinchilla", theta0, X, log_L, delta=None)
      >>> bool(fit.converged), round(float(fit.theta.alpha), 3)
      (True, 0.34)
    """
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    tol = _check_tol(tol)
    delta = _check_delta(delta)
    fn, X, log_L, weights, _ = _check_data(law, theta0, X, log_L, weights)
    final = jax.lax.while_loop(lambda s: ~s.converged & (s.step < max_steps),
                               lambda s: _bfgs_step(fn, s, X, log_L, delta, weights, tol),
                               _bfgs_init(fn, theta0, X, log_L, delta, weights, tol))
    return _bfgs_result(final)


@cites(HOFFMANN, BESIROGLU)
def bfgs_algorithm(law: str | Callable, X: Covariates, log_L: Any, *, delta: Any = 1e-3, weights: Any = None,
                   tol: float = 1e-10) -> Algorithm:
    """BFGS (``optimistix.BFGS``) on F(theta) = sum_i w_i H_delta(ln L_hat_i - ln L_i) as an
    :class:`~jaxlab.core.Algorithm`.

    The data and hyperparameters are bound once; ``init(theta0)`` evaluates F and grad F at ``theta0`` and
    ``step(key, state) -> (state, LBFGSInfo(value))`` tries one point of the line search, with the update and the
    stopping tests of :func:`fit_bfgs` (deterministic: ``key`` is ignored). A converged state is returned
    unchanged, so a fixed number of steps under :func:`jaxlab.core.run` ends flat.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      X: :class:`~jaxlab.scaling.Covariates` of the design, ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      weights: optional ``(n,)`` float array of per-point weights.
      tol: positive float, the tolerance of the stopping tests.

    Returns:
      ``Algorithm(init, step)`` over :class:`BFGSState`; drive it with :func:`jaxlab.core.run`.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, non-float arrays, or ``tol`` not a float.
      ValueError: an unknown law; ``log_L`` not 1-d or non-finite; ``delta`` or ``tol`` not positive; ``init``
        raises the input errors of :func:`fit_bfgs`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.scaling import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import bfgs_algorithm, factorial_design
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> theta0 = ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))
      >>> algo = bfgs_algorithm("chinchilla", X, log_L, delta=None)
      >>> state, trace = run(algo.step, algo.init(theta0), jax.random.key(0), 10)
      >>> trace.infos.value.shape  # F at the accepted point after each step
      (10,)
    """
    fn = resolve_law(law)
    X = _check_X(X)
    log_L = as_array(log_L, "log_L", ndim=1, finite=True)
    delta = _check_delta(delta)
    tol = _check_tol(tol)
    if weights is not None:
        weights = as_array(weights, "weights", shape=log_L.shape, finite=True)

    def init(theta0: Any) -> BFGSState:
        _check_data(fn, theta0, X, log_L, weights)
        return _bfgs_init(fn, theta0, X, log_L, delta, weights, tol)

    def step(key: Any, state: BFGSState) -> tuple[BFGSState, LBFGSInfo]:
        del key
        state = _bfgs_step(fn, state, X, log_L, delta, weights, tol)
        return state, LBFGSInfo(state.solver.f_info.f)

    return Algorithm(init, step)


def _check_tol(tol: Any) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating, np.integer)):
        raise TypeError(f"tol must be a Python float (it configures the solver), got {type(tol).__name__}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite float, got {tol!r}")
    return float(tol)


# ---------------------------------------------------------------------------------- Levenberg-Marquardt


def _lm_value(fn, theta, X, log_L, huber_delta):
    return _loss_sum(_residuals(fn, theta, X, log_L), huber_delta, None)


def _residuals_and_jacobian(fn, flat, unravel, X, log_L):
    """``r(theta)`` and ``J = dr/dtheta``: in closed form where the law has one (:data:`VALUE_AND_JACOBIAN`),
    else from one forward-mode pass whose ``p`` Jacobian-vector products share the primal, so the law's
    transcendental functions are evaluated once (they dominate a step)."""
    closed = VALUE_AND_JACOBIAN.get(fn)
    if closed is not None and jnp.ndim(X.log_N) == 1:
        ln_hat, J = closed(unravel(flat), X)
        return ln_hat - log_L.reshape(-1), J
    f = lambda v: fn(unravel(v), X).reshape(-1)  # noqa: E731
    basis = jnp.eye(flat.shape[0], dtype=flat.dtype)
    ln_hat, JT = jax.vmap(lambda t: jax.jvp(f, (flat,), (t,)), out_axes=(None, 0))(basis)
    return ln_hat - log_L.reshape(-1), JT.T


def _weighted_curvature(fn, flat, unravel, X, J, c):
    """``sum_i c_i d^2 r_i / d theta^2`` as ``(B, a)``, the sum being ``B + J^T diag(a) J``: in closed form where
    the law has one (:data:`WEIGHTED_CURVATURE`, from the closed-form ``J``), else ``a = 0`` and ``B`` the Hessian
    of ``theta -> c . ln L_hat(theta)`` by autodiff."""
    closed = WEIGHTED_CURVATURE.get(fn)
    if closed is not None and VALUE_AND_JACOBIAN.get(fn) is not None and jnp.ndim(X.log_N) == 1:
        return closed(J, c, X)
    return jax.hessian(lambda v: jnp.dot(c, fn(unravel(v), X).reshape(-1)))(flat), jnp.zeros_like(c)


_EXACT_HESSIAN_LAM = 1e-6  # Huber LM: at or below this damping the step's model is the exact Hessian of F


@cites(HOFFMANN)
def lm_init(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, lam0: float = 1e-3, *,
            huber_delta: Any = None) -> LMState:
    """Initial Levenberg-Marquardt state at ``theta0``: residuals r, Jacobian J (one forward-mode pass) and F.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays (``p`` entries in all).
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      lam0: positive float scalar, the initial damping.
      huber_delta: positive float scalar, the Huber threshold of F, or ``None`` for least squares.

    Returns:
      :class:`LMState` with ``step = 0``, ``converged = False``, ``r`` of shape ``(n,)``, ``J`` of shape
      ``(n, p)``.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: an unknown law; ``X`` not 1-d; ``log_L`` of the wrong shape or non-finite; an empty
        ``theta0``; fewer data points than parameters; ``lam0`` or ``huber_delta`` not positive.
    """
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
    """One Levenberg-Marquardt step: solve (M + lam diag(M)) Delta = -J^T W r, accept theta + Delta only if F
    decreases.

    W = I, or with ``huber_delta`` the IRLS weights w_i = 1 if |r_i| <= delta else delta/|r_i| (then
    J^T W r = sum_i rho'(r_i) grad r_i = grad F). The model matrix M is J^T W J (Gauss-Newton; with Huber, the
    IRLS majorizer), except with ``huber_delta`` once lam <= 1e-6: then M is the exact Hessian
    grad^2 F = J^T diag(rho''(r)) J + sum_i rho'(r_i) grad^2 r_i, with rho'' = 1 if |r| <= delta else 0.
    The IRLS weights delta/|r_i| overstate the curvature of the linear Huber branch (which is 0), so IRLS alone
    converges only linearly; once a run of accepted steps has brought lam down, the exact model converges
    superlinearly (a model switch in the spirit of NL2SOL, Dennis, Gay & Welsch, ACM TOMS 7(3), 1981). A
    rejected exact-model step sets lam to max(10 lam, 1e-5), so the next step takes the IRLS model (whose
    majorizer step decreases F for small damping) and an accepted one brings the exact model back.

    On acceptance lam <- lam/10 and the trial point's r, J become the state's; on rejection lam <- 10 lam (and
    at least 1e-5 with ``huber_delta``; lam is clipped to [1e-15, 1e16]). Stops when an accepted step decreases
    F by a relative amount <= ``tol``, when an exact-model trial is rejected with |F(theta + Delta) - F(theta)|
    <= ``tol`` F(theta) (the minimum is reached to rounding: whether such a trial is accepted is decided by the
    last bits), when lam >= 1e15 (stalled), or when F = 0. A converged state is returned unchanged. No input
    checks: it is the inner step of :func:`lm_algorithm`, which validates once.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      state: the current :class:`LMState`.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses.
      huber_delta: the Huber threshold (the one used by :func:`lm_init`), or ``None`` for least squares.
      tol: float, the relative-decrease tolerance.

    Returns:
      The new :class:`LMState`.
    """
    fn = resolve_law(law)
    flat, unravel = ravel_pytree(state.theta)
    r, J = state.r, state.J
    if huber_delta is None:
        w = jnp.ones_like(r)
    else:
        w = jnp.where(jnp.abs(r) <= huber_delta, 1.0, huber_delta / jnp.maximum(jnp.abs(r), huber_delta))
    c = w * r  # rho'(r_i): r_i, or delta sign(r_i) on the linear Huber branch
    g = J.T @ c
    if huber_delta is None:
        H = J.T @ (w[:, None] * J)
    else:  # one J^T diag(.) J product: the IRLS weights, or those of the exact Hessian (rho'' + a) plus B
        exact = state.lam <= _EXACT_HESSIAN_LAM
        B, a = _weighted_curvature(fn, flat, unravel, X, J, c)
        inlier = (jnp.abs(r) <= huber_delta).astype(r.dtype)  # rho''(r_i)
        H = J.T @ (jnp.where(exact, inlier + a, w)[:, None] * J) + jnp.where(exact, B, 0.0)
    d = jnp.diag(H)
    # LAPACK for one start; under vmap (the multistart) the same LU in array operations on every start at once
    step = solve(H + state.lam * jnp.diag(jnp.maximum(d, 1e-30 * jnp.max(d))), -g)
    theta_new = unravel(flat + step)
    r_new, J_new = _residuals_and_jacobian(fn, flat + step, unravel, X, log_L)
    value_new = _loss_sum(r_new, huber_delta, None)
    accept = jnp.isfinite(value_new) & (value_new < state.value) & jnp.all(jnp.isfinite(step))
    rel = (state.value - value_new) / jnp.maximum(state.value, jnp.finfo(r.dtype).tiny)
    stalled = state.lam >= 1e15
    done = (accept & (rel <= tol)) | stalled | (state.value == 0)
    if huber_delta is not None:  # an exact-model step that moves F by no more than tol: the minimum, to rounding
        done = done | (~accept & jnp.isfinite(value_new) & (jnp.abs(rel) <= tol) & (state.lam <= _EXACT_HESSIAN_LAM))
    theta = jax.tree_util.tree_map(lambda a, b: jnp.where(accept, b, a), state.theta, theta_new)
    up = state.lam * 10
    if huber_delta is not None:  # a rejected exact-model step: the next one takes the IRLS model
        up = jnp.maximum(up, 10 * _EXACT_HESSIAN_LAM)
    lam = jnp.clip(jnp.where(accept, state.lam / 10, up), 1e-15, 1e16)
    r, J = jnp.where(accept, r_new, r), jnp.where(accept, J_new, J)
    new = LMState(theta, lam, jnp.where(accept, value_new, state.value), state.step + 1, done, r, J)
    return jax.tree_util.tree_map(lambda a, b: jnp.where(state.converged, a, b), state, new)


def _lm_grad_norm(fn, theta, X, log_L, huber_delta) -> Array:
    return _tree_norm(jax.grad(lambda th: _lm_value(fn, th, X, log_L, huber_delta))(theta))


def _lm_result(fn, s: LMState, X, log_L, huber_delta) -> FitResult:
    return FitResult(s.theta, s.value, _lm_grad_norm(fn, s.theta, X, log_L, huber_delta), s.step, s.converged)


@cites(HOFFMANN)
def lm_algorithm(law: str | Callable, X: Covariates, log_L: Any, *, huber_delta: Any = None, lam0: float = 1e-3,
                 tol: float = 1e-12) -> Algorithm:
    """Levenberg-Marquardt on the log-loss residuals as an :class:`~jaxlab.core.Algorithm`.

    Each step solves (J^T W J + lam diag(J^T W J)) Delta = -J^T W r and accepts theta + Delta only if F
    decreases (lam <- lam/10, else lam <- 10 lam); W = I, or the Huber IRLS weights when ``huber_delta``, whose
    steps switch to the exact Hessian of F in place of J^T W J once lam <= 1e-6 (see :func:`lm_step`).
    ``init(theta0)`` is :func:`lm_init`; ``step(key, state) -> (state, LMInfo(value, lam))`` is one
    :func:`lm_step` (deterministic: ``key`` is ignored).

    The step also stops on a damping lam >= 1e15 or F = 0 (see :func:`lm_step`).

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      X: :class:`~jaxlab.scaling.Covariates` of the design, ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      huber_delta: positive float scalar, the Huber threshold of F and its IRLS weights, or ``None`` for
        least squares.
      lam0: positive float scalar, the initial damping (validated by ``init``).
      tol: float, converged when an accepted step decreases F by a relative amount <= ``tol``.

    Returns:
      ``Algorithm(init, step)`` over :class:`LMState`; drive it with :func:`jaxlab.core.run`.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: an unknown law; non-finite or non-1-d ``log_L``; ``huber_delta`` not positive. ``init``
        raises as :func:`lm_init`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.scaling import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import factorial_design, lm_algorithm
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> theta0 = ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))
      >>> algo = lm_algorithm("chinchilla", X, log_L, huber_delta=1e-3)
      >>> state, trace = run(algo.step, algo.init(theta0), jax.random.key(0), 20)
      >>> trace.infos.lam.shape  # the damping after each step
      (20,)
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
    """Minimize F with Levenberg-Marquardt (:func:`lm_algorithm`) in a ``lax.while_loop``, until converged or
    ``max_steps``.

    F is least squares on the log-loss residuals, or the Huber objective of Hoffmann et al.
    (arXiv:2203.15556) with ``huber_delta``. It jits and vmaps (over starts in :func:`fit_multistart`).

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      huber_delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      lam0: positive float scalar, the initial damping.
      max_steps: int >= 1, the step limit (rejected steps count).
      tol: float, the relative-decrease tolerance of an accepted step.

    Returns:
      :class:`FitResult` ``(theta, value, grad_norm, steps, converged)``.

    Raises:
      TypeError: ``max_steps`` not an int; ``X`` not a :class:`~jaxlab.scaling.Covariates`.
      ValueError: ``max_steps < 1``, and the input errors of :func:`lm_init`.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.scaling import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import factorial_design, lm_solve
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> theta0 = ChinchillaParams(*jnp.array([5.0, 5.0, 0.3, 0.3, 0.3]))
      >>> fit = lm_solve("chinchilla", theta0, X, log_L)
      >>> bool(fit.converged), round(float(fit.theta.alpha), 3)
      (True, 0.34)
    """
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    fn = resolve_law(law)
    algo = lm_algorithm(fn, X, log_L, huber_delta=huber_delta, lam0=lam0, tol=tol)
    final = jax.lax.while_loop(lambda s: ~s.converged & (s.step < max_steps), lambda s: algo.step(None, s)[0],
                               algo.init(theta0))
    return _lm_result(fn, final, X, log_L, huber_delta)


@cites(HOFFMANN)
def lm_run(law: str | Callable, theta0: Any, X: Covariates, log_L: Any, num_steps: int, *,
           huber_delta: Any = None, lam0: float = 1e-3, tol: float = 1e-12) -> tuple[FitResult, RunTrace]:
    """Exactly ``num_steps`` Levenberg-Marquardt steps with :func:`jaxlab.core.run`, recording F after each.

    Steps after convergence leave the state unchanged, so the trace is flat from there on.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta0: the starting parameters, a pytree of float arrays.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      num_steps: int >= 0, the number of steps.
      huber_delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      lam0: positive float scalar, the initial damping.
      tol: float, the relative-decrease tolerance of an accepted step.

    Returns:
      ``(result, trace)``: the :class:`FitResult` of the final state and a :class:`~jaxlab.core.RunTrace`
      whose ``infos`` is the ``(num_steps,)`` float array of F after each step.

    Raises:
      TypeError: ``num_steps`` not an int.
      ValueError: ``num_steps < 0``, and the input errors of :func:`lm_init`.
    """
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
    elif method == "bfgs":
        one = lambda th, X, log_L: fit_bfgs(fn, th, X, log_L, **kw)  # noqa: E731
    else:
        one = lambda th, X, log_L: lm_solve(fn, th, X, log_L, **kw)  # noqa: E731
    return sharded_vmap(one, in_axes=(0, None, None))


@cites(HOFFMANN, BESIROGLU)
def fit_multistart(law: str | Callable, thetas0: Any, X: Covariates, log_L: Any, *, method: str = "lbfgs",
                   compact: bool | None = None, **kw: Any) -> tuple[FitResult, FitResult]:
    """Fit from every start (leading axis of ``thetas0``) in one vmapped, device-sharded call; keep the best.

    The multistart protocol of Hoffmann et al. (arXiv:2203.15556) and Besiroglu et al. (arXiv:2404.10102):
    minimize F from each point of a grid (:func:`hoffmann_init_grid`) and keep the lowest F. Non-finite
    objectives never win.

    ``compact`` (default: on when called outside ``jit``): a vmapped ``while_loop`` runs every start until the
    slowest has converged, so starts that finish early keep costing a full step. With ``compact`` the starts
    run in a pool of P = min(s, max(128, s // 8)) slots, 8 steps at a time: after each chunk the host puts the
    next waiting starts into the slots whose start has stopped (as a serving engine refills a batch), and once
    no start is waiting, only the unconverged ones are carried on, padded to one of a few sizes P / 4^j. The
    work is then about the sum of the starts' own step counts instead of their maximum times their number (on
    the 1024-start Chinchilla Huber refit with ``method="lm"``: 43.9k start-steps executed for 35.5k needed,
    against 1024 x 200 = 205k for the vmapped loop). On a single CPU device (one process) the starts are split
    into one contiguous group per usable core (:func:`jaxlab.core.usable_cores`, at most one group per 128
    starts), each group in its own pool driven by its own host thread: XLA runs a pool's small batched step on
    little more than one core, so the groups keep every core busy (1024 starts on 2 cores: about 1.5x faster
    than one pool; restrict the process's CPU affinity, e.g. ``taskset``, to use fewer). Each start follows the
    same iterations as without it, up to floating-point rounding: the step is compiled into a different
    program, which XLA may fuse differently (on the Chinchilla refit the objectives agree to about 1e-13
    relative). Each padded size is compiled once (a few seconds for L-BFGS on a CPU);
    :func:`jaxlab.core.enable_compilation_cache` keeps those programs across runs.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      thetas0: the starts, a pytree of float arrays with a common leading axis of length ``s``.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      method: ``"lbfgs"`` (:func:`fit_lbfgs`), ``"bfgs"`` (:func:`fit_bfgs`) or ``"lm"`` (:func:`lm_solve`).
      compact: bool or ``None`` (the default described above).
      **kw: keywords of :func:`fit_lbfgs` or :func:`fit_bfgs` (``delta``, ``max_steps``, ``tol``) or of
        :func:`lm_solve` (``huber_delta``, ``lam0``, ``max_steps``, ``tol``). They must be hashable Python values
        (they key a cache of compiled fits), so ``weights`` arrays and traced values are not accepted.

    Returns:
      ``(best, all)``: the :class:`FitResult` with the lowest finite F, and the :class:`FitResult` of every
      start (fields with a leading axis ``s``).

    Raises:
      ValueError: an unknown ``method``; ``compact=True`` under ``jit``; ``delta``, ``huber_delta`` or ``lam0``
        not positive (``tol`` too, for ``"bfgs"``); ``max_steps < 1``; the input errors of :func:`objective`
        (per start).
      TypeError: a keyword the chosen method does not take, an unhashable keyword value, or ``max_steps``
        not an int (``tol`` not a float, for ``"bfgs"``).
    """
    if method not in _SINGLE_START:
        raise ValueError(f"method must be 'lbfgs', 'bfgs' or 'lm', got {method!r}")
    fn, X, log_L, _, _ = _check_data(law, thetas0, X, log_L, batched=True)
    for k in ("delta", "huber_delta"):
        _check_delta(kw.get(k))
    concrete = all(is_concrete(a) for a in jax.tree_util.tree_leaves((thetas0, X, log_L)))
    if compact is None:
        compact = concrete
    if compact and not concrete:
        raise ValueError("compact=True gathers unconverged starts on the host: call fit_multistart outside jit "
                         "(or pass compact=False)")
    if compact:
        everything = _compact_multistart(fn, method, _multistart_options(method, kw), thetas0, X, log_L)
    else:
        everything = _batched_fit(fn, method, tuple(sorted(kw.items())))(thetas0, X, log_L)
    i = jnp.argmin(jnp.where(jnp.isfinite(everything.value), everything.value, jnp.inf))
    best = jax.tree_util.tree_map(lambda a: a[i], everything)
    return best, everything


_SINGLE_START = {"lbfgs": fit_lbfgs, "bfgs": fit_bfgs, "lm": lm_solve}
_CHUNK = 8  # steps between two host-side compactions of the unconverged starts
_BUCKET = 4  # live starts are padded to P / 4^j starts: a few shapes, so a few compilations
_POOL = 128  # the least pool of slots: large enough that a chunk's work outweighs its host round trip


def _multistart_options(method: str, kw: dict) -> tuple:
    """``kw`` completed with the defaults of :func:`fit_lbfgs`, :func:`fit_bfgs` or :func:`lm_solve`, validated,
    as a sorted tuple."""
    func = _SINGLE_START[method]
    defaults = {k: v.default for k, v in inspect.signature(func).parameters.items()
                if v.kind is inspect.Parameter.KEYWORD_ONLY and k != "weights"}
    unknown = sorted(set(kw) - set(defaults))
    if unknown:
        raise TypeError(f"fit_multistart(method={method!r}) got unexpected keyword(s) {unknown}; it takes "
                        f"{sorted(defaults)}")
    options = {**defaults, **kw}
    options["max_steps"] = check_int(options["max_steps"], "max_steps", min_value=1)
    if method == "bfgs":
        options["tol"] = _check_tol(options["tol"])
    if "lam0" in options:
        options["lam0"] = float(check_positive(options["lam0"], "lam0"))
    return tuple(sorted(options.items()))


@functools.lru_cache(maxsize=64)
def _compact_programs(fn: Callable, method: str, options: tuple):
    """The programs of a compacted multistart: ``init`` (per start, sharded), ``repack`` (gather the live starts
    into the next padded size), ``advance`` (run ``_CHUNK`` steps, record each start's outcome row), ``result``
    (the :class:`FitResult` from the outcome rows) and ``outcome`` (the outcome rows of the initial states)."""
    kw = dict(options)
    max_steps = kw["max_steps"]
    if method == "lm":
        delta = kw["huber_delta"]

        def init_one(th, X, log_L):
            return lm_init(fn, th, X, log_L, kw["lam0"], huber_delta=delta)

        def step_one(s, X, log_L):
            return lm_step(fn, s, X, log_L, delta, tol=kw["tol"])

        def outcome(s):  # the gradient norm is evaluated once, at the end
            return (s.theta, s.value, s.step, s.converged)

        def result(done, X, log_L):
            theta, value, steps, converged = done
            grad_norm = jax.vmap(lambda th: _lm_grad_norm(fn, th, X, log_L, delta))(theta)
            return FitResult(theta, value, grad_norm, steps, converged)
    elif method == "bfgs":
        delta, tol = kw["delta"], kw["tol"]

        def init_one(th, X, log_L):
            return _bfgs_init(fn, th, X, log_L, delta, None, tol)

        def step_one(s, X, log_L):
            return _bfgs_step(fn, s, X, log_L, delta, None, tol)

        outcome = _bfgs_result

        def result(done, X, log_L):
            return done
    else:
        def init_one(th, X, log_L):
            return lbfgs_init(fn, th, X, log_L, delta=kw["delta"])

        def step_one(s, X, log_L):
            return lbfgs_step(fn, s, X, log_L, delta=kw["delta"], tol=kw["tol"])[0]

        outcome = _lbfgs_result

        def result(done, X, log_L):
            return done

    def chunk(s, X, log_L):
        def body(_, s):
            nxt = step_one(s, X, log_L)
            return jax.tree_util.tree_map(lambda a, b: jnp.where(s.step >= max_steps, a, b), s, nxt)

        return jax.lax.fori_loop(0, _CHUNK, body, s)

    def advance(live, owner, done, X, log_L):
        """Advance the live starts one chunk and write their outcome to the rows ``owner`` of ``done`` (one row
        per start). Padding repeats a live start: its copies compute the same iterates and write the same row."""
        live = jax.vmap(chunk, in_axes=(0, None, None))(live, X, log_L)
        done = jax.tree_util.tree_map(lambda a, b: a.at[owner].set(b), done, jax.vmap(outcome)(live))
        return live, done, ~live.converged & (live.step < max_steps)

    def start(theta0, X, log_L):
        # strong types throughout (optax's line-search state starts with weakly typed scalars), so that the first
        # chunk and the later ones share one compiled program
        return jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=a.dtype), init_one(theta0, X, log_L))

    def repack(live, pos):
        return jax.tree_util.tree_map(lambda a: a[pos], live)

    def refill(live, states, take, src):
        """The slots ``take`` get the initial states ``states[src]``; the others keep theirs."""
        def put(a, b):
            return jnp.where(take.reshape(take.shape + (1,) * (a.ndim - 1)), b[src], a)

        return jax.tree_util.tree_map(put, live, states)

    init = sharded_vmap(start, in_axes=(0, None, None))
    return (init, jax.jit(repack), jax.jit(advance), jax.jit(result), jax.jit(jax.vmap(outcome)),
            jax.jit(refill))


def _compact_multistart(fn: Callable, method: str, options: tuple, thetas0: Any, X: Covariates,
                        log_L: Array, groups: int | None = None) -> FitResult:
    """Every start's :class:`FitResult`, the starts run in pools (:func:`_run_pool`).

    On a single CPU device the starts are split into ``groups`` contiguous groups (default: one per usable core,
    at most one per ``_POOL`` starts), each run by its own host thread: XLA runs the step of one pool at a time
    on little more than one core, so two pools on two threads keep two cores busy. Each start's iterations do
    not depend on its group (the same compiled step; padding and refills only move starts between slots)."""
    programs = _compact_programs(fn, method, options)
    init, result, outcome = programs[0], programs[3], programs[4]
    states = init(thetas0, X, log_L)  # every start's initial state
    s = jax.tree_util.tree_leaves(thetas0)[0].shape[0]
    if groups is None:
        single_cpu = jax.process_count() == 1 and jax.device_count() == 1 and jax.default_backend() == "cpu"
        groups = max(1, min(usable_cores(), s // _POOL)) if single_cpu else 1
    if groups == 1:
        return result(_run_pool(programs, states, outcome(states), X, log_L), X, log_L)
    bounds = np.linspace(0, s, groups + 1).astype(int)
    parts = [jax.tree_util.tree_map(lambda a, lo=lo, hi=hi: a[lo:hi], states) for lo, hi in itertools.pairwise(bounds)]
    with concurrent.futures.ThreadPoolExecutor(groups) as pool:
        dones = list(pool.map(lambda part: _run_pool(programs, part, outcome(part), X, log_L), parts))
    return result(jax.tree_util.tree_map(lambda *a: jnp.concatenate(a), *dones), X, log_L)


def _run_pool(programs: tuple, states: Any, done: Any, X: Covariates, log_L: Array) -> Any:
    """Run the starts ``states`` (initial states, leading axis ``s``) to their end in a refilled pool of
    P = min(s, max(_POOL, s // 8)) slots; return their outcome rows ``done``, updated."""
    _, repack, advance, _, _, refill = programs
    s = jax.tree_util.tree_leaves(states)[0].shape[0]
    pool = min(s, max(_POOL, s // 8))
    owner = np.arange(pool)  # the start that each slot of ``live`` holds
    live = states if pool == s else repack(states, owner)
    waiting = pool  # starts owner.max() + 1 .. s - 1 have not entered the pool yet
    while True:
        live, done, running = advance(live, owner, done, X, log_L)
        alive = np.flatnonzero(gather(running))  # host copy, also when sharded across processes
        alive = alive[np.unique(owner[alive], return_index=True)[1]]  # padding copies count once
        if waiting < s:  # refill: the next starts take the slots whose start has stopped
            free = np.setdiff1d(np.arange(owner.size), alive)[: s - waiting]
            if free.size:
                take = np.zeros(owner.size, dtype=bool)
                take[free] = True
                owner = owner.copy()
                owner[free] = np.arange(waiting, waiting + free.size)
                waiting += free.size
                live = refill(live, states, take, owner)
            continue
        if alive.size == 0:
            return done
        size = owner.size
        while size // _BUCKET >= alive.size:
            size //= _BUCKET
        pos = np.concatenate([alive, np.full(size - alive.size, alive[0])])  # the rows to carry on, padded
        live, owner = repack(live, pos), owner[pos]


# ------------------------------------------------------------------------------------------ uncertainty


@cites(HOFFMANN, BESIROGLU)
def asymptotic_covariance(law: str | Callable, theta: Any, X: Covariates, log_L: Any,
                          rcond: float = 1e-15) -> Float[Array, "p p"]:
    """Asymptotic covariance of the least-squares estimate: Cov(theta_hat) = s^2 (J^T J)^+.

    s^2 = sum_i r_i^2 / (n - p) is the residual variance and J = d ln L_hat / d theta the ``(n, p)`` Jacobian
    at ``theta`` (flattened by ``ravel_pytree``, i.e. in field order). The pseudo-inverse comes from the SVD
    J = U S V^T as V S^(-2) V^T, dropping singular values below ``rcond * s_max`` (e.g. the null direction of
    a collinear design at alpha = beta). Kricheli et al. (arXiv:2605.08541) report confidence intervals
    widening by an order of magnitude on collinear designs; this is the quantity that shows it.

    Args:
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta: the estimate, a pytree of float arrays with ``p`` entries in all.
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      rcond: float, the relative cut-off of the singular values.

    Returns:
      ``(p, p)`` float array; its diagonal holds the squared standard errors.

    Raises:
      TypeError: ``X`` not a :class:`~jaxlab.scaling.Covariates`, or non-float arrays.
      ValueError: the input errors of :func:`objective`; n = p (no residual degrees of freedom).

    Warns:
      UserWarning: float32 data with (s_max/s_min)^2 eps >= 1e-2 (the result has lost most of its digits).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.scaling import HOFFMANN_2022, asymptotic_covariance, chinchilla_log_loss, covariates
      >>> from jaxlab.scaling import factorial_design
      >>> X = covariates(*factorial_design(jnp.array([1e8, 1e9, 1e10]), jnp.array([5.0, 20.0, 80.0])))
      >>> log_L = chinchilla_log_loss(HOFFMANN_2022, X)  # noise-free losses of the Hoffmann law
      >>> noisy = log_L + 0.01 * jax.random.normal(jax.random.key(0), log_L.shape)
      >>> se = jnp.sqrt(jnp.diag(asymptotic_covariance("chinchilla", HOFFMANN_2022, X, noisy)))
      >>> se.shape  # standard errors of (a, b, e, alpha, beta)
      (5,)
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
    """Nonparametric bootstrap (as in Besiroglu et al., arXiv:2404.10102): ``num`` L-BFGS refits on resampled
    data, each started at ``theta``, vmapped.

    Resampling n points with replacement is done as weights: the counts c ~ Multinomial(n, 1/n) become the
    ``weights`` of :func:`fit_lbfgs`, so every refit has the same shapes.

    Args:
      key: a PRNG key.
      law: a key of :data:`~jaxlab.scaling.laws.LAWS` or a callable ``log_loss(theta, X)``.
      theta: the point estimate, a pytree of float arrays (the start of every refit).
      X: :class:`~jaxlab.scaling.Covariates` with ``(n,)`` fields.
      log_L: ``(n,)`` float array of observed log-losses, finite.
      num: int >= 1, the number of bootstrap replicates.
      delta: positive float scalar, the Huber threshold, or ``None`` for least squares.
      max_steps: int >= 1, the L-BFGS iteration limit of each refit.
      tol: float, the tolerance of each refit's stopping tests.

    Returns:
      The refitted parameters: a pytree like ``theta`` whose leaves have a leading axis ``num``.

    Raises:
      TypeError: ``num`` or ``max_steps`` not an int.
      ValueError: ``num < 1``, and the input errors of :func:`lbfgs_init`.
    """
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


def _bfgs_example(key: Key) -> tuple[Algorithm, BFGSState, None]:
    del key
    X, log_L, start = _example_problem()
    algo = bfgs_algorithm("chinchilla", X, log_L)
    return algo, algo.init(start), None


register_algorithm("scaling_bfgs", bfgs_algorithm, _bfgs_example, area="scaling")
