r"""The view utility of ActPano3D and the choice of the next view.

Paper: "ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration" (2026); only the
abstract was retrievable (no authors, arXiv id or code), so the method is a **[chosen]** mechanism-preserving
reconstruction. Prior work: visibility-weighted
information gain (Isler et al. 2016).

Utility of a candidate ``a`` (rays through the memory, unknown cells at ``p = 0.5``, ``T`` the transmittance)::

    U_exp  = sum_r omega_r sum_j T_j 1[w_j = 0] h        (visible unknown volume)
    U_rep  = sum_r omega_r sum_j T_j alpha_j (1 - kappa_j) (visible uncertain surface)
    U_info = sum_r omega_r sum_j T_j H(p_j),  H(p) = -p ln p - (1-p) ln(1-p)
    U_cost = |a - a_current| / G
    U = w_exp U_exp + w_rep U_rep + w_info U_info - w_cost U_cost   (each term / its max over candidates)

with weights (1, 0.2, 0.5, 0.1) in expansion mode and (0.2, 1, 0.5, 0.1) in refinement mode.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool, Float, Int
from jaxlab.core.validation import as_array, value_check
from jaxlab.generative.active_scene.config import (
    ActiveConfig,
    _check_cfg,
    _dirs,
)
from jaxlab.generative.active_scene.memory import (
    SceneMemory,
    _check_memory,
    confidence,
)
from jaxlab.generative.active_scene.papers import ACTPANO
from jaxlab.generative.active_scene.raycast import (
    _accumulate,
    pixel_solid_angle_weights,
)
from jaxlab.generative.active_scene.room import (
    check_pose,
)

__all__ = [
    "ray_utility_terms",
    "select_next_view",
    "utility_terms",
]


def _entropy(p):
    return -jax.scipy.special.xlogy(p, p) - jax.scipy.special.xlogy(1 - p, 1 - p)


@cites(ACTPANO)
def ray_utility_terms(memory: SceneMemory, origin: Float[Array, " 3"], dirs: Float[Array, "... 3"], *,
                      step: float, n_samples: int, cfg: ActiveConfig | None = None):
    """Per-ray ``(exp, rep, info)`` sums ``sum_j T_j 1[w_j = 0]``, ``sum_j T_j alpha_j (1 - kappa_j)`` and
    ``sum_j T_j H(p_j)`` through the memory (unknown cells at p = 0.5, outside the grid occupied with
    ``kappa = 1`` and ``H = 0``)."""
    cfg = cfg or ActiveConfig()
    p = jnp.where(memory.weight > 0, jax.nn.sigmoid(memory.logodds), 0.5)
    wfeat = (1 - confidence(memory, cfg))[..., None]
    vfeat = jnp.stack([(memory.weight == 0).astype(p.dtype), _entropy(p)], axis=-1)
    _, _, rep, vis = _accumulate(p, origin, dirs, step, n_samples, 1.0, wfeat, vfeat)
    return vis[..., 0], rep[..., 0], vis[..., 1]


def _check_candidates(candidates, G):
    candidates = as_array(candidates, "candidates", ndim=2)
    if candidates.shape[0] == 0:
        raise ValueError("candidates must be a non-empty (n, 3) array of poses, got an empty set")
    if candidates.shape[1] != 3:
        raise ValueError(f"candidates must have shape (n, 3), got {candidates.shape}")
    return value_check(candidates, lambda c: ~jnp.isfinite(c) | (c < 0) | (c >= G),
                       f"candidates must lie inside the grid [0, {G})^3")


@cites(ACTPANO)
def utility_terms(memory: SceneMemory, candidates: Float[Array, "n 3"], current: Float[Array, " 3"],
                  cfg: ActiveConfig | None = None) -> dict[str, Array]:
    """Unnormalised utility terms of every candidate (module docstring): ``{"exp", "rep", "info", "cost"}``,
    each of shape (n,). Candidates are scored with ``vmap`` (in chunks of 16 to bound memory)."""
    cfg = _check_cfg(cfg)
    memory = _check_memory(memory)
    G = memory.logodds.shape[0]
    candidates = _check_candidates(candidates, G)
    current = check_pose(current, (G, G, G), "current")
    return _utility_terms(memory, candidates, current, cfg)


@functools.partial(jax.jit, static_argnames="cfg")
def _utility_terms(memory, candidates, current, cfg):
    G = memory.logodds.shape[0]
    dtype = memory.logodds.dtype
    dirs = _dirs(cfg, dtype)
    omega = pixel_solid_angle_weights(cfg.pano_h, dtype)[:, None] / cfg.pano_w
    S = cfg.samples(G)

    def one(a):
        e, r, i = ray_utility_terms(memory, a, dirs, step=cfg.step, n_samples=S, cfg=cfg)
        return jnp.stack([jnp.sum(omega * e), jnp.sum(omega * r), jnp.sum(omega * i)])

    terms = jax.lax.map(one, candidates.astype(dtype), batch_size=16)
    cost = jnp.linalg.norm(candidates - current, axis=-1) / G
    return {"exp": terms[:, 0], "rep": terms[:, 1], "info": terms[:, 2], "cost": cost}


def _normalise(x, valid):
    m = jnp.max(jnp.where(valid, x, 0.0))
    return jnp.where(m > 0, x / jnp.where(m > 0, m, 1.0), 0.0)


@cites(ACTPANO)
def select_next_view(memory: SceneMemory, candidates: Float[Array, "n 3"], current: Float[Array, " 3"],
                     mode: Int[Array, ""], cfg: ActiveConfig | None = None,
                     valid: Bool[Array, " n"] | None = None) -> tuple[Int[Array, ""], Float[Array, " n"]]:
    """Index of the best candidate and every candidate's score
    ``U = w_exp U_exp + w_rep U_rep + w_info U_info - w_cost U_cost`` (terms normalised by their max over
    valid candidates); ``mode`` 0 = expansion, 1 = refinement; invalid candidates score ``-inf``."""
    cfg = _check_cfg(cfg)
    terms = utility_terms(memory, candidates, current, cfg)
    valid = jnp.ones(candidates.shape[0], bool) if valid is None else jnp.asarray(valid, bool)
    w = jnp.where(jnp.asarray(mode) == 0, jnp.asarray(cfg.w_expansion), jnp.asarray(cfg.w_refinement))
    n = {k: _normalise(v, valid) for k, v in terms.items()}
    score = w[0] * n["exp"] + w[1] * n["rep"] + w[2] * n["info"] - w[3] * n["cost"]
    score = jnp.where(valid, score, -jnp.inf)
    return jnp.argmax(score), score
