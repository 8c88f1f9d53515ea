r"""Multi-step Tree-of-Skill tasks on a RodInsert2D world with several rods (two-step and 3-6-step).

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only).
The reconstruction lists the small-scale skills (MoveTo, Pick, Insert, Place) and tasks; their
geometry below, the initiation sets and the scripted controllers are **[chosen]**.

World (:func:`tasks_reset`, :func:`tasks_step`; pure, jit/vmap). The gripper and rod dynamics are those of
:mod:`~jaxlab.agents.tree_of_skill.rodinsert` (``p' = clip(p + 0.05 clip(u_xy, -1, 1), -1, 1)``,
``grip = u_2 > 0`` closes, a rod of length ``l = 0.6`` grasped at offset ``delta = p_x - c_x`` follows
``c = p - (delta, 0)``), with ``n`` rods (``n = 1`` or ``2``; rod ``i`` named ``rod`` or ``A``, ``B``) and two
targets outside the workspace:

* slot at ``x = 1.4``: the held rod is inserted when its right end ``p_x - delta + l/2 >= 1.35`` and
  ``|p_y| < 0.05``; reachable (``p_x <= 1``) iff ``delta <= -0.05``;
* table ledge at ``x = -1.4`` **[chosen]** (the "Place-on-table" of the abstract's task list): the held rod is
  placed when its left end ``p_x - delta - l/2 <= -1.35`` and ``|p_y| < 0.05``; reachable (``p_x >= -1``) iff
  ``delta >= +0.05``.

An inserted or placed rod is released and stays fixed (the slot and the ledge take any number of rods; rods do
not collide). The state also keeps the last displacement ``v = p' - p``; the gripper is *at rest* when
``|v|_inf < 1e-3``. Reset: rod centres uniform in ``[-0.3, 0.3]`` x their ``y`` band (one rod: ``[-0.6, 0.6]``;
two: ``A`` in ``[0.15, 0.6]``, ``B`` in ``[-0.6, -0.15]``), the gripper at rest, uniform in ``[-0.8, 0.8]^2`` or
(``start_near``) in rod 0's Near box.

Literals of rod ``X``: ``Near(X)`` (at rest, ``|p - c_X|_inf <= s`` with stand-off ``s = 0.35``, ``X`` not done),
``Holding(X)``, ``Inserted(X)``, ``OnTable(X)``. Behaviour models: ``MoveTo(X)`` adds ``Near(X)`` (deletes the
other ``Near``); ``Pick(X)`` needs ``Near(X)``, adds ``Holding(X)``; ``Insert(X,slot)`` / ``Place(X,table)``
need ``Holding(X)``, add ``Inserted(X)`` / ``OnTable(X)``, delete ``Holding(X)``.

Scripted goal-conditioned skills (``d_g = 2``; each acts on rod ``X``'s view ``(p, c_X, held_X, delta)``):

* ``MoveTo`` (goal: approach offset ``a in [-s, s]^2``, ``d = 2``): go to ``c + a``, gripper open; goal-free
  (``mu = 0``): go straight towards the rod and stop on the stand-off box, at ``c + (p - c) min(1, s / |p - c|_inf)``.
* ``Pick`` (goal: grasp offset ``delta_g in [-l/2, l/2]``, ``d = 1``): go to ``(c_x + delta_g, c_y)`` and close;
  goal-free: a top-down grasp, straight down to ``(p_x, c_y)`` and close (it grasps iff ``|p_x - c_x| <= l/2``,
  at ``delta = p_x - c_x``); horizon 12 steps (a local skill).
* ``Insert`` / ``Place`` (no goal): grip closed, align ``p_y`` with the target and push right / left.

Implicit dependencies (what symbols cannot say). ``MoveTo -> Pick``: the approach offset's ``a_x`` decides where the
goal-free top-down Pick lands (off the rod when the stand-off point is beside it). ``Pick -> Insert``: the grasp
needs ``delta <= -0.05``. ``Pick -> Place``: it needs ``delta >= +0.05``, so one Pick goal cannot serve both.

Tasks (:data:`TASKS`; BTs by BT Expansion from the goal): ``MoveTo->Pick`` (``Holding(rod)``), ``Pick->Insert``
and ``Pick->Place`` (the gripper starts at rest near the rod, so the BT skips MoveTo), ``MoveTo->Pick->Insert``
and the two-rod tasks ``MoveTo->Pick->Insert`` for ``A`` then ``B`` and ``MoveTo->Pick->Insert (A),
MoveTo->Pick->Place (B)`` (six skills each). Baselines: ``"none"`` (BT + independent skills, ``mu = 0``),
``"fixed"`` (fixed-sequence chaining: the skill-type chain of the task's nominal plan, first occurrence
``k -> k'`` of each type, used for every rod whatever the BT does next; **[chosen]** reading of "ignoring BT
branching") and ``"tos"`` (successor predicted by the BT).

This module is the world only (an environment does not import its learners): training the guiding networks and
running the baselines is :mod:`~jaxlab.agents.tree_of_skill.multistep`.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents.tree_of_skill.behavior_tree import Action, Node, Status, apply_effects, bt_expand, tick
from jaxlab.agents.tree_of_skill.interfaces import BTEnv, Skill, goal_spec
from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.agents.tree_of_skill.rodinsert import grasp_at, move_gripper, scripted_insert, toward
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int

__all__ = [
    "BASELINES",
    "DEFAULT_TASK_PARAMS",
    "TASKS",
    "Task",
    "TaskParams",
    "TaskState",
    "fixed_chain",
    "instance_name",
    "nominal_plan",
    "rod_names",
    "rod_view",
    "scripted_moveto",
    "scripted_pick_topdown",
    "scripted_place",
    "task_actions",
    "task_bt",
    "task_dep",
    "task_env",
    "task_literals",
    "task_skills",
    "tasks_obs",
    "tasks_reset",
    "tasks_step",
]

BASELINES = ("none", "fixed", "tos")


class TaskParams(NamedTuple):
    """Static parameters: RodInsert2D's plus the table ledge, stand-off and start options
    (**[chosen]**)."""

    n_rods: int = 1
    rod_length: float = 0.6
    step_size: float = 0.05  # dt * v_max
    x_slot: float = 1.4
    y_slot: float = 0.0
    x_table: float = -1.4
    y_table: float = 0.0
    tol: float = 0.05
    standoff: float = 0.35  # half-size s of the Near box
    rest_tol: float = 1e-3  # |v|_inf below this: at rest
    max_steps: int = 1000
    start_range: float = 0.8
    start_near: bool = False  # gripper starts at rest in rod 0's Near box
    rod_x_range: float = 0.3
    rod_y_range: float = 0.6  # rods' y bands split [-range, range] top to bottom
    rod_gap: float = 0.3  # gap between the bands of neighbouring rods (n > 1)


DEFAULT_TASK_PARAMS = TaskParams()


class TaskState(NamedTuple):
    p: jax.Array  # (2,) gripper
    v: jax.Array  # (2,) last displacement
    rods: jax.Array  # (n, 2) rod centres
    held: jax.Array  # (n,) bool
    delta: jax.Array  # () grasp offset of the held rod
    inserted: jax.Array  # (n,) bool, absorbing
    placed: jax.Array  # (n,) bool, absorbing
    t: jax.Array  # () int


def rod_names(n_rods: int) -> tuple[str, ...]:
    """``("rod",)`` for one rod, ``("A", "B", ...)`` for more."""
    n = check_int(n_rods, "n_rods", min_value=1, max_value=26)
    return ("rod",) if n == 1 else tuple(chr(ord("A") + i) for i in range(n))


def tasks_obs(state: TaskState) -> jax.Array:
    """``(p_x, p_y, v_x, v_y, delta, [c_x, c_y, held, done] per rod)``, length ``5 + 4 n``."""
    dtype = state.p.dtype
    per = jnp.concatenate([state.rods, state.held.astype(dtype)[:, None],
                           (state.inserted | state.placed).astype(dtype)[:, None]], axis=1)
    return jnp.concatenate([state.p, state.v, state.delta[None], per.reshape(-1)])


def rod_view(obs: jax.Array, i: int) -> jax.Array:
    """Rod ``i``'s view ``(p_x, p_y, c_x, c_y, held_i, delta)``: RodInsert2D's observation layout, so skills and
    guiding networks work on any rod."""
    base = 5 + 4 * i
    return jnp.concatenate([obs[:2], obs[base:base + 3], obs[4:5]])


@cites(TOS)
def tasks_reset(key: jax.Array, params: TaskParams = DEFAULT_TASK_PARAMS) -> tuple[jax.Array, TaskState]:
    """Rod ``i``'s centre uniform in ``[-0.3, 0.3] x`` its ``y`` band; the gripper uniform in the start box, or
    (``start_near``) uniform in rod 0's Near box; at rest, nothing held."""
    n = check_int(params.n_rods, "params.n_rods", min_value=1)
    kp, kx, ky = jax.random.split(key, 3)
    dtype = jnp.result_type(float)
    edges = np.linspace(params.rod_y_range, -params.rod_y_range, n + 1)
    gap = params.rod_gap / 2 if n > 1 else 0.0
    lo, hi = jnp.asarray(edges[1:] + gap, dtype), jnp.asarray(edges[:-1] - gap, dtype)
    rods = jnp.stack([jax.random.uniform(kx, (n,), dtype, -params.rod_x_range, params.rod_x_range),
                      lo + (hi - lo) * jax.random.uniform(ky, (n,), dtype)], axis=1)
    if params.start_near:
        p = jnp.clip(rods[0] + jax.random.uniform(kp, (2,), dtype, -params.standoff, params.standoff), -1.0, 1.0)
    else:
        p = jax.random.uniform(kp, (2,), dtype, -params.start_range, params.start_range)
    no = jnp.zeros((n,), bool)
    state = TaskState(p, jnp.zeros((2,), dtype), rods, no, jnp.zeros((), dtype), no, no, jnp.zeros((), jnp.int32))
    return tasks_obs(state), state


@cites(TOS)
def tasks_step(key: jax.Array, state: TaskState, action: Any, params: TaskParams = DEFAULT_TASK_PARAMS, *,
               debug: bool = False) -> tuple[jax.Array, TaskState, jax.Array, jax.Array, dict]:
    """One control step (module docstring). ``reward`` = rods newly inserted or placed; ``done`` only at
    ``max_steps`` (the BT decides success). ``key`` is unused (deterministic dynamics); ``action`` of shape
    ``(3,)`` (``ValueError``), checked finite with ``debug=True``."""
    del key
    dtype = state.p.dtype
    p, grip = move_gripper(state.p, action, params.step_size, debug=debug)
    fixed = state.inserted | state.placed
    carried = state.held & ~fixed
    rods = jnp.where(carried[:, None], p - jnp.stack([state.delta, jnp.zeros((), dtype)]), state.rods)
    half = params.rod_length / 2
    can = ~fixed & (jnp.abs(p[1] - rods[:, 1]) < params.tol) & (jnp.abs(p[0] - rods[:, 0]) <= half)
    first = jnp.arange(can.shape[0]) == jnp.argmax(can)
    grasp = ~jnp.any(state.held) & grip & can & first
    held = (state.held & grip) | grasp
    delta = jnp.where(jnp.any(grasp), jnp.sum(jnp.where(grasp, p[0] - rods[:, 0], 0.0)), state.delta)
    on_y = lambda y: jnp.abs(p[1] - y) < params.tol  # noqa: E731
    now_in = held & (p[0] - delta + half >= params.x_slot - params.tol) & on_y(params.y_slot)
    now_on = held & (p[0] - delta - half <= params.x_table + params.tol) & on_y(params.y_table)
    inserted, placed = state.inserted | now_in, state.placed | now_on
    held = held & ~now_in & ~now_on
    t = state.t + 1
    new = TaskState(p, p - state.p, rods, held, delta, inserted, placed, t)
    reward = (jnp.sum(inserted & ~state.inserted) + jnp.sum(placed & ~state.placed)).astype(dtype)
    return tasks_obs(new), new, reward, t >= params.max_steps, {"held": held}


def _near(state: TaskState, i: int, params: TaskParams) -> jax.Array:
    rest = jnp.max(jnp.abs(state.v)) < params.rest_tol
    box = jnp.max(jnp.abs(state.p - state.rods[i])) <= params.standoff + params.rest_tol
    return rest & box & ~state.inserted[i] & ~state.placed[i]


def task_literals(state: TaskState, params: TaskParams = DEFAULT_TASK_PARAMS) -> dict[str, jax.Array]:
    """Truth values of ``Near/Holding/Inserted/OnTable(X)`` for every rod (vmappable)."""
    out = {}
    for i, x in enumerate(rod_names(params.n_rods)):
        out[f"Near({x})"] = _near(state, i, params)
        out[f"Holding({x})"] = state.held[i]
        out[f"Inserted({x})"] = state.inserted[i]
        out[f"OnTable({x})"] = state.placed[i]
    return out


def task_actions(n_rods: int = 1) -> tuple[Action, ...]:
    """Behaviour models (module docstring); achiever order Insert, Place, Pick, MoveTo."""
    xs = rod_names(n_rods)
    ins = tuple(Action(f"Insert({x},slot)", (f"Holding({x})",), frozenset({f"Inserted({x})"}),
                       frozenset({f"Holding({x})"})) for x in xs)
    put = tuple(Action(f"Place({x},table)", (f"Holding({x})",), frozenset({f"OnTable({x})"}),
                       frozenset({f"Holding({x})"})) for x in xs)
    pick = tuple(Action(f"Pick({x})", (f"Near({x})",), frozenset({f"Holding({x})"}), frozenset()) for x in xs)
    move = tuple(Action(f"MoveTo({x})", (), frozenset({f"Near({x})"}),
                        frozenset(f"Near({y})" for y in xs if y != x)) for x in xs)
    return (*ins, *put, *pick, *move)


def scripted_moveto(obs: jax.Array, goal: jax.Array, mask: jax.Array,
                    params: TaskParams = DEFAULT_TASK_PARAMS) -> jax.Array:
    """Analytic MoveTo on a rod view: to ``c + clip(a, -s, s)`` (goal ``a`` in slots 0-1), or goal-free to the
    stand-off point ``c + (p - c) min(1, s / |p - c|_inf)``; gripper open."""
    p, c = obs[:2], obs[2:4]
    s = params.standoff
    d = p - c
    default = c + d * jnp.minimum(1.0, s / jnp.maximum(jnp.max(jnp.abs(d)), 1e-6))
    target = jnp.where(mask[0] > 0, c + jnp.clip(goal[:2], -s, s), default)
    return jnp.concatenate([toward(p, target, params.step_size), -jnp.ones_like(p[:1])])


def scripted_pick_topdown(obs: jax.Array, goal: jax.Array, mask: jax.Array,
                          params: TaskParams = DEFAULT_TASK_PARAMS) -> jax.Array:
    """Analytic Pick on a rod view: to ``(c_x + clip(delta_g, -l/2, l/2), c_y)`` with a goal, straight down to
    ``(p_x, c_y)`` without; close once there (and keep closed while holding)."""
    p, c = obs[:2], obs[2:4]
    half = params.rod_length / 2
    x = jnp.where(mask[0] > 0, c[0] + jnp.clip(goal[0], -half, half), p[0])
    return grasp_at(p, jnp.stack([x, c[1]]), obs[4], params.step_size)


def scripted_place(obs: jax.Array, goal: jax.Array, mask: jax.Array,
                   params: TaskParams = DEFAULT_TASK_PARAMS) -> jax.Array:
    """Analytic Place (no goal): keep the grip closed, align with the ledge's ``y`` and push left."""
    del goal, mask
    p = obs[:2]
    v = jnp.stack([-jnp.ones_like(p[0]), toward(p[1], params.y_table, params.step_size)])
    return jnp.concatenate([v, jnp.ones_like(p[:1])])


def _insert(obs, goal, mask, params):
    return scripted_insert(obs, goal, mask, params)


def _on_rod(obs, goal, mask, *, act, i, params):
    return act(rod_view(obs, i), goal, mask, params=params)


def _done(state, *, kind, i, params):
    if kind == "MoveTo":
        return _near(state, i, params)
    return {"Pick": state.held, "Insert": state.inserted, "Place": state.placed}[kind][i]


_ACTS = {"MoveTo": scripted_moveto, "Pick": scripted_pick_topdown, "Insert": _insert, "Place": scripted_place}
_GOAL_DIMS = {"MoveTo": 2, "Pick": 1, "Insert": 0, "Place": 0}
_HORIZONS = {"MoveTo": 40, "Pick": 12, "Insert": 40, "Place": 40}
_TARGET = {"Insert": "slot", "Place": "table"}


def instance_name(kind: str, x: str) -> str:
    """The action instance name of a skill ``kind`` on rod ``x``: ``"Pick(A)"``, ``"Insert(A,slot)"``, ...."""
    return f"{kind}({x},{_TARGET[kind]})" if kind in _TARGET else f"{kind}({x})"


@functools.lru_cache(maxsize=16)
def task_skills(params: TaskParams = DEFAULT_TASK_PARAMS) -> dict[str, Skill]:
    """Scripted skills per instance name (``"Pick(A)"``, ``"Insert(A,slot)"``, ...; cached so runners compile
    once per world)."""
    out = {}
    for i, x in enumerate(rod_names(params.n_rods)):
        for kind, act in _ACTS.items():
            out[instance_name(kind, x)] = Skill(functools.partial(_on_rod, act=act, i=i, params=params),
                                            goal_spec(_GOAL_DIMS[kind], 2), _HORIZONS[kind],
                                            functools.partial(_done, kind=kind, i=i, params=params))
    return out


@functools.lru_cache(maxsize=16)
def task_env(params: TaskParams = DEFAULT_TASK_PARAMS) -> BTEnv:
    """The world as a :class:`~jaxlab.agents.tree_of_skill.interfaces.BTEnv` (cached)."""
    return BTEnv(functools.partial(tasks_reset, params=params), functools.partial(tasks_step, params=params),
                 functools.partial(task_literals, params=params))


class Task(NamedTuple):
    """A task: its name, goal literals and world."""

    name: str
    goal: tuple[str, ...]
    params: TaskParams


TASKS = (
    Task("MoveTo->Pick", ("Holding(rod)",), TaskParams()),
    Task("Pick->Insert", ("Inserted(rod)",), TaskParams(start_near=True)),
    Task("Pick->Place", ("OnTable(rod)",), TaskParams(start_near=True)),
    Task("MoveTo->Pick->Insert", ("Inserted(rod)",), TaskParams()),
    Task("2 rods: Insert A, Insert B", ("Inserted(A)", "Inserted(B)"), TaskParams(n_rods=2)),
    Task("2 rods: Insert A, Place B", ("Inserted(A)", "OnTable(B)"), TaskParams(n_rods=2)),
)


@functools.lru_cache(maxsize=16)
def task_bt(task: Task) -> Node:
    """BT Expansion of the task's goal from the empty state (the whole plan, ``imagine=True``)."""
    return bt_expand(task.goal, task_actions(task.params.n_rods), set(), imagine=True)


def nominal_plan(bt: Node, state: frozenset = frozenset(), max_len: int = 32) -> list[Action]:
    """The actions a symbolic execution of ``bt`` runs from ``state`` (tick, apply the effects, repeat)."""
    plan = []
    for _ in range(max_len):
        st, act = tick(bt, state)
        if st != Status.RUNNING:
            break
        plan.append(act)
        state = apply_effects(act, state)
    return plan


def _kind(name: str) -> str:
    return name.split("(", 1)[0]


def fixed_chain(task: Task) -> dict[str, str]:
    """Fixed-sequence chaining: each skill type's first successor type in the nominal plan (from the empty state),
    lifted to every rod: ``{"Pick(X)": "Insert(X,slot)", ...}``."""
    plan = [a.name for a in nominal_plan(task_bt(task))]
    types: dict[str, str] = {}
    for a, b in itertools.pairwise(plan):
        types.setdefault(_kind(a), _kind(b))
    return {instance_name(k, x): instance_name(k2, x) for x in rod_names(task.params.n_rods) for k, k2 in types.items()}


def task_dep(n_rods: int = 1) -> frozenset[tuple[str, str]]:
    """Implicit dependency flags per rod: ``MoveTo -> Pick``, ``Pick -> Insert``, ``Pick -> Place``."""
    return frozenset((instance_name(k, x), instance_name(k2, x)) for x in rod_names(n_rods)
                     for k, k2 in (("MoveTo", "Pick"), ("Pick", "Insert"), ("Pick", "Place")))
