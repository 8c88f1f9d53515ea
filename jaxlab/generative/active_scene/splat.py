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
    """Isotropic Gaussians: means (N,3), log-scales (N,), opacities (N,) in [0,1], colours (N,3) in [0,1]."""

    mean: Float[Array, "N 3"]
    log_scale: Float[Array, " N"]
    opacity: Float[Array, " N"]
    color: Float[Array, "N 3"]


@cites(ACTPANO, GSPLAT)
def gaussians_from_memory(memory: SceneMemory, cfg: ActiveConfig | None = None, max_gaussians: int = 4096,
                          scale: float = 0.6, opacity: float = 0.9) -> Gaussians:
    """One Gaussian per confident occupied voxel (module docstring); padded to ``max_gaussians`` with zero
    opacity, so that the result has a fixed shape (jit-able). Voxels beyond ``max_gaussians`` are dropped."""
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
    """Composite the Gaussians front to back along rays ``origins + t dirs`` (each ray its own origin)."""
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
    """Render a panorama (or any ray bundle ``dirs`` (..., 3)) of the Gaussians from ``pose``; rays are processed
    in batches of ``ray_batch`` (the pairwise ray x Gaussian cost bounds the batch: <= 4,096 x 2,048)."""
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
    """Fit means, log-scales, opacities and colours to target panoramas ``views = (poses (V,3), Render with
    depth (V,H,W), color (V,H,W,3), opacity (V,H,W))`` taken with ``cfg``'s panorama; ``batch_rays`` random rays
    per Adam step (padding Gaussians stay at zero opacity). Returns the fitted Gaussians and the loss per step."""
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
