r"""FlowAgent's closed loop **[chosen]**: the tool-world environment that runs an agent's plans.

Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic Reasoning"
(FlowAgent), arXiv:2605.07339 (abstract only; the loop is a reconstruction).

State = current type ``z``; the environment runs the next planned tool, which fails with probability ``p_fail``
(then it stays unavailable for the episode and ``z`` is unchanged) or moves ``z <- out_k``. The agent re-plans
from ``(z, g)`` with the current availability after a failure, an incompatible or unavailable step, or an
exhausted plan. The episode ends at ``g``, after ``max_steps`` steps, or when no available tool leaves ``z``.
All of it is a ``lax.scan`` with masks, vmapped over episodes. An agent is any callable
``agent(key, world, z, g, avail) -> plan (K,)`` (-1 padded); this module imports no learner.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_in_range, check_int
from jaxlab.generative.flow_agent.world import K_DEFAULT, N_MAX, ToolWorld, _check_type, make_tool_world, reference_plan

__all__ = [
    "EpisodeState",
    "EpisodeStepInfo",
    "episode_algorithm",
    "episode_init",
    "episode_step",
    "plan_valid",
    "run_episode",
    "run_episodes",
]


class EpisodeState(NamedTuple):
    """State of one closed-loop episode (module docstring); ``M`` tools, plans of ``K`` tools.

    Attributes:
      z: int32 scalar, the current type.
      avail: ``(M,)`` bool array, the tools still available (a failed tool is removed).
      t: int32 scalar, the number of environment steps taken.
      plan: ``(K,)`` int32 array, the current plan, -1 padded.
      plan_ptr: int32 scalar, the index of the next tool in ``plan`` (``K``: exhausted).
      done: bool scalar, the episode has ended (goal reached, step limit, or stuck).
      success: bool scalar, the goal was reached.
      n_replans: int32 scalar, the number of plans generated (the first plan included).
      g: int32 scalar, the goal type.
      first_plan: ``(K,)`` int32 array, the first plan generated.
    """

    z: Array
    avail: Array
    t: Array
    plan: Array
    plan_ptr: Array
    done: Array
    success: Array
    n_replans: Array
    g: Array
    first_plan: Array


class EpisodeStepInfo(NamedTuple):
    """Diagnostics of one environment step.

    Attributes:
      tool: int32 scalar, the tool called (-1 when the episode was done or the planned step was not executable).
      failed: bool scalar, the tool call failed.
    """
    tool: Array
    failed: Array


def episode_init(world: ToolWorld, s: Any, g: Any, K: int = K_DEFAULT,
                 avail: Bool[Array, " M"] | None = None) -> EpisodeState:
    """The start of an episode: type ``s``, every tool (or ``avail``) available, no plan (the first step plans).
    ``done`` and ``success`` are already True when ``s == g``.

    Args:
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      s: int scalar, the start type in ``[0, T)``.
      g: int scalar, the goal type in ``[0, T)``.
      K: int >= 1, the plan length.
      avail: optional ``(M,)`` bool array of available tools (default: all).

    Returns:
      An :class:`EpisodeState`.

    Raises:
      TypeError: ``K`` not an int, ``s``/``g`` not int scalars, or ``avail`` not bool.
      ValueError: ``K < 1``, ``s`` or ``g`` outside ``[0, T)``, or ``avail`` of the wrong shape.
    """
    K = check_int(K, "K", min_value=1)
    s, g = _check_type(world, s, "s"), _check_type(world, g, "g")
    avail = jnp.ones(world.n_tools, bool) if avail is None else as_array(avail, "avail", shape=(world.n_tools,),
                                                                         kind="bool")
    empty = jnp.full(K, -1, jnp.int32)
    i0 = jnp.zeros((), jnp.int32)
    return EpisodeState(s.astype(jnp.int32), avail, i0, empty, jnp.asarray(K, jnp.int32), s == g, s == g, i0,
                        g.astype(jnp.int32), empty)


def _needs_plan(state: EpisodeState, world: ToolWorld) -> Array:
    """Re-plan when the plan is exhausted or its next step is empty, unavailable or type-incompatible."""
    K = state.plan.shape[0]
    cur = state.plan[jnp.minimum(state.plan_ptr, K - 1)]
    cur0 = jnp.maximum(cur, 0)
    need = (state.plan_ptr >= K) | (cur < 0) | ~state.avail[cur0] | (world.tool_in[cur0] != state.z)
    return need & ~state.done


def _advance(key: Any, state: EpisodeState, world: ToolWorld, need: Array, new_plan: Array, p_fail: Any,
             max_steps: int) -> tuple[EpisodeState, EpisodeStepInfo]:
    K = state.plan.shape[0]
    new_plan = new_plan.astype(jnp.int32)
    plan = jnp.where(need, new_plan, state.plan)
    first_plan = jnp.where(need & (state.n_replans == 0), new_plan, state.first_plan)
    ptr = jnp.where(need, 0, jnp.minimum(state.plan_ptr, K - 1))
    k = plan[ptr]
    k0 = jnp.maximum(k, 0)
    ok = (k >= 0) & state.avail[k0] & (world.tool_in[k0] == state.z)
    fail = jax.random.bernoulli(key, p_fail)
    moved = ok & ~fail
    z = jnp.where(moved, world.tool_out[k0], state.z)
    avail = state.avail & ~((jnp.arange(world.n_tools) == k) & ok & fail)
    ptr = jnp.where(moved, ptr + 1, jnp.where(ok, ptr, K))
    t = state.t + 1
    success = z == state.g
    stuck = ~jnp.any(avail & (world.tool_in == z))
    new = EpisodeState(z, avail, t, plan, ptr.astype(jnp.int32), success | (t >= max_steps) | stuck, success,
                       state.n_replans + need, state.g, first_plan)
    out = jax.tree_util.tree_map(lambda a, b: jnp.where(state.done, a, b), state, new)
    return out, EpisodeStepInfo(jnp.where(state.done | ~ok, -1, k), ~state.done & ok & fail)


def episode_algorithm(world: ToolWorld, agent_fn: Any, *, p_fail: Any = 0.1, max_steps: int = 2 * N_MAX + 4,
                      K: int = K_DEFAULT) -> Algorithm:
    """FlowAgent's closed loop with one agent as an :class:`~jaxlab.core.Algorithm`, world, agent and failure rate
    bound once.

    The loop is a **[chosen]** reconstruction of the abstract's "plan-level closed-loop benchmark" (the benchmark
    itself is not public). ``init(s, g, avail=None) -> EpisodeState`` (:func:`episode_init`);
    ``step(key, state) -> (EpisodeState, EpisodeStepInfo)`` is one environment step, a no-op once ``done``: call the
    agent when the plan is exhausted or its next step is empty, unavailable or type-incompatible; run the next tool,
    which fails with probability ``p_fail`` (it then stays unavailable and ``z`` is unchanged) or moves
    ``z <- out_k``; end at ``g``, after ``max_steps`` steps, or when no available tool leaves ``z``.

    Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic
    Reasoning" (FlowAgent), arXiv:2605.07339 (abstract only).

    Args:
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      agent_fn: ``agent(key, world, z, g, avail) -> plan (K,)`` int, -1 padded (e.g.
        :class:`~jaxlab.generative.flow_agent.FlowAgentPlanner`).
      p_fail: float scalar in [0, 1], the failure probability of a tool call.
      max_steps: int >= 1, the step limit of an episode.
      K: int >= 1, the plan length.

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``max_steps`` or ``K`` is not an int.
      ValueError: ``p_fail`` outside [0, 1] (under ``jit``: a run-time error), ``max_steps < 1`` or ``K < 1``.

    Example:
      >>> import jax
      >>> from jaxlab.core import run
      >>> from jaxlab.generative.flow_agent import OraclePlanner, episode_algorithm, make_tool_world
      >>> world = make_tool_world(jax.random.key(0), n_types=4, n_tools=8, dim=4)
      >>> algo = episode_algorithm(world, OraclePlanner(K=4), p_fail=0.0, max_steps=6, K=4)
      >>> final, trace = run(algo.step, algo.init(0, 2), jax.random.key(1), 6)
      >>> bool(final.success)  # the BFS planner without failures always arrives
      True
    """
    p_fail = check_in_range(p_fail, "p_fail", 0.0, 1.0)
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    K = check_int(K, "K", min_value=1)

    def init(s: Any, g: Any, avail: Bool[Array, " M"] | None = None) -> EpisodeState:
        return episode_init(world, s, g, K, avail)

    def step(key: Any, state: EpisodeState) -> tuple[EpisodeState, EpisodeStepInfo]:
        kp, kf = jax.random.split(key)
        need = _needs_plan(state, world)
        plan = agent_fn(kp, world, state.z, state.g, state.avail)
        return _advance(kf, state, world, need, plan, p_fail, max_steps)

    return Algorithm(init, step)


def episode_step(key: Any, state: EpisodeState, world: ToolWorld, agent_fn: Any, *, p_fail: Any = 0.1,
                 max_steps: int = 2 * N_MAX + 4) -> tuple[EpisodeState, EpisodeStepInfo]:
    """One environment step (a no-op once ``done``):
    ``episode_algorithm(world, agent_fn, p_fail=p_fail, max_steps=max_steps, K=len(state.plan)).step(key, state)``.

    Args:
      key: PRNG key (agent and failure draws).
      state: the current :class:`EpisodeState`.
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      agent_fn: ``agent(key, world, z, g, avail) -> plan (K,)``.
      p_fail: float scalar in [0, 1], the failure probability of a tool call.
      max_steps: int >= 1, the step limit of an episode.

    Returns:
      ``(state, info)``: the next :class:`EpisodeState` and the step's :class:`EpisodeStepInfo`.

    Raises:
      TypeError: as :func:`episode_algorithm`.
      ValueError: as :func:`episode_algorithm`.
    """
    algo = episode_algorithm(world, agent_fn, p_fail=p_fail, max_steps=max_steps, K=state.plan.shape[0])
    return algo.step(key, state)


def run_episode(key: Any, world: ToolWorld, s: Any, g: Any, agent_fn: Any, *, p_fail: Any = 0.1,
                max_steps: int = 2 * N_MAX + 4, K: int = K_DEFAULT) -> tuple[EpisodeState, EpisodeStepInfo]:
    """A whole episode from ``s`` to ``g``: ``max_steps`` masked steps of :func:`episode_algorithm` under
    :func:`jaxlab.core.run` (vmap it over keys and tasks for many episodes, or use :func:`run_episodes`).

    Args:
      key: PRNG key, split into one key per step.
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      s: int scalar, the start type.
      g: int scalar, the goal type.
      agent_fn: ``agent(key, world, z, g, avail) -> plan (K,)``.
      p_fail: float scalar in [0, 1], the failure probability of a tool call.
      max_steps: int >= 1, the step limit.
      K: int >= 1, the plan length.

    Returns:
      ``(state, infos)``: the final :class:`EpisodeState` and the :class:`EpisodeStepInfo` of every step, stacked
      along a leading axis of length ``max_steps``.

    Raises:
      TypeError: as :func:`episode_algorithm` and :func:`episode_init`.
      ValueError: as :func:`episode_algorithm` and :func:`episode_init`.
    """
    algo = episode_algorithm(world, agent_fn, p_fail=p_fail, max_steps=max_steps, K=K)
    final, trace = run(algo.step, algo.init(s, g), key, max_steps)
    return final, trace.infos


def run_episodes(keys: Any, world: ToolWorld, s: Int[Array, " B"], g: Int[Array, " B"], agent_fn: Any, *,
                 p_fail: Any = 0.1, max_steps: int = 2 * N_MAX + 4, K: int = K_DEFAULT,
                 replan_budget: int | None = None) -> EpisodeState:
    """``B`` episodes at once, equal to ``vmap(run_episode)`` over ``keys`` but cheaper.

    At a step where at most ``replan_budget`` episodes need a plan, the agent is called on those only (gathered,
    planned, scattered back); otherwise (``lax.cond``) on all ``B``. Every episode starts with all tools available.

    Args:
      keys: ``(B,)`` array of PRNG keys, one per episode.
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      s: ``(B,)`` int array of start types.
      g: ``(B,)`` int array of goal types.
      agent_fn: ``agent(key, world, z, g, avail) -> plan (K,)``.
      p_fail: float scalar or ``(B,)`` float array in [0, 1], the failure probabilities.
      max_steps: int >= 1, the step limit.
      K: int >= 1, the plan length.
      replan_budget: int in ``[1, B]``, the number of episodes planned in the cheap branch (default
        ``max(1, B // 4)``).

    Returns:
      The final :class:`EpisodeState` of every episode (leading axis ``B``).

    Raises:
      TypeError: ``max_steps``, ``K`` or ``replan_budget`` not an int, or ``s``/``g`` not int arrays.
      ValueError: ``max_steps < 1``; ``s`` not 1-d or ``g`` not of its shape; ``replan_budget`` outside
        ``[1, B]``; ``p_fail`` outside [0, 1]; the checks of :func:`episode_init`.
    """
    max_steps = check_int(max_steps, "max_steps", min_value=1)
    s = as_array(s, "s", ndim=1, kind="int")
    B = s.shape[0]
    g = as_array(g, "g", shape=(B,), kind="int")
    R = check_int(max(1, B // 4) if replan_budget is None else replan_budget, "replan_budget", min_value=1,
                  max_value=B)
    p_fail = check_in_range(p_fail, "p_fail", 0.0, 1.0)
    p_fail = jnp.broadcast_to(jnp.asarray(p_fail, world.emb.dtype), (B,))
    states = jax.vmap(lambda a, b: episode_init(world, a, b, K))(s, g)
    step_keys = jax.vmap(lambda k: jax.vmap(jax.random.split)(jax.random.split(k, max_steps)))(keys)
    plan_all = jax.vmap(lambda k, z, gg, av: agent_fn(k, world, z, gg, av).astype(jnp.int32))

    def body(st, ks):
        kp, kf = ks[:, 0], ks[:, 1]
        need = jax.vmap(lambda x: _needs_plan(x, world))(st)

        def some(_):
            idx = jnp.argsort(~need)[:R]  # the episodes that need a plan come first (stable sort)
            sub = plan_all(kp[idx], st.z[idx], st.g[idx], st.avail[idx])
            return jnp.zeros((B, K), jnp.int32).at[idx].set(sub)

        plans = jax.lax.cond(jnp.sum(need) <= R, some, lambda _: plan_all(kp, st.z, st.g, st.avail), None)
        st, _ = jax.vmap(lambda *a: _advance(a[0], a[1], world, a[2], a[3], a[4], max_steps))(kf, st, need, plans,
                                                                                               p_fail)
        return st, None

    final, _ = jax.lax.scan(body, states, jnp.swapaxes(step_keys, 0, 1))
    return final


def plan_valid(world: ToolWorld, tools: Int[Array, " K"], s: Any, g: Any) -> Array:
    """Whether a -1 padded plan is a type-consistent chain from ``s`` that ends at ``g`` (-1 entries are skipped, and
    an empty plan is not valid).

    Args:
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      tools: ``(K,)`` int array, the plan.
      s: int scalar, the start type.
      g: int scalar, the goal type.

    Returns:
      Bool scalar.
    """

    def step(carry, k):
        z, ok = carry
        k0 = jnp.maximum(k, 0)
        ok = ok & ((k < 0) | (world.tool_in[k0] == z))
        return (jnp.where(k >= 0, world.tool_out[k0], z), ok), None

    (z, ok), _ = jax.lax.scan(step, (jnp.asarray(s), jnp.asarray(True)), tools)
    return ok & (z == g) & (tools[0] >= 0)


def _episode_example(key):
    """Tiny instance: a 6-type, 14-tool world and the BFS planner on the current availability."""
    from_world = make_tool_world(key, n_types=6, n_tools=14, dim=4)

    def oracle(k, world, z, g, avail):
        return reference_plan(world, z, g, 4, avail)[0]

    algo = episode_algorithm(from_world, oracle, p_fail=0.2, max_steps=8, K=4)
    return algo, algo.init(0, 3), None


register_algorithm("flow_agent_episode", episode_algorithm, _episode_example, area="flow_agent")

