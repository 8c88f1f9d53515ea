"""FlowAgent: the tool world and its shortest plans against a Python BFS, plan <-> trajectory round trips,
decoding (STOP, availability, repeats, repair, the angular margin), the jitted/vmapped episode runner against a
Python loop, graceful termination, training smoke tests, and the bad inputs."""

from collections import deque

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.generative import flow_agent as FA

K = 8


@pytest.fixture(scope="module")
def world():
    return FA.make_tool_world(jax.random.key(0))


def _bfs(world, avail, s, g):
    """Python BFS over the tools in index order (so ties go to the lowest index); returns the plan or None."""
    tin, tout = np.asarray(world.tool_in), np.asarray(world.tool_out)
    prev = {s: None}
    q = deque([s])
    while q:
        z = q.popleft()
        for k in range(len(tin)):
            if avail[k] and tin[k] == z and tout[k] not in prev:
                prev[tout[k]] = (z, k)
                q.append(tout[k])
    if g not in prev:
        return None
    plan, z = [], g
    while prev[z] is not None:
        z, k = prev[z]
        plan.append(k)
    return plan[::-1]


def test_world_structure(world):
    tin, tout = np.asarray(world.tool_in), np.asarray(world.tool_out)
    assert world.emb.shape == (40, 16) and world.n_types == 12
    assert np.all(tin != tout) and int((~np.asarray(world.seen)).sum()) == 8
    np.testing.assert_allclose(np.linalg.norm(np.asarray(world.emb), axis=1), 1.0, rtol=1e-6)
    dist, _ = FA.shortest_plans(world, jnp.ones(40, bool))
    assert int(jnp.max(dist)) == 6  # every type reachable, horizons 1..6 (ceil(11 / 2))


@pytest.mark.parametrize("drop", [0.0, 0.3])
def test_shortest_plans_match_python_bfs(world, drop):
    avail = np.random.default_rng(1).random(40) >= drop
    dist, nxt = (np.asarray(a) for a in FA.shortest_plans(world, jnp.asarray(avail)))
    plans = jax.jit(jax.vmap(jax.vmap(lambda s, g: FA.reference_plan(world, s, g, K, avail), (None, 0)),
                             (0, None)))(jnp.arange(12), jnp.arange(12))
    plans = [np.asarray(a) for a in plans]
    tin, tout = np.asarray(world.tool_in), np.asarray(world.tool_out)
    for s in range(12):
        for g in range(12):
            ref = _bfs(world, avail, s, g)
            tools, length = plans[0][s, g], plans[1][s, g]
            if ref is None:
                assert int(length) == -1 and int(nxt[s, g]) == -1
                continue
            assert int(dist[s, g]) == len(ref) == int(length)
            got = [int(k) for k in tools if k >= 0]
            assert len(got) == len(ref) and np.all(tools[len(got):] == -1)
            z = s
            for k in got:  # a type-consistent chain of available tools from s to g
                assert avail[k] and tin[k] == z
                z = tout[k]
            assert z == g
            if s != g:  # BFS and Bellman-Ford may pick different equal-length plans; the first tool is lowest
                first = [k for k in range(40) if avail[k] and tin[k] == s and dist[tout[k], g] == len(ref) - 1]
                assert got[0] == min(first) == nxt[s, g]


def _all_reference_trajectories(world):
    s, g = jnp.meshgrid(jnp.arange(12), jnp.arange(12), indexing="ij")

    @jax.jit
    def go(s, g):
        tools, _ = jax.vmap(lambda a, b: FA.reference_plan(world, a, b, K))(s, g)
        return tools, jax.vmap(lambda p: FA.encode_plan(world, p, K))(tools)

    return go(s.ravel(), g.ravel())


def test_encode_decode_round_trip_all_reference_plans(world):
    s = jnp.repeat(jnp.arange(12), 12)
    tools, taus = _all_reference_trajectories(world)
    avail = jnp.ones(40, bool)
    for repair in (False, True):
        dec = jax.jit(jax.vmap(lambda t, z, r=repair: FA.decode_trajectory(t, world, avail, repair=r, z=z)))(
            taus, s.ravel())
        np.testing.assert_array_equal(dec, tools)
    tau = FA.encode_plan(world, jnp.array([3, 5]), K)
    np.testing.assert_allclose(tau[2:], jnp.broadcast_to(world.stop, (6, 16)))
    np.testing.assert_allclose(tau[1], world.emb[5])


def test_decode_stop_availability_repeats_and_repair(world):
    tin, tout = np.asarray(world.tool_in), np.asarray(world.tool_out)
    a = 0
    b = int(np.flatnonzero(tin == tout[a])[0])
    tau = jnp.stack([world.emb[a], world.emb[a], world.emb[b], world.stop, world.emb[b]] + [world.stop] * 3)
    all_ = jnp.ones(40, bool)
    np.testing.assert_array_equal(FA.decode_trajectory(tau, world, all_), [a, b] + [-1] * 6)
    none = jnp.zeros(40, bool)
    np.testing.assert_array_equal(FA.decode_trajectory(tau, world, none), [-1] * 8)
    # b unavailable: the decoder picks another tool for that waypoint, never b.
    dec = np.asarray(FA.decode_trajectory(tau, world, all_.at[b].set(False)))
    assert b not in dec
    # Repair: start from a type where a is incompatible -> a is replaced by a compatible tool.
    z = int((tin[a] + 1) % 12) if np.any(tin == (tin[a] + 1) % 12) else int(tout[a])
    rep = np.asarray(FA.decode_trajectory(tau, world, all_, repair=True, z=z))
    zz = z
    for k in rep[rep >= 0]:
        assert tin[k] == zz
        zz = tout[k]


def _rotate(key, v, alpha):
    """Rotate unit vectors v (n, D) by exactly angle alpha in a random plane containing v."""
    r = jax.random.normal(key, v.shape)
    r = r - jnp.sum(r * v, 1, keepdims=True) * v
    r = r / jnp.linalg.norm(r, axis=1, keepdims=True)
    return jnp.cos(alpha) * v + jnp.sin(alpha) * r


def test_margin_property(world):
    E = np.concatenate([np.asarray(world.emb), np.asarray(world.stop)[None]])
    cos = np.clip(E @ E.T, -1, 1)
    np.fill_diagonal(cos, -1)
    theta_min = float(np.arccos(cos.max()))
    tools, taus = _all_reference_trajectories(world)
    keys = jax.random.split(jax.random.key(3), taus.shape[0])
    dec = jax.jit(jax.vmap(lambda k, t, a: FA.decode_trajectory(_rotate(k, t, a), world, jnp.ones(40, bool)),
                           (0, 0, None)))
    np.testing.assert_array_equal(dec(keys, taus, 0.49 * theta_min), tools)
    assert np.mean(np.all(np.asarray(dec(keys, taus, 3 * theta_min)) == np.asarray(tools), axis=1)) < 1


def _python_episode(key, world, s, g, agent, p_fail, max_steps):
    """Reference: the closed loop with Python control flow and the same key schedule as run_episode."""
    tin, tout = np.asarray(world.tool_in), np.asarray(world.tool_out)
    z, avail, plan, ptr, t, replans = s, np.ones(40, bool), None, K, 0, 0
    agent = eqx.filter_jit(agent)
    for k in jax.random.split(key, max_steps):
        kp, kf = jax.random.split(k)
        cur = plan[ptr] if plan is not None and ptr < K else -1
        if cur < 0 or not avail[cur] or tin[cur] != z:
            plan, ptr, replans = np.asarray(agent(kp, world, z, g, jnp.asarray(avail))), 0, replans + 1
        k_ = plan[ptr]
        t += 1
        if k_ >= 0 and avail[k_] and tin[k_] == z:
            if bool(jax.random.bernoulli(kf, p_fail)):
                avail[k_] = False
            else:
                z, ptr = tout[k_], ptr + 1
        else:
            ptr = K
        if z == g or t >= max_steps or not np.any(avail & (tin == z)):
            break
    return z, t, replans, avail


@pytest.mark.parametrize("agent_kind", ["oracle", "stepwise"])
def test_episode_runner_matches_python_loop(world, agent_kind):
    agent = FA.OraclePlanner() if agent_kind == "oracle" else FA.StepwiseAgent(
        FA.StepwisePolicy(world, key=jax.random.key(1)))
    s, g = jnp.array([0, 3, 5, 7]), jnp.array([6, 2, 11, 1])
    keys = jax.random.split(jax.random.key(2), 4)
    run = jax.jit(jax.vmap(lambda k, a, b: FA.run_episode(k, world, a, b, agent, p_fail=0.3, max_steps=12)[0]))
    final = run(keys, s, g)
    for i in range(4):
        z, t, replans, avail = _python_episode(keys[i], world, int(s[i]), int(g[i]), agent, 0.3, 12)
        assert (int(final.z[i]), int(final.t[i]), int(final.n_replans[i])) == (z, t, replans)
        np.testing.assert_array_equal(final.avail[i], avail)
        assert bool(final.success[i]) == (z == int(g[i]))
    # The batched runner with a replanning budget (gather/scatter or all) gives the same episodes.
    for budget in (1, 4):
        batched = jax.jit(lambda k, a, b, r=budget: FA.run_episodes(k, world, a, b, agent, p_fail=0.3,
                                                                     max_steps=12, replan_budget=r))(keys, s, g)
        jax.tree_util.tree_map(np.testing.assert_array_equal, batched, final)


def test_oracle_succeeds_in_n_steps_without_failures(world):
    res = FA.evaluate(jax.random.key(0), world, FA.OraclePlanner(), 16, 0.0)
    assert sorted(res) == [1, 2, 3, 4, 5, 6]
    for r in res.values():
        assert r["success"] == 1.0 and r["valid"] == 1.0 and r["exact"] == 1.0
        assert r["extra_steps"] == 0.0 and r["replans"] == 0.0


def test_all_tools_unavailable_terminates(world):
    state = FA.episode_init(world, 0, 5, K, avail=jnp.zeros(40, bool))
    state, info = FA.episode_step(jax.random.key(0), state, world, FA.OraclePlanner(), p_fail=0.0)
    assert bool(state.done) and not bool(state.success) and int(info.tool) == -1
    state2, _ = FA.episode_step(jax.random.key(1), state, world, FA.OraclePlanner(), p_fail=0.0)
    assert int(state2.t) == int(state.t)  # a finished episode does not move


def test_stepwise_agent_picks_available_compatible_tools(world):
    for kind in ("regress", "classify"):
        agent = FA.StepwiseAgent(FA.StepwisePolicy(world, kind, key=jax.random.key(0)))
        for z in (0, 4):
            avail = jnp.asarray(np.random.default_rng(z).random(40) > 0.3)
            step = np.asarray(agent(jax.random.key(4), world, z, 5, avail))
            k = step[0]
            assert k >= 0 and int(world.tool_in[k]) == z and bool(avail[k]) and np.all(step[1:] == -1)
            assert kind == "regress" or bool(world.seen[k])  # the classifier only knows the seen tools


@pytest.mark.slow
def test_training_smoke(world):
    tasks = FA.training_tasks(jax.random.key(0), world, 512)
    assert tasks.tools.shape[1] == K and np.all((np.asarray(tasks.length) >= 1) & (np.asarray(tasks.length) <= 6))
    model = FA.train_flowagent(jax.random.key(1), world, num_steps=30, batch_size=32, tasks=tasks, width=32)
    plan = FA.plan_flowagent(jax.random.key(2), model, world, 0, 5, jnp.ones(40, bool), 4)
    assert plan.shape == (K,) and plan.dtype == jnp.int32
    p = np.asarray(plan)
    assert np.all(p[np.argmax(p < 0):] < 0) if np.any(p < 0) else True  # -1 padding only at the end
    pol = FA.train_stepwise(jax.random.key(3), world, num_steps=30, batch_size=32, tasks=tasks, width=32,
                            kind="classify")
    step = np.asarray(FA.StepwiseAgent(pol)(jax.random.key(4), world, 0, 5, jnp.ones(40, bool)))
    k = step[0]
    assert k >= 0 and int(world.tool_in[k]) == 0 and bool(world.seen[k]) and np.all(step[1:] == -1)


def test_transformer_velocity_net(world):
    """The transformer velocity network (`TrajectoryTransformer`): shapes, the condition token and the time
    embedding both matter, jit/vmap."""
    net = FA.TrajectoryTransformer(K, world.dim, width=32, heads=4, key=jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (3, K, world.dim))
    c = jax.vmap(lambda s: FA.task_condition(world, s, 5, jnp.ones(40, bool)))(jnp.arange(3))
    v = jax.jit(jax.vmap(net, in_axes=(0, None, 0)))(x, 0.3, c)
    assert v.shape == (3, K, world.dim) and bool(jnp.all(jnp.isfinite(v)))
    one = jax.jit(lambda *a: net(*a))
    np.testing.assert_allclose(v[0], one(x[0], 0.3, c[0]), rtol=1e-5, atol=1e-6)
    assert float(jnp.max(jnp.abs(one(x[0], 0.3, c[1]) - v[0]))) > 1e-4  # the condition token is read
    assert float(jnp.max(jnp.abs(one(x[0], 0.7, c[0]) - v[0]))) > 1e-4  # so is the time
    with pytest.raises(ValueError, match="arch must be one of"):
        FA.train_flowagent(jax.random.key(1), world, num_steps=2, arch="rnn")
    with pytest.raises(ValueError, match="width must be divisible by heads"):
        FA.TrajectoryTransformer(K, world.dim, width=30, heads=4, key=jax.random.key(0))


@pytest.mark.slow
def test_transformer_and_densified_training(world):
    """A short CFM run lowers the transformer's loss; a densified model plans K tools from its knots."""
    tasks = FA.training_tasks(jax.random.key(0), world, 512)
    model, losses = FA.train_flowagent(jax.random.key(1), world, num_steps=60, batch_size=32, tasks=tasks, width=32,
                                       arch="transformer", return_losses=True)
    assert isinstance(model, FA.TrajectoryTransformer)
    assert float(jnp.mean(losses[-10:])) < float(jnp.mean(losses[:10]))
    assert FA.plan_flowagent(jax.random.key(2), model, world, 0, 5, jnp.ones(40, bool), 4).shape == (K,)
    dense = FA.train_flowagent(jax.random.key(1), world, num_steps=20, batch_size=16, tasks=tasks, width=32, densify=4)
    assert dense.K == 4 * K
    agent = FA.FlowAgentPlanner(dense, repair=True, densify=4)
    assert agent(jax.random.key(2), world, 0, 5, jnp.ones(40, bool)).shape == (K,)


def test_densified_trajectories(world):
    """Knots come back exactly and the inserted points lie on the segments."""
    tau = FA.encode_plan(world, jnp.array([3, 7, -1, -1, -1, -1, -1, -1]), K)
    dense = FA.densify_trajectory(tau, 4)
    assert dense.shape == (4 * K, world.dim)
    np.testing.assert_array_equal(FA.trajectory_knots(dense, 4), tau)
    np.testing.assert_allclose(dense[1], 0.75 * tau[0] + 0.25 * tau[1], rtol=1e-12)
    np.testing.assert_allclose(dense[6], 0.5 * tau[1] + 0.5 * tau[2], rtol=1e-12)
    np.testing.assert_array_equal(dense[-3:], jnp.broadcast_to(tau[-1], (3, world.dim)))
    np.testing.assert_array_equal(FA.densify_trajectory(tau, 1), tau)
    with pytest.raises(ValueError, match="not a multiple of factor"):
        FA.trajectory_knots(dense[:-1], 4)


def test_bad_inputs(world):
    with pytest.raises(ValueError, match="K must be >= 1"):
        FA.encode_plan(world, jnp.array([1]), 0)
    with pytest.raises(ValueError, match=r"tools \(a plan of 3 steps\) is longer than the trajectory length K = 2"):
        FA.encode_plan(world, jnp.array([1, 2, 3]), 2)
    with pytest.raises(ValueError, match="tools must lie in"):
        FA.encode_plan(world, jnp.array([1, 40]), K)
    with pytest.raises(ValueError, match="tools must lie in"):
        FA.encode_plan(world, jnp.array([-2]), K)
    with pytest.raises(ValueError, match="tau must have shape"):
        FA.decode_trajectory(jnp.zeros((K, 15)), world, jnp.ones(40, bool))
    with pytest.raises(ValueError, match="avail must have shape"):
        FA.decode_trajectory(jnp.zeros((K, 16)), world, jnp.ones(39, bool))
    with pytest.raises(ValueError, match=r"z \(the start type\) is needed when repair=True"):
        FA.decode_trajectory(jnp.zeros((K, 16)), world, jnp.ones(40, bool), repair=True)
    with pytest.raises(ValueError, match="s must lie in"):
        FA.reference_plan(world, 12, 0, K)
    with pytest.raises(ValueError, match="g must lie in"):
        FA.task_condition(world, 0, -1, jnp.ones(40, bool))
    with pytest.raises(ValueError, match="p_fail must lie in"):
        FA.evaluate(jax.random.key(0), world, FA.OraclePlanner(), 4, 1.5)
    with pytest.raises(ValueError, match="p_fail must lie in"):
        FA.episode_step(jax.random.key(0), FA.episode_init(world, 0, 1), world, FA.OraclePlanner(), p_fail=-0.1)
    with pytest.raises(ValueError, match="n_tools must be >= 12"):
        FA.make_tool_world(jax.random.key(0), n_tools=5)
    with pytest.raises(ValueError, match="kind must be"):
        FA.StepwisePolicy(world, "softmax", key=jax.random.key(0))
