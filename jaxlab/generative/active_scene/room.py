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
    """Ground-truth voxel scene of a ``G x G x G`` room (voxel ``i`` spans ``[i, i + 1)``, voxel size ``h = 1``).

    Attributes:
      occ: ``(G, G, G)`` bool array, True where a voxel is occupied.
      color: ``(G, G, G, 3)`` float array of RGB colours in [0, 1] (0 in free voxels).
      normal: ``(G, G, G, 3)`` float array, the outward unit normal of each surface voxel (zero elsewhere).
    """

    occ: Bool[Array, "G G G"]
    color: Float[Array, "G G G 3"]
    normal: Float[Array, "G G G 3"]


def _check_grid(G: int) -> int:
    return check_int(G, "G", min_value=4)


def check_pose(pose, shape, name: str = "pose", occ=None) -> Array:
    """Validate a camera position in voxel coordinates and return it as a float array.

    The position must lie in the grid, ``0 <= pose_a < shape_a`` on every axis, and, when ``occ`` is given, not in an
    occupied voxel (the voxel ``floor(pose)``). Under ``jit`` the value checks run with the compiled program.

    Args:
      pose: ``(3,)`` float array-like, the position in voxel coordinates.
      shape: the grid shape ``(X, Y, Z)``, a sequence of 3 ints.
      name: the argument's name in error messages.
      occ: optional ``(X, Y, Z)`` bool occupancy; when given, ``pose`` must be in a free voxel.

    Returns:
      ``(3,)`` float array, ``pose`` (wrapped in a run-time check when traced).

    Raises:
      TypeError: ``pose`` is not a float array-like.
      ValueError: ``pose`` is not of shape ``(3,)``, not finite, outside the grid, or in an occupied voxel of
        ``occ`` (under ``jit``: a run-time error with the same message).
    """
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
    """Surface voxels: occupied voxels with at least one free 6-neighbour (the grid's outside counts as occupied).

    Args:
      occ: ``(X, Y, Z)`` bool (or 0/1) occupancy array.

    Returns:
      ``(X, Y, Z)`` bool array.
    """
    occ = jnp.asarray(occ, bool)
    return occ & _adjacent(~occ)


@cites(ACTPANO)
def make_room_scene(key: Key, G: int = 32, n_boxes: int = 6) -> Scene:
    """A random closed room: walls, floor and ceiling are the boundary voxels, with ``n_boxes`` boxes on the floor.

    Reconstructed scene (ActPano3D is known only through its abstract; the room is **[chosen]** as a test world):
    each box has a square-ish footprint of 2 to ``max(G // 4 + 1, 3)`` voxels a side, a random position inside the
    walls and a height of 3 to ``G - 2`` voxels above the floor (``z = 1``). Colours **[chosen]**: each of the six
    wall faces has its own base colour with a 2-voxel checker texture (factor 0.75 or 1), each box a colour uniform
    in ``[0.15, 0.95]^3`` (the last box covering a voxel wins). Normals are the normalised negative occupancy
    gradient (central differences, outside = occupied) on surface voxels. jit/vmap-able over ``key`` (``G`` and
    ``n_boxes`` are static).

    Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026;
    authors and arXiv id unknown, abstract only).

    Args:
      key: PRNG key.
      G: int >= 4, the grid side.
      n_boxes: int >= 0, the number of boxes and pillars.

    Returns:
      A :class:`Scene` with arrays of the default float dtype.

    Raises:
      TypeError: ``G`` or ``n_boxes`` is not an int.
      ValueError: ``G < 4`` or ``n_boxes < 0``.

    Example:
      >>> import jax
      >>> from jaxlab.generative.active_scene import make_room_scene, surface_mask
      >>> scene = make_room_scene(jax.random.key(0), G=8, n_boxes=1)
      >>> scene.occ.shape, scene.color.shape
      ((8, 8, 8), (8, 8, 8, 3))
      >>> bool(scene.occ[0].all()), bool(surface_mask(scene.occ)[0, 0, 0])  # the x = 0 wall; a corner
      (True, False)
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
    """Centres of the free voxels of a horizontal lattice: ``(i + 0.5, j + 0.5, z_cam + 0.5)`` for ``i, j`` in
    ``stride // 2, stride // 2 + stride, ...`` with voxel ``(i, j, z_cam)`` free.

    Eager only (the number of points depends on the scene); :func:`~jaxlab.generative.active_scene.candidate_lattice`
    gives a fixed-size, jit-able candidate set with a validity mask.

    Args:
      scene: a :class:`Scene` with concrete (not traced) occupancy.
      z_cam: int in ``[0, G - 1]``, the lattice height (voxel index).
      stride: int >= 1, the lattice spacing in voxels.

    Returns:
      ``(n, 3)`` float array (``scene.color``'s dtype) of positions.

    Raises:
      TypeError: ``z_cam`` or ``stride`` is not an int.
      ValueError: ``z_cam`` outside ``[0, G - 1]`` or ``stride < 1``.
    """
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
    """``n`` random free voxel centres anywhere in the room (held-out test poses), uniform over the free voxels and
    drawn with replacement.

    Args:
      key: PRNG key.
      scene: a :class:`Scene`.
      n: int >= 1, the number of poses.

    Returns:
      ``(n, 3)`` float array (``scene.color``'s dtype) of voxel centres.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1``.
    """
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
