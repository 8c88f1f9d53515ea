"""Flow-matching ODE sampler and FlowAgent episodes as Algorithms, bad inputs (eager and under jit), renamed
keywords."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import run
from jaxlab.generative import flow_agent as FA
from jaxlab.generative import flow_matching as FM


def u(x, t, cond=None):
    return FM.gaussian_optimal_velocity(x, t, 2.0, 0.5)


@pytest.mark.parametrize("method", ["euler", "midpoint"])
def test_ode_algorithm_under_jit_equals_ode_sample(method):
    x0 = jax.random.normal(jax.random.key(0), (6, 1))
    algo = FM.ode_algorithm(u, num_steps=10, method=method)
    final, trace = jax.jit(lambda s, k: run(algo.step, s, k, 10, save_states=True))(algo.init(x0), jax.random.key(1))
    want, traj = FM.ode_sample(u, x0, num_steps=10, method=method, return_traj=True)
    np.testing.assert_array_equal(final.x, want)
    np.testing.assert_array_equal(trace.states.x, traj[1:])
    np.testing.assert_allclose(trace.infos.h, 0.1, rtol=1e-12)


def test_ode_sample_bad_inputs_eager_and_jit():
    raises_eager_and_jit(lambda x: FM.ode_sample(u, x, num_steps=4), jnp.array([[0.0], [jnp.nan]]), match="x0")
    raises_eager_and_jit(lambda x: FM.ode_sample(lambda a, t, c: a.sum(), x, num_steps=4), jnp.zeros((3, 2)),
                         match="velocity_fn")
    raises_eager_and_jit(lambda x: FM.ode_sample(lambda a, t, c: a.sum(), x, method="diffrax"), jnp.zeros((3, 2)),
                         match="velocity_fn")


def test_old_keywords_warn_and_give_the_same_numbers():
    x0 = jnp.linspace(-1.0, 1.0, 5)[:, None]
    with pytest.warns(DeprecationWarning, match="n_steps"):
        old = FM.ode_sample(u, x0, n_steps=7)
    np.testing.assert_array_equal(old, FM.ode_sample(u, x0, num_steps=7))

    model = FM.VelocityMLP((1,), width=8, key=jax.random.key(0))

    def sample(k):
        return jax.random.normal(k, (16, 1)), 2.0 + 0.5 * jax.random.normal(jax.random.fold_in(k, 1), (16, 1)), None

    with pytest.warns(DeprecationWarning, match="steps"):
        _, info_old = FM.cfm_fit(jax.random.key(1), model, sample, steps=3, lr=1e-2)
    _, info_new = FM.cfm_fit(jax.random.key(1), model, sample, num_steps=3, learning_rate=1e-2)
    np.testing.assert_array_equal(info_old.loss, info_new.loss)


def test_episode_algorithm_under_jit_equals_run_episode():
    world = FA.make_tool_world(jax.random.key(0))
    agent = FA.OraclePlanner()
    algo = FA.episode_algorithm(world, agent, p_fail=0.3, max_steps=10)
    state = algo.init(0, 7)
    final, trace = jax.jit(lambda s, k: run(algo.step, s, k, 10))(state, jax.random.key(3))
    want, infos = FA.run_episode(jax.random.key(3), world, 0, 7, agent, p_fail=0.3, max_steps=10)
    for a, b in zip(jax.tree.leaves((final, trace.infos)), jax.tree.leaves((want, infos)), strict=True):
        np.testing.assert_array_equal(a, b)
    one, _ = jax.jit(algo.step)(jax.random.key(4), state)
    two, _ = FA.episode_step(jax.random.key(4), state, world, agent, p_fail=0.3, max_steps=10)
    for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(two), strict=True):
        np.testing.assert_array_equal(a, b)


def test_episode_algorithm_rejects_bad_failure_rate_eagerly_and_under_jit():
    world = FA.make_tool_world(jax.random.key(0), n_types=4, n_tools=8, dim=4)
    raises_eager_and_jit(lambda p: FA.episode_algorithm(world, FA.OraclePlanner(), p_fail=p).step(
        jax.random.key(0), FA.episode_init(world, 0, 2)), 1.5, match="p_fail")
