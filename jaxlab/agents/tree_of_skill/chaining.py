r"""Tree-of-Skill (ToS): BT-driven skill chaining with guidance (the runner).

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved). The reconstruction here derives the method from the
abstract, BT Expansion and goal-conditioned RL practice; the objective of the guiding network (a REINFORCE
bandit), successor prediction by an imagined BT tick and the dependency flags are its **[chosen]** minimal
versions.

Math. Skill ``k`` has a goal space ``G_k subset R^{d_k}`` padded to ``R^{d_g}`` with a static mask
``m_k^space``; the runtime mask is ``m = m_k^space * mu`` with ``mu in {0, 1}`` (``mu = 0``: no goal from a
successor, the skill runs its default behaviour), and the policy sees ``pi_k(u | o, g * m, m)``. For a pair
``k -> k'`` with ``dep[k, k'] = 1`` the successor's guiding network ``G_{k' <- k}(o) = (mu_g, log sigma_g)``
hands the current skill the goal ``g = mu_g`` (evaluation) or ``g ~ N(mu_g, sigma_g^2)`` (training). Guiding
networks are trained as a one-step contextual bandit: ``R = 1[k succeeded] + 1[k' succeeded]``, loss
``-(R - b) log N(g; mu_g, sigma_g^2)`` over the goal's dimensions, ``b`` a running mean of ``R``.

Execution (:func:`run_tos_episode`): the BT (plain Python, :mod:`~jaxlab.agents.tree_of_skill.behavior_tree`)
is ticked on the literals of every episode; the running action's skill ``k`` gets the goal of the guiding
network of the predicted successor ``k'`` (:func:`~jaxlab.agents.tree_of_skill.behavior_tree.predict_successor`)
when ``dep[k, k']``; then all episodes run their skills to termination in one jitted, vmapped call (skills
chosen per episode by ``lax.switch``), and the BT is ticked again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents.tree_of_skill.behavior_tree import Action, Node, Status, predict_successor, tick, validate_tree
from jaxlab.agents.tree_of_skill.interfaces import BTEnv, Skill
from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int

__all__ = ["EpisodeResult", "rollout_skill", "run_tos_episode", "skill_type"]


def rollout_skill(env: BTEnv, act: Callable, done: Callable, horizon: int, key, state, obs, goal, mask,
                  finished=False, stochastic: bool = False):
    """Run one skill from ``state`` until ``done(state)``, the env's ``done`` or ``horizon`` steps (vmappable).

    A ``lax.scan`` of exactly ``horizon`` steps, one key each (split from ``key``); once finished, the state and
    observation are frozen.

    Args:
      env: the :class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv` (only ``env.step`` is used).
      act: the skill's controller, ``act(obs, goal, mask) -> action`` (with ``stochastic``:
        ``act(obs, goal, mask, key)``).
      done: the skill's termination predicate ``done(state) -> bool``.
      horizon: number of scan steps, a static int ``>= 1``.
      key: PRNG key.
      state: the environment state to start from.
      obs: the observation of ``state``.
      goal: ``(d_g,)`` goal handed to the skill (already masked).
      mask: ``(d_g,)`` goal mask ``m``.
      finished: bool (or bool 0-d array): start frozen (an episode already over).
      stochastic: ``act`` takes a fourth argument, a key split from each step's key (the env gets the other
        half).

    Returns:
      A tuple ``(state, obs, ok)``: the final state and observation, and ``ok = done(state)`` (bool 0-d array).
    """

    def body(carry, k):
        st, ob, fin = carry
        if stochastic:
            k, k_act = jax.random.split(k)
            u = act(ob, goal, mask, k_act)
        else:
            u = act(ob, goal, mask)
        ob2, st2, _, env_done, _ = env.step(k, st, u)
        # the carry keeps its dtype whatever the user's act/step return (a float64 action on a float32 state)
        keep = lambda old, new: jnp.where(fin, old, new).astype(jnp.result_type(old))  # noqa: E731
        st = jax.tree_util.tree_map(keep, st, st2)
        ob = keep(ob, ob2)
        return (st, ob, fin | env_done | done(st)), None

    fin0 = jnp.asarray(finished) | done(state)
    (state, obs, _), _ = jax.lax.scan(body, (state, obs, fin0), jax.random.split(key, horizon))
    return state, obs, done(state)


class EpisodeResult(NamedTuple):
    """Outcome of :func:`run_tos_episode` for ``B`` episodes.

    Attributes:
      success: ``(B,)`` bool NumPy array, the final tick returned SUCCESS.
      phases: ``(B,)`` int NumPy array, the number of skills each episode ran.
      trace: list of ``B`` lists, the action names each episode ran, in order.
      goals: ``(n_phases, B, d_g)`` NumPy array, the goals handed to the skills in each phase (zeros where
        masked or for finished episodes).
      state: the final environment states (a pytree with leading axis ``B``).
    """

    success: np.ndarray
    phases: np.ndarray
    trace: list
    goals: np.ndarray
    state: Any


def skill_type(action: Action) -> str:
    """Skill type of an action instance: its name up to ``(`` (``"Pick(rod)" -> "Pick"``).

    Args:
      action: a :class:`~jaxlab.agents.tree_of_skill.behavior_tree.Action` leaf.

    Returns:
      The skill type, the key of the skill in the runner's ``skills``.
    """
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
    """Run ``num_episodes`` BT-driven episodes (vmapped) with skill chaining (the Tree-of-Skill runner).

    Each phase ticks ``bt`` on every episode's literals (Python); the running action ``a`` selects skill
    ``k = skill_of(a)``; its goal is ``g = mu_g`` of ``guides[(k, k')]`` when ``guidance`` names a successor
    ``k'`` and ``(k, k') in dep``, else ``mu = 0``. Then every episode runs its skill for up to its horizon in one
    jitted, vmapped call (:func:`rollout_skill`, skills chosen by ``lax.switch``). Episodes end when the tick
    succeeds or fails, or after ``max_phases`` skills. The method is reconstructed from the abstract of
    "Tree-of-Skill: Neural-Symbolic Dynamic Skill Chaining in Behavior-Tree-Driven Reinforcement Learning"
    (2026; authors and arXiv id not retrieved) and from BT Expansion (Cai, Li, Huang, Yang, "BT Expansion: a
    Sound and Complete Algorithm for Behavior Planning of Intelligent Robots with Behavior Trees", AAAI 2021);
    the successor prediction by an imagined tick and the dependency flags are **[chosen]**.

    Args:
      key: PRNG key (resets and rollouts).
      bt: the behaviour tree (e.g. from :func:`~jaxlab.agents.tree_of_skill.behavior_tree.bt_expand`).
      skills: ``skill type -> Skill``, every type the tree runs.
      guides: ``(k, k') -> guiding network``, a callable ``obs -> (mu_g, log sigma_g)`` (e.g. a
        :class:`~jaxlab.agents.tree_of_skill.policies.GuidingNet`); may be empty.
      dep: the dependency flags, pairs ``(k, k')`` whose guidance is used.
      env: the :class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv`.
      num_episodes: ``B``, an int ``>= 1``.
      max_phases: most skills run per episode, an int ``>= 1``.
      guidance: ``"tos"`` (``k'`` = successor predicted by the behaviour models,
        :func:`~jaxlab.agents.tree_of_skill.behavior_tree.predict_successor`), ``"none"`` (independent skills,
        ``mu = 0`` everywhere), or a mapping ``k -> k'`` (fixed-sequence chaining: guidance from the predefined
        next skill, whatever the BT would do).
      skill_of: maps an action leaf to its skill type (default :func:`skill_type`).

    Returns:
      The :class:`EpisodeResult`.

    Raises:
      ValueError: an invalid tree, empty ``skills``, a ``guides`` key naming a skill not in ``skills``, a bad
        ``guidance`` value, ``num_episodes``, ``max_phases`` or a skill's ``horizon`` below 1, or a tree action
        whose skill type is not in ``skills``.
      TypeError: ``num_episodes``, ``max_phases`` or a skill's ``horizon`` is not an int.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.agents.tree_of_skill import BTEnv, Skill, goal_spec, run_tos_episode
      >>> from jaxlab.agents.tree_of_skill.behavior_tree import Action, bt_expand
      >>> env = BTEnv(reset=lambda key: (jnp.zeros(1), jnp.zeros(1)),  # a 1-d walk to x >= 1
      ...             step=lambda key, s, u: (s + 0.5 * u, s + 0.5 * u, 0.0, jnp.asarray(False), {}),
      ...             literals=lambda s: {"At": s[0] >= 1.0})
      >>> bt = bt_expand(("At",), [Action("Go", add=frozenset({"At"}))], set())
      >>> go = Skill(lambda o, g, m: jnp.ones(1), goal_spec(0, 1), 3, lambda s: s[0] >= 1.0)
      >>> res = run_tos_episode(jax.random.key(0), bt, {"Go": go}, {}, set(), env, num_episodes=2)
      >>> res.success.tolist(), res.trace
      ([True, True], [['Go'], ['Go']])
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
