r"""Equirectangular panoramas and panoramic ray casting through a voxel probability field.

Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026); only the
abstract was retrievable (no authors, arXiv id or code), so the method is a **[chosen]** mechanism-preserving
reconstruction.

Equirectangular panorama of ``H_p x W_p`` rays, pixel centres at::

    phi_r   = (r + 0.5) / H_p * pi - pi / 2          (elevation)
    theta_c = (c + 0.5) / W_p * 2 pi - pi            (azimuth)
    d       = (cos phi cos theta, cos phi sin theta, sin phi),

solid-angle weight of a pixel proportional to ``cos phi_r``.

Ray casting of a probability field ``p`` from origin ``o`` along ``d``: ``S`` samples at ``t_j = (j + 0.5) delta``,
nearest-voxel lookup ``p_j = p[floor(o + t_j d)]`` (``outside`` beyond the grid, 1 = occupied by default)::

    alpha_j = p_j,   T_j = prod_{i<j} (1 - alpha_i),   w_j = T_j alpha_j,
    D = sum_j w_j t_j   (expected depth),   A = sum_j w_j   (opacity),
    first_hit = min{j : alpha_j >= 0.5}   (S if none).

For a binary field ``D`` is the distance of the first sample inside an occupied voxel, which over-estimates
the true distance by less than ``delta``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float, Int
from jaxlab.core.validation import as_array, check_int, check_positive
from jaxlab.generative.active_scene.papers import ACTPANO
from jaxlab.generative.active_scene.room import (
    check_pose,
)

__all__ = [
    "RayResult",
    "default_n_samples",
    "pano_directions",
    "pixel_solid_angle_weights",
    "raycast",
    "raycast_depth",
]


class RayResult(NamedTuple):
    """Per-ray output of :func:`raycast` (leading axes ``...`` = those of ``dirs``; ``S`` = samples per ray).

    Attributes:
      t: ``(S,)`` float array of sample distances ``t_j = (j + 0.5) delta``.
      alpha: ``(..., S)`` float array, the field value ``alpha_j`` at each sample.
      T: ``(..., S)`` float array, the transmittance ``T_j = prod_{i<j} (1 - alpha_i)`` before each sample.
      weights: ``(..., S)`` float array, the compositing weights ``w_j = T_j alpha_j``.
      depth: ``(...)`` float array, the expected depth ``D = sum_j w_j t_j``.
      opacity: ``(...)`` float array, the opacity ``A = sum_j w_j``.
      first_hit: ``(...)`` int array, ``min{j : alpha_j >= 0.5}`` (``S`` when no sample reaches 0.5).
    """

    t: Float[Array, " S"]
    alpha: Float[Array, "... S"]
    T: Float[Array, "... S"]
    weights: Float[Array, "... S"]
    depth: Float[Array, "..."]
    opacity: Float[Array, "..."]
    first_hit: Int[Array, "..."]


def default_n_samples(G: int, step: float) -> int:
    """The default number of samples per ray, ``S = ceil(sqrt(3) G / step) + 1``: enough to cross the grid's diagonal.

    Args:
      G: int, the grid side.
      step: positive float, the sample spacing ``delta``.

    Returns:
      ``S`` as a Python int.
    """
    return math.ceil(math.sqrt(3.0) * G / step) + 1


def pano_directions(H_p: int, W_p: int, dtype=None) -> Float[Array, "H_p W_p 3"]:
    """Unit ray directions of an equirectangular ``H_p x W_p`` panorama (pixel centres; module docstring).

    ``d[r, c] = (cos phi_r cos theta_c, cos phi_r sin theta_c, sin phi_r)`` with elevation
    ``phi_r = (r + 0.5) / H_p pi - pi / 2`` and azimuth ``theta_c = (c + 0.5) / W_p 2 pi - pi``.

    Args:
      H_p: int >= 2, the number of rows (elevations).
      W_p: int >= 2, the number of columns (azimuths).
      dtype: the float dtype (default: JAX's default float).

    Returns:
      ``(H_p, W_p, 3)`` float array of unit vectors.

    Raises:
      TypeError: ``H_p`` or ``W_p`` is not an int.
      ValueError: ``H_p < 2`` or ``W_p < 2``.
    """
    H_p = check_int(H_p, "H_p", min_value=2)
    W_p = check_int(W_p, "W_p", min_value=2)
    dtype = dtype or jnp.result_type(float)
    phi = (jnp.arange(H_p, dtype=dtype) + 0.5) / H_p * jnp.pi - jnp.pi / 2
    theta = (jnp.arange(W_p, dtype=dtype) + 0.5) / W_p * 2 * jnp.pi - jnp.pi
    phi, theta = phi[:, None], theta[None, :]
    return jnp.stack([jnp.cos(phi) * jnp.cos(theta), jnp.cos(phi) * jnp.sin(theta),
                      jnp.broadcast_to(jnp.sin(phi), (H_p, W_p))], axis=-1)


def pixel_solid_angle_weights(H_p: int, dtype=None) -> Float[Array, " H_p"]:
    """Per-row solid-angle weights ``omega_r = cos(phi_r) / sum_r cos(phi_r)`` of an equirectangular panorama.

    The solid-angle-weighted mean of a panorama ``x`` is ``sum_r omega_r mean_c x[r, c]``; the weights sum to 1.

    Args:
      H_p: int >= 2, the number of rows.
      dtype: the float dtype (default: JAX's default float).

    Returns:
      ``(H_p,)`` float array.

    Raises:
      TypeError: ``H_p`` is not an int.
      ValueError: ``H_p < 2``.
    """
    H_p = check_int(H_p, "H_p", min_value=2)
    dtype = dtype or jnp.result_type(float)
    phi = (jnp.arange(H_p, dtype=dtype) + 0.5) / H_p * jnp.pi - jnp.pi / 2
    c = jnp.cos(phi)
    return c / jnp.sum(c)


def _march(shape, origin, dirs, step, n_samples):
    """Sample distances (S,), flat voxel indices (..., S) (0 outside) and the inside mask (..., S)."""
    t = (jnp.arange(n_samples, dtype=dirs.dtype) + 0.5) * step
    # One axis at a time, (..., S) each: an interleaved (..., S, 3) position array defeats XLA's vectorisation.
    idx = [jnp.floor(origin[k] + dirs[..., k, None] * t).astype(jnp.int32) for k in range(3)]
    inside = (idx[0] >= 0) & (idx[0] < shape[0])
    for k in (1, 2):
        inside = inside & (idx[k] >= 0) & (idx[k] < shape[k])
    flat = (idx[0] * shape[1] + idx[1]) * shape[2] + idx[2]
    return t, jnp.where(inside, flat, 0), inside


def _accumulate(alpha_field, origin, dirs, step, n_samples, outside=1.0, wfeat=None, vfeat=None, chunk=16):
    """Front-to-back compositing without materialising per-sample arrays.

    Marches ``chunk`` samples at a time under ``lax.scan`` (the chunk's products unrolled, so XLA fuses them)
    and returns ``depth = sum_j w_j t_j``, ``opacity = sum_j w_j``, ``sum_j w_j wfeat_j`` (C,) and
    ``sum_j T_j vfeat_j`` (C',) per ray, with ``w_j = T_j alpha_j``. The fields are padded with one voxel of
    ``outside`` (features 0) and the indices clipped, so that every lookup is one in-bounds row gather.
    """
    lead = dirs.shape[:-1]
    dtype = dirs.dtype
    chans = [alpha_field[..., None]]
    for f in (wfeat, vfeat):
        if f is not None:
            chans.append(f.astype(alpha_field.dtype))
    table = jnp.concatenate(chans, axis=-1)
    pad_val = jnp.zeros(table.shape[-1], table.dtype).at[0].set(outside)
    table = jnp.pad(table, ((1, 1), (1, 1), (1, 1), (0, 0)))
    border = jnp.pad(jnp.zeros(alpha_field.shape, bool), 1, constant_values=True)
    table = jnp.where(border[..., None], pad_val, table)
    n = table.shape[:3]
    rows = table.reshape(-1, table.shape[-1])
    cw = 0 if wfeat is None else wfeat.shape[-1]
    cv = 0 if vfeat is None else vfeat.shape[-1]
    n_chunks = -(-n_samples // chunk)
    dnums = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    # Padded-grid coordinates, one axis at a time: the (..., chunk) index arithmetic then vectorises, where an
    # interleaved (..., chunk, 3) position array made the fused gather about 5x slower.
    o = [origin[k] + 1.0 for k in range(3)]
    d = [dirs[..., k, None] for k in range(3)]

    def body(carry, ci):
        T, D, A, W, V = carry
        j = ci * chunk + jnp.arange(chunk)
        t = (j.astype(dtype) + 0.5) * step
        idx = [jnp.clip(jnp.floor(o[k] + d[k] * t), 0, n[k] - 1).astype(jnp.int32) for k in range(3)]
        flat = (idx[0] * n[1] + idx[1]) * n[2] + idx[2]
        vals = jax.lax.gather(rows, flat.reshape(-1, 1), dnums, (1, rows.shape[-1]), mode="promise_in_bounds")
        vals = vals.reshape(*flat.shape, -1)
        if n_samples % chunk:
            vals = jnp.where((j < n_samples)[:, None], vals, 0.0)
        for k in range(chunk):
            a = vals[..., k, 0]
            w = T * a
            D, A = D + w * t[k], A + w
            if cw:
                W = W + w[..., None] * vals[..., k, 1:1 + cw]
            if cv:
                V = V + T[..., None] * vals[..., k, 1 + cw:]
            T = T * (1.0 - a)
        return (T, D, A, W, V), None

    z = jnp.zeros(lead, dtype)
    init = (z + 1, z, z, jnp.zeros((*lead, cw), dtype), jnp.zeros((*lead, cv), dtype))
    (_, D, A, W, V), _ = jax.lax.scan(body, init, jnp.arange(n_chunks))
    return D, A, W, V


def _composite(alpha):
    """Exclusive transmittance ``T_j = prod_{i<j}(1 - alpha_i)`` along the last axis, and ``w = T alpha``."""
    T = jnp.cumprod(1.0 - alpha, axis=-1)
    T = jnp.concatenate([jnp.ones_like(T[..., :1]), T[..., :-1]], axis=-1)
    return T, T * alpha


def _validate_cast(prob_field, origin, dirs, step, n_samples):
    prob_field = as_array(prob_field, "prob_field", ndim=3)
    if min(prob_field.shape) < 1:
        raise ValueError(f"prob_field must be non-empty, got shape {prob_field.shape}")
    dirs = as_array(dirs, "dirs", finite=True)
    if dirs.ndim < 1 or dirs.shape[-1] != 3:
        raise ValueError(f"dirs must have a trailing dimension of 3, got shape {dirs.shape}")
    step = check_positive(step, "step")
    n_samples = check_int(n_samples, "n_samples", min_value=1)
    origin = check_pose(origin, prob_field.shape, "origin")
    return prob_field, origin, dirs, step, n_samples


@cites(ACTPANO)
def raycast(prob_field: Float[Array, "X Y Z"], origin: Float[Array, " 3"], dirs: Float[Array, "... 3"], *,
            step: float, n_samples: int, outside: float = 1.0) -> RayResult:
    """March rays ``origin + t dirs`` through a probability field with nearest-voxel lookup (module docstring).

    Samples at ``t_j = (j + 0.5) delta``, ``alpha_j = p[floor(origin + t_j d)]`` (``outside`` beyond the grid),
    ``T_j = prod_{i<j} (1 - alpha_i)``, ``w_j = T_j alpha_j``, ``D = sum_j w_j t_j``, ``A = sum_j w_j``. For a
    binary field ``D`` is the distance of the first sample inside an occupied voxel, an over-estimate of the true
    distance by less than ``delta``. The compositing is the standard front-to-back volume rendering that
    ActPano3D's renders rest on (the paper is known only through its abstract; the sampling scheme is **[chosen]**).
    jit/vmap/grad-able in ``prob_field``.

    Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026;
    authors and arXiv id unknown, abstract only).

    Args:
      prob_field: ``(X, Y, Z)`` float array, the per-voxel occupancy probability ``alpha`` in [0, 1] (a binary
        field gives first-hit depth).
      origin: ``(3,)`` float array, the ray origin in voxel coordinates, inside the grid.
      dirs: ``(..., 3)`` float array of ray directions (unit vectors for ``D`` to be a distance).
      step: positive float, the sample spacing ``delta``.
      n_samples: int >= 1, the number of samples ``S`` per ray.
      outside: float, the ``alpha`` of samples outside the grid (1: the outside is occupied).

    Returns:
      A :class:`RayResult`: ``alpha``, ``T``, ``weights`` of shape ``(..., S)``; ``depth``, ``opacity`` and
      ``first_hit`` of shape ``(...)``; ``t`` of shape ``(S,)``.

    Raises:
      TypeError: ``prob_field``, ``dirs`` or ``origin`` is not a float array, or ``n_samples`` is not an int.
      ValueError: ``prob_field`` not 3-d or empty; ``dirs`` without a trailing axis of 3 or not finite; ``step``
        not positive; ``n_samples < 1``; ``origin`` not finite or outside the grid.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.generative.active_scene import raycast
      >>> field = jnp.zeros((16, 16, 16)).at[10:].set(1.0)  # a wall at x >= 10
      >>> r = raycast(field, jnp.array([4.5, 8.5, 8.5]), jnp.array([[1.0, 0.0, 0.0]]), step=0.5, n_samples=40)
      >>> float(r.depth[0]), float(r.opacity[0]), int(r.first_hit[0])  # true distance 5.5, over by < 0.5
      (5.75, 1.0, 11)
    """
    prob_field, origin, dirs, step, n_samples = _validate_cast(prob_field, origin, dirs, step, n_samples)
    return _raycast(prob_field, origin, dirs, step, n_samples, outside)


@functools.partial(jax.jit, static_argnums=(4,))
def _raycast(prob_field, origin, dirs, step, n_samples, outside):
    t, flat, inside = _march(prob_field.shape, origin, dirs, step, n_samples)
    alpha = jnp.where(inside, prob_field.ravel()[flat], jnp.asarray(outside, prob_field.dtype))
    T, w = _composite(alpha)
    hit = alpha >= 0.5
    first = jnp.where(jnp.any(hit, -1), jnp.argmax(hit, -1), n_samples)
    return RayResult(t, alpha, T, w, jnp.sum(w * t, -1), jnp.sum(w, -1), first)


@cites(ACTPANO)
def raycast_depth(prob_field: Float[Array, "X Y Z"], origin: Float[Array, " 3"], dirs: Float[Array, "... 3"], *,
                  step: float, n_samples: int, outside: float = 1.0) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Expected depth ``D`` and opacity ``A`` of :func:`raycast` without the per-sample arrays.

    The samples are composited in chunks inside a ``lax.scan`` (about 3x faster on CPU than :func:`raycast`, and
    memory independent of ``S``); the result equals :func:`raycast`'s ``depth`` and ``opacity`` up to rounding.

    Args:
      prob_field: ``(X, Y, Z)`` float array of occupancy probabilities in [0, 1].
      origin: ``(3,)`` float array, the ray origin in voxel coordinates, inside the grid.
      dirs: ``(..., 3)`` float array of ray directions.
      step: positive float, the sample spacing ``delta``.
      n_samples: int >= 1, the number of samples per ray.
      outside: float, the ``alpha`` of samples outside the grid.

    Returns:
      ``(depth, opacity)``, two float arrays of shape ``(...)``.

    Raises:
      TypeError: as :func:`raycast`.
      ValueError: as :func:`raycast`.
    """
    prob_field, origin, dirs, step, n_samples = _validate_cast(prob_field, origin, dirs, step, n_samples)
    return _raycast_depth(prob_field, origin, dirs, step, n_samples, outside)


@functools.partial(jax.jit, static_argnums=(4,))
def _raycast_depth(prob_field, origin, dirs, step, n_samples, outside):
    D, A, _, _ = _accumulate(prob_field, origin, dirs, step, n_samples, outside)
    return D, A
