"""Value checks of the active_scene area hold eagerly and under jit (they name the argument)."""

import jax
import jax.numpy as jnp
from jaxlab_testing import raises_eager_and_jit

from jaxlab.generative import active_scene as A

CFG = A.ActiveConfig(pano_h=4, pano_w=8)


def test_active_scene_value_checks_eager_and_jit():
    scene = A.make_room_scene(jax.random.key(0), 8, 1)
    memory = A.init_memory(8)
    o, d = jnp.array([4.5, 4.5, 4.5]), jnp.array([[1.0, 0.0, 0.0]])
    raises_eager_and_jit(lambda r: A.fuse_rays(memory, o, d, jnp.array([2.0]), jnp.zeros((1, 3)), r, CFG),
                         jnp.array([1.5]), match="reliability")
    raises_eager_and_jit(lambda dep: A.fuse_rays(memory, o, d, dep, jnp.zeros((1, 3)), jnp.ones(1), CFG),
                         jnp.array([-1.0]), match="depth")
    raises_eager_and_jit(lambda p: A.render_memory(memory, p, CFG), jnp.array([4.5, 9.0, 4.5]), match="pose")
    raises_eager_and_jit(lambda p: A.render_gt(scene, p, CFG), jnp.array([0.5, 0.5, 0.5]), match="free voxel")
    raises_eager_and_jit(lambda c: A.utility_terms(memory, c, o, CFG), jnp.array([[1.0, 1.0, 8.5]]),
                         match="candidates")
    raises_eager_and_jit(lambda s: A.raycast(jnp.zeros((8, 8, 8)), o, d, step=s, n_samples=4), -0.5, match="step")
    cands, _ = A.candidate_lattice(scene, CFG)
    state = A.explore_init(scene, o, CFG)
    raises_eager_and_jit(lambda p: A.explore_step(jax.random.key(0), state, scene, cands, CFG, p)[1].next_index,
                         jnp.asarray(5), match="policy index")
