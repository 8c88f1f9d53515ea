r"""PPO for goal-conditioned skills (Tree-of-Skill stage 1), purejaxrl-style: the whole training is one jitted
``lax.scan`` over updates; each update rolls out ``num_envs`` vmapped environments for ``num_steps`` steps,
computes GAE advantages and runs ``update_epochs`` epochs of minibatch clipped-surrogate updates (optax).

Schulman, Wolski, Dhariwal, Radford, Klimov, "Proximal Policy Optimization Algorithms", arXiv:1707.06347:
``L = E[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] - c_v E[(V - R)^2] + c_e H``, ``rho = pi(u|x) / pi_old(u|x)``;
GAE (Schulman et al. 2016): ``delta_t = r_t + gamma V_{t+1} (1 - d_t) - V_t``,
``A_t = delta_t + gamma lambda (1 - d_t) A_{t+1}``. Defaults are the reconstruction's (lr 3e-4, gamma 0.99, lambda 0.95,
clip 0.2, 4 epochs, 8 minibatches, 64 envs, 128-step rollouts). The policy is a
:class:`~jaxlab.agents.tree_of_skill.policies.SkillPolicy` (Gaussian, ``pi(u | o, g * m, m)``); goals and masks
are sampled by the skill environment's reset (``p_drop`` of them masked).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from jaxlab.agents.tree_of_skill.interfaces import SkillEnv
from jaxlab.agents.tree_of_skill.papers import PPO, TOS
from jaxlab.agents.tree_of_skill.policies import SkillPolicy
from jaxlab.agents.tree_of_skill.rodinsert import ACTION_DIM, OBS_DIM, pick_skill_env
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.train import TrainState, make_train_step, train_init
from jaxlab.core.validation import check_int, check_positive

__all__ = ["PPOConfig", "PPOMetrics", "PPOState", "SkillEnv", "ppo_algorithm", "ppo_train"]


class PPOConfig(NamedTuple):
    """PPO hyperparameters (defaults: the usual PPO/purejaxrl values, **[chosen]** for the reconstruction).

    Attributes:
      lr: Adam learning rate, ``> 0``.
      gamma: discount ``gamma``.
      gae_lambda: GAE ``lambda``.
      clip_eps: clipping ``eps`` of the ratio ``rho``.
      update_epochs: epochs over each rollout, ``>= 1``.
      num_minibatches: minibatches per epoch; must divide ``num_envs * num_steps``.
      num_envs: parallel (vmapped) environments, ``>= 1``.
      num_steps: rollout length per update, ``>= 1``.
      num_updates: number of PPO updates (steps of :func:`ppo_algorithm`), ``>= 1``.
      vf_coef: value-loss coefficient ``c_v``.
      ent_coef: entropy coefficient ``c_e`` (the Gaussian entropy up to a constant, ``sum log_std``).
      max_grad_norm: global-norm gradient clipping threshold.
    """

    lr: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    update_epochs: int = 4
    num_minibatches: int = 8
    num_envs: int = 64
    num_steps: int = 128
    num_updates: int = 50
    vf_coef: float = 0.5
    ent_coef: float = 0.0
    max_grad_norm: float = 0.5


class PPOMetrics(NamedTuple):
    """Per-update diagnostics of PPO (0-d per step; ``(num_updates,)`` from :func:`ppo_train`).

    Attributes:
      mean_reward: mean reward per environment step of the update's rollout.
      success_rate: successes per finished episode in the rollout (successes / max(episodes ended, 1)).
      loss: mean minibatch loss of the update.
    """

    mean_reward: jax.Array  # (num_updates,) per step
    success_rate: jax.Array  # (num_updates,) successes per finished episode
    loss: jax.Array  # (num_updates,)


def _log_prob(mean, log_std, u):
    return jnp.sum(-0.5 * ((u - mean) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


class PPOState(NamedTuple):
    """State of PPO training.

    Attributes:
      train: the trainer's :class:`~jaxlab.core.train.TrainState` (the policy's array parameters, optimiser
        state, update count).
      env_state: the ``num_envs`` environment states (a pytree with leading axis ``num_envs``).
      obs: ``(num_envs, obs_dim)`` current observations.
      goal: ``(num_envs, d_g)`` current (masked) goals.
      mask: ``(num_envs, d_g)`` current goal masks.
    """

    train: TrainState
    env_state: Any
    obs: jax.Array
    goal: jax.Array
    mask: jax.Array


def _check_cfg(cfg: PPOConfig) -> tuple[int, int, int]:
    check_positive(cfg.lr, "cfg.lr")
    n_env = check_int(cfg.num_envs, "cfg.num_envs", min_value=1)
    n_steps = check_int(cfg.num_steps, "cfg.num_steps", min_value=1)
    n_mb = check_int(cfg.num_minibatches, "cfg.num_minibatches", min_value=1)
    check_int(cfg.num_updates, "cfg.num_updates", min_value=1)
    check_int(cfg.update_epochs, "cfg.update_epochs", min_value=1)
    if (n_env * n_steps) % n_mb:
        raise ValueError(f"cfg.num_minibatches={n_mb} must divide num_envs * num_steps = {n_env * n_steps}")
    return n_env, n_steps, n_mb


@cites(PPO, TOS)
def ppo_algorithm(env: SkillEnv, policy: eqx.Module, cfg: PPOConfig | None = None) -> Algorithm:
    """PPO as an :class:`~jaxlab.core.Algorithm`: one step is one PPO update (module docstring).

    ``init(key, policy) -> PPOState`` resets ``cfg.num_envs`` environments (one key each, split from ``key``) and
    starts the trainer (:func:`jaxlab.core.train.train_init`, optax ``clip_by_global_norm`` then Adam);
    ``step(key, state) -> (state, PPOMetrics)`` rolls the environments out for ``cfg.num_steps`` steps, computes
    GAE advantages and takes ``cfg.update_epochs`` epochs of ``cfg.num_minibatches`` clipped-surrogate steps
    (:func:`jaxlab.core.train.make_train_step`). The trained policy is
    ``eqx.combine(state.train.params, eqx.partition(policy, eqx.is_inexact_array)[1])``.

    Args:
      env: the goal-conditioned skill MDP (:class:`~jaxlab.agents.tree_of_skill.interfaces.SkillEnv`).
      policy: a :class:`~jaxlab.agents.tree_of_skill.policies.SkillPolicy` (any module with its call
        signature); its static structure is bound here, its arrays are the trained parameters.
      cfg: hyperparameters (:class:`PPOConfig`; ``num_updates`` is the caller's number of steps).

    Returns:
      The :class:`~jaxlab.core.Algorithm`.

    Raises:
      ValueError: a non-positive ``cfg.lr``, ``cfg.num_envs``, ``cfg.num_steps``, ``cfg.num_minibatches`` or
        ``cfg.num_updates`` or ``cfg.update_epochs``, or minibatches that do not divide ``num_envs * num_steps``.
      TypeError: one of those integer fields is not an int.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.agents.tree_of_skill import PPOConfig, SkillEnv, SkillPolicy, ppo_algorithm
      >>> def reset(key):  # a goal-free 1-d reach: drive x to 0 (RodInsert2D's Pick: rodinsert.pick_skill_env)
      ...     x = jax.random.uniform(key, (1,), minval=-1.0, maxval=1.0)
      ...     return x, x, jnp.zeros(1), jnp.zeros(1)  # obs, state, goal, mask
      >>> def step(key, x, u, goal, mask):
      ...     x = x + 0.1 * u
      ...     return x, x, -jnp.abs(x[0]), jnp.abs(x[0]) < 0.05, jnp.abs(x[0]) < 0.05
      >>> policy = SkillPolicy(jax.random.key(0), obs_dim=1, action_dim=1, d_g=1, width=4, depth=1)
      >>> algo = ppo_algorithm(SkillEnv(reset, step), policy, PPOConfig(num_envs=4, num_steps=8, num_minibatches=2))
      >>> state = algo.init(jax.random.key(1), policy)  # then jaxlab.core.run(algo.step, state, key, num_steps)
      >>> state.obs.shape, state.goal.shape
      ((4, 1), (4, 1))
    """
    cfg = PPOConfig() if cfg is None else cfg
    n_env, n_steps, n_mb = _check_cfg(cfg)
    _, static = eqx.partition(policy, eqx.is_inexact_array)
    opt = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(cfg.lr, eps=1e-5))
    apply = jax.vmap(lambda p, o, g, m: eqx.combine(p, static)(o, g, m), (None, 0, 0, 0))

    def env_step(carry, key):
        p, st, obs, goal, mask = carry
        k_act, k_step, k_reset = jax.random.split(key, 3)
        mean, log_std, value = apply(p, obs, goal, mask)
        u = mean + jnp.exp(log_std) * jax.random.normal(k_act, mean.shape, mean.dtype)
        logp = _log_prob(mean, log_std, u)
        obs2, st2, r, done, succ = jax.vmap(env.step)(jax.random.split(k_step, n_env), st, u, goal, mask)
        o_r, s_r, g_r, m_r = jax.vmap(env.reset)(jax.random.split(k_reset, n_env))
        pick = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
        st_n = jax.tree_util.tree_map(pick, s_r, st2)
        carry = (p, st_n, pick(o_r, obs2), pick(g_r, goal), pick(m_r, mask))
        return carry, (obs, goal, mask, u, logp, value, r, done.astype(r.dtype), succ.astype(r.dtype))

    def gae(values, rewards, dones, last_value):
        def back(carry, xs):
            adv, next_v = carry
            v, r, d = xs
            delta = r + cfg.gamma * next_v * (1 - d) - v
            adv = delta + cfg.gamma * cfg.gae_lambda * (1 - d) * adv
            return (adv, v), adv

        _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), (values, rewards, dones),
                              reverse=True)
        return adv, adv + values

    def loss_fn(p, batch):
        obs, goal, mask, u, logp_old, adv, ret = batch
        mean, log_std, value = apply(p, obs, goal, mask)
        ratio = jnp.exp(_log_prob(mean, log_std, u) - logp_old)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip_eps, 1 + cfg.clip_eps) * adv))
        vf = jnp.mean((value - ret) ** 2)
        ent = jnp.sum(log_std)
        return pg + cfg.vf_coef * vf - cfg.ent_coef * ent

    train_step = make_train_step(loss_fn, opt)

    def step(key: jax.Array, state: PPOState) -> tuple[PPOState, PPOMetrics]:
        ts, st, obs, goal, mask = state
        p = ts.params
        k_roll, k_perm = jax.random.split(key)
        (p, st, obs, goal, mask), traj = jax.lax.scan(env_step, (p, st, obs, goal, mask),
                                                      jax.random.split(k_roll, n_steps))
        t_obs, t_goal, t_mask, t_u, t_logp, t_v, t_r, t_d, t_s = traj
        last_v = apply(p, obs, goal, mask)[2]
        adv, ret = gae(t_v, t_r, t_d, last_v)
        flat = jax.tree_util.tree_map(lambda x: x.reshape((n_env * n_steps, *x.shape[2:])),
                                      (t_obs, t_goal, t_mask, t_u, t_logp, adv, ret))

        def epoch(c, k):
            perm = jax.random.permutation(k, n_env * n_steps)
            mbs = jax.tree_util.tree_map(lambda x: x[perm].reshape((n_mb, -1, *x.shape[1:])), flat)

            def mb_step(ts2, mb):
                ts2, info = train_step(ts2, mb)
                return ts2, info.loss

            c, losses = jax.lax.scan(mb_step, c, mbs)
            return c, losses.mean()

        ts, losses = jax.lax.scan(epoch, ts, jax.random.split(k_perm, cfg.update_epochs))
        n_done = jnp.maximum(t_d.sum(), 1.0)
        metrics = PPOMetrics(t_r.mean(), t_s.sum() / n_done, losses.mean())
        return PPOState(ts, st, obs, goal, mask), metrics

    def init(key: jax.Array, policy: eqx.Module) -> PPOState:
        p, _ = eqx.partition(policy, eqx.is_inexact_array)
        obs, st, goal, mask = jax.vmap(env.reset)(jax.random.split(key, n_env))
        return PPOState(train_init(p, opt), st, obs, goal, mask)

    return Algorithm(init, step)


@cites(PPO, TOS)
def ppo_train(key: jax.Array, env: SkillEnv, policy: eqx.Module, cfg: PPOConfig | None = None
              ) -> tuple[eqx.Module, PPOMetrics]:
    """Train a goal-conditioned skill ``policy`` on ``env`` with PPO for ``cfg.num_updates`` updates.

    :func:`ppo_algorithm` driven by :func:`jaxlab.core.run` in one jitted scan: clipped surrogate
    ``min(rho A, clip(rho, 1 - eps, 1 + eps) A)`` with GAE advantages (Schulman, Wolski, Dhariwal, Radford,
    Klimov, "Proximal Policy Optimization Algorithms", arXiv:1707.06347), the losses in the module docstring.
    Stage 1 of the Tree-of-Skill reconstruction (skills trained goal-conditioned, goals masked with probability
    ``p_drop`` by the environment's reset). Even at toy sizes the compilation takes several seconds; see
    :func:`ppo_algorithm` for a step-by-step use.

    Args:
      key: PRNG key (environment resets, actions, minibatch permutations).
      env: the goal-conditioned skill MDP, a :class:`~jaxlab.agents.tree_of_skill.interfaces.SkillEnv`.
      policy: the initial :class:`~jaxlab.agents.tree_of_skill.policies.SkillPolicy` (any module with its call
        signature).
      cfg: hyperparameters, a :class:`PPOConfig` (default ``PPOConfig()``).

    Returns:
      A tuple ``(policy, metrics)``: the trained policy (same structure as ``policy``) and the
      :class:`PPOMetrics` with ``(num_updates,)`` arrays.

    Raises:
      ValueError: a non-positive ``cfg.lr``, ``cfg.num_envs``, ``cfg.num_steps``, ``cfg.num_minibatches`` or
        ``cfg.num_updates`` or ``cfg.update_epochs``, or minibatches that do not divide ``num_envs * num_steps``.
      TypeError: one of those integer fields is not an int.
    """
    cfg = PPOConfig() if cfg is None else cfg
    algo = ppo_algorithm(env, policy, cfg)
    params, static = eqx.partition(policy, eqx.is_inexact_array)

    @jax.jit
    def train(p, key):
        k_reset, k_train = jax.random.split(key)
        state = algo.init(k_reset, eqx.combine(p, static))
        state, trace = run(algo.step, state, k_train, cfg.num_updates)
        return state.train.params, trace.infos

    p, metrics = train(params, key)
    return eqx.combine(p, static), metrics


def _example(key: jax.Array):
    """A tiny PPO instance on RodInsert2D's Pick skill (4 environments x 8 steps, one epoch of 2 minibatches)."""
    k_pol, k_init = jax.random.split(key)
    policy = SkillPolicy(k_pol, OBS_DIM, ACTION_DIM, 2, width=8, depth=1)
    cfg = PPOConfig(num_envs=4, num_steps=8, num_minibatches=2, update_epochs=1, num_updates=3)
    algo = ppo_algorithm(pick_skill_env(), policy, cfg)
    return algo, algo.init(k_init, policy), None


register_algorithm("ppo", ppo_algorithm, _example, area="tree_of_skill")
