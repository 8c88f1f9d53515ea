r"""Multi-step Tree-of-Skill experiments on the RodInsert2D task world: training the guiding networks and running
the tasks under the three baselines.

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only).
Guiding networks (:func:`train_task_guides`): ``G_{Pick<-MoveTo}`` (gripper starting anywhere), ``G_{Insert<-Pick}``
and ``G_{Place<-Pick}`` (starting near the rod), each trained on one rod by
:func:`~jaxlab.agents.tree_of_skill.guiding.train_guiding` (successor goal-free) and applied to any rod through its
view (:class:`RodView`). Baselines (:func:`task_success`): ``"none"`` (BT + independent skills, ``mu = 0``),
``"fixed"`` (fixed-sequence chaining, :func:`~jaxlab.agents.tree_of_skill.rodinsert_tasks.fixed_chain`) and
``"tos"`` (successor predicted by the BT). The world itself is :mod:`~jaxlab.agents.tree_of_skill.rodinsert_tasks`.
"""

from __future__ import annotations

import functools
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxlab.agents.tree_of_skill.behavior_tree import Action
from jaxlab.agents.tree_of_skill.chaining import run_tos_episode
from jaxlab.agents.tree_of_skill.guiding import GuideConfig, train_guiding
from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.agents.tree_of_skill.policies import GuidingNet
from jaxlab.agents.tree_of_skill.rodinsert import OBS_DIM
from jaxlab.agents.tree_of_skill.rodinsert_tasks import (
    BASELINES,
    Task,
    TaskParams,
    fixed_chain,
    instance_name,
    rod_names,
    rod_view,
    task_bt,
    task_dep,
    task_env,
    task_skills,
)
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int

__all__ = ["RodView", "task_success", "train_task_guides"]


class RodView(eqx.Module):
    """A guiding network ``G_{k' <- k}`` applied to rod ``i``'s view of the observation."""

    net: GuidingNet
    i: int = eqx.field(static=True)

    def __call__(self, obs):
        return self.net(rod_view(obs, self.i))


#: guide -> (goal bound ``mu_scale``, world it is trained in)
_GUIDE_SETUP = {("MoveTo", "Pick"): (0.35, TaskParams()), ("Pick", "Insert"): (0.3, TaskParams(start_near=True)),
                ("Pick", "Place"): (0.3, TaskParams(start_near=True))}


@functools.lru_cache(maxsize=16)
def _pair_trainer(static, params, k, k2, cfg):
    # one compiled program per pair, shared by its seeds. The bandit is compile-bound (its run takes well under a
    # second, XLA's optimising backend several), so it is compiled without backend optimisation.
    skills = task_skills(params)

    def train(key, arrays):
        guide, metrics = train_guiding(key, task_env(params), skills[k], skills[k2], eqx.combine(arrays, static), cfg)
        return eqx.filter(guide, eqx.is_array), metrics

    return jax.jit(train, compiler_options={"xla_backend_optimization_level": 0})


@cites(TOS)
def train_task_guides(key: jax.Array, num_seeds: int = 1, cfg: GuideConfig | None = None,
                      width: int = 32) -> tuple[dict[tuple[str, str], GuidingNet], dict[tuple[str, str], Any]]:
    """Train the three guiding networks ``G_{Pick<-MoveTo}``, ``G_{Insert<-Pick}``, ``G_{Place<-Pick}`` on one
    rod (:func:`~jaxlab.agents.tree_of_skill.guiding.train_guiding`, successor goal-free; default 60 updates of 64
    episodes), for ``num_seeds`` independent seeds (one compile per pair). Returns guides and metrics keyed by
    skill-type pair, with a leading seed axis on every array."""
    n = check_int(num_seeds, "num_seeds", min_value=1)
    cfg = GuideConfig(num_updates=60, batch=64) if cfg is None else cfg
    guides, metrics = {}, {}
    for j, ((k, k2), (scale, params)) in enumerate(_GUIDE_SETUP.items()):
        ki, kt = jax.random.split(jax.random.fold_in(key, j))
        runs = []
        for a, b in zip(jax.random.split(ki, n), jax.random.split(kt, n), strict=True):
            arrays, static = eqx.partition(RodView(GuidingNet(a, OBS_DIM, 2, width=width, mu_scale=scale), 0),
                                           eqx.is_array)
            g, m = _pair_trainer(static, params, instance_name(k, "rod"), instance_name(k2, "rod"), cfg)(b, arrays)
            runs.append((eqx.combine(g, static), m))
        stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs) if eqx.is_array(xs[0]) else xs[0], *runs)
        guides[(k, k2)], metrics[(k, k2)] = stacked[0].net, stacked[1]
    return guides, metrics


def _seed(tree, s):
    return jax.tree_util.tree_map(lambda a: a[s] if eqx.is_array(a) else a, tree)


@cites(TOS)
def task_success(key: jax.Array, task: Task, guides: dict[tuple[str, str], GuidingNet], baseline: str, *,
                 num_episodes: int = 256, seed: int | None = None, max_phases: int | None = None):
    """Run ``num_episodes`` vmapped episodes of ``task`` under a baseline (``"none"``, ``"fixed"``, ``"tos"``);
    ``guides`` by skill-type pair (from :func:`train_task_guides`; ``seed`` picks one seed of a stacked set).
    Returns the :class:`~jaxlab.agents.tree_of_skill.chaining.EpisodeResult`."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    if seed is not None:
        guides = _seed(guides, seed)
    xs = rod_names(task.params.n_rods)
    dep = task_dep(task.params.n_rods)
    views = {(instance_name(k, x), instance_name(k2, x)): RodView(g, i) for i, x in enumerate(xs)
             for (k, k2), g in sorted(guides.items())}
    mode = {"none": "none", "tos": "tos", "fixed": fixed_chain(task)}[baseline]
    if max_phases is None:
        max_phases = 4 * len(task.goal) + 2
    return run_tos_episode(key, task_bt(task), task_skills(task.params), views, dep, task_env(task.params),
                           num_episodes=num_episodes, max_phases=max_phases, guidance=mode, skill_of=_name)


def _name(action: Action) -> str:
    return action.name
