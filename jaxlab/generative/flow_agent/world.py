r"""FlowAgent's tool world (all **[chosen]**): typed tools, semantic embeddings,
shortest plans in JAX, and the plan <-> trajectory encoding and decoding. Re-exported by
:mod:`jaxlab.generative.flow_agent`, whose docstring states the model.

- Tool ``k`` is a typed edge ``in_k -> out_k`` over ``n_types`` data types arranged as a cyclic pipeline (a
  random permutation of the types): ``n_types`` tools move one stage ahead (every type reachable from every
  other), ``n_types`` tools two stages ahead, the rest are *alternatives*, tools with the same types as one of
  those (another embedding noise). Shortest plans then have 1 to ``ceil((n_types - 1)/2)`` tools (1..6 for the
  default 12 types; uniformly random edges would give a diameter of about 4). Tool ids are shuffled.
- Embedding ``e_k = normalize(P_in[in_k] + P_out[out_k] + 0.1 xi_k)``, ``e_stop = normalize(zeta)``.
- Shortest plans: Bellman-Ford over the available tools, ``dist[s, g]`` = number of tools, ``next_tool[s, g]`` =
  the lowest-index available tool starting a shortest plan (BFS tie-breaking).
- Trajectory ``tau = [e_k1, ..., e_kn, e_stop, ..., e_stop]`` (K x D). Decoding: cosine argmax over the
  available tools and STOP per waypoint, cut at the first STOP, collapse consecutive repeats; with ``repair``
  a type-incompatible step is replaced by the compatible available tool of highest cosine score.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from jaxlab.core.validation import as_array, check_in_range, check_int

__all__ = [
    "K_DEFAULT",
    "N_MAX",
    "Tasks",
    "ToolWorld",
    "decode_trajectory",
    "encode_plan",
    "make_tool_world",
    "reference_plan",
    "shortest_plans",
    "task_condition",
    "training_tasks",
]

_INF = 1 << 20
K_DEFAULT = 8  # trajectory length K (waypoints per plan)
N_MAX = 6  # longest reference plan kept for training


class ToolWorld(NamedTuple):
    """A typed tool world of ``M`` tools over ``T`` data types with unit-norm embeddings in ``R^D`` (module docstring).

    Attributes:
      tool_in: ``(M,)`` int32 array, the input type ``in_k`` of each tool.
      tool_out: ``(M,)`` int32 array, the output type ``out_k`` of each tool.
      emb: ``(M, D)`` float array of unit tool embeddings ``e_k``.
      stop: ``(D,)`` float array, the unit STOP embedding ``e_stop``.
      seen: ``(M,)`` bool array, False for the tools held out of training (unseen).
      P_in: ``(T, D)`` float array of input-type prototypes.
      P_out: ``(T, D)`` float array of output-type prototypes.
    """

    tool_in: Int[Array, " M"]
    tool_out: Int[Array, " M"]
    emb: Float[Array, "M D"]
    stop: Float[Array, " D"]
    seen: Bool[Array, " M"]
    P_in: Float[Array, "T D"]
    P_out: Float[Array, "T D"]

    @property
    def n_types(self) -> int:
        """The number of data types ``T``.

        Returns:
          int.
        """
        return self.P_in.shape[0]

    @property
    def n_tools(self) -> int:
        """The number of tools ``M``.

        Returns:
          int.
        """
        return self.emb.shape[0]

    @property
    def dim(self) -> int:
        """The embedding dimension ``D``.

        Returns:
          int.
        """
        return self.emb.shape[1]


def _normalize(x: Array) -> Array:
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


def make_tool_world(key: Any, n_types: int = 12, n_tools: int = 40, dim: int = 16,
                    unseen_frac: float = 0.2) -> ToolWorld:
    """A random tool world **[chosen]** (FlowAgent's benchmark is not public; module docstring).

    Types form a cyclic pipeline (a random permutation): ``n_types`` tools move one stage ahead, ``n_types`` two
    stages ahead (fewer when ``n_tools < 2 n_types``), and the remaining tools are alternatives with the same types as
    one of those. ``e_k = normalize(P_in[in_k] + P_out[out_k] + 0.1 xi_k)`` with Gaussian prototypes, tool ids
    shuffled; ``round(unseen_frac * n_tools)`` random tools are marked unseen.

    Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic
    Reasoning" (FlowAgent), arXiv:2605.07339 (abstract only).

    Args:
      key: PRNG key.
      n_types: int >= 3, the number of types ``T``.
      n_tools: int >= ``n_types``, the number of tools ``M``.
      dim: int >= 2, the embedding dimension ``D``.
      unseen_frac: float in [0, 1], the fraction of unseen tools.

    Returns:
      A :class:`ToolWorld`.

    Raises:
      TypeError: ``n_types``, ``n_tools`` or ``dim`` is not an int.
      ValueError: ``n_types < 3``, ``n_tools < n_types``, ``dim < 2`` or ``unseen_frac`` outside [0, 1].

    Example:
      >>> import jax
      >>> from jaxlab.generative.flow_agent import make_tool_world, reference_plan
      >>> world = make_tool_world(jax.random.key(0), n_types=4, n_tools=8, dim=4)
      >>> world.emb.shape, world.n_types
      ((8, 4), 4)
      >>> tools, length = reference_plan(world, 0, 2, K=4)  # a shortest chain of typed tools from type 0 to 2
      >>> tools.shape, int(length) >= 1
      ((4,), True)
    """
    n_types = check_int(n_types, "n_types", min_value=3)
    n_tools = check_int(n_tools, "n_tools", min_value=n_types)
    dim = check_int(dim, "dim", min_value=2)
    check_in_range(unseen_frac, "unseen_frac", 0.0, 1.0)
    kp, kc, ki, ko, kn, ks, ku, kz = jax.random.split(key, 8)
    cyc = jax.random.permutation(kp, n_types)
    # Pipeline edges: one and two stages ahead along the cycle (2T distinct pairs), then alternatives.
    steps = jnp.concatenate([jnp.ones(n_types, jnp.int32), 2 * jnp.ones(n_types, jnp.int32)])
    src = jnp.concatenate([jnp.arange(n_types), jnp.arange(n_types)])
    n_base = min(n_tools, 2 * n_types)
    extra = jax.random.choice(kc, 2 * n_types, (n_tools - n_base,), replace=n_tools - n_base > 2 * n_types)
    pos = jnp.concatenate([src[:n_base], src[extra]])
    step = jnp.concatenate([steps[:n_base], steps[extra]])
    tin, tout = cyc[pos], cyc[(pos + step) % n_types]
    order = jax.random.permutation(ks, n_tools)
    tin, tout = tin[order].astype(jnp.int32), tout[order].astype(jnp.int32)
    P_in = jax.random.normal(ki, (n_types, dim))
    P_out = jax.random.normal(ko, (n_types, dim))
    emb = _normalize(P_in[tin] + P_out[tout] + 0.1 * jax.random.normal(kn, (n_tools, dim)))
    n_unseen = round(unseen_frac * n_tools)
    seen = jnp.ones(n_tools, bool).at[jax.random.permutation(ku, n_tools)[:n_unseen]].set(False)
    return ToolWorld(tin, tout, emb, _normalize(jax.random.normal(kz, (dim,))), seen, P_in, P_out)


def _check_avail(world: ToolWorld, avail: Any) -> Array:
    return as_array(avail, "avail", shape=(world.n_tools,), kind="bool")


def _check_type(world: ToolWorld, value: Any, name: str) -> Array:
    v = as_array(value, name, ndim=0, kind="int")
    return check_in_range(v, name, 0, world.n_types - 1)


def shortest_plans(world: ToolWorld, avail: Bool[Array, " M"]) -> tuple[Array, Array]:
    """Shortest plans over the available tools by Bellman-Ford (``T - 1`` relaxations).

    ``dist[s, g]`` is the number of tools of a shortest plan from type ``s`` to ``g`` and ``next_tool[s, g]`` the
    lowest-index available tool that starts one (breadth-first tie-breaking).

    Args:
      world: the :class:`ToolWorld`.
      avail: ``(M,)`` bool array of available tools.

    Returns:
      ``(dist, next_tool)``: two ``(T, T)`` int32 arrays; ``dist`` is ``2^20`` where ``g`` is unreachable and
      ``next_tool`` is -1 where ``s = g`` or ``g`` is unreachable.

    Raises:
      TypeError: ``avail`` is not a bool array.
      ValueError: ``avail`` not of shape ``(M,)``.
    """
    avail = _check_avail(world, avail)
    T, M = world.n_types, world.n_tools

    def cand(dist):  # cand[k, g] = 1 + dist[out_k, g] for available k
        return jnp.where(avail[:, None], 1 + dist[world.tool_out], _INF)

    def relax(_, dist):
        new = jax.ops.segment_min(cand(dist), world.tool_in, num_segments=T)
        return jnp.minimum(dist, jnp.minimum(new, _INF))

    eye = jnp.eye(T, dtype=bool)
    dist = jax.lax.fori_loop(0, T - 1, relax, jnp.where(eye, 0, _INF).astype(jnp.int32))
    c = cand(dist)
    ok = (c == dist[world.tool_in]) & (c < _INF)
    first = jax.ops.segment_min(jnp.where(ok, jnp.arange(M)[:, None], M), world.tool_in, num_segments=T)
    first = jnp.where((first >= M) | eye, -1, first)
    return dist, first.astype(jnp.int32)


def reference_plan(world: ToolWorld, s: Any, g: Any, K: int, avail: Bool[Array, " M"] | None = None
                   ) -> tuple[Array, Array]:
    """The breadth-first shortest plan from type ``s`` to ``g`` over ``avail`` (the reference plans of training and
    evaluation), -1 padded to ``K`` tools.

    Args:
      world: the :class:`ToolWorld`.
      s: int scalar, the start type in ``[0, T)``.
      g: int scalar, the goal type in ``[0, T)``.
      K: int >= 1, the plan length.
      avail: optional ``(M,)`` bool array of available tools (default: all).

    Returns:
      ``(tools, length)``: the ``(K,)`` int32 plan (cut to ``K`` tools when longer) and its int32 scalar length
      (the number of tools of a shortest plan, possibly more than ``K``; -1 if ``g`` is unreachable).

    Raises:
      TypeError: ``s`` or ``g`` not an int scalar, ``K`` not an int, or ``avail`` not bool.
      ValueError: ``K < 1``; ``s`` or ``g`` outside ``[0, T)`` (under ``jit``: a run-time error); ``avail`` of the
        wrong shape.
    """
    K = check_int(K, "K", min_value=1)
    s, g = _check_type(world, s, "s"), _check_type(world, g, "g")
    avail = jnp.ones(world.n_tools, bool) if avail is None else _check_avail(world, avail)
    dist, nxt = shortest_plans(world, avail)

    def step(z, _):
        k = nxt[z, g]
        return jnp.where(k >= 0, world.tool_out[jnp.maximum(k, 0)], z), k

    _, tools = jax.lax.scan(step, s, None, length=K)
    d = dist[s, g]
    return tools, jnp.where(d >= _INF, -1, d).astype(jnp.int32)


def _check_tools(world: ToolWorld, tools: Any, K: int) -> Array:
    tools = as_array(tools, "tools", ndim=1, kind="int")
    if tools.shape[0] > K:
        raise ValueError(f"tools (a plan of {tools.shape[0]} steps) is longer than the trajectory length K = {K}")
    tools = check_in_range(tools, "tools", -1, world.n_tools - 1)
    return jnp.pad(tools, (0, K - tools.shape[0]), constant_values=-1)


def encode_plan(world: ToolWorld, tools: Int[Array, " n"], K: int) -> Float[Array, "K D"]:
    """Trajectory of a plan: ``tau = [e_k1, ..., e_kn, e_stop, ..., e_stop]``, the -1 entries (and the padding up to
    ``K``) encoded as STOP (module docstring).

    Args:
      world: the :class:`ToolWorld`.
      tools: ``(n,)`` int array of tool ids (``n <= K``; -1 = STOP).
      K: int >= 1, the trajectory length.

    Returns:
      ``(K, D)`` float array of waypoints.

    Raises:
      TypeError: ``tools`` not an int array, or ``K`` not an int.
      ValueError: ``K < 1``, ``tools`` not 1-d, longer than ``K``, or with an entry outside ``[-1, M)``.
    """
    K = check_int(K, "K", min_value=1)
    tools = _check_tools(world, tools, K)
    return jnp.where((tools >= 0)[:, None], world.emb[jnp.maximum(tools, 0)], world.stop)


def decode_trajectory(tau: Float[Array, "K D"], world: ToolWorld, avail: Bool[Array, " M"], *,
                      repair: bool = False, z: Any = None) -> Int[Array, " K"]:
    """Tools of a trajectory by cosine proximity (module docstring).

    Per waypoint, the available tool of highest cosine to it, or STOP when ``cos(tau_i, e_stop)`` is at least
    as high; the plan is cut at the first STOP and consecutive repeats collapse. With ``repair`` every step whose
    input type is not the current type ``z`` is replaced by the compatible available tool of highest cosine score,
    and the plan ends where no compatible tool exists.

    Args:
      tau: ``(K, D)`` float array of waypoints.
      world: the :class:`ToolWorld`.
      avail: ``(M,)`` bool array of available tools.
      repair: type-repair the plan (needs ``z``).
      z: int scalar, the start type (with ``repair``).

    Returns:
      ``(K,)`` int32 plan, -1 padded.

    Raises:
      TypeError: a non-float ``tau``, ``avail`` not bool, or ``z`` not an int.
      ValueError: ``tau`` not ``(K, D)``; ``avail`` of the wrong shape; ``repair`` without ``z``; ``z`` outside
        ``[0, T)``.
    """
    tau = as_array(tau, "tau", ndim=2)
    if tau.shape[1] != world.dim:
        raise ValueError(f"tau must have shape (K, {world.dim}), got shape {tau.shape}")
    avail = _check_avail(world, avail)
    K = tau.shape[0]
    if repair:
        if z is None:
            raise ValueError("z (the start type) is needed when repair=True")
        z = _check_type(world, z, "z")
    score = _normalize(tau) @ world.emb.T
    score = jnp.where(avail[None, :], score, -jnp.inf)
    stop = _normalize(tau) @ world.stop
    idx = jnp.where(jnp.max(score, axis=1) > stop, jnp.argmax(score, axis=1), -1)
    alive = jnp.cumprod(idx >= 0).astype(bool)
    prev = jnp.concatenate([jnp.array([-1]), idx[:-1]])
    keep = alive & (idx != prev)
    if repair:
        def fix(zc, row):
            k, sc, kp = row
            compat = avail & (world.tool_in == zc)
            k2 = jnp.where(compat[jnp.maximum(k, 0)] & (k >= 0), k, jnp.argmax(jnp.where(compat, sc, -jnp.inf)))
            k2 = jnp.where(kp & jnp.any(compat), k2, -1)
            return jnp.where(k2 >= 0, world.tool_out[jnp.maximum(k2, 0)], zc), k2

        _, idx = jax.lax.scan(fix, z, (idx, score, keep))
        keep = jnp.cumprod(jnp.where(keep, idx >= 0, True)).astype(bool) & keep
    pos = jnp.where(keep, jnp.cumsum(keep) - 1, K)
    return jnp.full(K + 1, -1, jnp.int32).at[pos].set(idx.astype(jnp.int32))[:K]


def task_condition(world: ToolWorld, s: Any, g: Any, avail: Bool[Array, " M"]) -> Float[Array, " C"]:
    """The task condition ``c = [P_in[s] | P_out[g] | avail_summary]`` with
    ``avail_summary = sum_k (1 - avail_k) e_k / sqrt(M)`` **[chosen]** (the direction of the unavailable tools).

    Args:
      world: the :class:`ToolWorld`.
      s: int scalar, the current type in ``[0, T)``.
      g: int scalar, the goal type in ``[0, T)``.
      avail: ``(M,)`` bool array of available tools.

    Returns:
      ``(3 D,)`` float array.

    Raises:
      TypeError: ``s`` or ``g`` not an int scalar, or ``avail`` not bool.
      ValueError: ``s`` or ``g`` outside ``[0, T)``, or ``avail`` of the wrong shape.
    """
    s, g = _check_type(world, s, "s"), _check_type(world, g, "g")
    avail = _check_avail(world, avail)
    # a Python float (weakly typed) keeps emb's dtype: numpy's float64 sqrt promoted float32 worlds
    summary = jnp.sum(jnp.where(avail[:, None], 0.0, world.emb), axis=0) / math.sqrt(world.n_tools)
    return jnp.concatenate([world.P_in[s], world.P_out[g], summary])


class Tasks(NamedTuple):
    """Training examples: tasks ``(s, g)`` with their availability and reference plan (``N`` rows).

    Attributes:
      s: ``(N,)`` int array of start types.
      g: ``(N,)`` int array of goal types.
      avail: ``(N, M)`` bool array of available tools.
      tools: ``(N, K)`` int32 array of reference plans over the *seen* available tools, -1 padded.
      length: ``(N,)`` int32 array of reference plan lengths.
    """

    s: Array
    g: Array
    avail: Array
    tools: Array
    length: Array


def training_tasks(key: Any, world: ToolWorld, n: int, *, K: int = K_DEFAULT, n_max: int | None = None,
                   p_drop: float = 0.1) -> Tasks:
    """Sample training tasks **[chosen]**: ``n`` pairs ``s != g`` with replacement, each tool dropped with
    probability ``p_drop`` (so that re-planning states are in the data), the reference plan over the *seen*
    available tools. Only the tasks with ``1 <= length <= n_max`` are kept, so fewer than ``n`` come back. Eager
    (the number of rows depends on the draw).

    Args:
      key: PRNG key.
      world: the :class:`ToolWorld`.
      n: int >= 1, the number of tasks drawn.
      K: int >= 1, the plan length.
      n_max: int in ``[1, K]``, the longest reference plan kept; ``None`` means ``min(6, K)``.
      p_drop: float in [0, 1], the probability that a tool is unavailable.

    Returns:
      :class:`Tasks` with ``N <= n`` rows.

    Raises:
      TypeError: ``n``, ``K`` or ``n_max`` is not an int.
      ValueError: ``n < 1``, ``K < 1``, ``n_max`` outside ``[1, K]`` or ``p_drop`` outside [0, 1].
    """
    n = check_int(n, "n", min_value=1)
    K = check_int(K, "K", min_value=1)
    n_max = min(N_MAX, K) if n_max is None else check_int(n_max, "n_max", min_value=1, max_value=K)
    p_drop = check_in_range(p_drop, "p_drop", 0.0, 1.0)
    ks, kg, kd = jax.random.split(key, 3)
    T = world.n_types
    s = jax.random.randint(ks, (n,), 0, T)
    g = (s + jax.random.randint(kg, (n,), 1, T)) % T
    avail = ~jax.random.bernoulli(kd, p_drop, (n, world.n_tools))
    tools, length = jax.jit(jax.vmap(lambda s, g, a: reference_plan(world, s, g, K, a & world.seen)))(s, g, avail)
    ok = np.asarray((length >= 1) & (length <= n_max))
    return Tasks(*(a[ok] for a in (s, g, avail, tools, length)))
