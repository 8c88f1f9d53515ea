"""The iteration-protocol factories of Tree-of-Skill (PPO, guiding-network REINFORCE): stepping the
:class:`~jaxlab.core.Algorithm` by hand under ``jit`` reproduces the runners bit for bit, and the registered
examples step."""

import equinox as eqx
import jax
import numpy as np

from jaxlab.agents import tree_of_skill as tos
from jaxlab.agents.tree_of_skill import guiding, ppo
from jaxlab.agents.tree_of_skill import rodinsert as ri
from jaxlab.core import Algorithm


def _assert_trees_equal(a, b):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_ppo_algorithm_reproduces_ppo_train():
    pol = tos.SkillPolicy(jax.random.key(0), ri.OBS_DIM, ri.ACTION_DIM, 2, width=8, depth=1)
    cfg = tos.PPOConfig(num_envs=4, num_steps=8, num_minibatches=2, update_epochs=2, num_updates=3)
    trained, metrics = tos.ppo_train(jax.random.key(1), ri.pick_skill_env(), pol, cfg)
    algo = tos.ppo_algorithm(ri.pick_skill_env(), pol, cfg)
    assert isinstance(algo, Algorithm)
    k_reset, k_train = jax.random.split(jax.random.key(1))
    state = eqx.filter_jit(algo.init)(k_reset, pol)
    step = jax.jit(algo.step)
    infos = []
    for k in jax.random.split(k_train, cfg.num_updates):
        state, info = step(k, state)
        infos.append(info)
    assert isinstance(state, tos.PPOState) and isinstance(infos[0], tos.PPOMetrics)
    assert int(state.train.step) == cfg.num_updates * cfg.update_epochs * cfg.num_minibatches
    _assert_trees_equal(eqx.filter(trained, eqx.is_inexact_array), state.train.params)
    _assert_trees_equal(metrics, jax.tree.map(lambda *x: np.stack(x), *infos))


def test_guiding_algorithm_reproduces_train_guiding():
    skills = ri.scripted_skills()
    guide = tos.GuidingNet(jax.random.key(2), ri.OBS_DIM, 2, width=8, depth=1, mu_scale=0.3)
    cfg = tos.GuideConfig(num_updates=3, batch=8)
    env = ri.rodinsert_bt_env()
    trained, metrics = tos.train_guiding(jax.random.key(3), env, skills["Pick"], skills["Insert"], guide, cfg)
    algo = tos.guiding_algorithm(env, skills["Pick"], skills["Insert"], guide, cfg)
    state = eqx.filter_jit(algo.init)(guide)
    step = jax.jit(algo.step)
    infos = []
    for k in jax.random.split(jax.random.key(3), cfg.num_updates):
        state, info = step(k, state)
        infos.append(info)
    assert isinstance(state, tos.GuideState) and isinstance(infos[0], tos.GuideMetrics)
    _assert_trees_equal(eqx.filter(trained, eqx.is_inexact_array), state.train.params)
    _assert_trees_equal(metrics, jax.tree.map(lambda *x: np.stack(x), *infos))


def test_registered_examples_step():
    for example in (ppo._example, guiding._example):
        algo, state, xs = example(jax.random.key(4))
        assert xs is None
        new, _ = jax.jit(algo.step)(jax.random.key(5), state)
        assert jax.tree.structure(new) == jax.tree.structure(state)
        for a, b in zip(jax.tree.leaves(new), jax.tree.leaves(state), strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype
