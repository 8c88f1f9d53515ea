"""Benchmark of ActPano3D's panoramic ray casting (issue 14 part d), float32, one JSON line per case.

Work: ray casting of a 64 x 128 equirectangular panorama (8,192 rays) through a 32^3 probability field (a room of
the spec's synthetic scene, with the memory-style soft occupancy ``0.9 occ + 0.05``), S = 128 samples per ray at
``delta = 0.5``: nearest-voxel lookup, transmittance, expected depth and opacity.

- ours: ``jaxlab.generative.active_scene.raycast_depth`` under ``jax.jit`` (depth and opacity, samples
  composited chunk by chunk inside a ``lax.scan``); the full ``raycast`` (per-sample arrays materialised) is
  reported alongside as ``raycast_full_s``.
- peer: the same ray casting as vectorised NumPy over rays x samples (``active_scene.reference.raycast_numpy``;
  Open3D/octomap are not installed, and their ray casters answer a different question: first hits of meshes).
- a second case casts the 64 candidate panoramas of one utility evaluation (32 x 64 each) with ``vmap``, against
  NumPy looping over the candidates.

Goal (issue 14): rays per second at least 10x the NumPy implementation. Timed round-robin
(``time_interleaved``); compile time reported separately. Run: ``python bench/_generative_scene.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.generative.active_scene import make_room_scene, pano_directions, raycast, raycast_depth
from jaxlab.generative.active_scene.reference import raycast_numpy

AREA = "active_scene"
G, STEP, S = 32, 0.5, 128


def main() -> None:
    cal = calibration_gflops()
    scene = make_room_scene(jax.random.key(0), G=G, n_boxes=6)
    field = (0.9 * scene.occ + 0.05).astype(jnp.float32)
    occ = np.asarray(scene.occ)
    free = np.argwhere(~occ[:, :, 16])
    origin = jnp.asarray([*(free[len(free) // 2] + 0.5), 16.5], jnp.float32)

    def ours(field, origin, dirs):
        return raycast_depth(field, origin, dirs, step=STEP, n_samples=S)

    def full(field, origin, dirs):
        r = raycast(field, origin, dirs, step=STEP, n_samples=S)
        return r.depth, r.opacity

    ours_jit, full_jit = jax.jit(ours), jax.jit(full)
    fn_np, o_np = np.asarray(field), np.asarray(origin)

    def peer(field, origin, dirs):
        d, a, _ = raycast_numpy(field, origin, dirs, STEP, S)
        return d, a

    for (h, w) in ((64, 128),):
        dirs = pano_directions(h, w, jnp.float32)
        d_np = np.asarray(dirs)
        res = time_interleaved({"ours": (ours_jit, (field, origin, dirs)), "full": (full_jit, (field, origin, dirs)),
                                "numpy": (peer, (fn_np, o_np, d_np))}, repeats=15)
        got, ref = ours_jit(field, origin, dirs), peer(fn_np, o_np, d_np)
        err = float(np.max(np.abs(np.asarray(got[0]) - ref[0])))
        n_rays = h * w
        emit(AREA, f"raycast_pano_{h}x{w}_grid{G}_S{S}", ours_s=res["ours"]["median_s"], peer="numpy",
             peer_s=res["numpy"]["median_s"], compile_s=res["ours"]["first_s"] - res["ours"]["median_s"],
             quality={"max_abs_depth_diff": err}, calibration=cal,
             rays_per_s_ours=n_rays / res["ours"]["median_s"], rays_per_s_numpy=n_rays / res["numpy"]["median_s"],
             raycast_full_s=res["full"]["median_s"], goal_ratio=10.0)  # issue 14: rays/s >= 10x numpy

    # 64 candidate panoramas of 32 x 64 rays (one utility evaluation's casting).
    cands = jnp.asarray(np.concatenate([np.argwhere(~occ[:, :, 16])[:: max(1, len(free) // 64)][:64] + 0.5,
                                        np.full((64, 1), 16.5)], axis=1), jnp.float32)
    dirs = pano_directions(32, 64, jnp.float32)
    many = jax.jit(jax.vmap(ours, in_axes=(None, 0, None)))

    def many_np(field, cands, dirs):
        return [peer(field, c, dirs) for c in cands]

    res = time_interleaved({"ours": (many, (field, cands, dirs)),
                            "numpy": (many_np, (fn_np, np.asarray(cands), np.asarray(dirs)))}, repeats=5)
    n_rays = 64 * 32 * 64
    emit(AREA, f"raycast_64_candidates_32x64_grid{G}_S{S}", ours_s=res["ours"]["median_s"], peer="numpy",
         peer_s=res["numpy"]["median_s"], compile_s=res["ours"]["first_s"] - res["ours"]["median_s"],
         calibration=cal, rays_per_s_ours=n_rays / res["ours"]["median_s"],
         rays_per_s_numpy=n_rays / res["numpy"]["median_s"], goal_ratio=10.0)


if __name__ == "__main__":
    main()
