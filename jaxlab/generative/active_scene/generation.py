r"""Memory-routed panoramic generation, simulated (it stands in for ActPano3D's panoramic diffusion model).

Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026); only the
abstract was retrievable (no authors, arXiv id or code), so the method is a **[chosen]** mechanism-preserving
reconstruction.

The generator is a callable ``generator_fn(key, memory, pose) -> Observation``, so a learned model can be
substituted. Memory-routed generation at pose ``x``: pixels whose memory render has opacity
``A_mem >= tau_route`` are copied from memory (reliability ``rho = 1``), the rest are "generated" (GT depth
``(1 + sigma_d xi)``, GT colour ``+ sigma_c xi``, and per 4x4 block with probability ``q_hall`` a depth offset
uniform in +-20 %; ``rho = 0.6``). Pixel reliability ``r = rho exp(-D / d0) max(|cos psi|, 0.1)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool, Float, Key
from jaxlab.generative.active_scene.config import (
    ActiveConfig,
    _check_cfg,
    _dirs,
)
from jaxlab.generative.active_scene.memory import (
    SceneMemory,
    _check_memory,
)
from jaxlab.generative.active_scene.papers import ACTPANO
from jaxlab.generative.active_scene.render import (
    _gt_cast,
    render_memory,
)
from jaxlab.generative.active_scene.room import (
    Scene,
    _check_scene,
    check_pose,
)

__all__ = [
    "Observation",
    "make_simulated_generator",
    "simulate_generation",
]


class Observation(NamedTuple):
    """A (generated) panorama of ``H x W`` pixels.

    Attributes:
      depth: ``(H, W)`` float array of depths (>= 0).
      color: ``(H, W, 3)`` float array of colours in [0, 1].
      reliability: ``(H, W)`` float array, the per-pixel reliability ``r`` in [0, 1].
      routed_mask: ``(H, W)`` bool array, True where the pixel was copied from the memory render.
    """

    depth: Float[Array, "H W"]
    color: Float[Array, "H W 3"]
    reliability: Float[Array, "H W"]
    routed_mask: Bool[Array, "H W"]


def _upsample_blocks(mask, block, H, W):
    return jnp.repeat(jnp.repeat(mask, block, 0), block, 1)[:H, :W]


@cites(ACTPANO)
def simulate_generation(key: Key, scene: Scene, memory: SceneMemory, pose: Float[Array, " 3"],
                        cfg: ActiveConfig | None = None) -> Observation:
    """Simulated memory-routed panoramic generator, standing in for ActPano3D's panoramic diffusion model.

    Reconstructed from the abstract's "memory-routed panoramic generation" **[chosen]**: pixels whose memory
    render has opacity ``A_mem >= tau_route`` are copied from memory (``rho = rho_mem``); the others are generated
    from the ground truth: depth ``D* (1 + sigma_d xi)``, multiplied by ``(1 + u)``, ``u ~ U(-hall_scale,
    hall_scale)``, on the ``hall_block x hall_block`` blocks hallucinated with probability ``q_hall``; colour
    ``clip(C* + sigma_c xi, 0, 1)``; ``rho = rho_gen``. Reliability
    ``r = rho exp(-D / d0) max(|cos psi|, min_cos)``, with ``D`` the output depth and ``psi`` the angle between the
    ray and the ground-truth normal of the hit voxel (``cos psi = 1`` where there is none).

    Args:
      key: PRNG key (depth, colour and hallucination noise).
      scene: the ground-truth :class:`~jaxlab.generative.active_scene.Scene`.
      memory: the current :class:`~jaxlab.generative.active_scene.SceneMemory`.
      pose: ``(3,)`` float array, the camera position in a free voxel.
      cfg: an :class:`~jaxlab.generative.active_scene.ActiveConfig`; default ``ActiveConfig()``.

    Returns:
      An :class:`Observation` of ``(pano_h, pano_w)`` pixels.

    Raises:
      TypeError: ``cfg``, ``scene`` or ``memory`` of the wrong type, or arrays of the wrong dtype.
      ValueError: an invalid ``cfg``, scene or memory arrays of the wrong shape, scene colours outside [0, 1], or
        ``pose`` outside the grid or in an occupied voxel.
    """
    cfg = _check_cfg(cfg)
    scene = _check_scene(scene)
    memory = _check_memory(memory)
    pose = check_pose(pose, scene.occ.shape, occ=scene.occ)
    return _simulate(key, scene, memory, pose, cfg)


@functools.partial(jax.jit, static_argnames="cfg")
def _simulate(key, scene, memory, pose, cfg):
    G = scene.occ.shape[0]
    dtype = scene.color.dtype
    dirs = _dirs(cfg, dtype)
    mem = render_memory(memory, pose, cfg)
    d_gt, c_gt, n_gt, _ = _gt_cast(scene, pose, dirs, cfg.step, cfg.samples(G))
    H, W = cfg.pano_h, cfg.pano_w
    kd, kc, kh, ku = jax.random.split(key, 4)
    nb = (-(-H // cfg.hall_block), -(-W // cfg.hall_block))
    hall = _upsample_blocks(jax.random.bernoulli(kh, float(cfg.q_hall), nb), cfg.hall_block, H, W)
    u = _upsample_blocks(jax.random.uniform(ku, nb, dtype, -cfg.hall_scale, cfg.hall_scale), cfg.hall_block, H, W)
    d_gen = d_gt * (1 + cfg.sigma_d * jax.random.normal(kd, (H, W), dtype)) * jnp.where(hall, 1 + u, 1.0)
    c_gen = jnp.clip(c_gt + cfg.sigma_c * jax.random.normal(kc, (H, W, 3), dtype), 0.0, 1.0)
    routed = mem.opacity >= cfg.tau_route
    depth = jnp.where(routed, mem.depth, d_gen)
    color = jnp.where(routed[..., None], jnp.clip(mem.color, 0.0, 1.0), c_gen)
    cos_psi = jnp.where(jnp.any(n_gt != 0, -1), jnp.abs(jnp.sum(dirs * n_gt, -1)), 1.0)
    rho = jnp.where(routed, cfg.rho_mem, cfg.rho_gen)
    rel = rho * jnp.exp(-depth / cfg.range_scale(G)) * jnp.maximum(cos_psi, cfg.min_cos)
    return Observation(depth, color, rel, routed)


def make_simulated_generator(scene: Scene, cfg: ActiveConfig | None = None) -> Callable:
    """The generator callable ``generator_fn(key, memory, pose) -> Observation`` of :func:`simulate_generation`,
    closing over the ground truth (the default generator of ``explore``); a learned panorama model with the same
    signature can replace it.

    Args:
      scene: the ground-truth :class:`~jaxlab.generative.active_scene.Scene`.
      cfg: an :class:`~jaxlab.generative.active_scene.ActiveConfig`; default ``ActiveConfig()``.

    Returns:
      ``generator_fn(key, memory, pose) -> Observation``.

    Raises:
      TypeError: ``cfg`` is not an ``ActiveConfig``.
      ValueError: an invalid ``cfg``.
    """
    cfg = _check_cfg(cfg)

    def generator_fn(key, memory, pose):
        return simulate_generation(key, scene, memory, pose, cfg)

    return generator_fn
