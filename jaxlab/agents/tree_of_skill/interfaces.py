r"""The interfaces between Tree-of-Skill's environments and its learners: goal spaces and goal masks, skills as
the runner executes them, and the two environment protocols (BT-driven execution and goal-conditioned skill MDPs).

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved). Skill ``k`` has a goal space ``G_k subset R^{d_k}`` padded to ``R^{d_g}``
with a static mask ``m_k^space``; the runtime mask is ``m = m_k^space * mu`` with ``mu in {0, 1}`` (``mu = 0``: no
goal from a successor, the skill runs its default behaviour), and a policy sees ``pi_k(u | o, g * m, m)``.

Environments (:mod:`~jaxlab.agents.tree_of_skill.rodinsert`, :mod:`~jaxlab.agents.tree_of_skill.rodinsert_tasks`)
build these types; the learners (:mod:`~jaxlab.agents.tree_of_skill.ppo`,
:mod:`~jaxlab.agents.tree_of_skill.guiding`) and the runner (:mod:`~jaxlab.agents.tree_of_skill.chaining`)
consume them, so no environment imports a learner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.agents.tree_of_skill.papers import TOS
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_int, check_shape, value_check

__all__ = ["BTEnv", "GoalSpec", "Skill", "SkillEnv", "goal_spec", "masked_goal"]


class GoalSpec(NamedTuple):
    """A skill's goal space: its own dimension ``d_k`` and the static mask ``m_k^space`` in ``R^{d_g}``."""

    dim: int
    space_mask: jax.Array


def goal_spec(dim: int, d_g: int) -> GoalSpec:
    """Goal spec whose first ``dim`` of ``d_g`` entries are used."""
    dim = check_int(dim, "dim", min_value=0)
    d_g = check_int(d_g, "d_g", min_value=1)
    if dim > d_g:
        raise ValueError(f"dim must be <= d_g={d_g}, got {dim}")
    return GoalSpec(dim, (jnp.arange(d_g) < dim).astype(jnp.result_type(float)))


@cites(TOS)
def masked_goal(goal: Any, spec: GoalSpec, use_goal: Any) -> tuple[jax.Array, jax.Array]:
    """``(g * m, m)`` with ``m = m_k^space * mu`` (jit/vmap). Masked entries are set to exactly 0 (not multiplied),
    so that a policy given ``mu = 0`` sees the same input whatever the goal vector holds, even non-finite.

    Raises:
      ValueError: ``goal`` not of length ``d_g`` (trace time), or a mask / ``use_goal`` not in {0, 1} (eagerly;
        under ``jit`` a run-time error with the same message).
    """
    goal = jnp.asarray(goal)
    space = jnp.asarray(spec.space_mask)
    check_shape(goal, "goal", space.shape)
    space = value_check(space, lambda a: (a != 0) & (a != 1), "spec.space_mask must hold only 0/1")
    use = jnp.asarray(use_goal)
    check_shape(use, "use_goal", ())
    use = value_check(use, lambda u: (u != 0) & (u != 1), "use_goal must be 0/1 (or a bool)")
    m = space * use.astype(space.dtype)
    return jnp.where(m > 0, goal, 0.0).astype(goal.dtype), m


class Skill(NamedTuple):
    """A skill as the ToS runner executes it: ``act(obs, goal, mask) -> action`` (pure JAX; a trained
    :class:`SkillPolicy`'s ``act`` or a scripted controller), its goal spec, a step budget, and the termination
    predicate ``done(env_state) -> bool`` (its success condition). With ``stochastic=True`` the runner calls
    ``act(obs, goal, mask, key)`` with a fresh key each step (e.g. :meth:`SkillPolicy.sample`: a PPO policy is
    trained and measured as the Gaussian policy, and its mean alone may never close a thresholded gripper)."""

    act: Callable
    spec: GoalSpec
    horizon: int
    done: Callable
    stochastic: bool = False


class BTEnv(NamedTuple):
    """An environment for BT-driven execution: ``reset(key) -> (obs, state)``, ``step(key, state, action) ->
    (obs, state, reward, done, info)`` and ``literals(state) -> {literal: bool array}`` (all pure JAX)."""

    reset: Callable
    step: Callable
    literals: Callable


class SkillEnv(NamedTuple):
    """A goal-conditioned skill MDP: ``reset(key) -> (obs, state, goal, mask)`` samples the initiation set and
    the goal; ``step(key, state, action, goal, mask) -> (obs, state, reward, done, success)``."""

    reset: Callable
    step: Callable
