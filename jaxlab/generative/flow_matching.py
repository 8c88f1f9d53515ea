r"""Conditional flow matching (spec ``generative.md`` F2): probability paths, the CFM loss with independent and
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

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
from jaxtyping import Array, Float, Int

from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_in_range, check_int, check_positive
from jaxlab.generative.rectified_flow import (  # the convention wrappers live with the RF API (spec F1)
    RFTrainState,
    cfm_to_rf_velocity,
    rf_optimizer,
    rf_to_cfm_velocity,
    rf_train_step,
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
    """Point ``x_t`` on the conditional path and its target velocity ``u_t`` (module docstring).

    Args:
      x0, x1: noise and data, same shape ``(B, ...)``.
      t: times in [0, 1], a scalar or one per row (shape ``(B,)``).
      sigma: ``sigma_c >= 0`` of the I-CFM path (``kind="icfm"``, needs ``noise`` when > 0) or ``sigma_min``
        of the Lipman path (``kind="lipman_ot"``).
      noise: ``xi`` of the I-CFM path, shape of ``x0``.
      kind: ``"icfm"`` or ``"lipman_ot"``.
    """
    x0, x1 = _pair(x0, x1)
    t = as_array(t, "t", ndim=(0, 1))
    if t.ndim == 1 and t.shape[0] != x0.shape[0]:
        raise ValueError(f"t must be a scalar or have shape ({x0.shape[0]},), got shape {t.shape}")
    check_in_range(t, "t", 0.0, 1.0)
    check_positive(sigma, "sigma", strict=False)
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
    """Entropic OT plan between uniform marginals ``a = 1/n``, ``b = 1/m`` by log-domain Sinkhorn
    (module docstring); ``epsilon`` is absolute (multiply by ``mean(cost)`` for the spec's relative form).

    Returns ``(plan (n, m), f (n,), g (m,))``; ``n_iters`` (g, f) updates under ``lax.fori_loop``."""
    cost = as_array(cost, "cost", ndim=2)
    check_positive(epsilon, "epsilon")
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
    """Minibatch OT pairing: ``x1[perm]`` is the partner of ``x0`` (row by row).

    Methods: ``"exact_1d"`` (sorted matching, feature size 1), ``"exact_scipy"`` (Hungarian algorithm by
    ``scipy.optimize.linear_sum_assignment`` through ``jax.pure_callback``; jit-able, not differentiable,
    host round trip), ``"sinkhorn"`` (one partner per row sampled from the entropic plan, ``epsilon`` relative
    to the mean squared-distance cost, default 0.05; ``perm`` may repeat indices)."""
    x0, x1 = _pair(x0, x1)
    if method not in _PAIR_METHODS:
        raise ValueError(f"method must be one of {_PAIR_METHODS}, got {method!r}")
    n_iters = check_int(n_iters, "n_iters", min_value=1)
    if epsilon is None:
        epsilon = 0.05
    check_positive(epsilon, "epsilon")
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
    """Monte-Carlo CFM loss on one minibatch: ``mean |model(x_t, t, c) - u_t|^2`` (I-CFM path, ``t ~ U[0,1]``).

    ``model(x, t, cond)`` acts on one sample (vmapped here). ``cond`` (optional, leading axis B) belongs to
    ``x1`` and is permuted with it. Couplings: ``"independent"``, ``"ot_exact"`` (sorted matching for one
    feature, Hungarian otherwise), ``"ot_sinkhorn"`` (``epsilon`` relative to the mean cost)."""
    x0, x1 = _pair(x0, x1)
    if coupling not in _COUPLINGS:
        raise ValueError(f"coupling must be one of {_COUPLINGS}, got {coupling!r}")
    check_positive(sigma, "sigma", strict=False)
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
    """Marginal velocity ``u*(x, t) = m + a(t)(x - t m)`` of I-CFM from ``N(0, 1)`` to ``N(m, s^2)``
    (per coordinate), ``a(t) = (t s^2 - (1 - t)) / ((1 - t)^2 + t^2 s^2)``."""
    x = as_array(x, "x")
    check_positive(s, "s")
    a = (t * s**2 - (1 - t)) / ((1 - t) ** 2 + t**2 * s**2)
    return m + a * (x - t * m)


def gaussian_min_loss(s: float) -> float:
    """Minimal I-CFM loss per dimension from ``N(0, 1)`` to ``N(m, s^2)``: ``s pi / 2`` (any ``m``)."""
    check_positive(s, "s")
    return float(s) * np.pi / 2


def ode_sample(velocity_fn: VelocityFn, x0: Array, cond: Any = None, *, n_steps: int = 100,
               method: str = "euler", return_traj: bool = False, rtol: float = 1e-5,
               atol: float = 1e-5) -> Array | tuple[Array, Array]:
    """Integrate ``dx/dt = velocity_fn(x, t, cond)`` from t = 0 to 1 starting at ``x0``.

    ``"euler"``/``"midpoint"``: ``n_steps`` uniform steps under ``lax.scan``; ``"diffrax"``: adaptive Tsit5
    (``rtol``/``atol``, first step ``1/n_steps``). ``return_traj`` also returns the states at
    ``t_i = i/n_steps`` (shape ``(n_steps + 1, *x0.shape)``)."""
    x0 = as_array(x0, "x0")
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    if method not in _ODE_METHODS:
        raise ValueError(f"method must be one of {_ODE_METHODS}, got {method!r}")
    ts = jnp.linspace(0.0, 1.0, n_steps + 1, dtype=x0.dtype)
    if method == "diffrax":
        save = diffrax.SaveAt(ts=ts) if return_traj else diffrax.SaveAt(t1=True)
        sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, c: velocity_fn(y, t, c)), diffrax.Tsit5(), 0.0, 1.0,
                                  1.0 / n_steps, x0, args=cond, saveat=save,
                                  stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol))
        return (sol.ys[-1], sol.ys) if return_traj else sol.ys[-1]

    def step(x, t01):
        t, t_next = t01
        h = t_next - t
        if method == "euler":
            x = x + h * velocity_fn(x, t, cond)
        else:
            x = x + h * velocity_fn(x + 0.5 * h * velocity_fn(x, t, cond), t + 0.5 * h, cond)
        return x, x

    x1, traj = jax.lax.scan(step, x0, (ts[:-1], ts[1:]))
    return (x1, jnp.concatenate([x0[None], traj])) if return_traj else x1


def path_length_ratio(traj: Float[Array, "N ..."]) -> Array:
    """Straightness of one sampled path: ``sum_i |x_{i+1} - x_i| / |x_N - x_0|`` (1 for a straight path)."""
    traj = as_array(traj, "traj")
    flat = traj.reshape(traj.shape[0], -1)
    return jnp.sum(jnp.linalg.norm(jnp.diff(flat, axis=0), axis=1)) / jnp.linalg.norm(flat[-1] - flat[0])


class VelocityMLP(eqx.Module):
    """``v_theta(x, t, c)``: an MLP on ``[x (flattened), t, c]`` with SiLU, output of ``x``'s shape."""

    mlp: eqx.nn.MLP
    shape: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, shape: tuple[int, ...], cond_dim: int = 0, width: int = 64, depth: int = 2, *, key: Any):
        self.shape = tuple(shape)
        n = int(np.prod(self.shape))
        self.mlp = eqx.nn.MLP(n + 1 + cond_dim, n, width, depth, activation=jax.nn.silu, key=key)

    def __call__(self, x: Array, t: Array, cond: Array | None = None) -> Array:
        parts = [x.reshape(-1), jnp.reshape(t, (1,)).astype(x.dtype)]
        if cond is not None:
            parts.append(jnp.reshape(cond, (-1,)).astype(x.dtype))
        return self.mlp(jnp.concatenate(parts)).reshape(self.shape)


class CFMTrainInfo(NamedTuple):
    """Per-step diagnostics of :func:`cfm_fit`."""

    loss: Array


def cfm_fit(key: Any, model: eqx.Module, sample_fn: Callable[[Any], tuple[Array, Array, Any]], *, steps: int,
            coupling: str = "independent", lr: float | Callable = 1e-3, clip: float = 1.0,
            weight_decay: float = 1e-4, sigma: float = 0.0) -> tuple[eqx.Module, CFMTrainInfo]:
    """Train ``model`` on :func:`cfm_loss` with ``optax.chain(clip_by_global_norm(clip), adamw(lr))``, one
    ``lax.scan`` over ``steps``; ``sample_fn(key) -> (x0, x1, cond)`` draws a minibatch (``cond`` may be None).
    ``lr`` is a constant or an optax schedule (step -> rate)."""
    if coupling not in _COUPLINGS:
        raise ValueError(f"coupling must be one of {_COUPLINGS}, got {coupling!r}")

    def loss_fn(m, k):
        k1, k2 = jax.random.split(k)
        x0, x1, cond = sample_fn(k1)
        return cfm_loss(m, k2, x0, x1, cond, sigma=sigma, coupling=coupling)

    model, losses = train_scan(key, model, loss_fn, steps=steps, lr=lr, clip=clip, weight_decay=weight_decay)
    return model, CFMTrainInfo(losses)


def train_scan(key: Any, model: eqx.Module, loss_fn: Callable[[eqx.Module, Any], Array], *, steps: int,
               lr: float | Callable = 1e-3, clip: float = 1.0,
               weight_decay: float = 1e-4) -> tuple[eqx.Module, Array]:
    """Minimise ``loss_fn(model, key)`` with the package optimiser (``rectified_flow.rf_optimizer``: global-norm
    clipping then AdamW; ``lr`` a constant or an optax schedule) for ``steps`` steps, driven by
    :func:`jaxlab.core.run` under one jit (a fresh key per step); returns the model and the per-step losses."""
    steps = check_int(steps, "steps", min_value=1)
    if not callable(lr):
        check_positive(lr, "lr")
    opt = rf_optimizer(lr, clip, weight_decay)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    step = rf_train_step(opt, static, lambda m, k, _: loss_fn(m, k))
    state, trace = jax.jit(lambda s, k: run(lambda kk, st: step(kk, st, None), s, k, steps))(
        RFTrainState(params, opt.init(params)), key)
    return eqx.combine(state.params, static), trace.infos
