"""Behaviour-tree ticking benchmark (spec B.7): jaxlab's reactive tick vs py_trees' on the same tree.

Work: the two-object pick-and-place tree that BT Expansion builds (``GOAL2`` from ``{HandEmpty}``, with imagined
plan execution), ticked once on each of 1,000 random symbolic states over the domain's 8 literals. jaxlab:
``behavior_tree.tick`` (validates the tree and the state on every call); py_trees 2.x: the tree translated node
for node (``Sequence``/``Selector`` with ``memory=False``), the same root ticked with ``tick_once`` after the
state is set. Quality: the number of ticks whose ``(status, action)`` differ (0 expected). ``ratio`` = py_trees
time / jaxlab time. Run: ``python bench/agents.py`` or ``python bench/_agents_bt.py``.
"""

from __future__ import annotations

import os
import random

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxlab.agents import behavior_tree as bt_mod
from jaxlab.agents.tree_of_skill.claims import GOAL2, UNIVERSE
from jaxlab.agents.tree_of_skill.py_trees_peer import PyTreesTicker
from jaxlab.core.bench import emit, time_interleaved

AREA = "tree_of_skill"


def main() -> None:
    bt = bt_mod.bt_expand(GOAL2, bt_mod.pick_and_place_actions(), {"HandEmpty"}, imagine=True)
    ticker = PyTreesTicker(bt)
    rng = random.Random(0)
    states = [frozenset(lit for lit in UNIVERSE if rng.random() < 0.5) for _ in range(1000)]
    ours = lambda: [bt_mod.tick(bt, s) for s in states]  # noqa: E731
    peer = lambda: [ticker(s) for s in states]  # noqa: E731
    t = time_interleaved({"ours": (ours, ()), "py_trees": (peer, ())}, repeats=9)
    mismatches = sum(a != b for a, b in zip(ours(), peer(), strict=True))
    emit(AREA, "bt_tick_1000_states", ours_s=t["ours"]["median_s"], peer="py_trees 2 (memory=False composites)",
         peer_s=t["py_trees"]["median_s"], compile_s=0.0, quality={"mismatches": mismatches},
         us_per_tick_ours=1e6 * t["ours"]["median_s"] / len(states),
         us_per_tick_py_trees=1e6 * t["py_trees"]["median_s"] / len(states), goal_ratio=1.0)


if __name__ == "__main__":
    main()
