"""PPO for goal-conditioned skills (the skill-training stage of Tree-of-Skill) on RodInsert2D's Pick skill."""

import jax
import numpy as np
import pytest

from jaxlab.agents import rodinsert as ri
from jaxlab.agents import tree_of_skill as tos
from jaxlab.agents.tree_of_skill.ppo import PPOConfig, ppo_train


def test_pick_skill_env_reward_closed_form():
    env = ri.pick_skill_env(p_drop=0.0)
    _, st, goal, mask = env.reset(jax.random.key(0))
    np.testing.assert_array_equal(mask, [1.0, 0.0])
    assert goal[1] == 0.0 and abs(float(goal[0])) <= 0.3
    a = np.asarray([0.3, -0.2, -1.0])
    _, _, r, done, succ = env.step(jax.random.key(1), st, a, goal, mask)
    p = np.clip(np.asarray(st.env.p) + 0.05 * a[:2], -1, 1)
    c = np.asarray(st.env.rod)
    want = -abs(p[1] - c[1]) - abs(p[0] - c[0] - float(goal[0]))
    assert float(r) == pytest.approx(want, abs=1e-12) and not bool(done) and not bool(succ)


def test_ppo_short_run_and_bad_config():
    pol = tos.SkillPolicy(jax.random.key(0), ri.OBS_DIM, ri.ACTION_DIM, 2, width=16)
    cfg = PPOConfig(num_envs=8, num_steps=16, num_updates=3, num_minibatches=2, update_epochs=2)
    new, m = ppo_train(jax.random.key(1), ri.pick_skill_env(), pol, cfg)
    assert m.mean_reward.shape == (3,) and np.all(np.isfinite(np.asarray(m.loss)))
    assert not np.allclose(new.actor.layers[0].weight, pol.actor.layers[0].weight)
    with pytest.raises(ValueError, match="num_minibatches=3 must divide"):
        ppo_train(jax.random.key(1), ri.pick_skill_env(), pol, cfg._replace(num_minibatches=3))
    with pytest.raises(ValueError, match=r"cfg\.lr"):
        ppo_train(jax.random.key(1), ri.pick_skill_env(), pol, cfg._replace(lr=-1.0))


@pytest.mark.slow
def test_ppo_learns_goal_conditioned_pick():
    pol = tos.SkillPolicy(jax.random.key(0), ri.OBS_DIM, ri.ACTION_DIM, 2)
    _, m = ppo_train(jax.random.key(1), ri.pick_skill_env(), pol,
                     PPOConfig(num_envs=64, num_steps=64, num_updates=150, lr=1e-3))
    assert float(m.success_rate[:10].mean()) < 0.2
    assert float(m.success_rate[-10:].mean()) > 0.7
