"""Rectified-flow training and sampling, SD3/FLUX timestep schedules and MM-DiT.

Papers: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
Flow", arXiv:2209.03003 (ICLR 2023); P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution
Image Synthesis" (Stable Diffusion 3, MM-DiT), arXiv:2403.03206 (ICML 2024); FLUX.1 (Black Forest Labs, no paper;
schedules as in diffusers' ``FlowMatchEulerDiscreteScheduler``).

RF / diffusers convention: noise level ``sigma in [0, 1]``,

    x_sigma = (1 - sigma) x + sigma eps,   eps ~ N(0, I),   target v* = eps - x,
    L(theta) = E_{x, eps, sigma} w(sigma) ||v_theta(x_sigma, sigma, c) - (eps - x)||^2   (mean over elements),

with ``sigma`` uniform or logit-normal (SD3: ``sigma = sigmoid(u)``, ``u ~ N(m, s^2)``, ``m = 0, s = 1``).
Shifts: SD3 ``sigma' = s sigma / (1 + (s - 1) sigma)``; FLUX ``mu = a n_img + b`` with
``a = (1.15 - 0.5)/(4096 - 256)``, ``b = 0.5 - 256 a`` and ``sigma' = e^mu / (e^mu + (1/sigma - 1)^p)``.
Sampling grid ``sigma_i = shift(1 - i/N)``, ``i = 0..N`` (``sigma_N = 0``); Euler step
``x <- x + (sigma_{i+1} - sigma_i) v_theta(x, sigma_i, c)``; classifier-free guidance
``v = v_u + w (v_c - v_u)``. ``velocity_fn(x, sigma, cond) -> v`` is the universal callable; samplers act on one
sample (vmap them over ``x_init``/``cond``) and jit with the model closed over.

The MM-DiT pieces (joint attention, blocks, the tiny three-stream model) live in :mod:`.mmdit`
and are re-exported here. The CFM <-> RF velocity wrappers (``sigma = 1 - t``, ``v_RF = -u_CFM``) are in
:mod:`jaxlab.generative.flow_agent.flow_matching`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from jaxlab.core import random as fast_random
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.train import trainer
from jaxlab.core.validation import as_array, check_finite, check_in_range, check_int, check_positive
from jaxlab.generative.ode import (
    EulerInfo,
    EulerState,
    check_velocity,
    diffrax_ode_sample,
    grid_ode_algorithm,
    grid_ode_sample,
)
from jaxlab.generative.semantic_flow.mmdit import MMDiTBlock, TinyMMDiT, joint_attention, patchify, unpatchify

__all__ = [
    "EulerInfo",
    "EulerState",
    "MMDiTBlock",
    "TinyMMDiT",
    "cfg_velocity",
    "cfm_to_rf_velocity",
    "diffrax_sample",
    "euler_algorithm",
    "euler_init",
    "euler_sample",
    "euler_step",
    "flux_mu",
    "joint_attention",
    "make_sigmas",
    "patchify",
    "rf_interpolate",
    "rf_loss",
    "rf_optimizer",
    "rf_target",
    "rf_to_cfm_velocity",
    "rf_train_step",
    "sample_sigmas",
    "shift_sigmas",
    "time_shift_exponential",
    "unpatchify",
]


def _float(x: Any, name: str) -> jax.Array:
    """``as_array`` with a ``ValueError`` (not ``TypeError``) for non-floating input, the error this module's public
    functions raise for a bad input.
    """
    try:
        return as_array(x, name, kind="float")
    except TypeError as e:
        raise ValueError(str(e)) from e


def _sigma(sigma: Any, name: str = "sigma") -> jax.Array:
    sigma = _float(sigma, name)
    return check_in_range(sigma, name, 0.0, 1.0)


def _bcast(sigma: jax.Array, x: jax.Array) -> jax.Array:
    """Broadcast a scalar or per-sample ``(B,)`` sigma against ``x (B, ...)``."""
    if sigma.ndim > x.ndim or sigma.shape != x.shape[: sigma.ndim]:
        raise ValueError(f"sigma must be a scalar or match the leading dims of x {x.shape}, got {sigma.shape}")
    return sigma.reshape(sigma.shape + (1,) * (x.ndim - sigma.ndim))


def rf_interpolate(x, noise, sigma):
    """The rectified-flow interpolant ``x_sigma = (1 - sigma) x + sigma noise`` (the diffusers convention).

    Paper: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
    Flow", arXiv:2209.03003.

    Args:
      x: float array ``(B, ...)`` (or any shape with a scalar ``sigma``), the data.
      noise: float array of ``x``'s shape, the noise ``eps``.
      sigma: float scalar or array of the leading dimensions of ``x`` (e.g. ``(B,)``), noise levels in [0, 1].

    Returns:
      Float array of ``x``'s shape.

    Raises:
      ValueError: a non-float input, ``noise`` of another shape, ``sigma`` outside [0, 1] or of a shape that is not a
        prefix of ``x``'s.
    """
    x, noise, sigma = _float(x, "x"), _float(noise, "noise"), _sigma(sigma)
    if x.shape != noise.shape:
        raise ValueError(f"noise must have the shape of x {x.shape}, got {noise.shape}")
    return _interpolate(x, noise, sigma)


def _interpolate(x: jax.Array, noise: jax.Array, sigma: jax.Array) -> jax.Array:
    s = _bcast(sigma, x)
    return (1 - s) * x + s * noise


def rf_target(x, noise):
    """The rectified-flow velocity target ``v* = noise - x`` (``dx_sigma / dsigma``).

    Args:
      x: float array, the data.
      noise: float array of ``x``'s shape, the noise.

    Returns:
      Float array of ``x``'s shape.

    Raises:
      ValueError: a non-float input, or ``noise`` of another shape.
    """
    x, noise = _float(x, "x"), _float(noise, "noise")
    if x.shape != noise.shape:
        raise ValueError(f"noise must have the shape of x {x.shape}, got {noise.shape}")
    return noise - x


def sample_sigmas(key, shape, kind: str = "logit_normal", loc: float = 0.0, scale: float = 1.0):
    """Training noise levels: uniform on [0, 1], or logit-normal ``sigma = sigmoid(u)``, ``u ~ N(loc, scale^2)``.

    SD3 uses the logit-normal with ``loc = 0``, ``scale = 1``. Paper: P. Esser et al., "Scaling Rectified Flow
    Transformers for High-Resolution Image Synthesis", arXiv:2403.03206.

    Args:
      key: PRNG key.
      shape: int or tuple of ints, the output shape.
      kind: ``"uniform"`` or ``"logit_normal"``.
      loc: float, the logit-normal location ``m``.
      scale: positive float, the logit-normal scale ``s``.

    Returns:
      Float array (default float dtype) of shape ``shape``, values in [0, 1].

    Raises:
      ValueError: an unknown ``kind``, or ``scale <= 0`` (logit-normal).
    """
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    if kind == "uniform":
        return jax.random.uniform(key, shape)
    if kind == "logit_normal":
        scale = check_positive(scale, "scale")
        return jax.nn.sigmoid(loc + scale * jax.random.normal(key, shape))
    raise ValueError(f"kind must be 'uniform' or 'logit_normal', got {kind!r}")


def shift_sigmas(sigma, shift):
    """The SD3 resolution shift ``sigma' = s sigma / (1 + (s - 1) sigma)`` (``s = 3`` at 1024^2 pixels).

    Maps 0 to 0 and 1 to 1; ``s > 1`` spends more steps at high noise. Paper: P. Esser et al., "Scaling Rectified Flow
    Transformers for High-Resolution Image Synthesis", arXiv:2403.03206.

    Args:
      sigma: float scalar or array of noise levels in [0, 1].
      shift: positive float ``s``.

    Returns:
      Float array of ``sigma``'s shape.

    Raises:
      ValueError: a non-float ``sigma`` or one outside [0, 1], or ``shift <= 0``.
    """
    sigma = _sigma(sigma)
    shift = check_positive(shift, "shift")
    return shift * sigma / (1 + (shift - 1) * sigma)


def flux_mu(n_img_tokens, base_len: int = 256, max_len: int = 4096, base_shift: float = 0.5,
            max_shift: float = 1.15):
    """The FLUX dynamic shift ``mu = a n + b`` for ``n`` image tokens (after 2x2 packing), with
    ``a = (max_shift - base_shift) / (max_len - base_len)`` and ``b = base_shift - a base_len`` (diffusers'
    ``FlowMatchEulerDiscreteScheduler``; FLUX.1 has no paper).

    Args:
      n_img_tokens: positive number, the image token count ``n``.
      base_len: the token count at which ``mu = base_shift``.
      max_len: the token count at which ``mu = max_shift``.
      base_shift: float, ``mu`` at ``base_len``.
      max_shift: float, ``mu`` at ``max_len``.

    Returns:
      ``mu`` (a float, or a float array for an array ``n_img_tokens``).

    Raises:
      ValueError: ``n_img_tokens <= 0``, or ``max_len == base_len``.
    """
    n_img_tokens = check_positive(n_img_tokens, "n_img_tokens")
    if max_len == base_len:
        raise ValueError(f"max_len must differ from base_len, got {max_len}")
    a = (max_shift - base_shift) / (max_len - base_len)
    return a * n_img_tokens + (base_shift - a * base_len)


def time_shift_exponential(sigma, mu, power: float = 1.0):
    """The FLUX time shift ``sigma' = e^mu / (e^mu + (1 / sigma - 1)^p)`` (maps 0 to 0 and 1 to 1).

    Args:
      sigma: float scalar or array of noise levels in [0, 1].
      mu: float (or array), the shift, e.g. :func:`flux_mu`.
      power: positive float ``p``.

    Returns:
      Float array of ``sigma``'s shape.

    Raises:
      ValueError: a non-float ``sigma`` or one outside [0, 1], or ``power <= 0``.
    """
    sigma = _sigma(sigma)
    power = check_positive(power, "power")
    safe = jnp.where(sigma > 0, sigma, 1.0)
    out = jnp.exp(mu) / (jnp.exp(mu) + (1 / safe - 1) ** power)
    return jnp.where(sigma > 0, out, 0.0)


def make_sigmas(num_steps: int, shift: float = 1.0, mu: float | None = None, dtype=None):
    """The sampling grid ``sigma_i = shift(1 - i / N)``, ``i = 0..N``: the SD3 shift (:func:`shift_sigmas`), or the
    FLUX exponential shift (:func:`time_shift_exponential`) when ``mu`` is given.

    Paper: P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis",
    arXiv:2403.03206 (the shift); FLUX.1 has no paper (diffusers' ``FlowMatchEulerDiscreteScheduler``).

    Args:
      num_steps: int >= 1, the number of steps ``N``.
      shift: positive float, the SD3 shift ``s`` (1: the uniform grid).
      mu: optional float, the FLUX shift (overrides ``shift``).
      dtype: the float dtype (default: JAX's default float).

    Returns:
      ``(num_steps + 1,)`` float array decreasing from 1 to 0.

    Raises:
      TypeError: ``num_steps`` is not an int.
      ValueError: ``num_steps < 1`` or ``shift <= 0``.

    Example:
      >>> from jaxlab.generative.semantic_flow import make_sigmas
      >>> [round(float(s), 4) for s in make_sigmas(4, shift=3.0)]
      [1.0, 0.9, 0.75, 0.5, 0.0]
    """
    n = check_int(num_steps, "num_steps", min_value=1)
    base = 1.0 - jnp.arange(n + 1, dtype=dtype or jnp.result_type(float)) / n
    return time_shift_exponential(base, mu) if mu is not None else shift_sigmas(base, shift)


def rf_loss(model: Callable, key, x, cond=None, *, sigma_kind: str = "logit_normal", loc: float = 0.0,
            scale: float = 1.0, weight_fn: Callable | None = None):
    """Monte-Carlo rectified-flow loss on a batch.

    ``L = mean_b w(sigma_b) mean |v_theta(x_sigma, sigma, c) - (eps - x)|^2``, one ``sigma_b``
    (:func:`sample_sigmas`) and one ``eps ~ N(0, I)`` per sample, the inner mean over the sample's elements.
    Papers: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
    Flow", arXiv:2209.03003; P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis",
    arXiv:2403.03206.

    Args:
      model: the velocity ``model(x, sigma, cond)`` on one sample (vmapped here).
      key: PRNG key.
      x: ``(B, ...)`` float array of data, ``B`` samples.
      cond: optional pytree of conditions with leading axis ``B`` (None: ``model`` gets ``cond=None``).
      sigma_kind: ``"logit_normal"`` or ``"uniform"``.
      loc: float, the logit-normal location.
      scale: positive float, the logit-normal scale.
      weight_fn: optional ``w(sigma (B,)) -> (B,)`` loss weights (default 1).

    Returns:
      Float scalar.

    Raises:
      ValueError: a non-float ``x``, ``x`` with fewer than 2 dimensions, an unknown ``sigma_kind``, or
        ``scale <= 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.generative.semantic_flow import rf_loss
      >>> x = jnp.full((4096, 2), 3.0)  # a point mass at (3, 3): the target is eps - x
      >>> loss = rf_loss(lambda xs, sigma, cond: -jnp.full_like(xs, 3.0), jax.random.key(0), x)
      >>> round(float(loss), 1)  # the predictor -x misses by eps: E eps^2 = 1 per element
      1.0
    """
    x = _float(x, "x")
    if x.ndim < 2:
        raise ValueError(f"x must be a batch (B, ...), got shape {x.shape}")
    k_s, k_e = jax.random.split(key)
    sigma = sample_sigmas(k_s, (x.shape[0],), sigma_kind, loc, scale).astype(x.dtype)
    eps = fast_random.normal(k_e, x.shape, x.dtype)  # = jax.random.normal, bit for bit (unrolled hash)
    xs = _interpolate(x, eps, sigma)  # sigma in (0, 1) by construction: no run-time range check in the training step
    v = jax.vmap(model)(xs, sigma, cond) if cond is not None else jax.vmap(lambda a, s: model(a, s, None))(xs, sigma)
    err = jnp.mean((v - (eps - x)).reshape(x.shape[0], -1) ** 2, axis=1)
    w = 1.0 if weight_fn is None else weight_fn(sigma)
    return jnp.mean(w * err)


def rf_to_cfm_velocity(v_fn: Callable) -> Callable:
    """Convert a rectified-flow velocity to the CFM convention: ``u(x, t, c) = -v_RF(x, 1 - t, c)`` (time
    ``t = 1 - sigma``, sampling from ``t = 0``, noise, to ``t = 1``, data).

    Args:
      v_fn: ``v_fn(x, sigma, cond)``, a velocity in the RF convention.

    Returns:
      ``u(x, t, cond=None)``, the same field in the CFM convention.
    """
    return lambda x, t, cond=None: -v_fn(x, 1 - t, cond)


def cfm_to_rf_velocity(u_fn: Callable) -> Callable:
    """Convert a CFM velocity to the rectified-flow convention: ``v(x, sigma, c) = -u_CFM(x, 1 - sigma, c)`` (noise
    level ``sigma = 1 - t``, sampling from ``sigma = 1`` to 0).

    Args:
      u_fn: ``u_fn(x, t, cond)``, a velocity in the CFM convention.

    Returns:
      ``v(x, sigma, cond=None)``, the same field in the RF convention.
    """
    return lambda x, sigma, cond=None: -u_fn(x, 1 - sigma, cond)


@renamed_kwargs(lr="learning_rate")
def rf_optimizer(learning_rate: float | Callable = 1e-3, clip: float = 1.0,
                 weight_decay: float = 1e-4) -> optax.GradientTransformation:
    """The package default: global-norm clipping then AdamW.

    Args:
      learning_rate: a constant or an optax schedule (step -> rate).
      clip: the global-norm clipping threshold.
      weight_decay: AdamW's decoupled weight decay.

    Returns:
      ``optax.chain(clip_by_global_norm(clip), adamw(learning_rate, weight_decay=weight_decay))``.
    """
    return optax.chain(optax.clip_by_global_norm(clip), optax.adamw(learning_rate, weight_decay=weight_decay))


def rf_train_step(optimizer: optax.GradientTransformation, static: Any, loss_fn: Callable):
    """The training step of an equinox model: ``step(key, state, batch) -> (TrainState, TrainInfo)``.

    The model is split as ``eqx.partition(model, eqx.is_inexact_array) = (params, static)``; the step is
    :func:`jaxlab.core.train.trainer`'s on ``loss_fn(eqx.combine(params, static), key, batch)``. Start from
    ``jaxlab.core.train.train_init(params, optimizer)``.

    Args:
      optimizer: any optax transformation (e.g. :func:`rf_optimizer`).
      static: the non-array part of the model.
      loss_fn: ``loss_fn(model, key, batch) -> scalar``.

    Returns:
      The step of the :class:`~jaxlab.core.Algorithm` ``trainer(...)``.
    """
    return trainer(lambda p, key, batch: loss_fn(eqx.combine(p, static), key, batch), optimizer).step


def euler_init(x_init) -> EulerState:
    """The Euler sampler's state at ``sigmas[0]`` (pure noise for a full grid): ``EulerState(x_init, 0)``.

    Args:
      x_init: float array, the start point.

    Returns:
      An :class:`~jaxlab.generative.ode.EulerState`.

    Raises:
      ValueError: a non-float ``x_init``.
    """
    return EulerState(_float(x_init, "x_init"), jnp.zeros((), jnp.int32))


def euler_step(state: EulerState, v, sigmas) -> EulerState:
    """One Euler step along the grid with a given velocity: ``x <- x + (sigma_{i+1} - sigma_i) v``, ``i <- i + 1``.

    Args:
      state: the :class:`~jaxlab.generative.ode.EulerState` at ``sigmas[i]``.
      v: float array of ``state.x``'s shape, the velocity at ``(state.x, sigmas[i])``.
      sigmas: the ``(N + 1,)`` grid.

    Returns:
      The next :class:`~jaxlab.generative.ode.EulerState`.
    """
    d = (sigmas[state.i + 1] - sigmas[state.i]).astype(state.x.dtype)
    return EulerState(state.x + d * v, state.i + 1)


def _check_sigmas(sigmas) -> jax.Array:
    sigmas = _sigma(sigmas, "sigmas")
    if sigmas.ndim != 1 or sigmas.shape[0] < 2:
        raise ValueError(f"sigmas must be a 1-D grid of at least 2 levels, got shape {sigmas.shape}")
    return sigmas


def euler_algorithm(velocity_fn: Callable, sigmas, cond=None, guidance_fn: Callable | None = None) -> Algorithm:
    """The Euler sampler along ``sigmas`` as an :class:`~jaxlab.core.Algorithm`.

    Paper: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
    Flow", arXiv:2209.03003.

    ``init(x_init) -> EulerState`` at ``sigmas[0]``; ``step(key, state) -> (EulerState, EulerInfo)`` applies
    ``guidance_fn(x, sigma_i, i)`` (if given) and takes ``x <- x + (sigma_{i+1} - sigma_i) v(x, sigma_i, cond)``
    (``key`` is ignored: the sampler is deterministic). Run it ``len(sigmas) - 1`` steps.

    Args:
      velocity_fn: ``v(x, sigma, cond)`` on one sample.
      sigmas: ``(N + 1,)`` float grid in [0, 1] (e.g. :func:`make_sigmas`).
      cond: the condition passed to ``velocity_fn``.
      guidance_fn: optional ``g(x, sigma, i) -> x'``.

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      ValueError: ``sigmas`` is not a 1-D float grid of at least two levels in [0, 1].

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.generative.semantic_flow import euler_algorithm, make_sigmas
      >>> algo = euler_algorithm(lambda x, sigma, cond: x - 2.0, make_sigmas(4))  # data at 2, noise at x_init
      >>> state, trace = run(algo.step, algo.init(jnp.zeros(2)), jax.random.key(0), 4)
      >>> [round(float(v), 4) for v in state.x]  # 2 (1 - (3/4)^4)
      [1.3672, 1.3672]
    """
    sigmas = _check_sigmas(sigmas)
    algo = grid_ode_algorithm(velocity_fn, sigmas, cond, guidance_fn=guidance_fn)
    return Algorithm(euler_init, algo.step)


def euler_sample(velocity_fn: Callable, x_init, sigmas, cond=None, guidance_fn: Callable | None = None,
                 return_traj: bool = False):
    """Integrate ``dx/dsigma = v(x, sigma, cond)`` along ``sigmas`` with Euler steps (:func:`euler_algorithm` driven
    by :func:`jaxlab.core.run`).

    Paper: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
    Flow", arXiv:2209.03003.

    Args:
      velocity_fn: ``v(x, sigma, cond)``, returning an array of ``x_init``'s shape.
      x_init: float array, the start point at ``sigmas[0]``, any shape, finite.
      sigmas: ``(N + 1,)`` float grid in [0, 1].
      cond: the condition passed to ``velocity_fn``.
      guidance_fn: optional ``g(x, sigma, i) -> x'`` applied before each step.
      return_traj: also return the trajectory.

    Returns:
      The final ``x`` (``x_init``'s shape), or ``(x, traj)`` with ``traj`` of shape ``(N + 1, *x_init.shape)``.

    Raises:
      TypeError: a ``velocity_fn`` that is not callable.
      ValueError: a bad grid, a non-float or non-finite ``x_init`` (also under ``jit``), or a velocity of the wrong
        shape.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.generative.semantic_flow import euler_sample, make_sigmas
      >>> v = lambda x, sigma, cond: x - 2.0  # a linear field; the exact flow ends at 2 - e^-1 (2 - x_init)
      >>> x = euler_sample(v, jnp.array([0.0, 1.0]), make_sigmas(50))
      >>> [round(float(a), 3) for a in x]  # 2 - 0.98^50 (2 - x_init)
      [1.272, 1.636]
    """
    sigmas = _check_sigmas(sigmas)
    x_init = as_array(_float(x_init, "x_init"), "x_init", finite=True)
    check_velocity(velocity_fn, x_init, sigmas[0], cond)
    return grid_ode_sample(velocity_fn, x_init, sigmas, cond, guidance_fn=guidance_fn, return_traj=return_traj)


def diffrax_sample(velocity_fn: Callable, x_init, cond=None, solver=None, rtol: float = 1e-5, atol: float = 1e-5,
                   *, sigma_start: float = 1.0, sigma_end: float = 0.0, max_steps: int = 4096):
    """Integrate ``dx/dsigma = v(x, sigma, cond)`` from ``sigma_start`` to ``sigma_end`` with a diffrax solver and a PID
    step-size controller (first step ``-(sigma_start - sigma_end) / 32``).

    Args:
      velocity_fn: ``v(x, sigma, cond)``, returning an array of ``x_init``'s shape.
      x_init: float array, the start point at ``sigma_start``, finite.
      cond: the condition passed to ``velocity_fn``.
      solver: a diffrax solver (default ``diffrax.Tsit5()``).
      rtol: positive float, the controller's relative tolerance.
      atol: positive float, the controller's absolute tolerance.
      sigma_start: float in [0, 1], the start level.
      sigma_end: float in [0, 1], the end level.
      max_steps: int, diffrax's step budget.

    Returns:
      ``x(sigma_end)``, a float array of ``x_init``'s shape.

    Raises:
      TypeError: a ``velocity_fn`` that is not callable.
      ValueError: a non-float or non-finite ``x_init``, ``sigma_start`` or ``sigma_end`` outside [0, 1],
        non-positive tolerances, or a velocity of the wrong shape.
    """
    x_init = as_array(_float(x_init, "x_init"), "x_init", finite=True)
    sigma_start = check_in_range(sigma_start, "sigma_start", 0.0, 1.0)
    sigma_end = check_in_range(sigma_end, "sigma_end", 0.0, 1.0)
    rtol = check_positive(rtol, "rtol")
    atol = check_positive(atol, "atol")
    check_velocity(velocity_fn, x_init, jnp.asarray(sigma_start, x_init.dtype), cond)
    return diffrax_ode_sample(velocity_fn, x_init, cond, t0=sigma_start, t1=sigma_end,
                              dt0=-(sigma_start - sigma_end) / 32, rtol=rtol, atol=atol, max_steps=max_steps,
                              solver=solver)


def cfg_velocity(v_cond, v_uncond, scale):
    """Classifier-free guidance ``v = v_u + w (v_c - v_u)`` (``w = 1``: the conditional velocity).

    Args:
      v_cond: float array, the conditional velocity ``v_c``.
      v_uncond: float array of ``v_cond``'s shape, the unconditional velocity ``v_u``.
      scale: finite float, the guidance scale ``w``.

    Returns:
      Float array of ``v_cond``'s shape.

    Raises:
      ValueError: a non-float input, different shapes, or a non-finite ``scale``.
    """
    v_cond, v_uncond = _float(v_cond, "v_cond"), _float(v_uncond, "v_uncond")
    if v_cond.shape != v_uncond.shape:
        raise ValueError(f"v_uncond must have the shape of v_cond {v_cond.shape}, got {v_uncond.shape}")
    scale = check_finite(scale, "scale")
    return v_uncond + scale * (v_cond - v_uncond)


def _euler_example(key):
    """Tiny instance: Euler on the linear velocity ``v(x, sigma) = x - 2`` over a 16-level grid."""
    algo = euler_algorithm(lambda x, sigma, cond: x - 2.0, make_sigmas(16))
    return algo, algo.init(jax.random.normal(key, (3,))), None


register_algorithm("rf_euler", euler_algorithm, _euler_example, area="semantic_flow")

