"""Inputs that used to crash deep inside a function, be misread, or be ignored; each now works or raises an
error that names the argument."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.agents.toposcope import random_schematic
from jaxlab.agents.tree_of_skill.policies import SkillPolicy
from jaxlab.agents.tree_of_skill.ppo import PPOConfig, ppo_algorithm
from jaxlab.agents.tree_of_skill.rodinsert import ACTION_DIM, OBS_DIM, pick_skill_env
from jaxlab.generative.flow_agent import make_tool_world, training_tasks
from jaxlab.losses import cwr
from jaxlab.quantum import pauli_diagonal, relative_residuals
from jaxlab.quantum.gates import apply_1q


def test_pauli_diagonal_reads_z_and_i_in_either_case():
    np.testing.assert_array_equal(pauli_diagonal("zI"), [1.0, 1.0, -1.0, -1.0])


@pytest.mark.parametrize("pauli", ["ZX", "Y", ""])
def test_pauli_diagonal_rejects_non_diagonal_letters(pauli):
    with pytest.raises(ValueError, match="pauli must be a non-empty string of the diagonal letters"):
        pauli_diagonal(pauli)


def test_ppo_update_epochs_must_be_positive():
    policy = SkillPolicy(jax.random.key(0), OBS_DIM, ACTION_DIM, 2, width=8, depth=1)
    cfg = PPOConfig(num_envs=4, num_steps=8, num_minibatches=2, update_epochs=0, num_updates=1)
    with pytest.raises(ValueError, match=r"cfg\.update_epochs"):
        ppo_algorithm(pick_skill_env(), policy, cfg)


def test_random_schematic_with_one_component():
    sch = random_schematic(0, n_components=1)
    assert list(sch.components) == ["X0"]
    assert {"GND", "3V3", "N0", "N1"} <= set(sch.nets)


def test_random_schematic_p_connect_in_unit_interval():
    with pytest.raises(ValueError, match="p_connect"):
        random_schematic(0, p_connect=1.5)


def test_training_tasks_default_n_max_follows_short_plans():
    world = make_tool_world(jax.random.key(0), n_types=4, n_tools=8, dim=4)
    tasks = training_tasks(jax.random.key(1), world, 64, K=4)  # n_max defaults to min(6, K) = 4
    assert tasks.tools.shape[1] == 4 and int(tasks.length.max()) <= 4


def test_apply_1q_accepts_a_nested_list_gate():
    psi = jnp.array([[1.0, 0.0], [0.0, 0.0]])
    out = apply_1q(psi, [[0.0, 1.0], [1.0, 0.0]], 0)  # X on qubit 0: |00> -> |10>
    np.testing.assert_array_equal(out, [[0.0, 0.0], [1.0, 0.0]])


def test_relative_residuals_frequency_out_of_range():
    r = jnp.ones(5, jnp.complex64)  # K = 2: frequencies -2..2
    np.testing.assert_allclose(relative_residuals(r, 2 * r, jnp.array([-2, 2])), [0.5, 0.5])
    raises_eager_and_jit(relative_residuals, r, 2 * r, jnp.array([0, 3]), match="freqs")


def test_surrogate_rejects_keywords_it_does_not_read():
    with pytest.raises(TypeError, match="surrogate 'ce' takes no keywords; got unexpected keyword"):
        cwr.surrogate("ce", 3, 0.2, tau=0.5)
    with pytest.raises(TypeError, match="theta"):
        cwr.surrogate("cwr2d", 3, 0.2, thetta=0.3)
    assert cwr.surrogate("cwr2d", 3, 0.2, theta=0.3).K == 3
