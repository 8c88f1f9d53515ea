r"""ActPano3D's final stage: a small isotropic Gaussian-splat scene fitted to the scene memory's panoramas.

Papers: "ActPano3D" (2026; abstract only, the stage is a **[chosen]** reconstruction) and B. Kerbl et al.,
"3D Gaussian Splatting for Real-Time Radiance Field Rendering" (arXiv:2308.04079),
reduced to isotropic Gaussians rendered along panoramic rays.

Initialisation: one Gaussian per confident occupied voxel (``kappa >= kappa_u``, ``p > 0.5``): mean at the voxel
centre, scale ``0.6 h``, opacity 0.9, colour from memory (at most ``max_gaussians``; the rest are padding with
opacity 0). Rendering of the ray ``o + t d`` (unit ``d``), Gaussian ``(mu, s, o_g, c)``::

    t* = (mu - o) . d,   q = |mu - o - t* d|^2,   alpha = o_g exp(-q / (2 s^2))   (only t* > 0)
    front to back by t*:  T_k = prod_{i<k} (1 - alpha_i),  C = sum_k T_k alpha_k c_k,  D = sum_k T_k alpha_k t*_k,
    A = sum_k T_k alpha_k.

The sort is per ray (integer keys of the non-negative ``t*``, no gradient through the order). Fitting: optax Adam
(lr 1e-2, gradient clipping 1.0) on means, log-scales, opacity logits and colour logits; loss per random batch
of rays ``|C - C^|^2 + lambda_D ((D - D^) / D^)^2`` (lambda_D = 0.1, **[chosen]**) over pixels with target
opacity >= 0.5.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.train import make_train_step, train_init
from jaxlab.core.types import Array, Float, Key
from jaxlab.core.validation import as_array, check_int, check_positive
from jaxlab.generative.active_scene.config import ActiveConfig, _check_cfg
from jaxlab.generative.active_scene.memory import SceneMemory, _check_memory, confidence
from jaxlab.generative.active_scene.papers import ACTPANO, GSPLAT
from jaxlab.generative.active_scene.raycast import pano_directions
from jaxlab.generative.active_scene.render import Render

__all__ = ["Gaussians", "fit_gaussians", "gaussians_from_memory", "render_gaussian_rays", "render_gaussians"]


class Gaussians(NamedTuple):
    """Isotropic 3D Gaussians, the splat scene.

    3D Gaussian splatting reduced to isotropic kernels. Paper: B. Kerbl, G. Kopanas, T. Leimkuehler, G. Drettakis,
    "3D Gaussian Splatting for Real-Time Radiance Field Rendering", arXiv:2308.04079.

    Attributes:
      mean: ``(N, 3)`` float array of centres in voxel coordinates.
      log_scale: ``(N,)`` float array of log standard deviations ``log s``.
      opacity: ``(N,)`` float array of peak opacities ``o_g`` in [0, 1] (0 for padding).
      color: ``(N, 3)`` float array of colours in [0, 1].
    """

    mean: Float[Array, "N 3"]
    log_scale: Float[Array, " N"]
    opacity: Float[Array, " N"]
    color: Float[Array, "N 3"]


@cites(ACTPANO, GSPLAT)
def gaussians_from_memory(memory: SceneMemory, cfg: ActiveConfig | None = None, max_gaussians: int = 4096,
                          scale: float = 0.6, opacity: float = 0.9) -> Gaussians:
    """Initial Gaussians: one per confident occupied memory voxel (``kappa >= kappa_u``, ``p > 0.5``), module
    docstring.

    Mean at the voxel centre, scale ``scale`` (voxels), opacity ``opacity``, colour from the memory. The result has
    the fixed size ``max_gaussians`` (jit-able): missing entries are padding with opacity 0, and voxels beyond
    ``max_gaussians`` (in flat index order) are dropped.

    Args:
      memory: a :class:`~jaxlab.generative.active_scene.SceneMemory`.
      cfg: an :class:`~jaxlab.generative.active_scene.ActiveConfig` (``kappa_u``, ``w_sat``); default
        ``ActiveConfig()``.
      max_gaussians: int >= 1, the number ``N`` of Gaussians returned.
      scale: positive float, the initial standard deviation ``s`` **[chosen]** 0.6 voxel.
      opacity: float in [0, 1], the initial opacity **[chosen]** 0.9 (not checked).

    Returns:
      :class:`Gaussians` with ``N = max_gaussians``.

    Raises:
      TypeError: ``cfg`` or ``memory`` of the wrong type, or ``max_gaussians`` not an int.
      ValueError: an invalid ``cfg`` or memory, ``max_gaussians < 1`` or ``scale <= 0``.
    """
    cfg = _check_cfg(cfg)
    memory = _check_memory(memory)
    max_gaussians = check_int(max_gaussians, "max_gaussians", min_value=1)
    scale = check_positive(scale, "scale")
    conf = (confidence(memory, cfg) >= cfg.kappa_u) & (memory.logodds > 0)
    (idx,) = jnp.nonzero(conf.ravel(), size=max_gaussians, fill_value=0)
    valid = jnp.arange(max_gaussians) < jnp.sum(conf)
    cells = jnp.stack(jnp.unravel_index(idx, conf.shape), axis=-1).astype(memory.logodds.dtype)
    n = max_gaussians
    return Gaussians(cells + 0.5, jnp.full(n, jnp.log(scale), cells.dtype), jnp.where(valid, opacity, 0.0),
                     memory.color.reshape(-1, 3)[idx])


def _check_gaussians(g: Gaussians) -> Gaussians:
    if not isinstance(g, Gaussians):
        raise TypeError(f"g must be Gaussians, got {type(g).__name__}")
    mean = as_array(g.mean, "g.mean", ndim=2)
    n = mean.shape[0]
    if n == 0 or mean.shape[1] != 3:
        raise ValueError(f"g.mean must have shape (N, 3) with N >= 1, got {mean.shape}")
    as_array(g.log_scale, "g.log_scale", shape=(n,))
    as_array(g.opacity, "g.opacity", shape=(n,))
    as_array(g.color, "g.color", shape=(n, 3))
    return g


@cites(GSPLAT)
def render_gaussian_rays(g: Gaussians, origins: Float[Array, "R 3"], dirs: Float[Array, "R 3"]) -> Render:
    """Composite the Gaussians front to back along rays ``origins + t dirs`` (each ray its own origin).

    Per ray and Gaussian: ``t* = (mu - o) . d``, ``q = |mu - o - t* d|^2``, ``alpha = o_g exp(-q / (2 s^2))`` for
    ``t* > 0`` (0 behind the ray); sorted by ``t*``: ``T_k = prod_{i<k} (1 - alpha_i)``,
    ``C = sum_k T_k alpha_k c_k``, ``D = sum_k T_k alpha_k t*_k``, ``A = sum_k T_k alpha_k``. The sort uses
    order-preserving integer keys under ``stop_gradient`` (no gradient through the order). No input validation
    (the inner function of :func:`render_gaussians` and :func:`fit_gaussians`).

    Args:
      g: the :class:`Gaussians`, ``N`` of them.
      origins: ``(R, 3)`` float array of ray origins.
      dirs: ``(R, 3)`` float array of unit ray directions.

    Returns:
      A :class:`~jaxlab.generative.active_scene.Render` with ``depth`` ``(R,)`` (not normalised by the
      opacity), ``color`` ``(R, 3)`` and ``opacity`` ``(R,)``; costs ``O(R N log N)``.
    """
    rel = g.mean[None] - origins[:, None]
    ts = jnp.einsum("rnk,rk->rn", rel, dirs)
    q = jnp.sum((rel - ts[..., None] * dirs[:, None]) ** 2, axis=-1)
    s2 = jnp.exp(2 * g.log_scale)
    ahead = ts > 0
    alpha = jnp.where(ahead, g.opacity * jnp.exp(-q / (2 * s2)), 0.0)
    # Sort by t* through order-preserving integer keys (t* >= 0 after the mask; behind = +inf).
    key = jax.lax.stop_gradient(jnp.where(ahead, ts, jnp.inf))
    ikey = jax.lax.bitcast_convert_type(key, jnp.int32 if key.dtype == jnp.float32 else jnp.int64)
    iota = jnp.broadcast_to(jnp.arange(ts.shape[1], dtype=jnp.int32), ts.shape)
    _, perm = jax.lax.sort((ikey, iota), dimension=1, num_keys=1, is_stable=True)
    a = jnp.take_along_axis(alpha, perm, 1)
    t = jnp.take_along_axis(ts, perm, 1)
    T = jnp.cumprod(1.0 - a, axis=1)
    T = jnp.concatenate([jnp.ones_like(T[:, :1]), T[:, :-1]], axis=1)
    w = T * a
    return Render(jnp.sum(w * t, 1), jnp.einsum("rn,rnc->rc", w, g.color[perm]), jnp.sum(w, 1))


@cites(ACTPANO, GSPLAT)
def render_gaussians(g: Gaussians, pose: Float[Array, " 3"], dirs: Float[Array, "... 3"],
                     ray_batch: int = 512) -> Render:
    """Render a panorama (or any ray bundle) of the Gaussians from ``pose`` with :func:`render_gaussian_rays`.

    Rays are processed in batches of ``ray_batch`` under ``lax.map`` (the pairwise ray x Gaussian arrays bound the
    batch: about 4,096 rays x 2,048 Gaussians per batch at most).

    Args:
      g: the :class:`Gaussians`.
      pose: ``(3,)`` float array, the camera position.
      dirs: ``(..., 3)`` float array of unit ray directions (e.g.
        :func:`~jaxlab.generative.active_scene.pano_directions`).
      ray_batch: int >= 1, rays per batch.

    Returns:
      A :class:`~jaxlab.generative.active_scene.Render` with ``depth``, ``opacity`` of shape ``(...)`` and
      ``color`` ``(..., 3)``.

    Raises:
      TypeError: ``g`` is not :class:`Gaussians`, a non-float array, or ``ray_batch`` not an int.
      ValueError: Gaussian arrays of inconsistent shapes or ``N = 0``; ``pose`` not ``(3,)`` or not finite;
        ``dirs`` without a trailing axis of 3 or not finite; ``ray_batch < 1``.
    """
    g = _check_gaussians(g)
    pose = as_array(pose, "pose", shape=(3,), finite=True)
    dirs = as_array(dirs, "dirs", finite=True)
    if dirs.ndim < 1 or dirs.shape[-1] != 3:
        raise ValueError(f"dirs must have a trailing dimension of 3, got shape {dirs.shape}")
    ray_batch = check_int(ray_batch, "ray_batch", min_value=1)
    return _render_gaussians(g, pose, dirs, ray_batch)


@functools.partial(jax.jit, static_argnums=(3,))
def _render_gaussians(g, pose, dirs, ray_batch):
    lead = dirs.shape[:-1]
    flat = dirs.reshape(-1, 3)
    out = jax.lax.map(lambda d: render_gaussian_rays(g, jnp.broadcast_to(pose, (1, 3)), d[None]), flat,
                      batch_size=min(ray_batch, flat.shape[0]))
    return Render(out.depth.reshape(lead), out.color.reshape(*lead, 3), out.opacity.reshape(lead))


def _to_params(g):
    op = jnp.clip(g.opacity, 1e-4, 1 - 1e-4)
    col = jnp.clip(g.color, 1e-3, 1 - 1e-3)
    return {"mean": g.mean, "log_scale": g.log_scale, "opacity": jnp.log(op / (1 - op)),
            "color": jnp.log(col / (1 - col)), "live": (g.opacity > 0).astype(g.mean.dtype)}


def _from_params(p):
    return Gaussians(p["mean"], p["log_scale"], jax.nn.sigmoid(p["opacity"]) * p["live"], jax.nn.sigmoid(p["color"]))


@cites(ACTPANO, GSPLAT)
@renamed_kwargs(steps="num_steps", lr="learning_rate")
def fit_gaussians(key: Key, g: Gaussians, views: tuple[Float[Array, "V 3"], Render], num_steps: int = 200, *,
                  cfg: ActiveConfig | None = None, learning_rate: float = 1e-2, batch_rays: int = 512,
                  depth_weight: float = 0.1) -> tuple[Gaussians, Float[Array, " steps"]]:
    """Fit the Gaussians' means, log-scales, opacities and colours to target panoramas.

    ActPano3D's final stage ("optimized into a renderable 3D Gaussian Splatting scene"), reconstructed from the abstract
    **[chosen]** on 3D Gaussian splatting. Papers: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided
    Panoramic Exploration" (2026; abstract only, authors and arXiv id unknown); B. Kerbl, G. Kopanas,
    T. Leimkuehler, G. Drettakis, "3D Gaussian Splatting for Real-Time Radiance Field Rendering", arXiv:2308.04079.

    Opacities and colours are trained as logits (``sigmoid``); padding Gaussians (initial opacity 0) stay at
    opacity 0. Each step draws ``batch_rays`` random pixels over all views and takes one step of
    ``optax.chain(clip_by_global_norm(1.0), adam(learning_rate))`` on::

        L = sum_rays m (|C - C^|^2 + depth_weight ((D - D^) / D^)^2) / max(sum_rays m, 1),

    with ``m = 1[A^ >= 0.5]`` the target opacity mask and ``D^`` floored at ``1e-6``. One ``lax.scan`` under
    ``jit``.

    Args:
      key: PRNG key (ray sampling).
      g: the initial :class:`Gaussians` (e.g. from :func:`gaussians_from_memory`).
      views: ``(poses, target)``: ``poses`` a ``(V, 3)`` float array and ``target`` a
        :class:`~jaxlab.generative.active_scene.Render` with ``depth`` ``(V, H, W)``, ``color`` ``(V, H, W, 3)``
        and ``opacity`` ``(V, H, W)``, ``(H, W) = (cfg.pano_h, cfg.pano_w)``.
      num_steps: int >= 1, the number of Adam steps (``steps`` is its deprecated name).
      cfg: an :class:`~jaxlab.generative.active_scene.ActiveConfig` (panorama size); default ``ActiveConfig()``.
      learning_rate: positive float, Adam's step size (``lr`` is its deprecated name).
      batch_rays: int >= 1, rays per step.
      depth_weight: float ``lambda_D`` **[chosen]** 0.1, the weight of the relative depth error (not checked).

    Returns:
      ``(g, losses)``: the fitted :class:`Gaussians` and the ``(num_steps,)`` float loss per step.

    Raises:
      TypeError: ``cfg`` or ``g`` of the wrong type, a non-float array, or an int argument that is not an int.
      ValueError: an invalid ``cfg`` or Gaussians; ``num_steps < 1``, ``batch_rays < 1`` or
        ``learning_rate <= 0``; ``poses`` not ``(V, 3)`` with ``V >= 1`` or not finite; target depth not
        ``(V, H, W)`` or not finite; target colour not ``(V, H, W, 3)``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.generative.active_scene import ActiveConfig, Gaussians, Render, fit_gaussians
      >>> cfg = ActiveConfig(pano_h=4, pano_w=8)
      >>> g = Gaussians(jnp.array([[6.5, 4.5, 4.5], [2.5, 4.5, 4.5]]), jnp.zeros(2), jnp.full(2, 0.9),
      ...               jnp.full((2, 3), 0.5))
      >>> target = Render(jnp.full((1, 4, 8), 2.0), jnp.full((1, 4, 8, 3), 0.8), jnp.ones((1, 4, 8)))
      >>> g, losses = fit_gaussians(jax.random.key(0), g, (jnp.array([[4.5, 4.5, 4.5]]), target), 5, cfg=cfg,
      ...                           batch_rays=16)
      >>> losses.shape
      (5,)
    """
    cfg = _check_cfg(cfg)
    g = _check_gaussians(g)
    steps = check_int(num_steps, "num_steps", min_value=1)
    batch_rays = check_int(batch_rays, "batch_rays", min_value=1)
    lr = check_positive(learning_rate, "learning_rate")
    poses, target = views
    poses = as_array(poses, "views poses", ndim=2, finite=True)
    V = poses.shape[0]
    if V == 0 or poses.shape[1] != 3:
        raise ValueError(f"views poses must have shape (V, 3) with V >= 1, got {poses.shape}")
    H, W = cfg.pano_h, cfg.pano_w
    target = target._replace(depth=as_array(target.depth, "views depth", shape=(V, H, W), finite=True))
    as_array(target.color, "views color", shape=(V, H, W, 3))
    return _fit(key, g, poses, target, steps, cfg, lr, batch_rays, depth_weight)


@functools.partial(jax.jit, static_argnums=(4, 5, 7))
def _fit(key, g, poses, target, steps, cfg, lr, batch_rays, depth_weight):
    V, H, W = target.depth.shape
    dirs = pano_directions(H, W, g.mean.dtype).reshape(-1, 3)
    depth = target.depth.reshape(-1)
    color = target.color.reshape(-1, 3)
    mask = (target.opacity.reshape(-1) >= 0.5).astype(g.mean.dtype)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(lr))
    params = _to_params(g)

    def loss_fn(p, idx):
        p = {**p, "live": jax.lax.stop_gradient(p["live"])}  # the padding mask is not trained (zero gradient)
        view, pix = idx // (H * W), idx % (H * W)
        out = render_gaussian_rays(_from_params(p), poses[view], dirs[pix])
        d_hat = jnp.maximum(depth[idx], 1e-6)
        per_ray = jnp.sum((out.color - color[idx]) ** 2, -1) + depth_weight * ((out.depth - d_hat) / d_hat) ** 2
        return jnp.sum(mask[idx] * per_ray) / jnp.maximum(jnp.sum(mask[idx]), 1.0)

    train_step = make_train_step(loss_fn, opt)

    def step(state, k):
        state, info = train_step(state, jax.random.randint(k, (batch_rays,), 0, V * H * W))
        return state, info.loss

    state, losses = jax.lax.scan(step, train_init(params, opt), jax.random.split(key, steps))
    return _from_params(state.params), losses
