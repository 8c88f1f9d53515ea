"""Active-scene exploration as an Algorithm: the factory's step under jit equals explore_step and explore (integer
fields exactly, floats to rounding: jit folds the closed-over scene into constants, which can move the last bit)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import run
from jaxlab.generative import active_scene as A

CFG = A.ActiveConfig(pano_h=8, pano_w=16)


def _same(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        if jnp.issubdtype(x.dtype, jnp.floating):
            np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-15)
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("policy", ["active", "random"])
def test_explore_algorithm_under_jit_equals_explore(policy):
    scene = A.make_room_scene(jax.random.key(0), 16, 2)
    cands, _ = A.candidate_lattice(scene, CFG)
    final, infos = A.explore(jax.random.key(1), scene, 3, policy, CFG)
    algo = A.explore_algorithm(scene, cands, CFG, policy)
    pose0 = infos.pose[0]
    got, trace = jax.jit(lambda s, k: run(algo.step, s, k, 3))(algo.init(pose0), jax.random.key(1))
    _same((got, trace.infos), (final, infos))
    state = A.explore_init(scene, pose0, CFG)
    one, info1 = jax.jit(algo.step)(jax.random.key(2), state)
    two, info2 = A.explore_step(jax.random.key(2), state, scene, cands, CFG, policy)
    _same((one, info1), (two, info2))


def test_explore_algorithm_rejects_bad_policy_and_candidates():
    scene = A.make_room_scene(jax.random.key(0), 16, 2)
    cands, _ = A.candidate_lattice(scene, CFG)
    with pytest.raises(ValueError, match="policy"):
        A.explore_algorithm(scene, cands, CFG, "spiral")
    with pytest.raises(ValueError, match="candidates"):
        A.explore_algorithm(scene, jnp.zeros((0, 3)), CFG)
