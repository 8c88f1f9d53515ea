r"""Behaviour trees over symbolic states, BT Expansion from goals and successor prediction (Tree-of-Skill).

Papers: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved) and Cai, Li, Huang, Yang, "BT Expansion: a Sound and Complete Algorithm for
Behavior Planning of Intelligent Robots with Behavior Trees", AAAI 2021. The symbolic layer is
reconstructed from the abstract and BT Expansion; this module implements that reconstruction.

Math. A symbolic state ``s`` is a set of ground literals (strings). An action ``a`` has an ordered
precondition tuple ``pre(a)`` and effect sets ``add(a)``, ``del(a)``; it is applicable iff ``pre(a) <= s`` and its
effect is ``s' = (s \ del(a)) | add(a)``.

Ticks return SUCCESS, FAILURE or RUNNING:

* ``Condition(c)``: SUCCESS iff ``c in s``, else FAILURE;
* ``Action(a)``: the status of its skill (``action_status(a)``; RUNNING by default, i.e. a symbolic tick);
* ``Sequence``: children left to right, the first non-SUCCESS result, SUCCESS if all succeed;
* ``Fallback``: children left to right, the first non-FAILURE result, FAILURE if all fail.

BT Expansion (goal ``G``): start from ``Sequence(G)`` (a single condition if ``|G| = 1``); tick on ``s``; if the
tick fails, replace the first failing, not yet expanded condition ``c`` (tick order) by
``Fallback(c, Sequence(pre(a)..., a))`` for the first action ``a`` with ``c in add(a)`` and ``c not in pre(a)``;
repeat until the tick returns SUCCESS or RUNNING.

Successor prediction: ``s_hat = (s \ del(a_cur)) | add(a_cur)``; tick the BT symbolically on ``s_hat``; the first
action reached is ``a_next`` (``None`` when the tick succeeds: task done, or fails: no plan).

Pure Python (symbolic code is not JAX); nodes are hashable frozen dataclasses.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

from jaxlab.agents.tree_of_skill.papers import BT_EXPANSION, TOS
from jaxlab.core.citations import cites

__all__ = [
    "Action",
    "Condition",
    "Fallback",
    "Node",
    "Sequence",
    "Status",
    "applicable",
    "apply_effects",
    "bt_expand",
    "check_state",
    "imagine_tick",
    "pick_and_place_actions",
    "predict_successor",
    "tick",
    "tree_actions",
    "validate_tree",
]


class Status(enum.Enum):
    """Result of ticking a node."""

    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    RUNNING = "RUNNING"


def _check_literal(lit: object, name: str) -> str:
    if not isinstance(lit, str):
        raise ValueError(f"{name} must be a literal of type str, got {type(lit).__name__} {lit!r}")
    if not lit:
        raise ValueError(f"{name} must be a non-empty literal, got ''")
    return lit


def _literal_set(lits: Iterable[object], name: str) -> frozenset[str]:
    if isinstance(lits, str):
        raise ValueError(f"{name} must be a collection of literals, got the string {lits!r}")
    return frozenset(_check_literal(x, f"{name} entry") for x in lits)


def check_state(state: Iterable[object], name: str = "state") -> frozenset[str]:
    """Return ``state`` as a ``frozenset[str]``; ``ValueError`` on a non-str literal or a bare string."""
    return _literal_set(state, name)


@dataclass(frozen=True)
class Condition:
    """Leaf that succeeds iff its literal is in the state."""

    literal: str

    def __post_init__(self):
        _check_literal(self.literal, "Condition.literal")


@dataclass(frozen=True)
class Action:
    """Leaf executing a skill instance, with its behaviour model ``(pre, add, delete)``."""

    name: str
    pre: tuple[str, ...] = ()
    add: frozenset[str] = field(default_factory=frozenset)
    delete: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Action.name must be a non-empty str, got {self.name!r}")
        if isinstance(self.pre, str):
            raise ValueError(f"Action {self.name}: pre must be a tuple of literals, got the string {self.pre!r}")
        object.__setattr__(self, "pre", tuple(_check_literal(x, f"Action {self.name}: pre entry") for x in self.pre))
        object.__setattr__(self, "add", _literal_set(self.add, f"Action {self.name}: add"))
        object.__setattr__(self, "delete", _literal_set(self.delete, f"Action {self.name}: delete"))


def _check_children(kind: str, children: object) -> tuple:
    if not isinstance(children, (tuple, list)):
        raise ValueError(f"{kind}.children must be a tuple of nodes, got {type(children).__name__}")
    for c in children:
        if not isinstance(c, (Condition, Action, Sequence, Fallback)):
            raise ValueError(f"{kind}.children entries must be Condition/Action/Sequence/Fallback, got {c!r}")
    return tuple(children)


@dataclass(frozen=True)
class Sequence:
    """Composite that succeeds iff all children succeed, left to right (reactive: no memory)."""

    children: tuple[Node, ...]

    def __post_init__(self):
        object.__setattr__(self, "children", _check_children("Sequence", self.children))


@dataclass(frozen=True)
class Fallback:
    """Composite that fails iff all children fail, left to right (reactive: no memory)."""

    children: tuple[Node, ...]

    def __post_init__(self):
        object.__setattr__(self, "children", _check_children("Fallback", self.children))


Node = Condition | Action | Sequence | Fallback


def _running(_: Action) -> Status:
    return Status.RUNNING


def validate_tree(node: Node) -> None:
    """Raise ``ValueError`` if ``node`` is not a tree: a node that is its own ancestor (a cycle, which frozen
    nodes can only get by mutation) or a child that is not a node."""

    def visit(n, path: set[int]):
        if not isinstance(n, (Condition, Action, Sequence, Fallback)):
            raise ValueError(f"behaviour tree nodes must be Condition/Action/Sequence/Fallback, got {n!r}")
        if isinstance(n, (Sequence, Fallback)):
            if id(n) in path:
                raise ValueError(f"behaviour tree has a cycle through a {type(n).__name__} node")
            path.add(id(n))
            for c in n.children:
                visit(c, path)
            path.discard(id(n))

    visit(node, set())


def _tick(node: Node, state: frozenset[str], action_status, failed: list | None, path: tuple):
    """Tick ``node``; returns ``(status, action)``; appends ``(path, literal)`` of failing conditions."""
    if isinstance(node, Condition):
        if node.literal in state:
            return Status.SUCCESS, None
        if failed is not None:
            failed.append(path)
        return Status.FAILURE, None
    if isinstance(node, Action):
        st = action_status(node)
        if not isinstance(st, Status):
            raise ValueError(f"action_status must return a Status, got {st!r} for {node.name}")
        return st, node
    # a Sequence continues while children succeed, a Fallback while they fail; the exhausted result is the same
    go_on = Status.SUCCESS if isinstance(node, Sequence) else Status.FAILURE
    for i, child in enumerate(node.children):
        st, act = _tick(child, state, action_status, failed, (*path, i))
        if st != go_on:
            return st, act
    return go_on, None


@cites(BT_EXPANSION, TOS)
def tick(node: Node, state: Iterable[str], action_status: Callable[[Action], Status] = _running
         ) -> tuple[Status, Action | None]:
    """Tick the tree once on the symbolic ``state`` (reactive: every node is re-evaluated).

    Returns ``(status, action)`` where ``action`` is the action leaf whose status decided the result (the running
    skill when ``status`` is RUNNING), or ``None`` when a condition or an exhausted composite decided it.
    """
    validate_tree(node)
    return _tick(node, check_state(state), action_status, None, ())


def applicable(action: Action, state: Iterable[str]) -> bool:
    """``pre(a) <= s``."""
    s = check_state(state)
    return all(p in s for p in action.pre)


@cites(BT_EXPANSION)
def apply_effects(action: Action, state: Iterable[str]) -> frozenset[str]:
    """``s' = (s \\ del(a)) | add(a)`` (applicability is not required: this is the imagined effect)."""
    if not isinstance(action, Action):
        raise ValueError(f"action must be an Action, got {action!r}")
    return (check_state(state) - action.delete) | action.add


def _get(node: Node, path: tuple) -> Node:
    for i in path:
        node = node.children[i]
    return node


def _replace(node: Node, path: tuple, new: Node) -> Node:
    if not path:
        return new
    kids = list(node.children)
    kids[path[0]] = _replace(kids[path[0]], path[1:], new)
    return type(node)(tuple(kids))


def _check_actions(actions: Seq[Action]) -> tuple[Action, ...]:
    acts = tuple(actions)
    names: set[str] = set()
    for a in acts:
        if not isinstance(a, Action):
            raise ValueError(f"actions must be Action instances, got {a!r}")
        if a.name in names:
            raise ValueError(f"actions: duplicate action name {a.name!r}")
        names.add(a.name)
    return acts


@cites(BT_EXPANSION, TOS)
def bt_expand(goal: Seq[str], actions: Seq[Action], state: Iterable[str], max_iters: int = 100, *,
              imagine: bool = False) -> Node:
    """Build a BT for ``goal`` by BT Expansion (steps 1-3).

    Expansion ticks the tree on ``state`` and replaces the first failing, unexpanded condition ``c`` by
    ``Fallback(c, Sequence(pre(a)..., a))`` with the first action ``a`` (in ``actions`` order) such that
    ``c in add(a)`` and ``c not in pre(a)``; it stops when the tick returns SUCCESS or RUNNING.

    ``imagine=True`` (**[chosen]** extension, not part of BT Expansion): when the tick returns RUNNING on action
    ``a``, the state becomes ``apply_effects(a, state)`` and expansion continues until the tick succeeds, so the
    tree covers the whole plan from ``state`` (what a planner run before execution needs) instead of only its
    next step (BT Expansion's online use, re-expanding during execution).

    Args:
      goal: the goal literals ``G`` (a tuple of non-empty strings, not a bare string).
      actions: the available :class:`Action` behaviour models, in achiever-preference order.
      state: the symbolic start state ``s``, a collection of literals.
      max_iters: most expansions, an int ``>= 1``.
      imagine: expand the whole plan by imagined execution (see above).

    Returns:
      The behaviour tree (a :class:`Condition`, :class:`Sequence` or :class:`Fallback` root).

    Raises:
      ValueError: non-str literals, duplicate action names, an empty goal, a failing literal that no action
        achieves (``"no action achieves <lit>"``), or no plan within ``max_iters`` expansions (a cyclic domain,
        the failing literal named).
    """
    if isinstance(goal, str):
        raise ValueError(f"goal must be a tuple of literals, got the string {goal!r}")
    goal = tuple(_check_literal(g, "goal entry") for g in goal)
    if not goal:
        raise ValueError("goal must contain at least one literal, got ()")
    acts = _check_actions(actions)
    s = check_state(state)
    if not isinstance(max_iters, int) or max_iters < 1:
        raise ValueError(f"max_iters must be an int >= 1, got {max_iters!r}")
    for g in goal:
        if g not in s and not any(g in a.add for a in acts):
            raise ValueError(f"no action achieves {g}")
    bt: Node = Condition(goal[0]) if len(goal) == 1 else Sequence(tuple(Condition(g) for g in goal))
    expanded: set[tuple] = set()
    last_lit = goal[0]
    for _ in range(max_iters):
        failed: list[tuple] = []
        st, act = _tick(bt, s, _running, failed, ())
        if st == Status.SUCCESS:
            return bt
        if st == Status.RUNNING:
            if not imagine:
                return bt
            s = apply_effects(act, s)
            continue
        todo = [p for p in failed if p not in expanded]
        if not todo:
            raise ValueError(f"no plan: every failing condition is expanded (last expanded: {last_lit})")
        path = todo[0]
        c = _get(bt, path).literal
        a = next((a for a in acts if c in a.add and c not in a.pre), None)
        if a is None:
            raise ValueError(f"no action achieves {c}")
        sub = Fallback((Condition(c), Sequence((*(Condition(p) for p in a.pre), a))))
        bt = _replace(bt, path, sub)
        expanded.add((*path, 0))  # the condition now sits at child 0 of the new Fallback
        last_lit = c
    raise ValueError(f"bt_expand found no plan within max_iters={max_iters} expansions (cyclic domain?); "
                     f"last failing literal: {last_lit}")


@cites(TOS)
def imagine_tick(bt: Node, current: Action, state: Iterable[str]) -> tuple[Status, Action | None]:
    """Tick ``bt`` symbolically on ``s_hat = (s \\ del(a_cur)) | add(a_cur)``: ``(status, first action)``."""
    return tick(bt, apply_effects(current, state))


@cites(TOS)
def predict_successor(bt: Node, current: Action, state: Iterable[str]) -> Action | None:
    """Successor skill of ``current`` predicted with the behaviour models: the first action reached
    by an imagined tick after ``current``'s effects; ``None`` if that tick succeeds (task done) or fails (no
    plan; use :func:`imagine_tick` to tell the two apart)."""
    st, act = imagine_tick(bt, current, state)
    return act if st == Status.RUNNING else None


def tree_actions(node: Node) -> list[Action]:
    """Action leaves of a tree, left to right (duplicates kept)."""
    if isinstance(node, Action):
        return [node]
    if isinstance(node, Condition):
        return []
    return [a for c in node.children for a in tree_actions(c)]


def pick_and_place_actions(objects: Seq[str] = ("A", "B"), target: str = "R") -> tuple[Action, ...]:
    """The held-out symbolic pick-and-place domain (**[chosen]** literals, one gripper):
    ``MoveTo(x)`` (adds ``Near(x)``, deletes the other ``Near``), ``Pick(o)`` (pre ``Near(o), HandEmpty``; adds
    ``Holding(o)``, deletes ``HandEmpty``), ``Place(o,R)`` (pre ``Holding(o), Near(R)``; adds ``At(o,R)`` and
    ``HandEmpty``, deletes ``Holding(o)``). Order: Place, Pick, MoveTo actions (the achiever order of
    expansion)."""
    objects = tuple(_check_literal(o, "objects entry") for o in objects)
    places = tuple(_check_literal(x, "target") for x in (*objects, target))
    moves = tuple(Action(f"MoveTo({x})", (), frozenset({f"Near({x})"}),
                         frozenset(f"Near({y})" for y in places if y != x)) for x in places)
    picks = tuple(Action(f"Pick({o})", (f"Near({o})", "HandEmpty"), frozenset({f"Holding({o})"}),
                         frozenset({"HandEmpty"})) for o in objects)
    put = tuple(Action(f"Place({o},{target})", (f"Holding({o})", f"Near({target})"),
                       frozenset({f"At({o},{target})", "HandEmpty"}), frozenset({f"Holding({o})"})) for o in objects)
    return (*put, *picks, *moves)
