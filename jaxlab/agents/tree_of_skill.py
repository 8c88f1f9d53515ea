r"""Tree-of-Skill (ToS): goal-masked skills, guiding networks and BT-driven skill chaining with guidance.

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved). The spec (``agents_systems.md`` B.3) reconstructs the method from the
abstract, BT Expansion and goal-conditioned RL practice; the objective of the guiding network (a REINFORCE
bandit), successor prediction by an imagined BT tick and the dependency flags are its **[chosen]** minimal
versions.

Math (B.3). Skill ``k`` has a goal space ``G_k subset R^{d_k}`` padded to ``R^{d_g}`` with a static mask
``m_k^space``; the runtime mask is ``m = m_k^space * mu`` with ``mu in {0, 1}`` (``mu = 0``: no goal from a
successor, the skill runs its default behaviour), and the policy sees ``pi_k(u | o, g * m, m)``. For a pair
``k -> k'`` with ``dep[k, k'] = 1`` the successor's guiding network ``G_{k' <- k}(o) = (mu_g, log sigma_g)``
hands the current skill the goal ``g = mu_g`` (evaluation) or ``g ~ N(mu_g, sigma_g^2)`` (training). Guiding
networks are trained as a one-step contextual bandit: ``R = 1[k succeeded] + 1[k' succeeded]``, loss
``-(R - b) log N(g; mu_g, sigma_g^2)`` over the goal's dimensions, ``b`` a running mean of ``R``.

Execution (:func:`run_tos_episode`): the BT (plain Python, :mod:`~jaxlab.agents.behavior_tree`) is ticked on the
literals of every episode; the running action's skill ``k`` gets the goal of the guiding network of the
predicted successor ``k'`` (:func:`~jaxlab.agents.behavior_tree.predict_successor`) when ``dep[k, k']``; then all
episodes run their skills to termination in one jitted, vmapped call (skills chosen per episode by
``lax.switch``), and the BT is ticked again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.agents._papers import TOS
from jaxlab.agents.behavior_tree import Action, Node, Status, predict_successor, tick, validate_tree
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int, check_positive, check_shape, is_concrete

__all__ = [
    "BTEnv",
    "EpisodeResult",
    "GoalSpec",
    "GuideConfig",
    "GuidingNet",
    "Skill",
    "SkillPolicy",
    "goal_spec",
    "masked_goal",
    "rollout_skill",
    "run_tos_episode",
    "skill_type",
    "train_guiding",
]


class GoalSpec(NamedTuple):
    """A skill's goal space: its own dimension ``d_k`` and the static mask ``m_k^space`` in ``R^{d_g}``."""

    dim: int
    space_mask: jax.Array


def goal_spec(dim: int, d_g: int) -> GoalSpec:
    """Goal spec whose first ``dim`` of ``d_g`` entries are used."""
    dim = check_int(dim, "dim", min_value=0)
    d_g = check_int(d_g, "d_g", min_value=1)
    if dim > d_g:
        raise ValueError(f"dim must be <= d_g={d_g}, got {dim}")
    return GoalSpec(dim, (jnp.arange(d_g) < dim).astype(jnp.result_type(float)))


@cites(TOS)
def masked_goal(goal: Any, spec: GoalSpec, use_goal: Any) -> tuple[jax.Array, jax.Array]:
    """``(g * m, m)`` with ``m = m_k^space * mu`` (jit/vmap). Masked entries are set to exactly 0 (not multiplied),
    so that a policy given ``mu = 0`` sees the same input whatever the goal vector holds, even non-finite.

    Raises:
      ValueError: ``goal`` not of length ``d_g`` (trace time), or a concrete mask / ``use_goal`` not in {0, 1}.
    """
    goal = jnp.asarray(goal)
    space = jnp.asarray(spec.space_mask)
    check_shape(goal, "goal", space.shape)
    if is_concrete(space) and not np.all(np.isin(np.asarray(space), (0, 1))):
        raise ValueError(f"spec.space_mask must hold only 0/1, got {np.asarray(space)}")
    use = jnp.asarray(use_goal)
    check_shape(use, "use_goal", ())
    if is_concrete(use) and float(use) not in (0.0, 1.0):
        raise ValueError(f"use_goal must be 0/1 (or a bool), got {use}")
    m = space * use.astype(space.dtype)
    return jnp.where(m > 0, goal, 0.0).astype(goal.dtype), m


def _mlp(key, n_in, n_out, width, depth):
    return eqx.nn.MLP(n_in, n_out, width, depth, activation=jnp.tanh, key=key)


class SkillPolicy(eqx.Module):
    """Goal-conditioned Gaussian actor-critic ``pi_k(u | o, g * m, m)`` (two MLPs, tanh, state-independent
    ``log_std``). The goal enters only through ``where(m > 0, g, 0)`` and ``m``."""

    actor: eqx.nn.MLP
    critic: eqx.nn.MLP
    log_std: jax.Array

    def __init__(self, key: jax.Array, obs_dim: int, action_dim: int, d_g: int, width: int = 64, depth: int = 2,
                 init_log_std: float = -0.5):
        ka, kc = jax.random.split(key)
        n_in = obs_dim + 2 * d_g
        self.actor = _mlp(ka, n_in, action_dim, width, depth)
        self.critic = _mlp(kc, n_in, "scalar", width, depth)
        self.log_std = jnp.full((action_dim,), init_log_std)

    def __call__(self, obs, goal, mask):
        x = jnp.concatenate([obs, jnp.where(mask > 0, goal, 0.0), mask])
        return self.actor(x), self.log_std, self.critic(x)

    def act(self, obs, goal, mask):
        """Deterministic action (the mean), for evaluation."""
        return self(obs, goal, mask)[0]

    def sample(self, obs, goal, mask, key):
        """An action drawn from the policy, ``mean + exp(log_std) * N(0, I)`` (what PPO trains and scores)."""
        mean, log_std, _ = self(obs, goal, mask)
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape, mean.dtype)


class GuidingNet(eqx.Module):
    """``G_{k' <- k}(o) -> (mu_g, log sigma_g)``, ``mu_g = mu_scale * tanh(.)`` (bounded to the goal space),
    ``log sigma_g = clip(. + init_log_sigma, -5, 1)``."""

    mlp: eqx.nn.MLP
    mu_scale: float = eqx.field(static=True)
    init_log_sigma: float = eqx.field(static=True)

    def __init__(self, key: jax.Array, obs_dim: int, d_g: int, width: int = 64, depth: int = 2,
                 mu_scale: float = 1.0, init_log_sigma: float = -1.0):
        self.mlp = _mlp(key, obs_dim, 2 * d_g, width, depth)
        self.mu_scale = float(mu_scale)
        self.init_log_sigma = float(init_log_sigma)

    def __call__(self, obs):
        out = self.mlp(obs)
        d = out.shape[0] // 2
        return self.mu_scale * jnp.tanh(out[:d]), jnp.clip(out[d:] + self.init_log_sigma, -5.0, 1.0)


class Skill(NamedTuple):
    """A skill as the ToS runner executes it: ``act(obs, goal, mask) -> action`` (pure JAX; a trained
    :class:`SkillPolicy`'s ``act`` or a scripted controller), its goal spec, a step budget, and the termination
    predicate ``done(env_state) -> bool`` (its success condition). With ``stochastic=True`` the runner calls
    ``act(obs, goal, mask, key)`` with a fresh key each step (e.g. :meth:`SkillPolicy.sample`: a PPO policy is
    trained and measured as the Gaussian policy, and its mean alone may never close a thresholded gripper)."""

    act: Callable
    spec: GoalSpec
    horizon: int
    done: Callable
    stochastic: bool = False


class BTEnv(NamedTuple):
    """An environment for BT-driven execution: ``reset(key) -> (obs, state)``, ``step(key, state, action) ->
    (obs, state, reward, done, info)`` and ``literals(state) -> {literal: bool array}`` (all pure JAX)."""

    reset: Callable
    step: Callable
    literals: Callable


def rollout_skill(env: BTEnv, act: Callable, done: Callable, horizon: int, key, state, obs, goal, mask,
                  finished=False, stochastic: bool = False):
    """Run one skill from ``state`` until ``done(state)``, the env's ``done`` or ``horizon`` steps; a finished
    episode is frozen. Returns ``(state, obs, done(state))`` (vmappable). ``stochastic``: ``act`` takes a fourth
    argument, a key (split from each step's key; the env then gets the other half)."""

    def body(carry, k):
        st, ob, fin = carry
        if stochastic:
            k, k_act = jax.random.split(k)
            u = act(ob, goal, mask, k_act)
        else:
            u = act(ob, goal, mask)
        ob2, st2, _, env_done, _ = env.step(k, st, u)
        keep = lambda old, new: jnp.where(fin, old, new)  # noqa: E731
        st = jax.tree_util.tree_map(keep, st, st2)
        ob = keep(ob, ob2)
        return (st, ob, fin | env_done | done(st)), None

    fin0 = jnp.asarray(finished) | done(state)
    (state, obs, _), _ = jax.lax.scan(body, (state, obs, fin0), jax.random.split(key, horizon))
    return state, obs, done(state)


class EpisodeResult(NamedTuple):
    """Outcome of :func:`run_tos_episode` for ``B`` episodes: ``success`` (B,) bool (the final tick succeeded),
    ``phases`` (B,) skills run, ``trace`` the skill names run per episode, ``goals`` (phases, B, d_g) goals
    handed to the skills (zeros where masked), ``state`` the final env states."""

    success: np.ndarray
    phases: np.ndarray
    trace: list
    goals: np.ndarray
    state: Any


def skill_type(action: Action) -> str:
    """Skill type of an action instance: its name up to ``(`` (``"Pick(rod)" -> "Pick"``)."""
    return action.name.split("(", 1)[0]


def _zeros_guide(obs, d_g, dtype):
    return jnp.zeros((d_g,), dtype), jnp.zeros((d_g,), dtype)


@eqx.filter_jit
def _phase(skills, guides, env, horizon, keys, states, obs, skill_idx, guide_idx, use_goal):
    masks = jnp.stack([s.spec.space_mask for s in skills])
    stochastic = any(s.stochastic for s in skills)
    d_g = masks.shape[1]
    branches = [lambda o, g=g: g(o) for g in guides] or [lambda o: _zeros_guide(o, d_g, obs.dtype)]

    def one(key, state, ob, k, gi, use):
        kk = jnp.maximum(k, 0)
        mu, _ = jax.lax.switch(gi, branches, ob)
        m = masks[kk] * use
        g = jnp.where(m > 0, mu, 0.0)
        # plain lambdas as branches: a skill's act may be a bound method of a module holding traced arrays
        # with any stochastic skill every branch takes a key (deterministic skills ignore it)
        acts = [(lambda o, gg, mm, *ka, f=s.act: f(o, gg, mm, *ka)) if s.stochastic else
                (lambda o, gg, mm, *ka, f=s.act: f(o, gg, mm)) for s in skills]
        dones = [lambda st, f=s.done: f(st) for s in skills]
        act = lambda o, gg, mm, *ka: jax.lax.switch(kk, acts, o, gg, mm, *ka)  # noqa: E731
        done = lambda st: jax.lax.switch(kk, dones, st)  # noqa: E731
        state, ob, ok = rollout_skill(env, act, done, horizon, key, state, ob, g, m, finished=k < 0,
                                      stochastic=stochastic)
        return state, ob, ok, g

    return jax.vmap(one)(keys, states, obs, skill_idx, guide_idx, use_goal)


@cites(TOS)
def run_tos_episode(key: jax.Array, bt: Node, skills: Mapping[str, Skill], guides: Mapping[tuple[str, str], Any],
                    dep: Collection[tuple[str, str]], env: BTEnv, *, num_episodes: int = 1, max_phases: int = 8,
                    guidance: str | Mapping[str, str] = "tos",
                    skill_of: Callable[[Action], str] = skill_type) -> EpisodeResult:
    """Run ``num_episodes`` BT-driven episodes (vmapped) with skill chaining.

    Each phase ticks ``bt`` on every episode's literals (Python); the running action ``a`` selects skill
    ``k = skill_of(a)``; its goal comes from ``guides[(k, k')]`` (the mean ``mu_g``) when ``guidance`` allows it and
    ``(k, k') in dep``, else ``mu = 0``. ``guidance``: ``"tos"`` (``k'`` = successor predicted by the behaviour
    models), ``"none"`` (independent skills, ``mu = 0`` everywhere), or a mapping ``k -> k'`` (fixed-sequence
    chaining: guidance from the predefined next skill, whatever the BT would do). Episodes end when the tick
    succeeds or fails, or after ``max_phases`` skills.

    Raises:
      ValueError: unknown skill types in the tree, guides for pairs outside ``dep`` naming unknown skills, a bad
        ``guidance`` value, or non-positive ``num_episodes``/``max_phases``.
    """
    validate_tree(bt)
    n = check_int(num_episodes, "num_episodes", min_value=1)
    max_phases = check_int(max_phases, "max_phases", min_value=1)
    names = list(skills)
    if not names:
        raise ValueError("skills must name at least one skill")
    pairs = list(guides)
    for k, k2 in pairs:
        if k not in skills or k2 not in skills:
            raise ValueError(f"guides key {(k, k2)} names a skill not in skills {names}")
    if not (guidance in ("tos", "none") or isinstance(guidance, Mapping)):
        raise ValueError(f"guidance must be 'tos', 'none' or a mapping skill -> next skill, got {guidance!r}")
    dep = set(dep)
    horizon = max(check_int(s.horizon, f"skills[{k!r}].horizon", min_value=1) for k, s in skills.items())
    k0, key = jax.random.split(key)
    obs, states = jax.vmap(env.reset)(jax.random.split(k0, n))
    cache: dict[frozenset, tuple] = {}

    def decide(lits: frozenset):
        if lits not in cache:
            st, act = tick(bt, lits)
            if st != Status.RUNNING:
                cache[lits] = (st, None, -1, 0, 0.0)
            else:
                k = skill_of(act)
                if k not in skills:
                    raise ValueError(f"the tree runs action {act.name} of skill type {k!r}, not in skills {names}")
                if guidance == "tos":
                    nxt = predict_successor(bt, act, lits)
                    k2 = None if nxt is None else skill_of(nxt)
                elif guidance == "none":
                    k2 = None
                else:
                    k2 = guidance.get(k)
                use = k2 is not None and (k, k2) in dep and (k, k2) in guides
                gi = pairs.index((k, k2)) if use else 0
                cache[lits] = (st, act.name, names.index(k), gi, float(use))
        return cache[lits]

    success = np.zeros(n, bool)
    phases = np.zeros(n, int)
    trace: list[list[str]] = [[] for _ in range(n)]
    goals = []
    skill_tuple = tuple(skills[k] for k in names)
    guide_tuple = tuple(guides[p] for p in pairs)
    for _ in range(max_phases + 1):
        lit_vals = {k: np.asarray(v) for k, v in jax.vmap(env.literals)(states).items()}
        decisions = [decide(frozenset(lit for lit, v in lit_vals.items() if v[i])) for i in range(n)]
        success = np.array([d[0] == Status.SUCCESS for d in decisions])
        idx = np.array([d[2] for d in decisions])
        if (idx < 0).all() or len(goals) == max_phases:
            break
        for i, d in enumerate(decisions):
            if d[1] is not None:
                trace[i].append(d[1])
        phases += idx >= 0
        key, kp = jax.random.split(key)
        states, obs, _, g = _phase(skill_tuple, guide_tuple, env, horizon, jax.random.split(kp, n), states, obs,
                                   jnp.asarray(idx), jnp.asarray([d[3] for d in decisions]),
                                   jnp.asarray([d[4] for d in decisions], obs.dtype))
        goals.append(np.asarray(g))
    return EpisodeResult(success, phases, trace, np.asarray(goals), states)


class GuideConfig(NamedTuple):
    """Guiding-network training (spec B.3 stage 2 defaults: lr 1e-3)."""

    lr: float = 1e-3
    num_updates: int = 100
    batch: int = 128
    baseline_decay: float = 0.9


class GuideMetrics(NamedTuple):
    mean_return: jax.Array  # (num_updates,) mean R = 1[k ok] + 1[k' ok]
    success_k: jax.Array  # (num_updates,)
    success_next: jax.Array  # (num_updates,)


@cites(TOS)
def train_guiding(key: jax.Array, env: BTEnv, skill_k: Skill, skill_next: Skill, guide: GuidingNet,
                  cfg: GuideConfig | None = None) -> tuple[GuidingNet, GuideMetrics]:
    """Train ``G_{k' <- k}`` as a one-step contextual bandit with REINFORCE and a running-mean baseline (skills
    frozen): ``o_0 ~ reset``, ``g ~ N(mu_g(o_0), sigma_g^2)``, run ``k`` with goal ``g`` (``mu = 1``), then ``k'``
    goal-free; ``R = 1[k ok] + 1[k' ok]``; minimise ``-(R - b) sum_j m_j log N(g_j; mu_j, sigma_j^2)``. One
    ``lax.scan`` over updates, episodes vmapped; optax Adam."""
    cfg = GuideConfig() if cfg is None else cfg
    check_positive(cfg.lr, "cfg.lr")
    n_up = check_int(cfg.num_updates, "cfg.num_updates", min_value=1)
    batch = check_int(cfg.batch, "cfg.batch", min_value=1)
    m_k = skill_k.spec.space_mask
    zero = jnp.zeros_like(m_k)
    params, static = eqx.partition(guide, eqx.is_inexact_array)
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

    def update(carry, key):
        p, opt_state, b = carry
        (_, (ret, ok_k, ok_n)), grads = jax.value_and_grad(loss, has_aux=True)(p, jax.random.split(key, batch), b)
        upd, opt_state = opt.update(grads, opt_state, p)
        p = optax.apply_updates(p, upd)
        b = cfg.baseline_decay * b + (1 - cfg.baseline_decay) * ret.mean()
        return (p, opt_state, b), GuideMetrics(ret.mean(), ok_k.mean(), ok_n.mean())

    @jax.jit
    def train(p, key):
        carry = (p, opt.init(p), jnp.zeros((), m_k.dtype))
        (p, _, _), metrics = jax.lax.scan(update, carry, jax.random.split(key, n_up))
        return p, metrics

    p, metrics = train(params, key)
    return eqx.combine(p, static), metrics
