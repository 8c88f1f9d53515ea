"""Plain NumPy reference implementations of ActPano3D's ray casting and Gaussian compositing (public: the tests
and ``bench/_generative_scene.py`` compare against them).

``raycast_numpy`` is the same panoramic ray casting as :func:`~.raycast.raycast`
written as vectorised NumPy over rays and samples; ``render_gaussians_numpy`` is the Gaussian compositing of
:func:`~.splat.render_gaussians`, one ray at a time.
"""

from __future__ import annotations

import numpy as np


def raycast_numpy(prob_field, origin, dirs, step, n_samples, outside=1.0):
    """Return ``(depth, opacity, T)`` of the sample-based ray casting (see :mod:`.raycast`)."""
    p = np.asarray(prob_field)
    dirs = np.asarray(dirs)
    t = (np.arange(n_samples, dtype=dirs.dtype) + 0.5) * step
    pts = np.asarray(origin, dirs.dtype) + dirs[..., None, :] * t[:, None]
    idx = np.floor(pts).astype(np.int64)
    inside = np.all((idx >= 0) & (idx < np.array(p.shape)), axis=-1)
    idx = np.where(inside[..., None], idx, 0)
    alpha = np.where(inside, p[idx[..., 0], idx[..., 1], idx[..., 2]], outside).astype(dirs.dtype)
    trans = np.cumprod(1.0 - alpha, axis=-1)
    T = np.concatenate([np.ones_like(trans[..., :1]), trans[..., :-1]], axis=-1)
    w = T * alpha
    return (w * t).sum(-1), w.sum(-1), T


def render_gaussians_numpy(mean, scale, opacity, color, origin, dirs):
    """Front-to-back compositing of isotropic Gaussians along each ray, sorted by closest approach ``t*``."""
    mean, dirs = np.asarray(mean, float), np.asarray(dirs, float).reshape(-1, 3)
    o = np.asarray(origin, float)
    depth, col, acc = np.zeros(len(dirs)), np.zeros((len(dirs), 3)), np.zeros(len(dirs))
    for r, d in enumerate(dirs):
        ts = (mean - o) @ d
        q = np.sum((mean - o - ts[:, None] * d) ** 2, axis=-1)
        a = np.where(ts > 0, np.asarray(opacity) * np.exp(-q / (2 * np.asarray(scale) ** 2)), 0.0)
        T = 1.0
        for k in np.argsort(np.where(ts > 0, ts, np.inf), kind="stable"):
            if ts[k] <= 0:
                break
            depth[r] += T * a[k] * ts[k]
            col[r] += T * a[k] * np.asarray(color)[k]
            acc[r] += T * a[k]
            T *= 1 - a[k]
    return depth, col, acc
