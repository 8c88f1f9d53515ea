"""Agents: TopoScope schematic rule verification (:mod:`~jaxlab.agents.toposcope`) and Tree-of-Skill, behaviour
trees driving guided skill chaining on RodInsert2D (:mod:`~jaxlab.agents.tree_of_skill`).

The Tree-of-Skill modules are also reachable from here, as ``from jaxlab.agents import behavior_tree, rodinsert,
rodinsert_tasks, ppo`` (the same module objects as ``jaxlab.agents.tree_of_skill.<name>``).
"""

from jaxlab.agents import toposcope, tree_of_skill
from jaxlab.agents.tree_of_skill import behavior_tree, multistep, ppo, rodinsert, rodinsert_tasks

__all__ = ["behavior_tree", "multistep", "ppo", "rodinsert", "rodinsert_tasks", "toposcope", "tree_of_skill"]
