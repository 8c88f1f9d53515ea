r"""Training a guiding network ``G_{k' <- k}`` (Tree-of-Skill stage 2) as a one-step contextual bandit with
REINFORCE and a running-mean baseline.

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved); the bandit objective is the **[chosen]** minimal version of its guidance
training. For a pair ``k -> k'`` with frozen skills: ``o_0 ~ reset``, ``g ~ N(mu_g(o_0), sigma_g^2)``, run ``k``
with goal ``g`` (``mu = 1``), then ``k'`` goal-free; ``R = 1[k succeeded] + 1[k' succeeded]``; minimise
``-(R - b) sum_j m_j log N(g_j; mu_j, sigma_j^2)`` with ``b`` a running mean of ``R``. REINFORCE: Williams,
"Simple statistical gradient-following algorithms for connectionist reinforcement learning", Machine Learning
8 (1992).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from jaxlab.agents.tree_of_skill.chaining import rollout_skill
from jaxlab.agents.tree_of_skill.interfaces import BTEnv, Skill
from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.agents.tree_of_skill.policies import GuidingNet
from jaxlab.agents.tree_of_skill.rodinsert import OBS_DIM, rodinsert_bt_env, scripted_skills
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.train import TrainState, make_train_step, train_init
from jaxlab.core.validation import check_int, check_positive

__all__ = ["GuideConfig", "GuideMetrics", "GuideState", "guiding_algorithm", "train_guiding"]


class GuideConfig(NamedTuple):
    """Hyperparameters of guiding-network training (optax Adam; defaults **[chosen]**).

    Attributes:
      lr: Adam learning rate, ``> 0`` (default ``1e-3``).
      num_updates: number of updates (steps of :func:`guiding_algorithm`), ``>= 1``.
      batch: episodes per update, ``>= 1``.
      baseline_decay: decay of the running-mean baseline, ``b <- decay b + (1 - decay) mean R``.
    """

    lr: float = 1e-3
    num_updates: int = 100
    batch: int = 128
    baseline_decay: float = 0.9


class GuideMetrics(NamedTuple):
    """Per-update diagnostics of guiding-network training (0-d per step; ``(num_updates,)`` from
    :func:`train_guiding`).

    Attributes:
      mean_return: mean return ``R = 1[k succeeded] + 1[k' succeeded]`` of the update's episodes.
      success_k: success rate of the guided skill ``k``.
      success_next: success rate of its successor ``k'``.
    """

    mean_return: jax.Array  # (num_updates,) mean R = 1[k ok] + 1[k' ok]
    success_k: jax.Array  # (num_updates,)
    success_next: jax.Array  # (num_updates,)


class GuideState(NamedTuple):
    """State of guiding-network training.

    Attributes:
      train: the trainer's :class:`~jaxlab.core.train.TrainState` (the network's array parameters, Adam state,
        update count).
      baseline: 0-d float array, the running-mean baseline ``b`` of the return.
    """

    train: TrainState
    baseline: jax.Array


def _check_cfg(cfg: GuideConfig) -> tuple[int, int]:
    check_positive(cfg.lr, "cfg.lr")
    n_up = check_int(cfg.num_updates, "cfg.num_updates", min_value=1)
    batch = check_int(cfg.batch, "cfg.batch", min_value=1)
    return n_up, batch


@cites(TOS)
def guiding_algorithm(env: BTEnv, skill_k: Skill, skill_next: Skill, guide: GuidingNet,
                      cfg: GuideConfig | None = None) -> Algorithm:
    """The REINFORCE bandit of :func:`train_guiding` as an :class:`~jaxlab.core.Algorithm` (one step = one update).

    ``init(guide) -> GuideState`` starts the trainer (:func:`jaxlab.core.train.train_init`, optax Adam) and the
    baseline ``b = 0``; ``step(key, state) -> (state, GuideMetrics)`` runs ``cfg.batch`` episodes (one key each,
    split from ``key``; vmapped), takes one Adam step on ``-(R - b) sum_j m_j log N(g_j; mu_j, sigma_j^2)`` and
    updates ``b <- decay b + (1 - decay) mean R``. The trained network is
    ``eqx.combine(state.train.params, eqx.partition(guide, eqx.is_inexact_array)[1])``.

    Args:
      env: the environment (:class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv`).
      skill_k: the guided skill ``k`` (run with the sampled goal, ``mu = 1``).
      skill_next: its successor ``k'`` (run goal-free).
      guide: the :class:`~jaxlab.agents.tree_of_skill.policies.GuidingNet` whose structure is bound here.
      cfg: hyperparameters (:class:`GuideConfig`; ``num_updates`` is the caller's number of steps).

    Returns:
      The :class:`~jaxlab.core.Algorithm`.

    Raises:
      ValueError: a non-positive ``cfg.lr``, ``cfg.num_updates`` or ``cfg.batch``.
      TypeError: ``cfg.num_updates`` or ``cfg.batch`` is not an int.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.agents.tree_of_skill import BTEnv, GuideConfig, GuidingNet, Skill, goal_spec, guiding_algorithm
      >>> env = BTEnv(lambda key: (jnp.zeros(1), jnp.zeros(1)),  # a 1-d walk to x >= 1
      ...             lambda key, s, u: (s + 0.5 * u[:1], s + 0.5 * u[:1], 0.0, jnp.asarray(False), {}),
      ...             lambda s: {"At": s[0] >= 1.0})
      >>> go = Skill(lambda o, g, m: jnp.ones(1), goal_spec(1, 1), 3, lambda s: s[0] >= 1.0)
      >>> guide = GuidingNet(jax.random.key(0), obs_dim=1, d_g=1, width=4, depth=1)
      >>> algo = guiding_algorithm(env, go, go, guide, GuideConfig(batch=4))
      >>> state = algo.init(guide)  # then jaxlab.core.run(algo.step, state, key, num_steps)
      >>> float(state.baseline)
      0.0
    """
    cfg = GuideConfig() if cfg is None else cfg
    _, batch = _check_cfg(cfg)
    m_k = skill_k.spec.space_mask
    zero = jnp.zeros_like(m_k)
    _, static = eqx.partition(guide, eqx.is_inexact_array)
    opt = optax.adam(cfg.lr)

    def episode(p, key):
        k0, k1, k2, k3 = jax.random.split(key, 4)
        obs, state = env.reset(k0)
        mu, log_sigma = eqx.combine(p, static)(obs)
        g = jax.lax.stop_gradient(mu + jnp.exp(log_sigma) * jax.random.normal(k1, mu.shape, mu.dtype))
        state, obs, ok_k = rollout_skill(env, skill_k.act, skill_k.done, skill_k.horizon, k2, state, obs, g, m_k,
                                         stochastic=skill_k.stochastic)
        _, _, ok_n = rollout_skill(env, skill_next.act, skill_next.done, skill_next.horizon, k3, state, obs, zero,
                                   zero, stochastic=skill_next.stochastic)
        logp = jnp.sum(m_k * (-0.5 * ((g - mu) / jnp.exp(log_sigma)) ** 2 - log_sigma))
        return logp, ok_k.astype(mu.dtype), ok_n.astype(mu.dtype)

    def loss(p, keys, b):
        logp, ok_k, ok_n = jax.vmap(episode, (None, 0))(p, keys)
        ret = ok_k + ok_n
        return -jnp.mean((ret - b) * logp), (ret, ok_k, ok_n)

    train_step = make_train_step(loss, opt, has_aux=True)

    def step(key: jax.Array, state: GuideState) -> tuple[GuideState, GuideMetrics]:
        ts, b = state
        ts, info = train_step(ts, jax.random.split(key, batch), b)
        ret, ok_k, ok_n = info.aux
        b = (cfg.baseline_decay * b + (1 - cfg.baseline_decay) * ret.mean()).astype(b.dtype)
        return GuideState(ts, b), GuideMetrics(ret.mean(), ok_k.mean(), ok_n.mean())

    def init(guide: GuidingNet) -> GuideState:
        p, _ = eqx.partition(guide, eqx.is_inexact_array)
        return GuideState(train_init(p, opt), jnp.zeros((), jnp.result_type(*jax.tree_util.tree_leaves(p))))

    return Algorithm(init, step)



@cites(TOS)
def train_guiding(key: jax.Array, env: BTEnv, skill_k: Skill, skill_next: Skill, guide: GuidingNet,
                  cfg: GuideConfig | None = None) -> tuple[GuidingNet, GuideMetrics]:
    """Train ``G_{k' <- k}`` as a one-step contextual bandit with REINFORCE and a running-mean baseline.

    With the skills frozen: ``o_0 ~ reset``, ``g ~ N(mu_g(o_0), sigma_g^2)``, run ``k`` with goal ``g``
    (``mu = 1``), then ``k'`` goal-free; ``R = 1[k ok] + 1[k' ok]``; minimise
    ``-(R - b) sum_j m_j log N(g_j; mu_j, sigma_j^2)`` (``m = m_k^space``) and update
    ``b <- decay b + (1 - decay) mean R``. :func:`guiding_algorithm` driven by :func:`jaxlab.core.run` for
    ``cfg.num_updates`` updates in one jitted scan, episodes vmapped; optax Adam. The bandit objective is the
    **[chosen]** minimal version of the guidance training that the Tree-of-Skill abstract describes; the
    estimator is REINFORCE (Williams, Machine Learning 8, 1992).

    Args:
      key: PRNG key of the training episodes.
      env: the :class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv`.
      skill_k: the guided skill ``k`` (run with the sampled goal).
      skill_next: its successor ``k'`` (run goal-free).
      guide: the initial :class:`~jaxlab.agents.tree_of_skill.policies.GuidingNet`.
      cfg: hyperparameters, a :class:`GuideConfig` (default ``GuideConfig()``).

    Returns:
      A tuple ``(guide, metrics)``: the trained network and the :class:`GuideMetrics` with ``(num_updates,)``
      arrays.

    Raises:
      ValueError: a non-positive ``cfg.lr``, ``cfg.num_updates`` or ``cfg.batch``.
      TypeError: ``cfg.num_updates`` or ``cfg.batch`` is not an int.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.agents.tree_of_skill import BTEnv, GuideConfig, GuidingNet, Skill, goal_spec, train_guiding
      >>> env = BTEnv(lambda key: (jnp.zeros(1), jnp.zeros(1)),  # a 1-d walk to x >= 1
      ...             lambda key, s, u: (s + 0.5 * u[:1], s + 0.5 * u[:1], 0.0, jnp.asarray(False), {}),
      ...             lambda s: {"At": s[0] >= 1.0})
      >>> go = Skill(lambda o, g, m: jnp.ones(1), goal_spec(1, 1), 3, lambda s: s[0] >= 1.0)
      >>> guide = GuidingNet(jax.random.key(0), obs_dim=1, d_g=1, width=4, depth=1)
      >>> guide, metrics = train_guiding(jax.random.key(1), env, go, go, guide, GuideConfig(num_updates=2, batch=2))
      >>> metrics.mean_return.shape
      (2,)
    """
    cfg = GuideConfig() if cfg is None else cfg
    n_up, _ = _check_cfg(cfg)
    algo = guiding_algorithm(env, skill_k, skill_next, guide, cfg)
    params, static = eqx.partition(guide, eqx.is_inexact_array)

    @jax.jit
    def train(p, key):
        state, trace = run(algo.step, algo.init(eqx.combine(p, static)), key, n_up)
        return state.train.params, trace.infos

    p, metrics = train(params, key)
    return eqx.combine(p, static), metrics


def _example(key: jax.Array):
    """A tiny instance: ``G_{Insert <- Pick}`` on RodInsert2D with the scripted skills, 4 episodes per update."""
    skills = scripted_skills()
    guide = GuidingNet(key, OBS_DIM, 2, width=8, depth=1, mu_scale=0.3)
    algo = guiding_algorithm(rodinsert_bt_env(), skills["Pick"], skills["Insert"], guide,
                             GuideConfig(num_updates=3, batch=4))
    return algo, algo.init(guide), None


register_algorithm("guiding", guiding_algorithm, _example, area="tree_of_skill")
