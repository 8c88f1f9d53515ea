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
    """A skill's goal space ``G_k subset R^{d_k}``, padded to ``R^{d_g}``, as its dimension and static mask.

    Attributes:
      dim: ``d_k``, the number of goal entries the skill uses (its first ``d_k`` of ``d_g``).
      space_mask: ``(d_g,)`` float array ``m_k^space`` of 0/1, ones on the used entries.
    """

    dim: int
    space_mask: jax.Array


def goal_spec(dim: int, d_g: int) -> GoalSpec:
    """The :class:`GoalSpec` whose first ``dim`` of ``d_g`` entries are used: ``m_k^space = [j < dim]``.

    Args:
      dim: ``d_k``, an int in ``[0, d_g]`` (0: a goal-free skill).
      d_g: the padded goal dimension, an int ``>= 1``.

    Returns:
      The :class:`GoalSpec` (mask in the default float dtype).

    Raises:
      TypeError: ``dim`` or ``d_g`` is not an int.
      ValueError: ``dim < 0``, ``d_g < 1`` or ``dim > d_g``.
    """
    dim = check_int(dim, "dim", min_value=0)
    d_g = check_int(d_g, "d_g", min_value=1)
    if dim > d_g:
        raise ValueError(f"dim must be <= d_g={d_g}, got {dim}")
    return GoalSpec(dim, (jnp.arange(d_g) < dim).astype(jnp.result_type(float)))


@cites(TOS)
def masked_goal(goal: Any, spec: GoalSpec, use_goal: Any) -> tuple[jax.Array, jax.Array]:
    """The policy's goal input ``(g * m, m)`` with the runtime mask ``m = m_k^space * mu`` (jit/vmap).

    Masked entries are set to exactly 0 (not multiplied), so that a policy given ``mu = 0`` sees the same input
    whatever the goal vector holds, even non-finite. The goal-mask interface is reconstructed from the
    Tree-of-Skill abstract (the paper's text was not retrieved).

    Args:
      goal: ``(d_g,)`` float array ``g``, the goal handed to the skill.
      spec: the skill's :class:`GoalSpec`; ``spec.space_mask`` is ``m_k^space``.
      use_goal: ``mu``, a 0-d 0/1 number or bool: whether a successor hands a goal.

    Returns:
      A tuple ``(masked_goal, mask)`` of ``(d_g,)`` arrays: ``where(m > 0, g, 0)`` in ``goal``'s dtype, and
      ``m`` in the mask's dtype.

    Raises:
      ValueError: ``goal`` not of shape ``(d_g,)`` or ``use_goal`` not 0-d (trace time), or ``spec.space_mask`` /
        ``use_goal`` not in {0, 1} (eagerly; under ``jit`` a run-time error with the same message).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.agents.tree_of_skill import goal_spec, masked_goal
      >>> g, m = masked_goal(jnp.array([0.25, 0.5]), goal_spec(1, 2), 1)
      >>> g.tolist(), m.tolist()
      ([0.25, 0.0], [1.0, 0.0])
      >>> masked_goal(jnp.array([jnp.nan, 0.5]), goal_spec(1, 2), 0)[0].tolist()  # mu = 0: no goal
      [0.0, 0.0]
    """
    goal = jnp.asarray(goal)
    space = jnp.asarray(spec.space_mask)
    check_shape(goal, "goal", space.shape)
    space = value_check(space, lambda a: (a != 0) & (a != 1), "spec.space_mask must hold only 0/1")
    use = jnp.asarray(use_goal)
    check_shape(use, "use_goal", ())
    use = value_check(use, lambda u: (u != 0) & (u != 1), "use_goal must be 0/1 (or a bool)")
    m = space * use.astype(space.dtype)
    if jnp.issubdtype(goal.dtype, jnp.floating):
        m = m.astype(goal.dtype)  # the goal's precision (space_mask is in the default float type)
    return jnp.where(m > 0, goal, 0.0).astype(goal.dtype), m


class Skill(NamedTuple):
    """A skill as the ToS runner (:func:`~jaxlab.agents.tree_of_skill.chaining.run_tos_episode`) executes it.

    Attributes:
      act: ``act(obs, goal, mask) -> action`` (pure JAX; a trained :class:`SkillPolicy`'s ``act`` or a scripted
        controller); with ``stochastic=True``, ``act(obs, goal, mask, key)``.
      spec: the skill's goal space, a :class:`GoalSpec`.
      horizon: step budget of one execution, an int ``>= 1``.
      done: termination predicate ``done(env_state) -> bool`` (the skill's success condition).
      stochastic: ``True`` makes the runner pass a fresh key each step (e.g. :meth:`SkillPolicy.sample`: a PPO
        policy is trained and measured as the Gaussian policy, and its mean alone may never close a thresholded
        gripper).
    """

    act: Callable
    spec: GoalSpec
    horizon: int
    done: Callable
    stochastic: bool = False


class BTEnv(NamedTuple):
    """An environment for BT-driven execution (all functions pure JAX, vmappable).

    Attributes:
      reset: ``reset(key) -> (obs, state)``.
      step: ``step(key, state, action) -> (obs, state, reward, done, info)``.
      literals: ``literals(state) -> {literal: bool 0-d array}``, the symbolic state the BT is ticked on.
    """

    reset: Callable
    step: Callable
    literals: Callable


class SkillEnv(NamedTuple):
    """A goal-conditioned skill MDP, what :func:`~jaxlab.agents.tree_of_skill.ppo.ppo_train` trains on (pure JAX).

    Attributes:
      reset: ``reset(key) -> (obs, state, goal, mask)``: samples a start in the initiation set and a goal; the
        goal is already masked (``mask`` = ``m_k^space * mu``).
      step: ``step(key, state, action, goal, mask) -> (obs, state, reward, done, success)``.
    """

    reset: Callable
    step: Callable
