r"""Tree-of-Skill: behaviour trees expanded from goals drive guided skill chaining on RodInsert2D.

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved) and Cai, Li, Huang, Yang, "BT Expansion: a Sound and Complete Algorithm for
Behavior Planning of Intelligent Robots with Behavior Trees", AAAI 2021. Skills are trained with PPO (Schulman
et al., arXiv:1707.06347).

Modules, one idea each:

* :mod:`~jaxlab.agents.tree_of_skill.behavior_tree`: symbolic behaviour trees, BT Expansion, successor prediction;
* :mod:`~jaxlab.agents.tree_of_skill.interfaces`: goal specs and masks, :class:`Skill`, and the environment
  protocols :class:`BTEnv` and :class:`SkillEnv` (what environments build and learners consume);
* :mod:`~jaxlab.agents.tree_of_skill.policies`: :class:`SkillPolicy` and :class:`GuidingNet` (equinox);
* :mod:`~jaxlab.agents.tree_of_skill.chaining`: :func:`rollout_skill` and the BT-driven runner
  :func:`run_tos_episode`;
* :mod:`~jaxlab.agents.tree_of_skill.guiding`: :func:`train_guiding` (the REINFORCE bandit of a guiding network)
  and its factory :func:`guiding_algorithm`;
* :mod:`~jaxlab.agents.tree_of_skill.ppo`: :func:`ppo_train` (goal-conditioned skills) and its factory
  :func:`ppo_algorithm`;
* :mod:`~jaxlab.agents.tree_of_skill.rodinsert`: the RodInsert2D environment (gymnax-style) and its scripted skills;
* :mod:`~jaxlab.agents.tree_of_skill.rodinsert_tasks`: the multi-rod task world; its experiments (guides per task,
  baselines) in :mod:`~jaxlab.agents.tree_of_skill.multistep`;
* :mod:`~jaxlab.agents.tree_of_skill.py_trees_peer` (not imported here; needs the optional py_trees): the same
  trees in py_trees, the semantics oracle of the tests and benchmark.
"""

from __future__ import annotations

from jaxlab.agents.tree_of_skill import behavior_tree, multistep, ppo, rodinsert, rodinsert_tasks
from jaxlab.agents.tree_of_skill.chaining import EpisodeResult, rollout_skill, run_tos_episode, skill_type
from jaxlab.agents.tree_of_skill.guiding import GuideConfig, GuideMetrics, GuideState, guiding_algorithm, train_guiding
from jaxlab.agents.tree_of_skill.interfaces import BTEnv, GoalSpec, Skill, SkillEnv, goal_spec, masked_goal
from jaxlab.agents.tree_of_skill.policies import GuidingNet, SkillPolicy
from jaxlab.agents.tree_of_skill.ppo import PPOConfig, PPOMetrics, PPOState, ppo_algorithm, ppo_train

__all__ = [
    "BTEnv",
    "EpisodeResult",
    "GoalSpec",
    "GuideConfig",
    "GuideMetrics",
    "GuideState",
    "GuidingNet",
    "PPOConfig",
    "PPOMetrics",
    "PPOState",
    "Skill",
    "SkillEnv",
    "SkillPolicy",
    "behavior_tree",
    "goal_spec",
    "guiding_algorithm",
    "masked_goal",
    "multistep",
    "ppo",
    "ppo_algorithm",
    "ppo_train",
    "rodinsert",
    "rodinsert_tasks",
    "rollout_skill",
    "run_tos_episode",
    "skill_type",
    "train_guiding",
]
