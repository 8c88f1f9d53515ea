"""Agents (spec ``agents_systems.md`` sections B and C): behaviour trees (:mod:`~jaxlab.agents.behavior_tree`),
Tree-of-Skill chaining on RodInsert2D (:mod:`~jaxlab.agents.tree_of_skill`, :mod:`~jaxlab.agents.rodinsert`,
:mod:`~jaxlab.agents.ppo`; multi-step tasks in :mod:`~jaxlab.agents.rodinsert_tasks`; the py_trees peer in
:mod:`~jaxlab.agents.behavior_tree_py_trees`), and TopoScope schematic rule verification
(:mod:`~jaxlab.agents.toposcope`). Import the submodules directly."""
