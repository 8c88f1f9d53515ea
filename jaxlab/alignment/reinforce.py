r"""Tabular REINFORCE with a KL penalty: a policy-gradient baseline to place against the exact frontier.

Stand-in for the PPO/GRPO comparison of Monteiro Paes et al., "Theoretical Limits of Language Model
Alignment" (arXiv:2605.07105); it illustrates, and does not reproduce, the paper's finding that trained
policies sit below the reward–KL frontier. The policy is ``π_θ = softmax(θ)`` over a finite output space,
started at ``θ = log π₀``, and ascends ``R_β(π_θ) = E_{π_θ}[r] − β KL(π_θ‖π₀)`` with the score-function
gradient

    ∇_θ R_β = E_{y∼π_θ}[ (f(y) − b) ∇_θ ln π_θ(y) ],   f(y) = r(y) − β (ln π_θ(y) − ln π₀(y)),

estimated from a batch of ``batch_size`` samples with the batch-mean baseline ``b`` (the ``−β ∇ ln π_θ``
term of ``∇f`` has zero mean and is dropped). Any optax optimizer applies the update. The stationary point is
``π_β`` (the baseline itself is [derived] for jaxlab).

:func:`reinforce_kl_algorithm` binds the problem and the hyperparameters once and returns a
:class:`jaxlab.core.Algorithm`: ``init(logits=None) -> ReinforceState`` (default ``θ = log π₀``) and
``step(key, state) -> (ReinforceState, ReinforceInfo)``, one optimiser step of :func:`jaxlab.core.train.make_train_step`
on the surrogate loss ``−mean_i (f(y_i) − b) ln π_θ(y_i)``. :func:`reinforce_kl_run` drives it with
:func:`jaxlab.core.run`; ``info`` holds the exact KL, gain and objective of the current tabular policy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float

from jaxlab.alignment.papers import MONTEIRO_PAES
from jaxlab.alignment.policy import check_log_policy, check_penalty, check_problem, kl_divergence
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import RunTrace, run
from jaxlab.core.train import TrainState, make_train_step
from jaxlab.core.validation import check_int

__all__ = [
    "ReinforceInfo",
    "ReinforceState",
    "reinforce_kl_algorithm",
    "reinforce_kl_init",
    "reinforce_kl_run",
    "reinforce_kl_step",
]


class ReinforceState(NamedTuple):
    """State of tabular REINFORCE.

    Attributes:
      logits: ``(V,)`` float array, the policy logits ``θ`` (``π_θ = softmax(θ)``).
      opt_state: the optax optimizer state of ``θ`` (a pytree).
    """

    logits: Array
    opt_state: Any


class ReinforceInfo(NamedTuple):
    """Exact diagnostics of the tabular policy ``π_θ`` after a step (0-d float arrays).

    Attributes:
      kl: ``KL(π_θ‖π₀)``.
      gain: ``E_{π_θ}[r] − E_{π₀}[r]``.
      objective: ``R_β(π_θ) = E_{π_θ}[r] − β KL(π_θ‖π₀)``.
    """

    kl: Array
    gain: Array
    objective: Array


@cites(MONTEIRO_PAES)
def reinforce_kl_init(log_pi0: Float[Array, " V"], optimizer: optax.GradientTransformation) -> ReinforceState:
    """Initial :class:`ReinforceState` at the base policy: ``θ = log π₀`` and ``optimizer.init(θ)``.

    Args:
      log_pi0: ``(V,)`` float array, the base policy ``π₀`` as normalised log-probabilities.
      optimizer: any optax optimizer.

    Returns:
      ``ReinforceState(log_pi0, optimizer.init(log_pi0))``.

    Raises:
      TypeError: ``log_pi0`` not floating, or half precision.
      ValueError: ``log_pi0`` not 1-d, with NaN or ``+inf`` entries, or not normalised.
    """
    log_pi0 = check_log_policy(log_pi0)
    return ReinforceState(log_pi0, optimizer.init(log_pi0))


def _info(logits, log_pi0, r, beta):
    log_pi = jax.nn.log_softmax(logits)
    kl = kl_divergence(log_pi, log_pi0)
    gain = jnp.sum((jnp.exp(log_pi) - jnp.exp(log_pi0)) * r)
    return ReinforceInfo(kl, gain, gain + jnp.sum(jnp.exp(log_pi0) * r) - beta * kl)


def _surrogate(logits, key, log_pi0, r, beta, batch_size: int):
    """Score-function surrogate whose gradient is the REINFORCE estimate of ``−∇_θ R_β`` (module docstring)."""
    log_pi = jax.nn.log_softmax(logits)
    y = jax.random.categorical(key, jax.lax.stop_gradient(logits), shape=(batch_size,))
    f = r[y] - beta * (jax.lax.stop_gradient(log_pi[y]) - log_pi0[y])
    advantage = f - jnp.mean(f)
    return -jnp.mean(advantage * log_pi[y])


def _step(key, state: ReinforceState, log_pi0, r, beta, optimizer, batch_size: int):
    train_step = make_train_step(_surrogate, optimizer)
    trained, _ = train_step(TrainState(state.logits, state.opt_state, jnp.zeros((), jnp.int32)), key, log_pi0, r,
                            beta, batch_size)
    return ReinforceState(trained.params, trained.opt_state), _info(trained.params, log_pi0, r, beta)


@cites(MONTEIRO_PAES)
def reinforce_kl_step(key, state: ReinforceState, log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta,
                      optimizer: optax.GradientTransformation, batch_size: int = 64):
    """One REINFORCE update of ``θ`` from ``batch_size`` samples ``y_i ∼ π_θ``.

    The step of :func:`reinforce_kl_algorithm` with every argument passed on each call: the optimizer is applied to
    the gradient of the surrogate ``−mean_i (f(y_i) − b) ln π_θ(y_i)``, ``f(y) = r(y) − β (ln π_θ(y) − ln π₀(y))``,
    ``b = mean_i f(y_i)``. The inputs are not checked (use :func:`reinforce_kl_algorithm` for that).

    Args:
      key: PRNG key of the batch.
      state: the current :class:`ReinforceState`.
      log_pi0: ``(V,)`` float array, the base policy as normalised log-probabilities.
      r: ``(V,)`` float array of rewards.
      beta: KL penalty ``β > 0`` (float or 0-d array).
      optimizer: the optax optimizer that made ``state.opt_state``.
      batch_size: samples per step (static int).

    Returns:
      A tuple ``(state, info)``: the updated :class:`ReinforceState` and the :class:`ReinforceInfo` of the new
      policy.
    """
    return _step(key, state, log_pi0, r, beta, optimizer, batch_size)


@cites(MONTEIRO_PAES)
def reinforce_kl_algorithm(log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta, *,
                           optimizer: optax.GradientTransformation | None = None,
                           batch_size: int = 64) -> Algorithm:
    """Tabular REINFORCE with a KL penalty as an :class:`~jaxlab.core.Algorithm`.

    Ascends ``R_β(π_θ) = E_{π_θ}[r] − β KL(π_θ‖π₀)`` with the score-function gradient
    ``E_{y∼π_θ}[(f(y) − b) ∇_θ ln π_θ(y)]``, ``f(y) = r(y) − β (ln π_θ(y) − ln π₀(y))``, ``b`` the batch mean.
    A policy-gradient baseline **[chosen]** standing in for the PPO/GRPO runs of Monteiro Paes et al.,
    arXiv:2605.07105 (not reproduced: only the abstract was available); its stationary point is ``π_β``.

    Args:
      log_pi0: base policy log-probabilities, ``(V,)`` float array, normalised.
      r: rewards, ``(V,)`` finite float array.
      beta: KL penalty ``β > 0`` (float or 0-d array; may be traced, e.g. vmapped).
      optimizer: any optax optimizer (default ``optax.adam(0.1)``).
      batch_size: samples of ``π_θ`` per step (static int ``≥ 2``).

    Returns:
      ``Algorithm(init, step)``: ``init(logits=None) -> ReinforceState`` (``θ = log π₀`` by default) and
      ``step(key, state) -> (ReinforceState, ReinforceInfo)``.

    Raises:
      TypeError: ``log_pi0`` or ``r`` not floating; ``batch_size`` not an int.
      ValueError: ``log_pi0`` not normalised, ``r`` not finite or of another shape, ``beta`` not in
        ``(0, ∞)``, ``batch_size < 2``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.alignment import reinforce_kl_algorithm
      >>> algo = reinforce_kl_algorithm(jnp.log(jnp.array([0.5, 0.5])), jnp.array([0.0, 1.0]), 0.5)
      >>> state, info = jax.jit(algo.step)(jax.random.key(0), algo.init())
      >>> info.kl.shape
      ()
    """
    log_pi0, r = check_problem(log_pi0, r)
    beta = check_penalty(beta)
    batch_size = check_int(batch_size, "batch_size", min_value=2)
    optimizer = optax.adam(0.1) if optimizer is None else optimizer

    def init(logits: Float[Array, " V"] | None = None) -> ReinforceState:
        logits = log_pi0 if logits is None else logits
        return ReinforceState(logits, optimizer.init(logits))

    def step(key, state: ReinforceState) -> tuple[ReinforceState, ReinforceInfo]:
        return _step(key, state, log_pi0, r, beta, optimizer, batch_size)

    return Algorithm(init, step)


@cites(MONTEIRO_PAES)
def reinforce_kl_run(key, log_pi0: Float[Array, " V"], r: Float[Array, " V"], beta, *,
                     optimizer: optax.GradientTransformation | None = None, num_steps: int = 200,
                     batch_size: int = 64, thin: int = 1) -> tuple[ReinforceState, RunTrace]:
    """Train tabular REINFORCE for ``num_steps`` steps of :func:`reinforce_kl_algorithm` with :func:`jaxlab.core.run`.

    Args:
      key: PRNG key, split into one key per step.
      log_pi0: ``(V,)`` float array, the base policy as normalised log-probabilities.
      r: ``(V,)`` finite float array of rewards.
      beta: KL penalty ``β > 0`` (float or 0-d array; may be traced: vmap it to train several penalties at once).
      optimizer: any optax optimizer (default ``optax.adam(0.1)``).
      num_steps: number of steps (static int).
      batch_size: samples of ``π_θ`` per step (static int ``≥ 2``).
      thin: record the info every ``thin`` steps (``num_steps`` must be a multiple of it).

    Returns:
      A tuple ``(state, trace)``: the final :class:`ReinforceState` and a :class:`jaxlab.core.RunTrace` whose
      ``infos`` is a :class:`ReinforceInfo` with fields of shape ``(num_steps // thin,)``.

    Raises:
      TypeError: as :func:`reinforce_kl_algorithm`; ``num_steps`` or ``thin`` not an int.
      ValueError: as :func:`reinforce_kl_algorithm`; ``num_steps`` not a multiple of ``thin``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.alignment import reinforce_kl_run
      >>> log_pi0 = jax.nn.log_softmax(jnp.linspace(-1.0, 1.0, 5))
      >>> state, trace = reinforce_kl_run(jax.random.key(0), log_pi0, jnp.linspace(0.0, 1.0, 5), 0.5,
      ...                                 num_steps=50, batch_size=16)
      >>> trace.infos.gain.shape
      (50,)
    """
    algo = reinforce_kl_algorithm(log_pi0, r, beta, optimizer=optimizer, batch_size=batch_size)
    return run(algo.step, algo.init(), key, num_steps, thin=thin)


def _example(key):
    log_pi0 = jax.nn.log_softmax(jnp.linspace(-1.0, 1.0, 5))
    algo = reinforce_kl_algorithm(log_pi0, jnp.linspace(0.0, 1.0, 5), 0.5, batch_size=8)
    return algo, algo.init(), None


register_algorithm("reinforce_kl", reinforce_kl_algorithm, _example, area="alignment")
