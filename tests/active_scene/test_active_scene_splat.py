"""Gaussian-splat stage: the renderer against a NumPy loop over rays (sorted compositing), initialisation from
a memory, a short fit that lowers the loss, and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.generative import active_scene as A
from jaxlab.generative.active_scene.reference import render_gaussians_numpy
from jaxlab.generative.active_scene.splat import Gaussians, fit_gaussians, gaussians_from_memory, render_gaussians

CFG = A.ActiveConfig(pano_h=8, pano_w=16)


def test_renderer_matches_numpy_reference():
    rng = np.random.default_rng(0)
    n = 40
    g = Gaussians(jnp.asarray(rng.uniform(0, 10, (n, 3))), jnp.asarray(rng.normal(-0.3, 0.3, n)),
                  jnp.asarray(rng.uniform(0.2, 0.95, n)), jnp.asarray(rng.random((n, 3))))
    o, d = jnp.array([5.0, 5.0, 5.0]), A.pano_directions(6, 12)
    r = render_gaussians(g, o, d, ray_batch=16)
    dn, cn, an = render_gaussians_numpy(g.mean, np.exp(g.log_scale), g.opacity, g.color, o, d)
    np.testing.assert_allclose(np.asarray(r.depth).ravel(), dn, atol=1e-10)
    np.testing.assert_allclose(np.asarray(r.color).reshape(-1, 3), cn, atol=1e-10)
    np.testing.assert_allclose(np.asarray(r.opacity).ravel(), an, atol=1e-10)
    assert 0.05 < float(np.mean(an)) < 0.95  # both hits and misses are exercised


def test_init_from_memory_and_fit_lowers_the_loss():
    scene = A.make_room_scene(jax.random.key(5), G=16, n_boxes=3)
    occ = scene.occ
    m = A.SceneMemory(jnp.where(occ, 4.0, -4.0), jnp.where(A.surface_mask(occ), 20.0, 0.0), scene.color,
                      jnp.ones(occ.shape))
    g = gaussians_from_memory(m, CFG, max_gaussians=2048)
    n_surf = int(A.surface_mask(occ).sum())
    assert int(jnp.sum(g.opacity > 0)) == n_surf and n_surf < 2048
    live = np.asarray(g.opacity > 0)
    cells = np.floor(np.asarray(g.mean)[live]).astype(int)
    assert np.all(np.asarray(occ)[tuple(cells.T)])
    np.testing.assert_allclose(np.asarray(g.color)[live], np.asarray(scene.color)[tuple(cells.T)])
    np.testing.assert_allclose(np.exp(np.asarray(g.log_scale)), 0.6)
    poses = A.sample_free_poses(jax.random.key(1), scene, 2)
    targets = jax.vmap(lambda p: A.render_gt(scene, p, CFG))(poses)
    fitted, losses = fit_gaussians(jax.random.key(0), g, (poses, targets), 40, cfg=CFG, batch_rays=64)
    losses = np.asarray(losses)
    assert losses[-10:].mean() < 0.7 * losses[:5].mean()
    assert np.all(np.asarray(fitted.opacity)[~live] == 0)  # padding stays transparent


def test_splat_bad_inputs():
    g = Gaussians(jnp.zeros((3, 3)), jnp.zeros(3), jnp.ones(3) * 0.5, jnp.ones((3, 3)) * 0.5)
    with pytest.raises(ValueError, match=r"g\.log_scale"):
        render_gaussians(g._replace(log_scale=jnp.zeros(2)), jnp.ones(3), jnp.ones((4, 3)))
    with pytest.raises(ValueError, match="dirs"):
        render_gaussians(g, jnp.ones(3), jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="views poses"):
        fit_gaussians(jax.random.key(0), g, (jnp.zeros((0, 3)), None), 5, cfg=CFG)
    with pytest.raises(ValueError, match="steps"):
        fit_gaussians(jax.random.key(0), g, (jnp.ones((1, 3)), None), 0, cfg=CFG)
