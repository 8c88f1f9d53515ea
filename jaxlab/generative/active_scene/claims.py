"""Claims of ActPano3D's small-scale core (area ``active_scene``): ray
casting closed forms (cube room, homogeneous slab, single wall), the visible entropy of a ray through unknown
cells, the three-hit fusion arithmetic, active vs passive exploration over 10 seeded rooms, and the effect of
reliability-aware fusion on floaters. The paper's text was not available: every mechanism is a **[chosen]**
reconstruction from its abstract, with a simulated panorama generator (see :mod:`jaxlab.generative.active_scene`).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.core.verification import by_precision
from jaxlab.generative import active_scene as A
from jaxlab.generative.active_scene.papers import ACTPANO
from jaxlab.generative.active_scene.raycast import default_n_samples, pano_directions, pixel_solid_angle_weights

TITLE = "ActPano3D: panoramic ray casting, reliability-aware fusion and utility-driven exploration"
MODULES = ("jaxlab.generative.active_scene",)

_AREA = "active_scene"
N_ROOMS = 10


def _cube_room(G):
    occ = np.zeros((G, G, G))
    occ[[0, -1]] = 1
    occ[:, [0, -1]] = 1
    occ[:, :, [0, -1]] = 1
    return jnp.asarray(occ)


@claim(area=_AREA, paper=ACTPANO)
def cube_room_mean_panoramic_depth() -> ClaimResult:
    """(d).4-1: G = 64, walls = boundary voxels, camera at (32, 32, 32) (a = 31), delta = 0.5, 64 x 128 panorama:
    every depth lies in [a/|d|_inf, a/|d|_inf + delta), and the cos-weighted mean depth equals that of an independent
    float64 numpy march written here (samples t_j = (j + 1/2) delta, the first whose voxel floor(o + t_j d) is a
    wall; 38.1016, against 1.22137 a = 37.862 for the exact geometry); measured = the mean."""
    dirs = pano_directions(64, 128)
    n_samples = default_n_samples(64, 0.5)
    r = A.raycast(_cube_room(64), jnp.array([32.0, 32.0, 32.0]), dirs, step=0.5, n_samples=n_samples)
    exact = 31.0 / jnp.max(jnp.abs(dirs), -1)
    err = np.asarray(r.depth - exact)
    w = np.asarray(pixel_solid_angle_weights(64), dtype=np.float64)
    d, t = np.asarray(dirs, dtype=np.float64), (np.arange(n_samples) + 0.5) * 0.5
    voxel = np.floor(32.0 + t[None, None, :, None] * d[:, :, None, :])
    reference = t[np.argmax(np.any((voxel <= 0) | (voxel >= 63), axis=-1), axis=-1)]
    mean, mean_ref = float(np.sum(w * np.asarray(r.depth, np.float64).mean(1))), float(np.sum(w * reference.mean(1)))
    mean_exact = float(np.sum(w * np.asarray(exact, np.float64).mean(1)))
    ok = err.min() >= 0 and err.max() < 0.5
    # float32: depths are sample positions t_j (exact in float32); the weighted mean sums 8192 terms ~ 40:
    # <= log2(8192) eps32 relative ~ 1.6e-6, so 1e-5 relative
    return ClaimResult.close(mean if ok else math.nan, mean_ref, rtol=by_precision(1e-12, 1e-5),
                             details=f"over-estimate in [{err.min():.4f}, {err.max():.4f}] (< delta = 0.5); "
                                     f"exact-geometry mean on this panorama {mean_exact:.4f} (1.22137 a = 37.862)")


@claim(area=_AREA, paper=ACTPANO)
def homogeneous_slab_transmittance() -> ClaimResult:
    """Issue 14(d): a slab of constant occupancy c = 0.3 crossed by m = 8 samples transmits (1 - c)^m and the
    expected depth is sum_k c (1 - c)^k t_k; measured = max relative error over T, opacity and depth."""
    c, step = 0.3, 0.5
    field = np.zeros((16, 16, 16))
    field[6:10] = c
    r = A.raycast(jnp.asarray(field), jnp.array([2.25, 8.5, 8.5]), jnp.array([[1.0, 0, 0]]), step=step,
                  n_samples=20, outside=0.0)
    t = (np.arange(20) + 0.5) * step
    inside = (2.25 + t >= 6) & (2.25 + t < 10)
    k = np.cumsum(inside) - inside
    want_T, want_a = (1 - c) ** k, 1 - (1 - c) ** inside.sum()
    want_d = np.sum(inside * c * (1 - c) ** k * t)
    err = max(np.max(np.abs(np.asarray(r.T[0]) - want_T) / want_T), abs(float(r.opacity[0]) - want_a) / want_a,
              abs(float(r.depth[0]) - want_d) / want_d)
    # float32: T_k is a running product of k <= m = 8 factors (1 - c), each rounded (<= eps32/2) and carrying the
    # rounding of c (<= eps32/2 relative); opacity and depth inherit that order: <= m eps32 = 8 * 2^-23 ~ 9.5e-7
    bound = by_precision(1e-12, 8 * 2.0**-23)
    return ClaimResult.at_most(err, bound, details=f"opacity {float(r.opacity[0]):.6f} = 1 - 0.7^8")


@claim(area=_AREA, paper=ACTPANO)
def single_wall_depth() -> ClaimResult:
    """Issue 14(d): a wall x >= 20 seen from x = 4.5 at 500 random directions hitting it inside the grid: the depth
    lies in [a/d_x, a/d_x + delta) with a = 15.5; measured = max over rays of (D - a/d_x) / delta."""
    field = np.zeros((48, 48, 48))
    field[20:] = 1.0
    rng = np.random.default_rng(0)
    d = rng.normal(size=(4000, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    reach = 16.5 / np.maximum(d[:, 0], 1e-9)
    d = d[(d[:, 0] > 0.2) & (np.abs(d[:, 1:]).max(axis=1) * reach < 23)][:500]  # hits the wall inside the grid
    D, _ = A.raycast_depth(jnp.asarray(field), jnp.array([4.5, 24.0, 24.0]), jnp.asarray(d), step=0.25,
                           n_samples=400, outside=0.0)
    rel = (np.asarray(D) - 15.5 / d[:, 0]) / 0.25
    return ClaimResult.at_most(rel.max() if rel.min() >= 0 else math.nan, 1.0,
                               details=f"(D - a/d_x)/delta in [{rel.min():.3f}, {rel.max():.3f}]")


@claim(area=_AREA, paper=ACTPANO)
def visible_entropy_of_unknown_cells() -> ClaimResult:
    """(d).4-2: a ray through n = 10 unknown cells (p = 0.5; one sample per cell) then out of the grid has
    visible entropy sum_{i<n} 0.5^i ln 2 = ln 2 (2 - 2^(1-n)) = 1.38494."""
    m = A.init_memory(10)
    _, _, info = A.ray_utility_terms(m, jnp.array([0.25, 5.5, 5.5]), jnp.array([[1.0, 0, 0]]), step=1.0,
                                     n_samples=12)
    # float32: H(1/2) = -2 (1/2) ln(1/2) is exact but for log's <= 1 ulp (eps32), the weights T_i = 2^-i are exact,
    # then n - 1 = 9 additions of positive terms (<= eps32/2 each): relative error <= 5.5 eps32 ~ 6.6e-7
    rtol = by_precision(1e-12, 5.5 * 2.0**-23)
    return ClaimResult.close(info[0], math.log(2) * (2 - 2.0**-9), rtol=rtol, details="closed form 1.384937")


@claim(area=_AREA, paper=ACTPANO)
def three_hit_fusion_arithmetic() -> ClaimResult:
    """(d).4-3: three hits on one cell with r = 1, 0.5, 0.25 give l = 1.75 l_occ = 1.4828 (p = 0.815) and the
    reliability-weighted colour average; measured = l."""
    m = A.init_memory(16)
    cols = np.array([[0.9, 0.1, 0.2], [0.3, 0.6, 0.0], [0.1, 0.1, 1.0]])
    rs = [1.0, 0.5, 0.25]
    for r, c in zip(rs, cols, strict=True):
        m = A.fuse_rays(m, jnp.array([2.5, 8.5, 8.5]), jnp.array([[1.0, 0, 0]]), jnp.array([8.25]),
                        jnp.asarray(c)[None], jnp.array([r]))
    col_err = float(np.max(np.abs(np.asarray(m.color[10, 8, 8]) - np.average(cols, axis=0, weights=rs))))
    p = float(jax.nn.sigmoid(m.logodds[10, 8, 8]))
    # float32: l_occ rounded once, the products r l_occ are exact (r a power of 2), then 2 additions: three roundings
    # of <= eps32/2 each, relative error <= 1.5 eps32 ~ 1.8e-7
    rtol = by_precision(1e-12, 1.5 * 2.0**-23)
    return ClaimResult.close(m.logodds[10, 8, 8], 1.75 * math.log(7 / 3), rtol=rtol,
                             details=f"p = {p:.5f}; colour error vs sum r_i c_i / sum r_i: {col_err:.1e}")


def _policy_metrics(policy: str, cfg: A.ActiveConfig, n_views: int = 8, G: int = 32, n_boxes: int = 6,
                    n_test: int = 16):
    keys = jax.random.split(jax.random.key(0), N_ROOMS)
    scenes = jax.vmap(lambda k: A.make_room_scene(k, G, n_boxes))(keys)
    tests = jax.vmap(lambda k, s: A.sample_free_poses(k, s, n_test))(jax.random.split(jax.random.key(1), N_ROOMS),
                                                                     scenes)

    def one(key, scene, tp):
        state, _ = A.explore(key, scene, n_views, policy, cfg)
        return A.evaluate(state.memory, scene, tp, cfg)

    out = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(2), N_ROOMS), scenes, tests)
    return {k: np.asarray(v) for k, v in out.items()}


def _scarce_view_details(res) -> str:
    return "; ".join(f"{p}: coverage {res[p]['coverage'].mean():.4f} +- {mean_and_se(res[p]['coverage'])[1]:.4f}, "
                     f"holes {res[p]['hole_ratio'].mean():.3f} +- {mean_and_se(res[p]['hole_ratio'])[1]:.3f}"
                     for p in res)


@claim(area=_AREA, paper=ACTPANO, quick=False, expected="not reproduced")
def active_exploration_beats_passive() -> ClaimResult:
    """(d).4-4, coverage half of the paper's "ActPano3D improves scene coverage, reduces rendering holes": NOT
    REPRODUCED. Where the view budget is scarce (24^3 rooms with 8 boxes, 64 x 128 panoramas, 6 views, candidate
    clearance 1 voxel, 10 seeded rooms, same generator noise for every policy), the utility controller's coverage
    does not exceed the better of the circular trajectory and random free poses. Per room i,
    ``d_i = coverage_active - max(coverage_circle, coverage_random)``; check: ``mean d - 2 SE(d) <= 0`` (no
    significant gain; SE over the rooms). Measured (float64): active 0.427 +- 0.019, circle 0.428 +- 0.023,
    random 0.392 +- 0.019; d = -0.002 +- 0.012 (float32 rooms: -0.000 +- 0.009).

    What was tried. (1) The original budget (32^3 rooms, 6 boxes, 32 x 64 panoramas, 8 views): active 0.071 +-
    0.004, circle 0.072 +- 0.002, random 0.079 +- 0.005 (6 rooms): a 32 x 64 panorama puts less than one ray on a
    surface voxel 16 voxels away and coverage needs a confident cell (several reliable hits), so coverage is bound
    by the total number of rays wherever they are cast, and the exploration term saturates on unknown cells between
    the sparse rays. (2) 64 x 128 panoramas and 12 views (24^3, 8 boxes): every policy sees nearly everything
    (active 0.561, circle 0.557, random 0.543, 5 rooms). (3) 6 views, candidate clearance 2 voxels: active 0.427
    +- 0.030, circle 0.378 +- 0.022, random 0.395 +- 0.025, d = 0.029 +- 0.010 (10 float32 rooms; in float64 one
    room has no valid candidate); with clearance 1 (here) the circle, which may then pass closer to the boxes,
    catches up. Diagnosis: the coverage gain of the reconstructed utility is of the order of the changes that
    the candidate set alone makes to the passive baselines; it is not a robust effect. Holes (8 held-out poses
    per room) point the paper's way but are not significant either: active 0.120 +- 0.013, circle 0.210 +-
    0.035, random 0.215 +- 0.036; paired reduction against the better baseline 0.068 +- 0.035 (1.9 SE; float32
    rooms 0.058 +- 0.040).
    """
    cfg = A.ActiveConfig(pano_h=64, pano_w=128, cand_clearance=1)
    res = {p: _policy_metrics(p, cfg, n_views=6, G=24, n_boxes=8, n_test=8) for p in A.POLICIES}
    cov = {p: res[p]["coverage"] for p in res}
    gain, se = mean_and_se(cov["active"] - np.maximum(cov["circle"], cov["random"]))
    return ClaimResult.at_most(gain - 2 * se, 0.0, details=f"gain over the better baseline {gain:.4f} +- {se:.4f} "
                                                           f"(SE, {N_ROOMS} rooms); {_scarce_view_details(res)}")


@claim(area=_AREA, paper=ACTPANO, quick=False)
def reliability_aware_fusion_reduces_floaters() -> ClaimResult:
    """(d).4-5: with hallucinations q_hall = 0.1, fusing with uniform reliability (r = 1, no conflict
    down-weighting) leaves more floaters than reliability-aware fusion (circular trajectory, 8 views, 10 rooms);
    measured = floater ratio(uniform) - floater ratio(reliability-aware)."""
    aware = _policy_metrics("circle", A.ActiveConfig(q_hall=0.1))
    plain = _policy_metrics("circle", A.ActiveConfig(q_hall=0.1, reliability_aware=False))
    fa, fp = aware["floater_ratio"], plain["floater_ratio"]
    return ClaimResult.at_least(fp.mean() - fa.mean(), 0.0,
                                details=f"floaters: aware {fa.mean():.3f} +- {fa.std():.3f}, uniform {fp.mean():.3f} "
                                        f"+- {fp.std():.3f}; coverage aware {aware['coverage'].mean():.3f}, uniform "
                                        f"{plain['coverage'].mean():.3f}")
