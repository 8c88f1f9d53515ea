"""py_trees as the semantics oracle of jaxlab's behaviour trees: the same expanded pick-and-place tree,
translated node for node into reactive py_trees composites, ticks identically on 1,000 random symbolic states."""

import random

import pytest

from jaxlab.agents import behavior_tree as bt_mod
from jaxlab.agents.tree_of_skill.claims import GOAL2, UNIVERSE

pytest.importorskip("py_trees")
from jaxlab.agents.tree_of_skill.py_trees_peer import PyTreesTicker, to_py_trees


def test_py_trees_ticks_agree_on_1000_random_states():
    bt = bt_mod.bt_expand(GOAL2, bt_mod.pick_and_place_actions(), {"HandEmpty"}, imagine=True)
    ticker = PyTreesTicker(bt)
    rng = random.Random(0)
    states = [frozenset(lit for lit in UNIVERSE if rng.random() < 0.5) for _ in range(1000)]
    got = [ticker(s) for s in states]
    want = [bt_mod.tick(bt, s) for s in states]
    assert got == want
    # every outcome occurs, so the agreement is not vacuous
    assert {st for st, _ in want} == set(bt_mod.Status)
    assert {a.name for _, a in want if a is not None} == {a.name for a in bt_mod.tree_actions(bt)}


def test_translation_structure_and_bad_nodes():
    A, B = bt_mod.Condition("A"), bt_mod.Action("go", (), frozenset({"A"}))
    root = to_py_trees(bt_mod.Fallback((A, bt_mod.Sequence((bt_mod.Condition("B"), B)))), [frozenset()])
    assert type(root).__name__ == "Selector" and not root.memory
    assert [c.name for c in root.children[1].children] == ["B", "go"] and not root.children[1].memory
    assert PyTreesTicker(bt_mod.Fallback((A, B)))({"A"}) == (bt_mod.Status.SUCCESS, None)
    assert PyTreesTicker(bt_mod.Fallback((A, B)))(set()) == (bt_mod.Status.RUNNING, B)
    with pytest.raises(ValueError, match="literal"):
        PyTreesTicker(bt_mod.Fallback((A, B)))({3})
