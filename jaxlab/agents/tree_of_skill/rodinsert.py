r"""RodInsert2D: the small pick-and-insert environment of Tree-of-Skill's scaled-down experiment.

Pure functional, gymnax-style (``reset(key, params) -> (obs, state)``, ``step(key, state, action, params) ->
(obs, state, reward, done, info)``), jit- and vmap-compatible, no auto-reset.

Dynamics. Gripper ``p in [-1, 1]^2``; action ``u = (v_x, v_y, grip)``; ``p' = clip(p + dt v_max clip(v, -1, 1),
-1, 1)`` with ``dt v_max = 0.05``; ``grip > 0`` closes the gripper. A rod of length ``l = 0.6`` lies along ``x``
with centre ``c``; closing the gripper on the rod (``|p_y - c_y| < 0.05``, ``|p_x - c_x| <= l / 2``) grasps it
at offset ``delta = p_x - c_x``; while held the centre follows ``c = p - (delta, 0)``; opening releases it. The
slot is at ``(x_slot, y_slot) = (1.4, 0)``, outside the workspace: insertion succeeds when the held rod's right
end ``p_x - delta + l / 2 >= x_slot - 0.05`` with ``|p_y - y_slot| < 0.05``. As ``p_x <= 1`` this is reachable
iff ``delta <= -0.05``: a grasp at the rod's centre (``delta = 0``, the goal-free Pick) cannot insert.

The skills of the two-step task (Pick -> Insert), their behaviour models and the symbolic literals
``Holding(rod)``, ``Inserted(rod)`` are defined here too; **[chosen]**: rewards, initiation sets and the scripted
(analytic goal-conditioned) skills, which the abstract leaves open.

Observation (6,): ``(p_x, p_y, c_x, c_y, held, delta)``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.agents.tree_of_skill.behavior_tree import Action
from jaxlab.agents.tree_of_skill.interfaces import BTEnv, Skill, SkillEnv, goal_spec
from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_finite, check_shape

__all__ = [
    "ACTION_DIM",
    "DEFAULT_PARAMS",
    "OBS_DIM",
    "EnvState",
    "PickState",
    "RodInsertParams",
    "grasp_at",
    "move_gripper",
    "pick_skill_env",
    "rodinsert_actions",
    "rodinsert_bt_env",
    "rodinsert_literals",
    "rodinsert_obs",
    "rodinsert_reset",
    "rodinsert_step",
    "rodinsert_step_numpy",
    "scripted_insert",
    "scripted_pick",
    "scripted_skills",
    "toward",
]

OBS_DIM = 6
ACTION_DIM = 3


class RodInsertParams(NamedTuple):
    """Static parameters (the reconstruction's values; start ranges **[chosen]**)."""

    rod_length: float = 0.6
    step_size: float = 0.05  # dt * v_max
    x_slot: float = 1.4
    y_slot: float = 0.0
    tol: float = 0.05  # slot and grasp tolerance
    max_steps: int = 100
    start_range: float = 0.8  # gripper starts uniform in [-start_range, start_range]^2
    rod_x_range: float = 0.3  # rod centre x uniform in [-rod_x_range, rod_x_range]
    rod_y_range: float = 0.6  # rod centre y uniform in [-rod_y_range, rod_y_range]


DEFAULT_PARAMS = RodInsertParams()


class EnvState(NamedTuple):
    p: jax.Array  # (2,) gripper position
    rod: jax.Array  # (2,) rod centre
    held: jax.Array  # () bool
    delta: jax.Array  # () grasp offset p_x - c_x (meaningful while held)
    inserted: jax.Array  # () bool, absorbing
    t: jax.Array  # () int step counter


def rodinsert_obs(state: EnvState) -> jax.Array:
    """``(p_x, p_y, c_x, c_y, held, delta)`` (any leading batch axes)."""
    dtype = state.p.dtype
    extra = [state.held.astype(dtype)[..., None], state.delta.astype(dtype)[..., None]]
    return jnp.concatenate([state.p, state.rod, *extra], axis=-1)


@cites(TOS)
def rodinsert_reset(key: jax.Array, params: RodInsertParams = DEFAULT_PARAMS) -> tuple[jax.Array, EnvState]:
    """Gripper uniform in the start box, rod centre uniform in its box, nothing held."""
    k1, k2 = jax.random.split(key)
    dtype = jnp.result_type(float)
    p = jax.random.uniform(k1, (2,), dtype, -params.start_range, params.start_range)
    lim = jnp.asarray([params.rod_x_range, params.rod_y_range], dtype)
    rod = jax.random.uniform(k2, (2,), dtype, -1.0, 1.0) * lim
    state = EnvState(p, rod, jnp.asarray(False), jnp.zeros((), dtype), jnp.asarray(False), jnp.zeros((), jnp.int32))
    return rodinsert_obs(state), state


def move_gripper(p: jax.Array, action: Any, step_size: float, *, debug: bool = False) -> tuple[jax.Array, jax.Array]:
    """The gripper update shared by the RodInsert2D worlds: ``p' = clip(p + step_size clip(u_xy, -1, 1), -1, 1)``
    and ``grip = u_2 > 0``. ``action`` must have shape ``(3,)`` (``ValueError``); ``debug=True`` also checks it is
    finite (``ValueError`` on concrete input, a runtime error under ``jit``)."""
    action = jnp.asarray(action)
    check_shape(action, "action", (ACTION_DIM,))
    if debug:
        action = check_finite(action, "action")
    u = action.astype(p.dtype)
    return jnp.clip(p + step_size * jnp.clip(u[:2], -1.0, 1.0), -1.0, 1.0), u[2] > 0


def on_rod(p: jax.Array, rod: jax.Array, params: RodInsertParams) -> jax.Array:
    """True where the gripper at ``p`` can grasp the rod centred at ``rod``."""
    return (jnp.abs(p[1] - rod[1]) < params.tol) & (jnp.abs(p[0] - rod[0]) <= params.rod_length / 2)


@cites(TOS)
def rodinsert_step(key: jax.Array, state: EnvState, action: Any, params: RodInsertParams = DEFAULT_PARAMS,
                   *, debug: bool = False) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict]:
    """One control step; ``reward = 1`` on the step of insertion, ``done`` on insertion or at ``max_steps``.

    ``key`` is unused (deterministic dynamics) and kept for the gymnax signature. ``debug=True`` checks that the
    action is finite (``ValueError`` on concrete input, a runtime error under ``jit``).
    """
    del key
    dtype = state.p.dtype
    p, grip = move_gripper(state.p, action, params.step_size, debug=debug)
    rod = jnp.where(state.held, p - jnp.stack([state.delta, jnp.zeros((), dtype)]), state.rod)
    grasp = ~state.held & grip & on_rod(p, rod, params)
    held = (state.held & grip) | grasp
    delta = jnp.where(grasp, p[0] - rod[0], state.delta)
    right_end = p[0] - delta + params.rod_length / 2
    now_in = held & (right_end >= params.x_slot - params.tol) & (jnp.abs(p[1] - params.y_slot) < params.tol)
    inserted = state.inserted | now_in
    t = state.t + 1
    new = EnvState(p, rod, held, delta, inserted, t)
    reward = (inserted & ~state.inserted).astype(dtype)
    done = inserted | (t >= params.max_steps)
    return rodinsert_obs(new), new, reward, done, {"held": held, "inserted": inserted}


def rodinsert_literals(state: EnvState) -> dict[str, jax.Array]:
    """Boolean truth values of the symbolic literals (vmappable)."""
    return {"Holding(rod)": state.held, "Inserted(rod)": state.inserted}


def rodinsert_actions() -> tuple[Action, ...]:
    """Behaviour models of the two-step task: ``Insert(rod,slot)`` needs ``Holding(rod)``, adds
    ``Inserted(rod)``; ``Pick(rod)`` adds ``Holding(rod)``."""
    return (
        Action("Insert(rod,slot)", ("Holding(rod)",), frozenset({"Inserted(rod)"}), frozenset()),
        Action("Pick(rod)", (), frozenset({"Holding(rod)"}), frozenset()),
    )


def toward(p: jax.Array, target: jax.Array, step_size: float) -> jax.Array:
    """The velocity command that moves ``p`` towards ``target`` by at most one step per axis:
    ``clip((target - p) / step_size, -1, 1)``."""
    return jnp.clip((target - p) / step_size, -1.0, 1.0)


def scripted_pick(obs: jax.Array, goal: jax.Array, mask: jax.Array,
                  params: RodInsertParams = DEFAULT_PARAMS) -> jax.Array:
    """Analytic goal-conditioned Pick: move to ``(c_x + delta_goal, c_y)`` (``delta_goal = g_0`` clipped to the
    rod, ``0`` when masked) and close the gripper there. Goal space ``[-l/2, l/2]`` in slot 0."""
    p, rod = obs[:2], obs[2:4]
    half = params.rod_length / 2
    offset = jnp.where(mask[0] > 0, jnp.clip(goal[0], -half, half), 0.0)
    return grasp_at(p, rod + jnp.stack([offset, jnp.zeros_like(offset)]), obs[4], params.step_size)


def grasp_at(p: jax.Array, target: jax.Array, held: jax.Array, step_size: float) -> jax.Array:
    """Action of a scripted grasp: move towards ``target`` (at most one step per axis) and close the gripper once
    there (``|target - p|_inf < 1e-4``) or while already holding (``held > 0``)."""
    there = jnp.max(jnp.abs(target - p)) < 1e-4
    grip = jnp.where(there | (held > 0), 1.0, -1.0)
    return jnp.concatenate([toward(p, target, step_size), grip[None]])


def scripted_insert(obs: jax.Array, goal: jax.Array, mask: jax.Array,
                    params: RodInsertParams = DEFAULT_PARAMS) -> jax.Array:
    """Analytic Insert (no goal): keep the grip closed, align with the slot's ``y`` and push right."""
    del goal, mask
    p = obs[:2]
    v = jnp.stack([jnp.ones_like(p[0]), toward(p[1], params.y_slot, params.step_size)])
    return jnp.concatenate([v, jnp.ones_like(p[:1])])


@functools.lru_cache(maxsize=16)
def rodinsert_bt_env(params: RodInsertParams = DEFAULT_PARAMS) -> BTEnv:
    """RodInsert2D as a :class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv` (cached: the same params give the same
    functions, so jitted runners compile once)."""
    return BTEnv(functools.partial(_reset_p, params=params), functools.partial(_step_p, params=params),
                 rodinsert_literals)


def _reset_p(key, params):
    return rodinsert_reset(key, params)


def _step_p(key, state, action, params):
    return rodinsert_step(key, state, action, params)


def _held(state):
    return state.held


def _inserted(state):
    return state.inserted


@functools.lru_cache(maxsize=16)
def scripted_skills(params: RodInsertParams = DEFAULT_PARAMS, horizon: int = 40) -> dict[str, Skill]:
    """The analytic goal-conditioned skills (``d_g = 2``): ``Pick`` (goal: grasp offset, ``d = 1``; done when
    holding) and ``Insert`` (no goal; done when inserted)."""
    return {
        "Pick": Skill(functools.partial(scripted_pick, params=params), goal_spec(1, 2), horizon, _held),
        "Insert": Skill(functools.partial(scripted_insert, params=params), goal_spec(0, 2), horizon, _inserted),
    }


def rodinsert_step_numpy(p, rod, held, delta, inserted, t, action, params: RodInsertParams = DEFAULT_PARAMS):
    """Plain vectorised NumPy reference of :func:`rodinsert_step` over a batch (leading axis), for tests and the
    benchmark peer: the same equations, written directly on arrays. Returns the new
    ``(p, rod, held, delta, inserted, t, reward, done)``."""
    import numpy as np

    p = np.clip(p + params.step_size * np.clip(action[:, :2], -1.0, 1.0), -1.0, 1.0)
    grip = action[:, 2] > 0
    rod = np.where(held[:, None], p - np.stack([delta, np.zeros_like(delta)], axis=1), rod)
    can = (np.abs(p[:, 1] - rod[:, 1]) < params.tol) & (np.abs(p[:, 0] - rod[:, 0]) <= params.rod_length / 2)
    grasp = ~held & grip & can
    new_held = (held & grip) | grasp
    delta = np.where(grasp, p[:, 0] - rod[:, 0], delta)
    right_end = p[:, 0] - delta + params.rod_length / 2
    now_in = new_held & (right_end >= params.x_slot - params.tol) & (np.abs(p[:, 1] - params.y_slot) < params.tol)
    new_inserted = inserted | now_in
    t = t + 1
    reward = (new_inserted & ~inserted).astype(p.dtype)
    return p, rod, new_held, delta, new_inserted, t, reward, new_inserted | (t >= params.max_steps)


class PickState(NamedTuple):
    env: EnvState
    t: jax.Array


def pick_skill_env(params: RodInsertParams = DEFAULT_PARAMS, *, p_drop: float = 0.2, horizon: int = 40,
                   lambda_g: float = 1.0, r_succ: float = 10.0) -> SkillEnv:
    """The goal-conditioned Pick skill MDP for PPO (stage 1; shaping **[chosen]**): start from
    :func:`rodinsert_reset`; goal ``g_0 ~ U(-l/2, l/2)`` kept with probability ``1 - p_drop`` (else ``mu = 0``:
    default grasp at the centre). Reward ``r = -|p_y - c_y| - (1 - mu) |p_x - c_x| - lambda_g |phi - g_0| mu
    + r_succ 1[success]`` with ``phi = p_x - c_x``; success = holding at ``|delta - mu g_0| < 0.05``; the skill
    ends when holding or after ``horizon`` steps."""
    spec = goal_spec(1, 2)
    half = params.rod_length / 2

    def reset(key):
        k1, k2, k3 = jax.random.split(key, 3)
        obs, st = rodinsert_reset(k1, params)
        g = jnp.stack([jax.random.uniform(k2, (), obs.dtype, -half, half), jnp.zeros((), obs.dtype)])
        use = (jax.random.uniform(k3) >= p_drop).astype(obs.dtype)
        return obs, PickState(st, jnp.zeros((), jnp.int32)), jnp.where(spec.space_mask * use > 0, g, 0.0), (
            spec.space_mask * use)

    def step(key, state, action, goal, mask):
        obs, st, _, _, _ = rodinsert_step(key, state.env, action, params)
        mu = mask[0]
        target = mu * goal[0]
        phi = st.p[0] - st.rod[0]
        succ = st.held & (jnp.abs(st.delta - target) < params.tol)
        r = (-jnp.abs(st.p[1] - st.rod[1]) - (1 - mu) * jnp.abs(phi) - lambda_g * jnp.abs(phi - goal[0]) * mu
             + r_succ * succ)
        t = state.t + 1
        return obs, PickState(st, t), r, st.held | (t >= horizon), succ

    return SkillEnv(reset, step)
