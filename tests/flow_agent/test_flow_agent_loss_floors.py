"""The CFM-loss references of ``flow_agent:flowagent_cfm_loss_decreases``: the exact field ``(tau(c) - x) / (1 - t)``
reaches the exact minimum 0, the ``x_t``-blind field ``tau(c)`` (what a trainer regressing on ``x_1`` learns)
sits at its minimum 1, the untrained net near ``1 + 1/D``, and the claim's check passes only the first; the
``c``-blind floor is 0 for a single plan and lies in ``(0, 1)`` for the mixture of a world's plans."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import mean_and_se
from jaxlab.generative import flow_agent as FA
from jaxlab.generative.flow_agent import claims as C


@pytest.fixture(scope="module")
def setup():
    world = FA.make_tool_world(jax.random.key(0), n_types=5, n_tools=10, dim=8)
    tasks = FA.training_tasks(jax.random.key(1), world, 400)
    taus, conds = C._targets(world, tasks)
    return world, tasks, taus, conds


def _tau_of(taus, conds):
    """The reference trajectory of a condition: the task with that condition (the condition determines it)."""
    return lambda c: taus[jnp.argmin(jnp.sum((conds - c) ** 2, 1))]


DECREASING = np.linspace(1.0, 0.5, 300)


def test_exact_field_reaches_zero_and_passes(setup):
    world, tasks, taus, conds = setup
    tau = _tau_of(taus, conds)
    per = C._heldout_cfm_losses(lambda x, t, c: (tau(c) - x) / (1 - t), world, tasks, jax.random.key(2), 2000)
    assert np.mean(per) < 1e-4  # float32 rounding of (tau - x) / (1 - t) only
    assert C._cfm_loss_check(per, DECREASING, np.full(4, 0.05), world.dim).passed


def test_x_blind_field_sits_at_one_and_fails(setup):
    world, tasks, taus, conds = setup
    tau = _tau_of(taus, conds)
    per = C._heldout_cfm_losses(lambda x, t, c: tau(c), world, tasks, jax.random.key(3), 2000)
    mean, se = mean_and_se(per)
    assert abs(mean - 1.0) < 4 * se  # E |x_0|^2 / (K D) = 1 exactly
    assert not C._cfm_loss_check(per, DECREASING, np.full(4, 0.05), world.dim).passed


def test_untrained_net_fails(setup):
    world, tasks, _, _ = setup
    net = FA.TrajectoryVelocity(FA.K_DEFAULT, world.dim, 64, key=jax.random.key(4))
    per = C._heldout_cfm_losses(net, world, tasks, jax.random.key(5), 2000)
    assert np.mean(per) > 1.0
    assert not C._cfm_loss_check(per, DECREASING, np.full(4, 0.05), world.dim).passed


def test_check_needs_decreasing_training_losses(setup):
    world, tasks, taus, conds = setup
    tau = _tau_of(taus, conds)
    per = C._heldout_cfm_losses(lambda x, t, c: (tau(c) - x) / (1 - t), world, tasks, jax.random.key(2), 500)
    assert not C._cfm_loss_check(per, DECREASING[::-1], np.full(4, 0.05), world.dim).passed


def test_condition_blind_floor(setup):
    world, tasks, _, _ = setup
    one = jax.tree_util.tree_map(lambda a: a[:1].repeat(5, 0), tasks)  # a single plan: u is known from x_t
    assert np.max(C._condition_blind_floor(world, one, jax.random.key(6), 500)) < 1e-6
    floor, se = mean_and_se(C._condition_blind_floor(world, tasks, jax.random.key(7), 1000))
    assert 0.0 < floor - 4 * se and floor + 4 * se < 1.0
