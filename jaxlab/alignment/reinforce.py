r"""Tabular REINFORCE with a KL penalty: a policy-gradient baseline to place against the exact frontier.

Stand-in for the PPO/GRPO comparison of Monteiro Paes et al., "Theoretical Limits of Language Model
Alignment" (arXiv:2605.07105); it illustrates, and does not reproduce, the paper's finding that trained
policies sit below the reward–KL frontier. The policy is ``π_θ = softmax(θ)`` over a finite output space,
started at ``θ = log π₀``, and ascends ``R_β(π_θ) = E_{π_θ}[r] − β KL(π_θ‖π₀)`` with the score-function
gradient

    ∇_θ R_β = E_{y∼π_θ}[ (f(y) − b) ∇_θ ln π_θ(y) ],   f(y) = r(y) − β (ln π_θ(y) − ln π₀(y)),

estimated from a batch of ``batch_size`` samples with the batch-mean baseline ``b`` (the ``−β ∇ ln π_θ``
term of ``∇f`` has zero mean and is dropped). Any optax optimizer applies the update. The stationary point is
``π_β`` (spec ``alignment_limits.md`` §5; the baseline itself is [derived] for jaxlab).

``reinforce_kl_init`` / ``reinforce_kl_step`` follow the ``init``/``step(key, state) -> (state, info)``
convention and ``reinforce_kl_run`` drives them with :func:`jaxlab.core.run`; ``info`` holds the exact KL,
gain and objective of the current tabular policy.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float

from jaxlab.alignment.kl_limits import _beta, _kl, _log_policy, _problem
from jaxlab.core.citations import cites
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.validation import check_int

__all__ = ["ReinforceInfo", "ReinforceState", "reinforce_kl_init", "reinforce_kl_run", "reinforce_kl_step"]

_PAPER = "monteiropaes2026limits"


class ReinforceState(NamedTuple):
    """Policy logits ``θ`` and the optax optimizer state."""

    logits: Array
    opt_state: Any


class ReinforceInfo(NamedTuple):
    """Exact ``KL(π_θ‖π₀)``, gain ``E_{π_θ}[r] − E_{π₀}[r]`` and objective ``R_β(π_θ)`` after the step."""

    kl: Array
    gain: Array
    objective: Array


@cites(_PAPER)
def reinforce_kl_init(log_pi0: Float[Array, " V"], optimizer: optax.GradientTransformation) -> ReinforceState:
    """Start at the base policy: ``θ = log π₀``."""
    log_pi0 = _log_policy(log_pi0)
    return ReinforceState(log_pi0, optimizer.init(log_pi0))


def _info(logits, log_pi0, r, beta):
    log_pi = jax.nn.log_softmax(logits)
    kl = _kl(log_pi, log_pi0)
    gain = jnp.sum((jnp.exp(log_pi) - jnp.exp(log_pi0)) * r)
    return ReinforceInfo(kl, gain, gain + jnp.sum(jnp.exp(log_pi0) * r) - beta * kl)


@cites(_PAPER)
def reinforce_kl_step(key, state: ReinforceState, log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta,
                      optimizer: optax.GradientTransformation, batch_size: int = 64):
    """One REINFORCE update from ``batch_size`` samples of ``π_θ``; returns ``(state, ReinforceInfo)``."""

    def surrogate(logits):
        log_pi = jax.nn.log_softmax(logits)
        y = jax.random.categorical(key, jax.lax.stop_gradient(logits), shape=(batch_size,))
        f = r[y] - beta * (jax.lax.stop_gradient(log_pi[y]) - log_pi0[y])
        advantage = f - jnp.mean(f)
        return -jnp.mean(advantage * log_pi[y])

    grads = jax.grad(surrogate)(state.logits)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.logits)
    logits = optax.apply_updates(state.logits, updates)
    return ReinforceState(logits, opt_state), _info(logits, log_pi0, r, beta)


@cites(_PAPER)
def reinforce_kl_run(key, log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta, *,
                     optimizer: optax.GradientTransformation | None = None, num_steps: int = 200,
                     batch_size: int = 64, thin: int = 1) -> tuple[ReinforceState, RunTrace]:
    """Train for ``num_steps`` steps with :func:`jaxlab.core.run` (default optimizer ``optax.adam(0.1)``).

    Returns the final state and the trace of infos every ``thin`` steps. ``beta`` may be traced (vmap it to
    train several penalties at once).
    """
    log_pi0, r = _problem(log_pi0, r)
    beta = _beta(beta)
    batch_size = check_int(batch_size, "batch_size", min_value=2)
    optimizer = optax.adam(0.1) if optimizer is None else optimizer
    step = partial(reinforce_kl_step, log_pi0=log_pi0, r=r, beta=beta, optimizer=optimizer,
                   batch_size=batch_size)
    return run(step, reinforce_kl_init(log_pi0, optimizer), key, num_steps, thin=thin)
