"""Value checks of the flow_agent area hold eagerly and under jit (they name the argument)."""

import jax
import jax.numpy as jnp
from jaxlab_testing import raises_eager_and_jit

from jaxlab.generative import flow_agent as FA
from jaxlab.generative import flow_matching as FM


def test_flow_matching_value_checks_eager_and_jit():
    x = jnp.zeros((4, 2))
    raises_eager_and_jit(FM.cfm_path, x, x, jnp.array([0.1, 0.2, 1.5, 0.3]), match="t must lie")
    raises_eager_and_jit(FM.gaussian_optimal_velocity, x, 0.5, 2.0, -0.5, match="s must be > 0")
    raises_eager_and_jit(lambda c, e: FM.sinkhorn_log(c, e, 5), jnp.ones((3, 3)), -1.0, match="epsilon")
    raises_eager_and_jit(FM.cfm_path, x, x, 0.5, sigma=-1.0, noise=x, match="sigma")


def test_tool_world_value_checks_eager_and_jit():
    world = FA.make_tool_world(jax.random.key(0), n_types=5, n_tools=12, dim=4)
    raises_eager_and_jit(lambda t: FA.encode_plan(world, t, 4), jnp.array([0, 12]), match="tools")
    raises_eager_and_jit(lambda s: FA.task_condition(world, s, 1, jnp.ones(12, bool)), 7, match="s must lie")
    raises_eager_and_jit(lambda g: FA.reference_plan(world, 0, g, 4)[0], -1, match="g must lie")
