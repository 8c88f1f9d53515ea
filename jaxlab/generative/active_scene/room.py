r"""The ground-truth voxel room of ActPano3D: occupancy, colours, surface normals and free camera positions.

Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026); only the
abstract was retrievable (no authors, arXiv id or code), so the method is a **[chosen]** mechanism-preserving
reconstruction.

World: a ``G x G x G`` voxel grid in voxel coordinates (voxel size ``h = 1``; voxel ``i`` spans ``[i, i + 1)``),
a closed room (boundary voxels occupied) with ``n_boxes`` axis-aligned boxes and pillars standing on the floor.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool, Float, Key
from jaxlab.core.validation import as_array, check_in_range, check_int, error_if, is_concrete, value_check
from jaxlab.generative.active_scene.papers import ACTPANO

__all__ = [
    "Scene",
    "check_pose",
    "free_positions",
    "make_room_scene",
    "sample_free_poses",
    "surface_mask",
]


class Scene(NamedTuple):
    """Ground-truth voxel scene: occupancy ``occ`` (G,G,G) bool, colour (G,G,G,3) in [0,1] and the outward unit
    normal (G,G,G,3) of surface voxels (zero elsewhere)."""

    occ: Bool[Array, "G G G"]
    color: Float[Array, "G G G 3"]
    normal: Float[Array, "G G G 3"]


def _check_grid(G: int) -> int:
    return check_int(G, "G", min_value=4)


def check_pose(pose, shape, name: str = "pose", occ=None) -> Array:
    """Validate a camera position (3,) in voxel coordinates: inside the grid ``[0, G)^3`` and, when ``occ`` is
    given and concrete, not inside an occupied voxel. Returns it as a float array."""
    pose = as_array(pose, name, shape=(3,), finite=True)
    dims = tuple(float(n) for n in shape)
    pose = value_check(pose, lambda p: jnp.any(p < 0) | jnp.any(p >= jnp.asarray(dims, p.dtype)),
                       f"{name} must lie inside the grid [0, {tuple(shape)})")
    if occ is not None:
        msg = f"{name} must be in a free voxel, not inside an occupied voxel"

        def occupied(p):
            cell = jnp.clip(jnp.floor(p).astype(jnp.int32), 0, jnp.asarray(occ.shape) - 1)
            return jnp.asarray(occ)[cell[0], cell[1], cell[2]]

        if is_concrete((pose, occ)):  # pose and occupancy both known: raise now; else when the program runs
            with jax.ensure_compile_time_eval():
                if bool(occupied(pose)):
                    raise ValueError(msg)
        else:
            pose = error_if(pose, occupied(pose), msg)
    return pose


def _adjacent(mask: Bool[Array, "X Y Z"]) -> Bool[Array, "X Y Z"]:
    """Cells with at least one 6-neighbour in ``mask`` (nothing outside the grid)."""
    pad = jnp.pad(mask, 1)
    out = jnp.zeros_like(mask)
    for ax in range(3):
        for s in (0, 2):
            sl = [slice(1, n + 1) for n in mask.shape]
            sl[ax] = slice(s, s + mask.shape[ax])
            out = out | pad[tuple(sl)]
    return out


def surface_mask(occ: Bool[Array, "G G G"]) -> Bool[Array, "G G G"]:
    """Occupied voxels 6-adjacent to a free voxel (the grid's outside counts as occupied)."""
    occ = jnp.asarray(occ, bool)
    return occ & _adjacent(~occ)


@cites(ACTPANO)
def make_room_scene(key: Key, G: int = 32, n_boxes: int = 6) -> Scene:
    """A closed ``G^3`` room (walls, floor, ceiling = boundary voxels) with ``n_boxes`` random axis-aligned
    boxes/pillars on the floor (footprint 2 to ``G // 4 + 1`` voxels a side, height 3 to ``G - 2``).

    **[chosen]** colours: each wall has its own base colour with a 2-voxel checker texture, each box a random
    colour. Normals are the normalised negative occupancy gradient (central differences, outside = occupied) on
    surface voxels. jit/vmap-able over ``key`` (``G`` and ``n_boxes`` are static).
    """
    G = _check_grid(G)
    n_boxes = check_int(n_boxes, "n_boxes", min_value=0)
    return _make_room(key, G, n_boxes)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _make_room(key, G, n_boxes):
    k_pos, k_size, k_h, k_col = jax.random.split(key, 4)
    smax = max(G // 4 + 1, 3)
    size = jax.random.randint(k_size, (n_boxes, 2), 2, smax + 1)
    lo = jax.random.randint(k_pos, (n_boxes, 2), 0, 1 << 20) % jnp.maximum(G - 2 - size - 1, 1) + 1
    height = jax.random.randint(k_h, (n_boxes,), 3, max(G - 1, 4))
    box_col = jax.random.uniform(k_col, (n_boxes, 3), minval=0.15, maxval=0.95)
    i = jnp.arange(G)
    x, y, z = i[:, None, None], i[None, :, None], i[None, None, :]
    wall = (x == 0) | (x == G - 1) | (y == 0) | (y == G - 1) | (z == 0) | (z == G - 1)

    b = (slice(None), None, None, None)
    in_box = ((x >= lo[:, 0][b]) & (x < (lo[:, 0] + size[:, 0])[b]) & (y >= lo[:, 1][b])
              & (y < (lo[:, 1] + size[:, 1])[b]) & (z >= 1) & (z < (1 + height)[b]))
    occ = wall | jnp.any(in_box, axis=0)
    # Wall colours by face: -x, +x, -y, +y, floor, ceiling.
    faces = jnp.array([[0.85, 0.35, 0.30], [0.30, 0.70, 0.40], [0.30, 0.45, 0.85],
                       [0.85, 0.80, 0.30], [0.55, 0.45, 0.35], [0.90, 0.90, 0.90]])
    face_id = jnp.select([x == 0, x == G - 1, y == 0, y == G - 1, z == 0], [0, 1, 2, 3, 4], 5)
    checker = 0.75 + 0.25 * (((x // 2) + (y // 2) + (z // 2)) % 2)
    color = faces[face_id] * checker[..., None]
    if n_boxes:
        last = jnp.argmax(in_box[::-1], axis=0)  # the last box covering a voxel wins
        box_id = n_boxes - 1 - last
        color = jnp.where(jnp.any(in_box, 0)[..., None] & ~wall[..., None], box_col[box_id], color)
    color = jnp.where(occ[..., None], color, 0.0)
    pad = jnp.pad(occ.astype(color.dtype), 1, constant_values=1.0)
    grad = jnp.stack([(pad[2:, 1:-1, 1:-1] - pad[:-2, 1:-1, 1:-1]),
                      (pad[1:-1, 2:, 1:-1] - pad[1:-1, :-2, 1:-1]),
                      (pad[1:-1, 1:-1, 2:] - pad[1:-1, 1:-1, :-2])], axis=-1)
    norm = jnp.linalg.norm(grad, axis=-1, keepdims=True)
    normal = jnp.where(surface_mask(occ)[..., None] & (norm > 0), -grad / jnp.maximum(norm, 1e-12), 0.0)
    return Scene(occ, color, normal)


def free_positions(scene: Scene, z_cam: int, stride: int) -> Float[Array, "n 3"]:
    """Centres ``(i + 0.5, j + 0.5, z_cam + 0.5)`` of the free voxels of the stride-``stride`` lattice at height
    ``z_cam`` (lattice offset ``stride // 2``). Eager (the count depends on the scene); for a fixed-size,
    jit-able candidate set use ``active_scene.candidate_lattice``."""
    G = scene.occ.shape[0]
    z_cam = check_int(z_cam, "z_cam", min_value=0, max_value=G - 1)
    stride = check_int(stride, "stride", min_value=1)
    occ = np.asarray(scene.occ)
    ii = np.arange(stride // 2, G, stride)
    gx, gy = np.meshgrid(ii, ii, indexing="ij")
    keep = ~occ[gx, gy, z_cam]
    pts = np.stack([gx[keep], gy[keep], np.full(keep.sum(), z_cam)], axis=-1) + 0.5
    return jnp.asarray(pts, dtype=scene.color.dtype)


def sample_free_poses(key: Key, scene: Scene, n: int) -> Float[Array, "n 3"]:
    """``n`` random free voxel centres anywhere in the room (held-out test poses), uniform over free voxels."""
    n = check_int(n, "n", min_value=1)
    free = ~jnp.asarray(scene.occ).ravel()
    idx = jax.random.choice(key, free.size, (n,), p=free / jnp.sum(free))
    return jnp.stack(jnp.unravel_index(idx, scene.occ.shape), axis=-1).astype(scene.color.dtype) + 0.5


def _check_scene(scene: Scene) -> Scene:
    if not isinstance(scene, Scene):
        raise TypeError(f"scene must be a Scene, got {type(scene).__name__}")
    occ = as_array(scene.occ, "scene.occ", ndim=3, kind="bool")
    G = occ.shape[0]
    if occ.shape != (G, G, G) or G < 4:
        raise ValueError(f"scene.occ must have shape (G, G, G) with G >= 4, got {occ.shape}")
    color = as_array(scene.color, "scene.color", shape=(G, G, G, 3))
    scene = scene._replace(color=check_in_range(color, "scene.color", 0.0, 1.0))
    as_array(scene.normal, "scene.normal", shape=(G, G, G, 3))
    return scene
