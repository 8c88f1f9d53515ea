"""The same behaviour trees in py_trees (the peer and semantics oracle).

:func:`to_py_trees` translates a :mod:`jaxlab.agents.tree_of_skill.behavior_tree` tree node for node: ``Sequence`` and
``Fallback`` become ``py_trees.composites.Sequence(memory=False)`` and ``Selector(memory=False)`` (reactive, as
jaxlab's), a ``Condition`` a behaviour that reads the current symbolic state, an ``Action`` a behaviour that
returns RUNNING (a symbolic tick: the skill is running). :class:`PyTreesTicker` ticks the translated tree on a
state and reports ``(status, action)`` as :func:`~jaxlab.agents.tree_of_skill.behavior_tree.tick` does: the
running action is py_trees' tip (the deepest running behaviour). py_trees is an optional dependency, imported on
first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jaxlab.agents.tree_of_skill.behavior_tree import (
    Action,
    Condition,
    Fallback,
    Node,
    Sequence,
    Status,
    check_state,
    validate_tree,
)
from jaxlab.agents.tree_of_skill.papers import BT_EXPANSION
from jaxlab.core.citations import cites

__all__ = ["PyTreesTicker", "to_py_trees"]


def to_py_trees(node: Node, state_ref: list[frozenset[str]]):
    """The tree as a py_trees behaviour; conditions read ``state_ref[0]`` (the ticker sets it before a tick)."""
    import py_trees

    status = py_trees.common.Status

    class _Condition(py_trees.behaviour.Behaviour):
        def __init__(self, literal: str):
            super().__init__(name=literal)
            self.literal = literal

        def update(self):
            return status.SUCCESS if self.literal in state_ref[0] else status.FAILURE

    class _Action(py_trees.behaviour.Behaviour):
        def __init__(self, action: Action):
            super().__init__(name=action.name)
            self.action = action

        def update(self):
            return status.RUNNING

    def build(n: Node, path: str):
        if isinstance(n, Condition):
            return _Condition(n.literal)
        if isinstance(n, Action):
            return _Action(n)
        kids = [build(c, f"{path}.{i}") for i, c in enumerate(n.children)]
        if isinstance(n, Sequence):
            return py_trees.composites.Sequence(name=f"seq{path}", memory=False, children=kids)
        if isinstance(n, Fallback):
            return py_trees.composites.Selector(name=f"sel{path}", memory=False, children=kids)
        raise ValueError(f"node must be a Condition, Action, Sequence or Fallback, got {type(n).__name__}")

    validate_tree(node)
    return build(node, "")


class PyTreesTicker:
    """``PyTreesTicker(bt)(state) -> (Status, Action | None)``: one reactive py_trees tick of the translated
    tree (the same tree object is ticked on every call, so its internal statuses carry over as in a live
    agent)."""

    @cites(BT_EXPANSION)
    def __init__(self, bt: Node):
        import py_trees

        self._state: list[frozenset[str]] = [frozenset()]
        self.root = to_py_trees(bt, self._state)
        self._status = {py_trees.common.Status.SUCCESS: Status.SUCCESS,
                        py_trees.common.Status.FAILURE: Status.FAILURE,
                        py_trees.common.Status.RUNNING: Status.RUNNING}

    def __call__(self, state: Iterable[str]) -> tuple[Status, Action | None]:
        self._state[0] = check_state(state)
        self.root.tick_once()
        st = self._status[self.root.status]
        if st != Status.RUNNING:
            return st, None
        tip: Any = self.root.tip()
        return st, getattr(tip, "action", None)
