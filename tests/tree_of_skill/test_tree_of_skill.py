"""Goal masks, skill policies, guiding networks and the ToS runner on RodInsert2D (claims
`tree_of_skill:goal_mask_makes_policy_goal_invariant`, `tree_of_skill:guided_pick_insert_succeeds`,
`tree_of_skill:unguided_pick_insert_fails`), and their bad inputs."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.agents import rodinsert as ri
from jaxlab.agents import tree_of_skill as tos
from jaxlab.agents.tree_of_skill.behavior_tree import Action, bt_expand

SPEC_PICK = tos.goal_spec(1, 2)
DEP = {("Pick", "Insert")}


class ConstantGuide(eqx.Module):
    mu: jax.Array

    def __call__(self, obs):
        return self.mu, jnp.zeros_like(self.mu)


@pytest.fixture(scope="module")
def task():
    env = ri.rodinsert_bt_env()
    skills = ri.scripted_skills()
    bt = bt_expand(("Inserted(rod)",), ri.rodinsert_actions(), set(), imagine=True)
    return env, skills, bt


@pytest.fixture(scope="module")
def trained_guide(task):
    env, skills, _ = task
    guide = tos.GuidingNet(jax.random.key(1), ri.OBS_DIM, 2, width=32, mu_scale=0.3)
    return tos.train_guiding(jax.random.key(2), env, skills["Pick"], skills["Insert"], guide,
                             tos.GuideConfig(num_updates=40, batch=64))


def test_masked_goal_values_jit_vmap():
    g = jnp.asarray([0.3, -0.7])
    gm, m = tos.masked_goal(g, SPEC_PICK, True)
    np.testing.assert_array_equal(gm, [0.3, 0.0])
    np.testing.assert_array_equal(m, [1.0, 0.0])
    gm, m = jax.jit(tos.masked_goal)(g, SPEC_PICK, jnp.asarray(0.0))
    np.testing.assert_array_equal(gm, [0.0, 0.0])
    np.testing.assert_array_equal(m, [0.0, 0.0])
    goals = jax.random.normal(jax.random.key(0), (5, 2))
    use = jnp.asarray([1.0, 0.0, 1.0, 0.0, 1.0])
    gm, m = jax.vmap(tos.masked_goal, (0, None, 0))(goals, tos.goal_spec(2, 2), use)
    np.testing.assert_array_equal(gm, goals * use[:, None])
    # masked entries are exactly 0 even for a non-finite goal
    gm, _ = tos.masked_goal(jnp.asarray([jnp.nan, jnp.inf]), SPEC_PICK, 0.0)
    np.testing.assert_array_equal(gm, [0.0, 0.0])


def test_masked_goal_bad_inputs():
    with pytest.raises(ValueError, match=r"goal must have shape \(2\)"):
        tos.masked_goal(jnp.zeros(3), SPEC_PICK, 1.0)
    with pytest.raises(ValueError, match="space_mask must hold only 0/1"):
        tos.masked_goal(jnp.zeros(2), tos.GoalSpec(1, jnp.asarray([0.5, 0.0])), 1.0)
    with pytest.raises(ValueError, match="use_goal must be 0/1"):
        tos.masked_goal(jnp.zeros(2), SPEC_PICK, 0.3)
    with pytest.raises(ValueError, match="dim must be <= d_g"):
        tos.goal_spec(3, 2)


def test_policy_is_goal_invariant_with_mu_zero():
    """Claim `tree_of_skill:goal_mask_makes_policy_goal_invariant`: with mu = 0 the policy output does not depend on the
    goal vector (bitwise, under jit)."""
    pol = tos.SkillPolicy(jax.random.key(0), ri.OBS_DIM, ri.ACTION_DIM, 2)
    obs = jax.random.normal(jax.random.key(1), (16, ri.OBS_DIM))
    goals = 10 * jax.random.normal(jax.random.key(2), (16, 4, 2))
    goals = goals.at[:, 3].set(jnp.nan)

    @jax.jit
    def outputs(use):
        def one(o, gs):
            def per_goal(g):
                gm, m = tos.masked_goal(g, SPEC_PICK, use)
                mean, log_std, v = pol(o, gm, m)
                return jnp.concatenate([mean, log_std, v[None]])
            return jax.vmap(per_goal)(gs)
        return jax.vmap(one)(obs, goals)

    off = np.asarray(outputs(0.0))
    assert np.all(np.isfinite(off))
    assert np.array_equal(off, np.broadcast_to(off[:, :1], off.shape))  # bitwise equal across goals
    on = np.asarray(outputs(1.0))
    assert np.abs(on[:, 0] - on[:, 1]).max() > 1e-3  # with mu = 1 the goal matters


def test_guiding_net_bounds():
    guide = tos.GuidingNet(jax.random.key(0), ri.OBS_DIM, 2, mu_scale=0.3)
    mu, log_sigma = jax.vmap(guide)(100 * jax.random.normal(jax.random.key(1), (32, ri.OBS_DIM)))
    assert mu.shape == (32, 2) and float(jnp.abs(mu).max()) <= 0.3
    assert float(log_sigma.min()) >= -5.0 and float(log_sigma.max()) <= 1.0


def test_constant_guides_match_the_insertion_geometry(task):
    """Insertion is possible iff the grasp offset delta <= -0.05: a guide asking for -0.2 always succeeds,
    one asking for +0.2 (or no guidance: delta = 0) never does."""
    env, skills, bt = task
    rates = {}
    for name, mu in (("left", -0.2), ("right", 0.2)):
        guides = {("Pick", "Insert"): ConstantGuide(jnp.asarray([mu, 0.5]))}
        r = tos.run_tos_episode(jax.random.key(0), bt, skills, guides, DEP, env, num_episodes=64, max_phases=4)
        rates[name] = r.success.mean()
        np.testing.assert_allclose(r.goals[0][:, 0], mu)
        np.testing.assert_array_equal(r.goals[0][:, 1], 0.0)  # masked by Pick's goal space
        assert np.all(r.goals[1] == 0.0)  # Insert has no successor: no goal
        np.testing.assert_allclose(np.asarray(r.state.delta)[r.state.held], mu, atol=1e-6)
    assert rates == {"left": 1.0, "right": 0.0}
    r = tos.run_tos_episode(jax.random.key(0), bt, skills, guides, DEP, env, num_episodes=64, max_phases=4,
                            guidance="none")
    assert r.success.mean() == 0.0 and np.all(r.goals == 0.0)
    assert r.trace[0] == ["Pick(rod)"] + ["Insert(rod,slot)"] * 3 and (r.phases == 4).all()
    # no dependency flag: no goal either
    r = tos.run_tos_episode(jax.random.key(0), bt, skills, {("Pick", "Insert"): ConstantGuide(jnp.asarray(
        [-0.2, 0.0]))}, set(), env, num_episodes=8, max_phases=2)
    assert r.success.mean() == 0.0


def test_guidance_helps(task, trained_guide):
    """Claims `tree_of_skill:guided_pick_insert_succeeds` and `tree_of_skill:unguided_pick_insert_fails` (analytic
    skills): guided Pick -> Insert succeeds >= 0.8, unguided <= 0.3."""
    env, skills, bt = task
    guide, metrics = trained_guide
    assert float(metrics.mean_return[-5:].mean()) > float(metrics.mean_return[:5].mean())
    guides = {("Pick", "Insert"): guide}
    with_g = tos.run_tos_episode(jax.random.key(5), bt, skills, guides, DEP, env, num_episodes=128)
    fixed = tos.run_tos_episode(jax.random.key(5), bt, skills, guides, DEP, env, num_episodes=128,
                                guidance={"Pick": "Insert"})
    without = tos.run_tos_episode(jax.random.key(5), bt, skills, guides, DEP, env, num_episodes=128,
                                  guidance="none")
    assert with_g.success.mean() >= 0.8
    assert without.success.mean() <= 0.3
    np.testing.assert_array_equal(with_g.success, fixed.success)  # one branch: fixed chaining = ToS here
    assert with_g.trace[0] == ["Pick(rod)", "Insert(rod,slot)"]


def test_runner_bad_inputs(task):
    env, skills, bt = task
    with pytest.raises(ValueError, match="guidance must be"):
        tos.run_tos_episode(jax.random.key(0), bt, skills, {}, DEP, env, guidance="sometimes")
    with pytest.raises(ValueError, match="names a skill not in skills"):
        tos.run_tos_episode(jax.random.key(0), bt, skills, {("Pick", "Fly"): None}, DEP, env)
    with pytest.raises(ValueError, match="num_episodes"):
        tos.run_tos_episode(jax.random.key(0), bt, skills, {}, DEP, env, num_episodes=0)
    bt_fly = bt_expand(("Up",), (Action("Fly(x)", (), frozenset({"Up"})),), set())
    with pytest.raises(ValueError, match="skill type 'Fly'"):
        tos.run_tos_episode(jax.random.key(0), bt_fly, skills, {}, DEP, env)


def test_policy_sample_moments_and_stochastic_skills_in_the_runner(task):
    """SkillPolicy.sample draws mean + exp(log_std) N(0, I); a stochastic skill gets a fresh key per step, and a
    key-ignoring stochastic version of the scripted Pick reproduces the deterministic run exactly (RodInsert2D's
    dynamics use no randomness)."""
    pol = tos.SkillPolicy(jax.random.key(0), ri.OBS_DIM, ri.ACTION_DIM, 2)
    obs, goal, mask = jnp.linspace(-1, 1, ri.OBS_DIM), jnp.array([0.1, 0.0]), SPEC_PICK.space_mask
    u = jax.vmap(lambda k: pol.sample(obs, goal, mask, k))(jax.random.split(jax.random.key(1), 20000))
    mean, log_std, _ = pol(obs, goal, mask)
    np.testing.assert_allclose(u.mean(0), mean, atol=4 * float(jnp.exp(log_std).max()) / np.sqrt(20000))
    np.testing.assert_allclose(u.std(0), jnp.exp(log_std), rtol=0.03)
    env, skills, bt = task
    guides = {("Pick", "Insert"): ConstantGuide(jnp.asarray([-0.2, 0.0]))}
    det = tos.run_tos_episode(jax.random.key(0), bt, skills, guides, DEP, env, num_episodes=16, max_phases=4)
    pick = skills["Pick"]
    sto = {**skills, "Pick": pick._replace(act=lambda o, g, m, k: pick.act(o, g, m), stochastic=True)}
    r = tos.run_tos_episode(jax.random.key(0), bt, sto, guides, DEP, env, num_episodes=16, max_phases=4)
    np.testing.assert_array_equal(r.success, det.success)
    np.testing.assert_array_equal(np.asarray(r.state.delta), np.asarray(det.state.delta))
