r"""PPO for goal-conditioned skills (Tree-of-Skill stage 1), purejaxrl-style: the whole training is one jitted
``lax.scan`` over updates; each update rolls out ``num_envs`` vmapped environments for ``num_steps`` steps,
computes GAE advantages and runs ``update_epochs`` epochs of minibatch clipped-surrogate updates (optax).

Schulman, Wolski, Dhariwal, Radford, Klimov, "Proximal Policy Optimization Algorithms", arXiv:1707.06347:
``L = E[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] - c_v E[(V - R)^2] + c_e H``, ``rho = pi(u|x) / pi_old(u|x)``;
GAE (Schulman et al. 2016): ``delta_t = r_t + gamma V_{t+1} (1 - d_t) - V_t``,
``A_t = delta_t + gamma lambda (1 - d_t) A_{t+1}``. Defaults are spec B.3's (lr 3e-4, gamma 0.99, lambda 0.95,
clip 0.2, 4 epochs, 8 minibatches, 64 envs, 128-step rollouts). The policy is a
:class:`~jaxlab.agents.tree_of_skill.SkillPolicy` (Gaussian, ``pi(u | o, g * m, m)``); goals and masks are sampled
by the skill environment's reset (``p_drop`` of them masked).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from jaxlab.agents._papers import TOS
from jaxlab.agents._papers_tree_of_skill import PPO
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int, check_positive

__all__ = ["PPOConfig", "PPOMetrics", "SkillEnv", "ppo_train"]


class SkillEnv(NamedTuple):
    """A goal-conditioned skill MDP: ``reset(key) -> (obs, state, goal, mask)`` samples the initiation set and
    the goal; ``step(key, state, action, goal, mask) -> (obs, state, reward, done, success)``."""

    reset: Callable
    step: Callable


class PPOConfig(NamedTuple):
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
    mean_reward: jax.Array  # (num_updates,) per step
    success_rate: jax.Array  # (num_updates,) successes per finished episode
    loss: jax.Array  # (num_updates,)


def _log_prob(mean, log_std, u):
    return jnp.sum(-0.5 * ((u - mean) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


@cites(PPO, TOS)
def ppo_train(key: jax.Array, env: SkillEnv, policy: eqx.Module, cfg: PPOConfig | None = None
              ) -> tuple[eqx.Module, PPOMetrics]:
    """Train ``policy`` on ``env`` with PPO; returns the trained policy and per-update metrics."""
    cfg = PPOConfig() if cfg is None else cfg
    check_positive(cfg.lr, "cfg.lr")
    n_env = check_int(cfg.num_envs, "cfg.num_envs", min_value=1)
    n_steps = check_int(cfg.num_steps, "cfg.num_steps", min_value=1)
    n_mb = check_int(cfg.num_minibatches, "cfg.num_minibatches", min_value=1)
    check_int(cfg.num_updates, "cfg.num_updates", min_value=1)
    if (n_env * n_steps) % n_mb:
        raise ValueError(f"cfg.num_minibatches={n_mb} must divide num_envs * num_steps = {n_env * n_steps}")
    params, static = eqx.partition(policy, eqx.is_inexact_array)
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

    def update(carry, key):
        p, opt_state, st, obs, goal, mask = carry
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

            def mb_step(c2, mb):
                p2, os2 = c2
                loss, grads = jax.value_and_grad(loss_fn)(p2, mb)
                upd, os2 = opt.update(grads, os2, p2)
                return (optax.apply_updates(p2, upd), os2), loss

            c, losses = jax.lax.scan(mb_step, c, mbs)
            return c, losses.mean()

        (p, opt_state), losses = jax.lax.scan(epoch, (p, opt_state), jax.random.split(k_perm, cfg.update_epochs))
        n_done = jnp.maximum(t_d.sum(), 1.0)
        metrics = PPOMetrics(t_r.mean(), t_s.sum() / n_done, losses.mean())
        return (p, opt_state, st, obs, goal, mask), metrics

    @jax.jit
    def train(p, key):
        k_reset, k_train = jax.random.split(key)
        obs, st, goal, mask = jax.vmap(env.reset)(jax.random.split(k_reset, n_env))
        carry = (p, opt.init(p), st, obs, goal, mask)
        (p, *_), metrics = jax.lax.scan(update, carry, jax.random.split(k_train, cfg.num_updates))
        return p, metrics

    p, metrics = train(params, key)
    return eqx.combine(p, static), metrics
