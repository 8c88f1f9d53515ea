r"""Noise schedules of the VP diffusion and the practical annealed-Langevin schedule.

Papers: Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference*, arXiv:2605.21253 (2026); the schedules of the code of Geffner, Papamakarios & Mnih,
*Compositional score modeling for simulation-based inference* (ICML 2023, arXiv:2209.14249) and of Linhart,
Cardoso, Gramfort, Le Corff & Rodrigues, *Diffusion posterior sampling for simulation-based inference in tall data
settings* (arXiv:2404.07593).

VP diffusion ``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε`` with ``α_t = exp(-β_min t - (β_max - β_min) t²/2)``
(Linhart's code: ``β(s) = 32 s``, ``α_t = exp(-16 t²)``). Practical annealed-Langevin schedule (Geffner's and
Linhart's code): uniform levels ``t_0 = t_max > ... > t_{L-1} = t_min``, ``h_l = τ (1 - γ_l)/sqrt(γ_l)`` with
``γ_l = α_{t_l}/α_{t_{l+1}}`` (``γ = α_{t_min}`` at the last level), ``L = 400``, ``k = 5``, ``τ = 0.5``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_in_range, check_int, check_positive
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART, TOURON

__all__ = ["ald_default_schedule", "linhart_alpha", "vp_alpha"]


@cites(TOURON)
def vp_alpha(t, *, beta_min: float = 0.1, beta_max: float = 20.0):
    """VP schedule ``α_t = exp(-∫_0^t β(s) ds) = exp(-β_min t - (β_max - β_min) t²/2)``.

    ``β(s) = β_min + (β_max - β_min) s``; ``α_t`` is the signal fraction of the VP diffusion
    ``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε``. The defaults are the common VP-SDE values, chosen here as the
    area's default schedule. No input validation.

    Args:
      t: float or float array of diffusion times (any shape; may be traced).
      beta_min: ``β(0)``.
      beta_max: ``β(1)``.

    Returns:
      ``α_t``, a float array of the shape of ``t``.
    """
    t = jnp.asarray(t)
    return jnp.exp(-(beta_min * t + 0.5 * (beta_max - beta_min) * t * t))


@cites(LINHART)
def linhart_alpha(t):
    """The schedule of Linhart et al.'s code, ``β(s) = 32 s``: ``α_t = exp(-16 t²)``.

    From the public code of Linhart, Cardoso, Gramfort, Le Corff, Rodrigues, *Diffusion posterior sampling for
    simulation-based inference in tall data settings*, arXiv:2404.07593. No input validation.

    Args:
      t: float or float array of diffusion times (any shape; may be traced).

    Returns:
      ``α_t``, a float array of the shape of ``t``.
    """
    t = jnp.asarray(t)
    return jnp.exp(-16.0 * t * t)


@cites(GEFFNER, LINHART)
def ald_default_schedule(
    L: int = 400, k: int = 5, tau: float = 0.5, *, alpha_fn: Callable = vp_alpha, t_min: float = 1e-3,
    t_max: float = 1.0,
) -> tuple[Float[Array, " L"], Float[Array, " L"], Int[Array, " L"]]:
    """The practical annealed-Langevin schedule of Geffner's and Linhart's code.

    Uniform ``ts`` from ``t_max`` to ``t_min``, ``h_l = τ (1 - γ_l)/sqrt(γ_l)`` with ``γ_l = α_{t_l}/α_{t_{l+1}}``
    (``γ = α_{t_min}`` at the last level), and ``k`` steps at every level. From the public code of Geffner,
    Papamakarios & Mnih (arXiv:2209.14249) and Linhart et al. (arXiv:2404.07593), whose defaults are
    ``L = 400``, ``k = 5``, ``τ = 0.5``.

    Args:
      L: number of levels, int ``>= 1``.
      k: ULA steps per level, int ``>= 1``.
      tau: positive float, the step-size scale ``τ``.
      alpha_fn: the noise schedule ``t -> α_t`` (vectorised), e.g. :func:`vp_alpha` or :func:`linhart_alpha`.
      t_min: the last level, ``> 0``.
      t_max: the first level, ``> t_min`` when ``L > 1`` (``>= t_min`` when ``L = 1``).

    Returns:
      ``(ts, hs, ks)``: ``(L,)`` float arrays of levels and step sizes and an ``(L,)`` int32 array of steps.

    Raises:
      TypeError: ``L`` or ``k`` is not an int.
      ValueError: ``L`` or ``k`` is below 1, ``tau`` is not positive and finite, ``t_min <= 0``, or ``t_max``
        is not above ``t_min``.

    Example:
      >>> from jaxlab.sampling.langevin import ald_default_schedule
      >>> ts, hs, ks = ald_default_schedule(L=10, k=3)
      >>> ts.shape, hs.shape, int(ks[0])
      ((10,), (10,), 3)
    """
    L = check_int(L, "L", min_value=1)
    k = check_int(k, "k", min_value=1)
    tau = check_positive(tau, "tau")
    t_min = check_in_range(t_min, "t_min", 0.0, lo_open=True)
    t_max = check_in_range(t_max, "t_max", t_min, lo_open=L > 1)
    ts = jnp.linspace(t_max, t_min, L)
    a = alpha_fn(ts)
    gamma = jnp.concatenate([a[:-1] / a[1:], a[-1:]])
    hs = tau * (1.0 - gamma) / jnp.sqrt(gamma)
    return ts, hs, jnp.full((L,), k, dtype=jnp.int32)
