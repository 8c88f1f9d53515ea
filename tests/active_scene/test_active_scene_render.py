"""Panoramic ray casting (claim `active_scene:cube_room_mean_panoramic_depth`): cube-room depths a / |d|_inf, the
over-estimate bounded by the step, the solid-angle mean 1.22137 a, a homogeneous slab's transmittance, and a NumPy
reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.generative.active_scene import (
    default_n_samples,
    make_room_scene,
    pano_directions,
    pixel_solid_angle_weights,
    raycast,
    surface_mask,
)
from jaxlab.generative.active_scene.reference import raycast_numpy


def cube_room(G):
    occ = np.zeros((G, G, G))
    occ[[0, -1]] = 1
    occ[:, [0, -1]] = 1
    occ[:, :, [0, -1]] = 1
    return jnp.asarray(occ)


def test_cube_room_depth_is_a_over_inf_norm_and_mean_matches_closed_form():
    G, a, step = 64, 31.0, 0.5
    dirs = pano_directions(64, 128)
    r = raycast(cube_room(G), jnp.array([32.0, 32.0, 32.0]), dirs, step=step, n_samples=default_n_samples(G, step))
    exact = a / jnp.max(jnp.abs(dirs), -1)
    err = np.asarray(r.depth - exact)
    assert err.min() >= 0 and err.max() < step  # sampling over-estimates by less than delta
    np.testing.assert_allclose(r.opacity, 1.0, atol=1e-12)
    w = pixel_solid_angle_weights(64)
    mean_depth = float(jnp.sum(w * r.depth.mean(1)))
    assert abs(mean_depth - 38.10) < 0.01  # expected ~38.10 on this panorama (vs 37.86 exact geometry)
    # Exact: 6/(4 pi) int int du dv / (1 + u^2 + v^2)^(3/2) * sqrt(1 + u^2 + v^2) over [-1, 1]^2 = 1.22137 a.
    u = (np.arange(2000) + 0.5) / 1000 - 1
    uu, vv = np.meshgrid(u, u)
    closed = 6 / (4 * np.pi) * np.sum((1 + uu**2 + vv**2) ** -1.0) * (2 / 2000) ** 2
    assert abs(closed - 1.22137) < 1e-4
    assert abs(float(jnp.sum(w * exact.mean(1))) - closed * a) < 0.02
    # first hit of a binary field is the sample of the depth
    np.testing.assert_allclose(r.t[r.first_hit], r.depth, atol=1e-12)


def test_homogeneous_slab_transmittance_depth_and_opacity():
    G, c, step = 16, 0.3, 0.5
    field = np.zeros((G, G, G))
    field[6:10] = c  # slab of 4 voxels, 8 samples along +x
    origin = jnp.array([2.25, 8.5, 8.5])
    r = raycast(jnp.asarray(field), origin, jnp.array([[1.0, 0, 0]]), step=step, n_samples=20, outside=0.0)
    j = np.arange(20)
    in_slab = (2.25 + (j + 0.5) * step >= 6) & (2.25 + (j + 0.5) * step < 10)
    assert in_slab.sum() == 8
    k = np.cumsum(in_slab) - in_slab  # slab samples before j
    np.testing.assert_allclose(r.T[0], (1 - c) ** k, rtol=1e-12)
    np.testing.assert_allclose(r.opacity[0], 1 - (1 - c) ** 8, rtol=1e-12)
    t = (j + 0.5) * step
    np.testing.assert_allclose(r.depth[0], np.sum(in_slab * c * (1 - c) ** k * t), rtol=1e-12)
    assert int(r.first_hit[0]) == 20  # alpha never reaches 0.5


def test_raycast_matches_numpy_reference_and_is_jittable_vmappable():
    rng = np.random.default_rng(0)
    field = rng.random((12, 12, 12)) ** 4
    dirs = pano_directions(6, 10)
    origins = jnp.asarray(rng.uniform(1, 11, (3, 3)))
    f = jax.jit(jax.vmap(lambda o: raycast(jnp.asarray(field), o, dirs, step=0.4, n_samples=40)))
    out = f(origins)
    for i in range(3):
        d, a, T = raycast_numpy(field, np.asarray(origins[i]), np.asarray(dirs), 0.4, 40)
        np.testing.assert_allclose(out.depth[i], d, rtol=1e-12)
        np.testing.assert_allclose(out.opacity[i], a, rtol=1e-12)
        np.testing.assert_allclose(out.T[i], T, rtol=1e-12)
    np.testing.assert_allclose(out.weights.sum(-1), out.opacity, rtol=1e-12)


def test_pano_directions_and_weights():
    d = pano_directions(8, 16)
    np.testing.assert_allclose(jnp.linalg.norm(d, axis=-1), 1.0, atol=1e-14)
    w = pixel_solid_angle_weights(8)
    assert abs(float(w.sum()) - 1) < 1e-14
    # the weighted mean of z^2 over the sphere is 1/3 (midpoint rule on cos(phi) sin(phi)^2)
    assert abs(float(jnp.sum(w * (d[..., 2] ** 2).mean(1))) - 1 / 3) < 0.02
    # azimuthal symmetry: the weighted mean of x is 0
    assert abs(float(jnp.sum(w * d[..., 0].mean(1)))) < 1e-12


def test_room_scene_structure():
    s = make_room_scene(jax.random.key(0), G=16, n_boxes=3)
    occ = np.asarray(s.occ)
    assert occ[0].all() and occ[-1].all() and occ[:, :, 0].all() and occ[:, :, -1].all()
    assert not occ[1:-1, 1:-1, -2].all()
    surf = np.asarray(surface_mask(s.occ))
    n = np.asarray(s.normal)
    np.testing.assert_allclose(np.linalg.norm(n[surf], axis=-1), 1.0, atol=1e-12)
    assert np.all(n[~surf] == 0)
    face = ~occ[1, 1:-1, 1:-1]  # wall voxels at x = 0 in front of free space face +x
    np.testing.assert_allclose(n[0, 1:-1, 1:-1][face], np.tile([1.0, 0, 0], (face.sum(), 1)), atol=1e-12)
    col = np.asarray(s.color)
    assert col.min() >= 0 and col.max() <= 1 and np.all(col[~occ] == 0)
    batch = jax.vmap(lambda k: make_room_scene(k, G=16, n_boxes=3))(jax.random.split(jax.random.key(1), 2))
    assert batch.occ.shape == (2, 16, 16, 16)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"step": 0.0}, "step"),
        ({"n_samples": 0}, "n_samples"),
        ({"origin": jnp.array([-0.5, 2.0, 2.0])}, "origin"),
        ({"origin": jnp.array([2.0, 8.0, 2.0])}, "origin"),
        ({"dirs": jnp.ones((4, 2))}, "dirs"),
        ({"dirs": jnp.full((4, 3), jnp.nan)}, "dirs"),
    ],
)
def test_raycast_bad_inputs(kwargs, match):
    args = {"prob_field": jnp.zeros((8, 8, 8)), "origin": jnp.array([2.0, 2.0, 2.0]), "dirs": jnp.ones((4, 3)),
            "step": 0.5, "n_samples": 4}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        raycast(args.pop("prob_field"), args.pop("origin"), args.pop("dirs"), **args)


def test_bad_grid_and_panorama_sizes():
    with pytest.raises(ValueError, match="G"):
        make_room_scene(jax.random.key(0), G=3)
    with pytest.raises(ValueError, match="H_p"):
        pano_directions(1, 8)
    with pytest.raises(ValueError, match="W_p"):
        pano_directions(8, 1)
