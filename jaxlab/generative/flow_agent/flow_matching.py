r"""Conditional flow matching: probability paths, the CFM loss with independent and
minibatch optimal-transport couplings, log-domain Sinkhorn, ODE sampling from t = 0 to 1, the analytic Gaussian
velocity, and the converters between the CFM and rectified-flow (RF) time conventions.

Papers:

- Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
  arXiv:2210.02747 (ICLR 2023).
- A. Tong, N. Malkin, G. Huguet, Y. Zhang, J. Rector-Brooks, K. Fatras, G. Wolf, Y. Bengio, "Improving and
  Generalizing Flow-Based Generative Models with Minibatch Optimal Transport", arXiv:2302.00482 (TMLR 2024).

CFM convention: ``t`` in [0, 1], ``x_0`` noise, ``x_1`` data, sampling runs t from 0 to 1.

- I-CFM path: ``x_t = t x_1 + (1 - t) x_0 + sigma xi``, ``xi ~ N(0, I)``, target ``u_t = x_1 - x_0``.
- Lipman OT path: ``x_t = (1 - (1 - sigma_min) t) x_0 + t x_1``, target ``u_t = x_1 - (1 - sigma_min) x_0``.
- Loss: ``L(theta) = E_{t, (x_0, x_1) ~ pi} |v_theta(x_t, t, c) - u_t|^2``, mean over all elements, where the
  coupling ``pi`` is independent or, within a minibatch of size B, the optimal assignment
  ``pi* = argmin_pi sum_i |x_0^i - x_1^pi(i)|^2`` (exact: sorted matching in 1-D, Hungarian through scipy
  otherwise) or a draw from the entropic plan of log-domain Sinkhorn:
  ``f <- eps log a - eps logsumexp((g - C)/eps, axis=1)``, ``g <- eps log b - eps logsumexp((f - C)/eps,
  axis=0)``, ``P = exp((f + g - C)/eps)``, ``a = b = 1/B``. With a condition ``c`` the OT cost adds a large
  penalty between different conditions, so pairs are optimal within equal-condition groups.
- Gaussian closed form (independent coupling, ``x_0 ~ N(0, 1)``, ``x_1 ~ N(m, s^2)``): the marginal velocity is
  ``u*(x, t) = m + a(t) (x - t m)``, ``a(t) = (t s^2 - (1 - t)) / ((1 - t)^2 + t^2 s^2)``, the exact flow maps
  ``z -> m + s z``, and the minimal loss is ``int_0^1 s^2 / ((1-t)^2 + t^2 s^2) dt = s pi / 2`` per dimension.

Time conventions: the RF / diffusers convention uses the noise level ``sigma = 1 - t`` and ``v_RF(x, sigma) =
-u_CFM(x, t)``; :func:`rf_to_cfm_velocity` and :func:`cfm_to_rf_velocity` convert a velocity callable with the
universal signature ``velocity_fn(x, time, cond) -> v``.

Shapes: ``cfm_path``/``cfm_loss``/``ot_pairing`` take batches ``(B, ...)``; the model and the velocity callables
act on one sample with a scalar time (``vmap`` at the call site to sample many).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
from jaxtyping import Array, Float, Int

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import run
from jaxlab.core.train import trainer
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive
from jaxlab.generative.ode import check_velocity, diffrax_ode_sample, grid_ode_algorithm, grid_ode_sample
from jaxlab.generative.semantic_flow.rectified_flow import (  # the convention wrappers live with the RF API
    cfm_to_rf_velocity,
    rf_optimizer,
    rf_to_cfm_velocity,
)

__all__ = [
    "CFMTrainInfo",
    "VelocityMLP",
    "cfm_fit",
    "cfm_loss",
    "cfm_path",
    "cfm_to_rf_velocity",
    "gaussian_min_loss",
    "gaussian_optimal_velocity",
    "ode_algorithm",
    "ode_sample",
    "ot_pairing",
    "path_length_ratio",
    "rf_to_cfm_velocity",
    "sinkhorn_log",
    "train_scan",
]

VelocityFn = Callable[[Array, Array, Any], Array]
_KINDS = ("icfm", "lipman_ot")
_COUPLINGS = ("independent", "ot_exact", "ot_sinkhorn")
_PAIR_METHODS = ("exact_1d", "sinkhorn", "exact_scipy")
_ODE_METHODS = ("euler", "midpoint", "diffrax")
# Cost added between samples of different conditions: keeps OT pairs inside equal-condition groups.
_COND_PENALTY = 1e6


def _pair(x0: Any, x1: Any) -> tuple[Array, Array]:
    x0 = as_array(x0, "x0")
    x1 = as_array(x1, "x1")
    if x0.shape != x1.shape:
        raise ValueError(f"x0 and x1 must have the same shape, got x0 {x0.shape} and x1 {x1.shape}")
    if x0.ndim < 1:
        raise ValueError(f"x0 must have a batch axis, got shape {x0.shape}")
    return x0, x1


def cfm_path(x0: Float[Array, "B ..."], x1: Float[Array, "B ..."], t: Float[Array, "*B"], *, sigma: float = 0.0,
             noise: Float[Array, "B ..."] | None = None, kind: str = "icfm") -> tuple[Array, Array]:
    """Point ``x_t`` on the conditional probability path and its target velocity ``u_t`` (module docstring).

    ``kind="icfm"`` (Tong et al.): ``x_t = t x_1 + (1 - t) x_0 + sigma xi``, ``u_t = x_1 - x_0``.
    ``kind="lipman_ot"`` (Lipman et al.): ``x_t = (1 - (1 - sigma_min) t) x_0 + t x_1``,
    ``u_t = x_1 - (1 - sigma_min) x_0``.

    Papers: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
    arXiv:2210.02747; A. Tong, N. Malkin, G. Huguet, Y. Zhang, J. Rector-Brooks, K. Fatras, G. Wolf, Y. Bengio,
    "Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal Transport", arXiv:2302.00482.

    Args:
      x0: ``(B, ...)`` float array, the source (noise) samples ``x_0``.
      x1: ``(B, ...)`` float array of ``x0``'s shape, the target (data) samples ``x_1``.
      t: float scalar or ``(B,)`` float array of times in [0, 1].
      sigma: float >= 0, ``sigma_c`` of the I-CFM path (needs ``noise`` when > 0) or ``sigma_min`` of the Lipman
        path.
      noise: ``(B, ...)`` float array ``xi`` of ``x0``'s shape (I-CFM only).
      kind: ``"icfm"`` or ``"lipman_ot"``.

    Returns:
      ``(x_t, u_t)``, two float arrays of ``x0``'s shape.

    Raises:
      TypeError: a non-float ``x0``, ``x1``, ``t`` or ``noise``.
      ValueError: ``x0`` and ``x1`` of different shapes or without a batch axis; ``t`` not a scalar or ``(B,)``,
        or outside [0, 1]; ``sigma < 0``; an unknown ``kind``; ``noise`` of the wrong shape; ``sigma`` not the
        number 0 on the I-CFM path without ``noise``.
    """
    x0, x1 = _pair(x0, x1)
    t = as_array(t, "t", ndim=(0, 1))
    if t.ndim == 1 and t.shape[0] != x0.shape[0]:
        raise ValueError(f"t must be a scalar or have shape ({x0.shape[0]},), got shape {t.shape}")
    t = check_in_range(t, "t", 0.0, 1.0)
    sigma = check_positive(sigma, "sigma", strict=False)
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    tb = t.reshape(t.shape + (1,) * (x0.ndim - t.ndim)).astype(x0.dtype)
    if kind == "lipman_ot":
        return (1 - (1 - sigma) * tb) * x0 + tb * x1, x1 - (1 - sigma) * x0
    xt = tb * x1 + (1 - tb) * x0
    if noise is not None:
        noise = as_array(noise, "noise", shape=x0.shape)
        xt = xt + sigma * noise
    elif not (isinstance(sigma, (int, float)) and sigma == 0):
        raise ValueError("noise must be given when sigma > 0 on the icfm path")
    return xt, x1 - x0


def sinkhorn_log(cost: Float[Array, "n m"], epsilon: float, n_iters: int) -> tuple[Array, Array, Array]:
    """Entropic OT plan between the uniform marginals ``a = 1/n``, ``b = 1/m`` by log-domain Sinkhorn (module
    docstring).

    ``n_iters`` times: ``f <- eps log a - eps logsumexp((g - C) / eps, axis=1)``, then
    ``g <- eps log b - eps logsumexp((f - C) / eps, axis=0)``; ``P = exp((f + g - C) / eps)``. Runs under
    ``lax.fori_loop``. ``epsilon`` is absolute; :func:`ot_pairing` and :func:`cfm_loss` pass
    ``epsilon mean(cost)`` (a relative ``epsilon``).

    Args:
      cost: ``(n, m)`` float cost matrix ``C``.
      epsilon: positive float, the entropic regularisation ``eps``.
      n_iters: int >= 1, the number of (f, g) updates.

    Returns:
      ``(plan, f, g)``: the ``(n, m)`` plan ``P`` and the ``(n,)``, ``(m,)`` dual potentials.

    Raises:
      TypeError: a non-float ``cost``, or ``n_iters`` not an int.
      ValueError: ``cost`` not 2-d, ``epsilon <= 0`` or ``n_iters < 1``.
    """
    cost = as_array(cost, "cost", ndim=2)
    epsilon = check_positive(epsilon, "epsilon")
    n_iters = check_int(n_iters, "n_iters", min_value=1)
    n, m = cost.shape
    log_a, log_b = -jnp.log(n), -jnp.log(m)

    def body(_, fg):
        f, g = fg
        f = epsilon * log_a - epsilon * jax.nn.logsumexp((g[None, :] - cost) / epsilon, axis=1)
        g = epsilon * log_b - epsilon * jax.nn.logsumexp((f[:, None] - cost) / epsilon, axis=0)
        return f, g

    f, g = jax.lax.fori_loop(0, n_iters, body, (jnp.zeros(n, cost.dtype), jnp.zeros(m, cost.dtype)))
    return jnp.exp((f[:, None] + g[None, :] - cost) / epsilon), f, g


def _sq_cost(x0: Array, x1: Array) -> Array:
    a, b = x0.reshape(x0.shape[0], -1), x1.reshape(x1.shape[0], -1)
    return jnp.sum(a**2, 1)[:, None] + jnp.sum(b**2, 1)[None, :] - 2 * a @ b.T


def _scipy_assignment(cost: Array) -> Array:
    def host(c):
        _, cols = scipy.optimize.linear_sum_assignment(np.asarray(c))
        return cols.astype(np.int32)

    return jax.pure_callback(host, jax.ShapeDtypeStruct(cost.shape[:1], jnp.int32), cost)


def _perm_from_cost(key: Any, cost: Array, method: str, epsilon: float, n_iters: int) -> Array:
    if method == "exact_scipy":
        return _scipy_assignment(cost)
    plan, _, _ = sinkhorn_log(cost, epsilon * jnp.mean(cost), n_iters)
    # One partner per row drawn from P[i, :] / a_i: keeps the x0 marginal exact.
    return jax.random.categorical(key, jnp.log(plan + 1e-30), axis=1).astype(jnp.int32)


def ot_pairing(key: Any, x0: Float[Array, "B ..."], x1: Float[Array, "B ..."], *, method: str = "exact_1d",
               epsilon: float | None = None, n_iters: int = 200) -> Int[Array, " B"]:
    """Minibatch OT pairing: ``x1[perm]`` is the partner of ``x0``, row by row.

    Paper: A. Tong, N. Malkin, G. Huguet, Y. Zhang, J. Rector-Brooks, K. Fatras, G. Wolf, Y. Bengio, "Improving and
    Generalizing Flow-Based Generative Models with Minibatch Optimal Transport", arXiv:2302.00482.

    Methods: ``"exact_1d"`` (sorted matching, one feature per sample; optimal for the squared cost),
    ``"exact_scipy"`` (Hungarian algorithm by ``scipy.optimize.linear_sum_assignment`` through
    ``jax.pure_callback``: jit-able, not differentiable, a host round trip) and ``"sinkhorn"`` (one partner per row
    sampled from the row of the entropic plan of :func:`sinkhorn_log` with ``eps = epsilon mean(C)``; ``perm`` may
    repeat indices). The cost is ``C_ij = |x0_i - x1_j|^2`` over the flattened samples.

    Args:
      key: PRNG key, used by ``"sinkhorn"`` only (may be None otherwise).
      x0: ``(B, ...)`` float array of source samples.
      x1: ``(B, ...)`` float array of target samples, ``x0``'s shape.
      method: ``"exact_1d"``, ``"exact_scipy"`` or ``"sinkhorn"``.
      epsilon: positive float, the Sinkhorn regularisation relative to ``mean(C)`` (None: 0.05).
      n_iters: int >= 1, the Sinkhorn iterations.

    Returns:
      ``(B,)`` int32 array ``perm``.

    Raises:
      TypeError: a non-float ``x0``/``x1``, or ``n_iters`` not an int.
      ValueError: ``x0`` and ``x1`` of different shapes or without a batch axis; an unknown ``method``;
        ``n_iters < 1``; ``epsilon <= 0``; ``"exact_1d"`` with more than one feature per sample.
    """
    x0, x1 = _pair(x0, x1)
    if method not in _PAIR_METHODS:
        raise ValueError(f"method must be one of {_PAIR_METHODS}, got {method!r}")
    n_iters = check_int(n_iters, "n_iters", min_value=1)
    if epsilon is None:
        epsilon = 0.05
    epsilon = check_positive(epsilon, "epsilon")
    if method == "exact_1d":
        if x0[0].size != 1:
            raise ValueError(f"method='exact_1d' needs one feature per sample, got x0 of shape {x0.shape}")
        a, b = x0.reshape(-1), x1.reshape(-1)
        return jnp.zeros(a.shape[0], jnp.int32).at[jnp.argsort(a)].set(jnp.argsort(b).astype(jnp.int32))
    return _perm_from_cost(key, _sq_cost(x0, x1), method, epsilon, n_iters)


def _apply(model: VelocityFn, x: Array, t: Array, cond: Any) -> Array:
    if cond is None:
        return jax.vmap(lambda xi, ti: model(xi, ti, None))(x, t)
    return jax.vmap(model)(x, t, cond)


def cfm_loss(model: VelocityFn, key: Any, x0: Float[Array, "B ..."], x1: Float[Array, "B ..."], cond: Any = None,
             *, sigma: float = 0.0, coupling: str = "independent", epsilon: float = 0.05,
             n_iters: int = 200) -> Array:
    """Monte-Carlo conditional flow-matching loss on one minibatch.

    Papers: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
    arXiv:2210.02747; A. Tong, N. Malkin, G. Huguet, Y. Zhang, J. Rector-Brooks, K. Fatras, G. Wolf, Y. Bengio,
    "Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal Transport", arXiv:2302.00482.

    ``L = mean |model(x_t, t, c) - u_t|^2`` over all elements, on the I-CFM path (:func:`cfm_path`) with one
    ``t ~ U[0, 1]`` per sample and, for ``sigma > 0``, ``xi ~ N(0, I)``. Couplings: ``"independent"`` (pairs as
    given), ``"ot_exact"`` (sorted matching for one feature without a condition, the Hungarian algorithm otherwise)
    or ``"ot_sinkhorn"`` (a partner drawn from the entropic plan, ``epsilon`` relative to the mean cost). With a
    condition the OT cost adds ``1e6`` between samples of different conditions, so pairs stay within
    equal-condition groups; ``cond`` belongs to ``x1`` and is permuted with it.

    Args:
      model: the velocity ``model(x, t, cond)`` on one sample (vmapped here), returning ``x``'s shape.
      key: PRNG key (times, noise, Sinkhorn draws).
      x0: ``(B, ...)`` float array of noise samples.
      x1: ``(B, ...)`` float array of data samples, ``x0``'s shape.
      cond: optional pytree of conditions with leading axis ``B`` (None: ``model`` gets ``cond=None``).
      sigma: float >= 0, ``sigma_c`` of the I-CFM path.
      coupling: ``"independent"``, ``"ot_exact"`` or ``"ot_sinkhorn"``.
      epsilon: positive float, the relative Sinkhorn regularisation.
      n_iters: int >= 1, the Sinkhorn iterations.

    Returns:
      Float scalar, the loss.

    Raises:
      TypeError: a non-float ``x0`` or ``x1``.
      ValueError: ``x0`` and ``x1`` of different shapes or without a batch axis, an unknown ``coupling``, or
        ``sigma < 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.generative.flow_agent import cfm_loss, gaussian_min_loss, gaussian_optimal_velocity
      >>> k0, k1, k2 = jax.random.split(jax.random.key(0), 3)
      >>> x0 = jax.random.normal(k0, (4096, 1))
      >>> x1 = 3.0 + jax.random.normal(k1, (4096, 1))  # N(3, 1)
      >>> u_star = lambda x, t, c: gaussian_optimal_velocity(x, t, 3.0, 1.0)
      >>> loss = cfm_loss(u_star, k2, x0, x1)  # the exact velocity reaches the floor pi / 2
      >>> abs(float(loss) / gaussian_min_loss(1.0) - 1) < 0.1
      True
    """
    x0, x1 = _pair(x0, x1)
    if coupling not in _COUPLINGS:
        raise ValueError(f"coupling must be one of {_COUPLINGS}, got {coupling!r}")
    sigma = check_positive(sigma, "sigma", strict=False)
    kt, kn, kp = jax.random.split(key, 3)
    B = x0.shape[0]
    if coupling != "independent":
        if cond is None and x0[0].size == 1 and coupling == "ot_exact":
            perm = ot_pairing(kp, x0, x1, method="exact_1d")
        else:
            cost = _sq_cost(x0, x1)
            if cond is not None:
                cf = jnp.reshape(cond, (B, -1))
                cost = cost + _COND_PENALTY * (_sq_cost(cf, cf) > 1e-12)
            method = "exact_scipy" if coupling == "ot_exact" else "sinkhorn"
            perm = _perm_from_cost(kp, jax.lax.stop_gradient(cost), method, epsilon, n_iters)
        x1 = x1[perm]
        cond = None if cond is None else jax.tree_util.tree_map(lambda c: c[perm], cond)
    t = jax.random.uniform(kt, (B,), x0.dtype)
    noise = jax.random.normal(kn, x0.shape, x0.dtype) if sigma > 0 else None
    xt, ut = cfm_path(x0, x1, t, sigma=sigma, noise=noise)
    return jnp.mean((_apply(model, xt, t, cond) - ut) ** 2)


def gaussian_optimal_velocity(x: Array, t: Array, m: float | Array, s: float | Array) -> Array:
    """Marginal I-CFM velocity from ``N(0, 1)`` to ``N(m, s^2)`` per coordinate (derived in closed form, module
    docstring): ``u*(x, t) = m + a(t) (x - t m)``, ``a(t) = (t s^2 - (1 - t)) / ((1 - t)^2 + t^2 s^2)``.

    Args:
      x: float array of points (any shape).
      t: float scalar or array broadcastable with ``x``, times in [0, 1] (not checked).
      m: float or array, the target mean.
      s: positive float, the target standard deviation.

    Returns:
      Float array of ``x``'s (broadcast) shape.

    Raises:
      TypeError: a non-float ``x``.
      ValueError: ``s <= 0``.
    """
    x = as_array(x, "x")
    s = check_positive(s, "s")
    a = (t * s**2 - (1 - t)) / ((1 - t) ** 2 + t**2 * s**2)
    return m + a * (x - t * m)


def gaussian_min_loss(s: float) -> float:
    """Minimal I-CFM loss per dimension from ``N(0, 1)`` to ``N(m, s^2)``:
    ``int_0^1 s^2 / ((1 - t)^2 + t^2 s^2) dt = s pi / 2`` for any ``m`` (derived here; checked by the claims).

    Args:
      s: positive float, the target standard deviation.

    Returns:
      ``s pi / 2`` as a Python float.

    Raises:
      ValueError: ``s <= 0``.
    """
    check_positive(s, "s")
    return float(s) * np.pi / 2


def ode_algorithm(velocity_fn: VelocityFn, cond: Any = None, *, num_steps: int = 100,
                  method: str = "euler") -> Algorithm:
    """The fixed-step CFM sampler (t from 0 to 1) as an :class:`~jaxlab.core.Algorithm`.

    ``init(x0) -> EulerState``; ``step(key, state) -> (EulerState, EulerInfo)`` takes one Euler step
    ``x <- x + h u(x, t_i, c)`` or midpoint step ``x <- x + h u(x + (h/2) u(x, t_i, c), t_i + h/2, c)`` of size
    ``h = 1 / num_steps`` (``key`` is ignored). Run it ``num_steps`` steps (:func:`ode_sample` does).

    Paper: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
    arXiv:2210.02747.

    Args:
      velocity_fn: ``u(x, t, cond)`` on one sample, returning ``x``'s shape.
      cond: the condition passed to ``velocity_fn``.
      num_steps: int >= 1, the number of uniform steps.
      method: ``"euler"`` or ``"midpoint"``.

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``num_steps`` is not an int.
      ValueError: ``num_steps < 1`` or an unknown ``method``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.generative.flow_agent import ode_algorithm
      >>> algo = ode_algorithm(lambda x, t, c: 2.0 - x, num_steps=4)  # relaxes towards 2
      >>> state, trace = run(algo.step, algo.init(jnp.zeros(3)), jax.random.key(0), 4)
      >>> [round(float(v), 4) for v in state.x]  # 2 (1 - (3/4)^4)
      [1.3672, 1.3672, 1.3672]
    """
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    if method not in ("euler", "midpoint"):
        raise ValueError(f"method must be 'euler' or 'midpoint' (or 'diffrax' in ode_sample), got {method!r}")

    def init(x0):
        x0 = as_array(x0, "x0")
        return grid_ode_algorithm(velocity_fn, _grid(num_steps, x0.dtype), cond, method=method).init(x0)

    def step(key, state):
        grid = _grid(num_steps, state.x.dtype)
        return grid_ode_algorithm(velocity_fn, grid, cond, method=method).step(key, state)

    return Algorithm(init, step)


def _grid(num_steps: int, dtype: Any) -> Array:
    return jnp.linspace(0.0, 1.0, num_steps + 1, dtype=dtype)


@renamed_kwargs(n_steps="num_steps")
def ode_sample(velocity_fn: VelocityFn, x0: Array, cond: Any = None, *, num_steps: int = 100,
               method: str = "euler", return_traj: bool = False, rtol: float = 1e-5,
               atol: float = 1e-5) -> Array | tuple[Array, Array]:
    """Integrate ``dx/dt = velocity_fn(x, t, cond)`` from ``t = 0`` to 1 starting at ``x0`` (CFM sampling).

    ``"euler"``/``"midpoint"``: ``num_steps`` uniform steps (:func:`ode_algorithm` driven by
    :func:`jaxlab.core.run`); ``"diffrax"``: adaptive Tsit5 with a PID controller (``rtol``, ``atol``, first step
    ``1 / num_steps``). The same integrator (:mod:`jaxlab.generative.ode`) serves the rectified-flow samplers.

    Paper: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
    arXiv:2210.02747.

    Args:
      velocity_fn: ``u(x, t, cond)`` on one sample, returning an array of ``x0``'s shape.
      x0: float array, the start point (noise), any shape, finite.
      cond: the condition passed to ``velocity_fn``.
      num_steps: int >= 1, the number of steps (``n_steps`` is its deprecated name).
      method: ``"euler"``, ``"midpoint"`` or ``"diffrax"``.
      return_traj: also return the states at ``t_i = i / num_steps``.
      rtol: positive float, diffrax's relative tolerance.
      atol: positive float, diffrax's absolute tolerance.

    Returns:
      ``x(1)`` (``x0``'s shape), or ``(x(1), trajectory)`` with the trajectory of shape
      ``(num_steps + 1, *x0.shape)``.

    Raises:
      TypeError: a non-float ``x0``, ``num_steps`` not an int, or a ``velocity_fn`` that is not callable.
      ValueError: ``x0`` not finite (eagerly, and at run time under ``jit``), ``velocity_fn`` returning another
        shape, ``num_steps < 1`` or an unknown ``method``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.generative.flow_agent import gaussian_optimal_velocity, ode_sample
      >>> u_star = lambda x, t, c: gaussian_optimal_velocity(x, t, 3.0, 0.5)  # N(0, 1) -> N(3, 0.25)
      >>> x1 = ode_sample(u_star, jnp.array([-1.0, 0.0, 1.0]), num_steps=200, method="midpoint")
      >>> [round(float(v), 2) for v in x1]  # the exact flow maps z -> 3 + 0.5 z
      [2.5, 3.0, 3.5]
    """
    x0 = as_array(x0, "x0", finite=True)
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    if method not in _ODE_METHODS:
        raise ValueError(f"method must be one of {_ODE_METHODS}, got {method!r}")
    ts = _grid(num_steps, x0.dtype)
    check_velocity(velocity_fn, x0, ts[0], cond)
    if method == "diffrax":
        return diffrax_ode_sample(velocity_fn, x0, cond, t0=0.0, t1=1.0, dt0=1.0 / num_steps, rtol=rtol, atol=atol,
                                  ts=ts if return_traj else None)
    return grid_ode_sample(velocity_fn, x0, ts, cond, method=method, return_traj=return_traj)


def path_length_ratio(traj: Float[Array, "N ..."]) -> Array:
    """Straightness of one sampled path: ``sum_i |x_{i+1} - x_i| / |x_N - x_0|`` (1 for a straight path).

    Args:
      traj: ``(N + 1, ...)`` float array, the states of one path (e.g. from ``ode_sample(..., return_traj=True)``).

    Returns:
      Float scalar >= 1 (``inf`` or NaN when the path ends where it started).

    Raises:
      TypeError: a non-float ``traj``.
    """
    traj = as_array(traj, "traj")
    flat = traj.reshape(traj.shape[0], -1)
    return jnp.sum(jnp.linalg.norm(jnp.diff(flat, axis=0), axis=1)) / jnp.linalg.norm(flat[-1] - flat[0])


class VelocityMLP(eqx.Module):
    """``v_theta(x, t, c)``: an MLP with SiLU on ``[x (flattened), t, c (flattened)]``, output of ``x``'s shape.

    Args:
      shape: the shape of one sample ``x``.
      cond_dim: int, the flattened size of the condition (0: none).
      width: int, the hidden width.
      depth: int, the number of hidden layers.
      key: PRNG key (initialisation).

    Attributes:
      mlp: the ``eqx.nn.MLP`` from ``prod(shape) + 1 + cond_dim`` to ``prod(shape)`` features.
      shape: the sample shape (static).
    """

    mlp: eqx.nn.MLP
    shape: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, shape: tuple[int, ...], cond_dim: int = 0, width: int = 64, depth: int = 2, *, key: Any):
        self.shape = tuple(shape)
        n = int(np.prod(self.shape))
        self.mlp = eqx.nn.MLP(n + 1 + cond_dim, n, width, depth, activation=jax.nn.silu, key=key)

    def __call__(self, x: Array, t: Array, cond: Array | None = None) -> Array:
        """Evaluate the velocity at one sample.

        Args:
          x: float array of shape ``shape``.
          t: float scalar, the time.
          cond: optional float array of ``cond_dim`` elements.

        Returns:
          Float array of shape ``shape``.
        """
        parts = [x.reshape(-1), jnp.reshape(t, (1,)).astype(x.dtype)]
        if cond is not None:
            parts.append(jnp.reshape(cond, (-1,)).astype(x.dtype))
        return self.mlp(jnp.concatenate(parts)).reshape(self.shape)


class CFMTrainInfo(NamedTuple):
    """Per-step diagnostics of :func:`cfm_fit`.

    Attributes:
      loss: the CFM loss at each step, shape ``(num_steps,)``.
    """

    loss: Array


@renamed_kwargs(steps="num_steps", lr="learning_rate")
def cfm_fit(key: Any, model: eqx.Module, sample_fn: Callable[[Any], tuple[Array, Array, Any]], *, num_steps: int,
            coupling: str = "independent", learning_rate: float | Callable = 1e-3, clip: float = 1.0,
            weight_decay: float = 1e-4, sigma: float = 0.0) -> tuple[eqx.Module, CFMTrainInfo]:
    """Train ``model`` on :func:`cfm_loss` with ``optax.chain(clip_by_global_norm(clip), adamw(learning_rate))``.

    One ``lax.scan`` over ``num_steps`` steps (:func:`train_scan`); ``sample_fn(key) -> (x0, x1, cond)`` draws a
    fresh minibatch each step (``cond`` may be None).

    Papers: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
    arXiv:2210.02747; A. Tong, N. Malkin, G. Huguet, Y. Zhang, J. Rector-Brooks, K. Fatras, G. Wolf, Y. Bengio,
    "Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal Transport", arXiv:2302.00482.

    Args:
      key: PRNG key.
      model: the velocity network ``model(x, t, cond)`` (an equinox module; its float arrays are trained).
      sample_fn: ``sample_fn(key) -> (x0 (B, ...), x1 (B, ...), cond)``, the minibatch sampler.
      num_steps: int >= 1, the number of optimiser steps (``steps`` is its deprecated name).
      coupling: ``"independent"``, ``"ot_exact"`` or ``"ot_sinkhorn"``.
      learning_rate: a positive float or an optax schedule ``step -> rate`` (``lr`` is its deprecated name).
      clip: float, the global-norm clipping threshold.
      weight_decay: float, AdamW's decoupled weight decay.
      sigma: float >= 0, ``sigma_c`` of the I-CFM path.

    Returns:
      ``(model, info)``: the trained model and :class:`CFMTrainInfo` with the ``(num_steps,)`` losses.

    Raises:
      TypeError: ``num_steps`` is not an int.
      ValueError: an unknown ``coupling``, ``num_steps < 1`` or a non-positive constant ``learning_rate``; the
        checks of :func:`cfm_loss` on the sampled batches.

    Example:
      >>> import jax
      >>> from jaxlab.generative.flow_agent import VelocityMLP, cfm_fit, ode_sample
      >>> def sample(k):  # N(0, 1) -> N(3, 1)
      ...     ka, kb = jax.random.split(k)
      ...     return jax.random.normal(ka, (64, 1)), 3 + jax.random.normal(kb, (64, 1)), None
      >>> model = VelocityMLP((1,), width=16, key=jax.random.key(0))
      >>> model, info = cfm_fit(jax.random.key(1), model, sample, num_steps=50, learning_rate=1e-2)
      >>> info.loss.shape, ode_sample(model, jax.numpy.zeros(1), num_steps=8).shape
      ((50,), (1,))
    """
    if coupling not in _COUPLINGS:
        raise ValueError(f"coupling must be one of {_COUPLINGS}, got {coupling!r}")

    def loss_fn(m, k):
        k1, k2 = jax.random.split(k)
        x0, x1, cond = sample_fn(k1)
        return cfm_loss(m, k2, x0, x1, cond, sigma=sigma, coupling=coupling)

    model, losses = train_scan(key, model, loss_fn, num_steps=num_steps, learning_rate=learning_rate, clip=clip,
                               weight_decay=weight_decay)
    return model, CFMTrainInfo(losses)


@renamed_kwargs(steps="num_steps", lr="learning_rate")
def train_scan(key: Any, model: eqx.Module, loss_fn: Callable[[eqx.Module, Any], Array], *, num_steps: int,
               learning_rate: float | Callable = 1e-3, clip: float = 1.0,
               weight_decay: float = 1e-4) -> tuple[eqx.Module, Array]:
    """Minimise ``loss_fn(model, key)`` with the package optimiser for ``num_steps`` steps.

    The optimiser is :func:`~jaxlab.generative.semantic_flow.rf_optimizer` (global-norm clipping, then AdamW);
    the loop is :func:`jaxlab.core.train.trainer` driven by :func:`jaxlab.core.run` under one ``jit``, with a fresh
    key per step.

    Args:
      key: PRNG key, split into one key per step.
      model: an equinox module; its inexact (float) arrays are trained.
      loss_fn: ``loss_fn(model, key) -> scalar``.
      num_steps: int >= 1, the number of steps (``steps`` is its deprecated name).
      learning_rate: a positive float or an optax schedule (``lr`` is its deprecated name).
      clip: float, the global-norm clipping threshold.
      weight_decay: float, AdamW's decoupled weight decay.

    Returns:
      ``(model, losses)``: the trained model and the ``(num_steps,)`` float losses.

    Raises:
      TypeError: ``num_steps`` is not an int.
      ValueError: ``num_steps < 1`` or a non-positive constant ``learning_rate``.
    """
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    if not callable(learning_rate):
        check_positive(learning_rate, "learning_rate")
    opt = rf_optimizer(learning_rate, clip, weight_decay)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    algo = trainer(lambda p, k, _: loss_fn(eqx.combine(p, static), k), opt)
    state, trace = jax.jit(lambda s, k: run(algo.step, s, k, num_steps))(algo.init(params), key)
    return eqx.combine(state.params, static), trace.infos.loss


def _ode_example(key):
    """Tiny instance: Euler on ``u(x, t) = 2 - x`` with 8 steps."""
    algo = ode_algorithm(lambda x, t, cond: 2.0 - x, num_steps=8)
    return algo, algo.init(jax.random.normal(key, (5, 2))), None


register_algorithm("cfm_ode", ode_algorithm, _ode_example, area="flow_agent")
