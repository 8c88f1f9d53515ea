"""Multi-step Tree-of-Skill tasks (`jaxlab.agents.rodinsert_tasks`): the world's geometry, the scripted skills'
closed forms, BT Expansion of the new goals against hand-derived trees, successor prediction, fixed-sequence
chaining and the runner."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.agents import multistep as ms
from jaxlab.agents import rodinsert_tasks as rt
from jaxlab.agents.tree_of_skill import rollout_skill
from jaxlab.agents.tree_of_skill.behavior_tree import Condition, Fallback, Sequence, bt_expand, predict_successor

P1 = rt.TaskParams()
P2 = rt.TaskParams(n_rods=2)
NEAR = rt.TaskParams(start_near=True)
ZERO = jnp.zeros(2)
ONE = jnp.ones(2)


class ConstantGuide(eqx.Module):
    mu: jax.Array

    def __call__(self, obs):
        return self.mu, jnp.zeros_like(self.mu)


def state1(p, rod, held=False, delta=0.0):
    """A one-rod state at rest."""
    n = jnp.zeros((1,), bool)
    return rt.TaskState(jnp.asarray(p, float), jnp.zeros(2), jnp.asarray([rod], float), jnp.asarray([held]),
                        jnp.asarray(delta, float), n, n, jnp.zeros((), jnp.int32))


def run(name, state, goal=ZERO, mask=ZERO, params=P1):
    skill = rt.task_skills(params)[name]
    env = rt.task_env(params)
    st, _, ok = jax.jit(rollout_skill, static_argnums=(0, 1, 2, 3))(
        env, skill.act, skill.done, skill.horizon, jax.random.key(0), state, rt.tasks_obs(state), goal, mask)
    return st, bool(ok)


def test_moveto_closed_forms():
    """Goal a: ends at rest at c + a, Near true. Goal-free from c + (0.8, 0): the ray stays on the x axis, so it
    stops on the stand-off box at c + (s, 0) = c + (0.35, 0)."""
    c = np.asarray([-0.2, 0.1])
    st, ok = run("MoveTo(rod)", state1(c + np.r_[0.8, 0.0], c))
    assert ok
    np.testing.assert_allclose(st.p, c + np.r_[0.35, 0.0], atol=1e-5)
    st, ok = run("MoveTo(rod)", state1([0.7, -0.6], c), jnp.asarray([-0.2, 0.15]), ONE)
    assert ok and bool(rt.task_literals(st)["Near(rod)"])
    np.testing.assert_allclose(st.p, c + np.r_[-0.2, 0.15], atol=1e-5)
    # first goal-free action from c + (0.7, 0.1): target c + (0.35, 0.05), one clipped step on each axis
    a = rt.scripted_moveto(jnp.asarray([*(c + np.r_[0.7, 0.1]), *c, 0.0, 0.0]), ZERO, ZERO)
    np.testing.assert_allclose(a, [-1.0, -1.0, -1.0])


@pytest.mark.parametrize("dx, dy, grasped", [(-0.25, 0.3, True), (0.1, -0.35, True), (0.0, 0.2, True),
                                             (0.33, 0.1, False), (-0.34, -0.3, False)])
def test_topdown_pick_grasps_below_the_gripper(dx, dy, grasped):
    """Goal-free Pick goes straight down: it grasps iff |p_x - c_x| <= l/2, at delta = p_x - c_x, in
    |dy| / 0.05 + 1 steps (the last one closes)."""
    c = np.asarray([0.1, -0.2])
    st, ok = run("Pick(rod)", state1(c + np.r_[dx, dy], c))
    assert ok == grasped
    np.testing.assert_allclose(st.p[0], c[0] + dx, atol=1e-6)
    if grasped:
        np.testing.assert_allclose(st.delta, dx, atol=1e-6)
        assert int(st.t) == round(abs(dy) / 0.05) + 1


@pytest.mark.parametrize("g, want", [(-0.2, -0.2), (0.1, 0.1), (0.9, 0.3)])
def test_guided_pick_grasps_at_the_goal_offset(g, want):
    c = np.asarray([0.0, 0.3])
    st, ok = run("Pick(rod)", state1(c + np.r_[0.3, 0.35], c), jnp.asarray([g, 5.0]), jnp.asarray([1.0, 0.0]))
    assert ok
    np.testing.assert_allclose(st.delta, want, atol=1e-6)


def test_pick_reach_is_local():
    """Pick has a 12-step horizon: 11 moves of 0.05 then the closing step, so a goal 0.6 away is out of reach."""
    c = np.asarray([0.0, 0.0])
    _, ok = run("Pick(rod)", state1(c + np.r_[0.35, 0.0], c), jnp.asarray([-0.2, 0.0]), ONE)
    assert ok
    _, ok = run("Pick(rod)", state1(c + np.r_[0.35, 0.0], c), jnp.asarray([-0.25, 0.0]), ONE)
    assert not ok


@pytest.mark.parametrize("delta", [-0.3, -0.2, -0.06, -0.04, 0.0, 0.04, 0.06, 0.2, 0.3])
def test_insert_and_place_need_opposite_grasps(delta):
    """Insert reaches the slot iff delta <= -0.05; Place reaches the ledge iff delta >= +0.05 (p_x in [-1, 1])."""
    c = np.asarray([0.1, 0.4])
    held = state1(c + np.r_[delta, 0.0], c, held=True, delta=delta)
    st, ok = run("Insert(rod,slot)", held)
    assert ok == (delta <= -0.05) and bool(st.held[0]) != ok  # released once inserted
    _, ok = run("Place(rod,table)", held)
    assert ok == (delta >= 0.05)


def test_step_jit_vmap_and_bad_inputs():
    keys = jax.random.split(jax.random.key(3), 8)
    obs, states = jax.vmap(rt.tasks_reset, (0, None))(keys, P2)
    assert obs.shape == (8, 13)
    acts = jax.random.uniform(jax.random.key(4), (8, 3), minval=-1, maxval=1)
    out = jax.jit(jax.vmap(rt.tasks_step, (None, 0, 0, None)), static_argnums=3)(keys[0], states, acts, P2)
    for i in (0, 5):
        one = rt.tasks_step(keys[0], jax.tree_util.tree_map(lambda a, i=i: a[i], states), acts[i], P2)
        np.testing.assert_allclose(out[0][i], one[0], atol=1e-6)
    # the rods lie in separate y bands: A in [0.15, 0.6], B in [-0.6, -0.15]
    rods = np.asarray(states.rods)
    assert (rods[:, 0, 1] >= 0.15).all() and (rods[:, 1, 1] <= -0.15).all()
    with pytest.raises(ValueError, match="action"):
        rt.tasks_step(keys[0], jax.tree_util.tree_map(lambda a: a[0], states), jnp.zeros(2), P2)
    with pytest.raises(ValueError, match="n_rods"):
        rt.rod_names(0)
    with pytest.raises(ValueError, match="baseline"):
        ms.task_success(keys[0], rt.TASKS[0], {}, "greedy")


def test_bt_expansion_matches_hand_derived_trees():
    acts = {a.name: a for a in rt.task_actions(2)}

    def chain(x, last):
        near = Fallback((Condition(f"Near({x})"), Sequence((acts[f"MoveTo({x})"],))))
        hold = Fallback((Condition(f"Holding({x})"), Sequence((near, acts[f"Pick({x})"]))))
        lit = "Inserted" if last.startswith("Insert") else "OnTable"
        return Fallback((Condition(f"{lit}({x})"), Sequence((hold, acts[last]))))

    bt2 = bt_expand(("Inserted(A)", "OnTable(B)"), tuple(acts.values()), set(), imagine=True)
    assert bt2 == Sequence((chain("A", "Insert(A,slot)"), chain("B", "Place(B,table)")))
    assert rt.task_bt(rt.TASKS[-1]) == bt2
    one = {a.name: a for a in rt.task_actions(1)}
    assert rt.task_bt(rt.TASKS[0]) == Fallback((Condition("Holding(rod)"), Sequence((
        Fallback((Condition("Near(rod)"), Sequence((one["MoveTo(rod)"],)))), one["Pick(rod)"]))))


def test_successors_and_fixed_chain():
    acts = {a.name: a for a in rt.task_actions(2)}
    bt = rt.task_bt(rt.TASKS[-1])
    cases = [("MoveTo(A)", set(), "Pick(A)"), ("Pick(A)", {"Near(A)"}, "Insert(A,slot)"),
             ("Insert(A,slot)", {"Holding(A)"}, "MoveTo(B)"), ("Insert(A,slot)", {"Holding(A)", "OnTable(B)"}, None),
             ("Pick(B)", {"Inserted(A)", "Near(B)"}, "Place(B,table)"),
             ("Place(B,table)", {"Inserted(A)", "Holding(B)"}, None)]
    for a, s, want in cases:
        nxt = predict_successor(bt, acts[a], s)
        assert (None if nxt is None else nxt.name) == want, (a, s)
    assert [a.name for a in rt.nominal_plan(bt)] == ["MoveTo(A)", "Pick(A)", "Insert(A,slot)", "MoveTo(B)",
                                                     "Pick(B)", "Place(B,table)"]
    fixed = rt.fixed_chain(rt.TASKS[-1])
    assert fixed["Pick(A)"] == "Insert(A,slot)" and fixed["MoveTo(B)"] == "Pick(B)"
    assert fixed["Pick(B)"] == "Insert(B,slot)"  # the type chain ignores that B goes to the table
    assert rt.fixed_chain(rt.TASKS[2]) == {"MoveTo(rod)": "Pick(rod)", "Pick(rod)": "Place(rod,table)"}
    assert rt.task_dep(2) >= {("Pick(B)", "Place(B,table)"), ("MoveTo(A)", "Pick(A)")}


def test_start_near_skips_moveto_and_unguided_rate_matches_geometry():
    """From the Near box the BT starts with Pick. Goal-free Pick -> Insert succeeds iff the top-down grasp has
    delta = p_x - c_x in [-0.3, -0.05], delta ~ U(-0.35, 0.35): probability 0.25 / 0.7 = 0.357."""
    guides = {("MoveTo", "Pick"): ConstantGuide(jnp.asarray([0.0, 0.1])),
              ("Pick", "Insert"): ConstantGuide(jnp.asarray([-0.2, 0.0])),
              ("Pick", "Place"): ConstantGuide(jnp.asarray([0.2, 0.0]))}
    r = ms.task_success(jax.random.key(0), rt.TASKS[1], guides, "none", num_episodes=1024)
    assert all(t[0] == "Pick(rod)" for t in r.trace)
    assert abs(r.success.mean() - 0.25 / 0.7) < 0.05
    r = ms.task_success(jax.random.key(1), rt.TASKS[1], guides, "tos", num_episodes=64)
    assert r.success.all()
    np.testing.assert_allclose(np.asarray(r.state.delta), -0.2, atol=1e-6)


def test_two_rods_tos_vs_fixed_with_constant_guides():
    """Constant guides that satisfy every dependency: ToS solves all episodes; fixed-sequence chaining hands
    Pick(B) the Insert goal (delta = -0.2), so Place(B) can never reach the ledge; rod A is inserted in both."""
    guides = {("MoveTo", "Pick"): ConstantGuide(jnp.asarray([0.0, 0.1])),
              ("Pick", "Insert"): ConstantGuide(jnp.asarray([-0.2, 0.0])),
              ("Pick", "Place"): ConstantGuide(jnp.asarray([0.2, 0.0]))}
    task = rt.TASKS[-1]
    tos = ms.task_success(jax.random.key(2), task, guides, "tos", num_episodes=32)
    fixed = ms.task_success(jax.random.key(2), task, guides, "fixed", num_episodes=32)
    assert tos.success.all() and not fixed.success.any()
    assert np.asarray(tos.state.inserted[:, 0]).all() and np.asarray(tos.state.placed[:, 1]).all()
    assert np.asarray(fixed.state.inserted[:, 0]).all() and not np.asarray(fixed.state.placed).any()
    assert tos.trace[0] == ["MoveTo(A)", "Pick(A)", "Insert(A,slot)", "MoveTo(B)", "Pick(B)", "Place(B,table)"]
    # goals per phase: MoveTo gets (0, 0.1); Pick(B) gets +0.2 under ToS, -0.2 under fixed chaining (an episode
    # starting at rest near A skips MoveTo(A), so phases are read from its trace)
    for i in range(32):
        for r, want in ((tos, 0.2), (fixed, -0.2)):
            np.testing.assert_allclose(r.goals[r.trace[i].index("Pick(B)"), i], [want, 0.0])
            np.testing.assert_allclose(r.goals[r.trace[i].index("MoveTo(B)"), i], [0.0, 0.1])
    assert sum(t[0] == "Pick(A)" for t in tos.trace) > 0  # some start near A: the BT skips MoveTo(A)


@pytest.mark.slow
def test_trained_guides_learn_the_dependencies():
    """The REINFORCE bandit learns each implicit dependency: G[Insert <- Pick] asks for delta <= -0.05, G[Place <- Pick]
    for delta >= +0.05, G[Pick <- MoveTo] for an approach offset above or below the rod (|a_x| <= l/2)."""
    guides, metrics = ms.train_task_guides(jax.random.key(7), num_seeds=2)
    assert metrics[("Pick", "Insert")].mean_return.shape == (2, 60)
    obs, _ = jax.vmap(rt.tasks_reset, (0, None))(jax.random.split(jax.random.key(8), 64), NEAR)
    views = jax.vmap(rt.rod_view, (0, None))(obs, 0)
    for s in range(2):
        def mu(pair, s=s):
            net = jax.tree_util.tree_map(lambda a: a[s] if eqx.is_array(a) else a, guides[pair])
            return np.asarray(jax.vmap(net)(views)[0])
        assert (mu(("Pick", "Insert"))[:, 0] <= -0.05).all()
        assert (mu(("Pick", "Place"))[:, 0] >= 0.05).all()
        assert (np.abs(mu(("MoveTo", "Pick"))[:, 0]) <= 0.3).all()
