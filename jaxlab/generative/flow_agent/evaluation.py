r"""Closed-loop evaluation of FlowAgent and its baselines per plan horizon.

Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic Reasoning"
(FlowAgent), arXiv:2605.07339 (abstract only). Tasks ``(s, g)`` are grouped by the length ``n`` of their
shortest plan on the full tool set; every group runs the same compiled, vmapped episode loop
(:func:`~.episode.run_episodes`).
"""

from __future__ import annotations

import functools
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.validation import check_in_range, check_int
from jaxlab.generative.flow_agent.episode import plan_valid, run_episodes
from jaxlab.generative.flow_agent.world import K_DEFAULT, N_MAX, ToolWorld, reference_plan

__all__ = ["evaluate"]


@eqx.filter_jit
def _run_batch(keys, world, s, g, agent, p_fail, K, max_steps):
    final = run_episodes(keys, world, s, g, agent, p_fail=p_fail, max_steps=max_steps, K=K)

    def check(si, gi, first):
        ref, _ = reference_plan(world, si, gi, K)
        return plan_valid(world, first, si, gi), jnp.all(first == ref)

    return final, *jax.vmap(check)(s, g, final.first_plan)


@functools.partial(jax.jit, static_argnums=3)
def _all_plans(world, s, g, K):
    return jax.vmap(lambda a, b: reference_plan(world, a, b, K))(s, g)


def _task_pools(world: ToolWorld, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    T = world.n_types
    s, g = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    s, g = s.ravel(), g.ravel()
    tools, length = _all_plans(world, jnp.asarray(s), jnp.asarray(g), K)
    tools = np.asarray(tools)
    uses_unseen = np.any((tools >= 0) & ~np.asarray(world.seen)[np.maximum(tools, 0)], axis=1)
    return s, g, np.asarray(length), uses_unseen


def evaluate(key: Any, world: ToolWorld, agent: Any, n_episodes: int, p_fail: float,
             horizons: Any = tuple(range(1, N_MAX + 1)), *, unseen_only: bool = False, K: int = K_DEFAULT,
             max_steps: int = 2 * N_MAX + 4) -> dict[int, dict[str, float]]:
    """Closed-loop metrics of an agent per plan horizon (the abstract's long-horizon comparison, on the **[chosen]**
    tool world).

    Tasks ``(s, g)`` are grouped by the length ``n`` of their shortest plan on the full tool set; for every horizon
    in ``horizons`` with a non-empty pool, ``n_episodes`` tasks are drawn with replacement (with ``unseen_only``,
    only tasks whose reference plan uses an unseen tool) and all horizons run in one jitted, vmapped call of
    :func:`~jaxlab.generative.flow_agent.run_episodes`. Eager (the pools are built with NumPy).

    Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic
    Reasoning" (FlowAgent), arXiv:2605.07339 (abstract only).

    Args:
      key: PRNG key (task draws and episodes).
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      agent: ``agent(key, world, z, g, avail) -> plan (K,)`` (an ``eqx.Module`` or a hashable callable).
      n_episodes: int >= 1, the episodes per horizon.
      p_fail: float in [0, 1], the failure probability of a tool call.
      horizons: the plan lengths ``n`` to evaluate (ints).
      unseen_only: restrict to tasks whose reference plan uses an unseen tool.
      K: int >= 1, the plan length.
      max_steps: int >= 1, the step limit of an episode.

    Returns:
      A dict ``{n: metrics}`` over the horizons with a non-empty pool, ``metrics`` a dict of floats:
      ``"success"`` (rate), ``"valid"`` (first plan executable to the goal), ``"exact"`` (first plan equal to the
      reference), ``"extra_steps"`` (mean steps beyond ``n`` of successful episodes; NaN if none),
      ``"replans"`` (mean plans after the first) and ``"tasks"`` (the pool size, an int).

    Raises:
      TypeError: ``n_episodes`` or ``K`` is not an int.
      ValueError: ``n_episodes < 1``, ``p_fail`` outside [0, 1] or ``K < 1``.

    Example:
      >>> import jax
      >>> from jaxlab.generative.flow_agent import OraclePlanner, evaluate, make_tool_world
      >>> world = make_tool_world(jax.random.key(0), n_types=4, n_tools=8, dim=4)
      >>> res = evaluate(jax.random.key(1), world, OraclePlanner(K=4), 8, 0.0, horizons=(1, 2), K=4, max_steps=6)
      >>> res[1]["success"], res[2]["exact"]
      (1.0, 1.0)
    """
    n_episodes = check_int(n_episodes, "n_episodes", min_value=1)
    check_in_range(p_fail, "p_fail", 0.0, 1.0)
    K = check_int(K, "K", min_value=1)
    s_all, g_all, length, uses_unseen = _task_pools(world, K)
    kt, ke = jax.random.split(key)
    rng = np.random.default_rng(int(jax.random.randint(kt, (), 0, 2**31 - 1)))
    groups, ss, gs = [], [], []
    for n in horizons:
        pool = np.flatnonzero((length == n) & (uses_unseen | (not unseen_only)))
        if pool.size:
            idx = rng.choice(pool, n_episodes)
            groups.append((int(n), pool.size))
            ss.append(s_all[idx])
            gs.append(g_all[idx])
    if not groups:
        return {}
    s, g = jnp.asarray(np.concatenate(ss), jnp.int32), jnp.asarray(np.concatenate(gs), jnp.int32)
    keys = jax.random.split(ke, s.shape[0])
    final, valid, exact = _run_batch(keys, world, s, g, agent, jnp.asarray(p_fail, world.emb.dtype), K, max_steps)
    out = {}
    for i, (n, size) in enumerate(groups):
        sl = slice(i * n_episodes, (i + 1) * n_episodes)
        succ = np.asarray(final.success[sl])
        steps = np.asarray(final.t[sl])
        out[n] = {"success": float(succ.mean()), "valid": float(np.asarray(valid[sl]).mean()),
                  "exact": float(np.asarray(exact[sl]).mean()),
                  "extra_steps": float((steps[succ] - n).mean()) if succ.any() else float("nan"),
                  "replans": float(np.asarray(final.n_replans[sl]).mean() - 1), "tasks": size}
    return out
