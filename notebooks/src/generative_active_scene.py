# %% [markdown]
# # ActPano3D: where to generate the next panorama
#
# ActPano3D (2026; abstract only) builds a 3D scene from generated panoramas and argues that the key question
# is *where* to generate next. It keeps a scene memory, scores candidate viewpoints by the expected utility of
# exploring unknown space, repairing uncertain geometry and improving the world model, generates a panorama
# there (content already in memory is rendered from it, the rest is generated), fuses it with
# reliability weights, and finally fits a 3D Gaussian-splat scene. The paper's text was not available, so
# everything below is our **reconstruction** from the abstract (each mechanism it names is rebuilt from prior
# work: OctoMap-style log-odds memory, weighted volumetric fusion, visibility-weighted information gain), with a
# *simulated* generator: ground truth plus depth/colour noise and 4x4-block depth hallucinations.
#
# Memory: per-voxel log-odds $\ell$, reliability weight $w$, colour; confidence
# $\kappa = |2p-1|\min(1, w/3)$. Utility of a candidate $a$, with transmittance $T_j$ through the memory:
#
# $$U_{exp} = \sum_r \omega_r \sum_j T_j 1[w_j = 0],\quad U_{rep} = \sum_r \omega_r \sum_j T_j \alpha_j (1-\kappa_j),
# \quad U_{info} = \sum_r \omega_r \sum_j T_j H(p_j),\quad U_{cost} = \|a - a_{cur}\|/G .$$
#
# Claims (the abstract's two qualitative statements, with metrics and thresholds of our choosing): (4) the
# utility controller reaches higher coverage and fewer holes than a circular trajectory and random free poses;
# (5) reliability-aware fusion leaves fewer floaters than fusing every pixel with $r = 1$ under hallucinations
# ($q_{hall} = 0.1$). Part 1, small scale: 3 rooms of $32^3$ voxels, $32 \times 64$ panoramas, 8 views, 16
# held-out poses per room. Part 2: claim 4 where the view budget is scarce ($24^3$ rooms with 8 boxes,
# $64 \times 128$ panoramas, 6 views).

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from jaxlab.generative import active_scene as A
from jaxlab.generative.active_scene import fit_gaussians, gaussians_from_memory, render_gaussians

t_start = time.perf_counter()
N_ROOMS, N_VIEWS = 3, 8
cfg = A.ActiveConfig(q_hall=0.1)
keys = jax.random.split(jax.random.key(0), N_ROOMS)
scenes = jax.vmap(A.make_room_scene)(keys)
tests = jax.vmap(lambda k, s: A.sample_free_poses(k, s, 16))(jax.random.split(jax.random.key(1), N_ROOMS), scenes)


def explorer(cfg):
    """All rooms at once (vmap); the policy is a traced index, so one compilation serves all three."""

    def one(key, scene, tp, policy):
        state, info = A.explore(key, scene, N_VIEWS, policy, cfg)
        return state.memory, info, A.evaluate(state.memory, scene, tp, cfg)

    return jax.jit(jax.vmap(one, in_axes=(0, 0, 0, None)))


run, run_plain = explorer(cfg), explorer(cfg._replace(reliability_aware=False))
room_keys = jax.random.split(jax.random.key(2), N_ROOMS)
results = {p: run(room_keys, scenes, tests, jnp.int32(i)) for i, p in enumerate(A.POLICIES)}
results["circle, r = 1"] = run_plain(room_keys, scenes, tests, jnp.int32(A.POLICIES.index("circle")))
print(f"explored {len(results)} x {N_ROOMS} rooms in {time.perf_counter() - t_start:.1f} s")
print(f"{'policy':14s} {'coverage':>16s} {'hole ratio':>16s} {'floaters':>16s} {'PSNR':>6s} {'AbsRel':>7s}")
for name, (_, _, ev) in results.items():
    row = {k: np.asarray(v) for k, v in ev.items()}
    print(f"{name:14s} {row['coverage'].mean():8.4f} +- {row['coverage'].std():.4f} "
          f"{row['hole_ratio'].mean():8.3f} +- {row['hole_ratio'].std():.3f} "
          f"{row['floater_ratio'].mean():8.3f} +- {row['floater_ratio'].std():.3f} "
          f"{row['psnr'].mean():6.2f} {np.nanmean(row['depth_absrel']):7.3f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.6))
views = np.arange(1, N_VIEWS + 1)
for name in A.POLICIES:
    cov = np.asarray(results[name][1].coverage)
    axes[0].errorbar(views, cov.mean(0), cov.std(0), label=name, capsize=2)
axes[0].set_xlabel("views")
axes[0].set_ylabel("coverage (confident GT surface)")
axes[0].legend()
names = list(results)
holes = [np.asarray(results[n][2]["hole_ratio"]) for n in names]
floaters = [np.asarray(results[n][2]["floater_ratio"]) for n in names]
axes[1].bar(range(len(names)), [h.mean() for h in holes], yerr=[h.std() for h in holes], capsize=3)
axes[1].set_xticks(range(len(names)), names, rotation=15)
axes[1].set_ylabel("hole ratio (held-out poses)")
axes[2].bar(range(len(names)), [f.mean() for f in floaters], yerr=[f.std() for f in floaters], capsize=3)
axes[2].set_xticks(range(len(names)), names, rotation=15)
axes[2].set_ylabel("floater ratio")
plt.tight_layout()
plt.show()

# %% [markdown]
# The last stage: one isotropic Gaussian per confident occupied voxel of room 0's active memory, fitted with
# Adam (150 steps of 128 random rays) to the memory's panoramas at the 8 visited poses, then rendered at a
# held-out pose.

# %%
t_splat = time.perf_counter()
memory0 = jax.tree_util.tree_map(lambda a: a[0], results["active"][0])
scene0 = jax.tree_util.tree_map(lambda a: a[0], scenes)
poses0 = results["active"][1].pose[0]
targets = jax.vmap(lambda p: A.render_memory(memory0, p, cfg))(poses0)
g0 = gaussians_from_memory(memory0, cfg, max_gaussians=1024)
g1, losses = fit_gaussians(jax.random.key(3), g0, (poses0, targets), 150, cfg=cfg, batch_rays=128)
pose = tests[0, 0]
dirs = A.pano_directions(cfg.pano_h, cfg.pano_w)
panels = {"ground truth": A.render_gt(scene0, pose, cfg), "memory": A.render_memory(memory0, pose, cfg),
          "Gaussians (init)": render_gaussians(g0, pose, dirs, ray_batch=2048),
          "Gaussians (fitted)": render_gaussians(g1, pose, dirs, ray_batch=2048)}
gt_col = panels["ground truth"].color
print(f"splat stage {time.perf_counter() - t_splat:.1f} s; {int(jnp.sum(g0.opacity > 0))} Gaussians, "
      f"loss {float(losses[:10].mean()):.4f} -> "
      f"{float(losses[-10:].mean()):.4f}")
fig, axes = plt.subplots(1, 4, figsize=(15, 2.6))
for ax, (name, r) in zip(axes, panels.items(), strict=True):
    ax.imshow(np.clip(np.asarray(r.color), 0, 1), origin="lower")
    ax.set_title(f"{name}: PSNR {float(A.psnr(r.color, gt_col)):.1f}, holes {float(jnp.mean(r.opacity < 0.5)):.2f}")
    ax.axis("off")
plt.tight_layout()
plt.show()

# %%
cov = {n: float(np.asarray(results[n][2]["coverage"]).mean()) for n in A.POLICIES}
hole = {n: float(np.asarray(results[n][2]["hole_ratio"]).mean()) for n in A.POLICIES}
fl_aware = float(np.asarray(results["circle"][2]["floater_ratio"]).mean())
fl_plain = float(np.asarray(results["circle, r = 1"][2]["floater_ratio"]).mean())
print(f"claim 4, part 1 (8 views, 32 x 64): coverage active {cov['active']:.4f} vs circle {cov['circle']:.4f}, "
      f"random {cov['random']:.4f}; holes active {hole['active']:.3f} vs {hole['circle']:.3f}, {hole['random']:.3f}")
print(f"claim 5 (reliability matters): floater ratio {fl_aware:.3f} (reliability-aware) vs {fl_plain:.3f} (r = 1)")
print(f"notebook body ran in {time.perf_counter() - t_start:.1f} s")

# %% [markdown]
# In part 1 claim 5 holds clearly, and the active policy does not beat the passive ones (random free poses end
# slightly ahead): coverage counts a ground-truth surface voxel only once the memory holds it *confidently*,
# which takes several reliable hits, and a $32 \times 64$ panorama puts less than one ray on a voxel 16 voxels
# away. Coverage is then bound by the total number of rays, wherever they are cast, and the exploration term
# saturates on "unknown" cells between the sparse rays.
#
# ## 2. Claim 4 where placement matters
#
# Denser panoramas ($64 \times 128$: several rays per surface voxel within ~12 voxels) make one view enough to
# make nearby surfaces confident; with only 6 views in a $24^3$ room with 8 boxes, the views are too few to see
# every occluded part, so *where* they go could decide the coverage (with 12 views every policy sees nearly
# everything: 0.56, 0.56, 0.54). The claim `active_scene:active_exploration_beats_passive` runs this on 10
# rooms and is registered NOT REPRODUCED: the coverage gain over the better baseline of each room is not
# significant (-0.002 +- 0.012); with a 2-voxel candidate clearance instead of 1 it was 0.029 +- 0.010, so the
# gain is of the order of what the candidate set alone changes in the passive baselines. Holes point the
# paper's way (0.12 against 0.21 and 0.22) but the paired reduction, 0.068 +- 0.035, is under 2 SE.

# %%
t_dense = time.perf_counter()
cfg_d = A.ActiveConfig(pano_h=64, pano_w=128, cand_clearance=1)
scenes_d = jax.vmap(lambda k: A.make_room_scene(k, 24, 8))(jax.random.split(jax.random.key(0), N_ROOMS))
tests_d = jax.vmap(lambda k, s: A.sample_free_poses(k, s, 8))(jax.random.split(jax.random.key(1), N_ROOMS),
                                                              scenes_d)


def one_dense(key, scene, tp, policy):
    state, info = A.explore(key, scene, 6, policy, cfg_d)
    return info.coverage, A.evaluate(state.memory, scene, tp, cfg_d)


run_d = jax.jit(jax.vmap(one_dense, in_axes=(0, 0, 0, None)))
dense = {p: run_d(room_keys, scenes_d, tests_d, jnp.int32(i)) for i, p in enumerate(A.POLICIES)}
cov_d = {p: np.asarray(dense[p][1]["coverage"]) for p in A.POLICIES}
hole_d = {p: np.asarray(dense[p][1]["hole_ratio"]) for p in A.POLICIES}
for p in A.POLICIES:
    print(f"{p:8s} coverage {cov_d[p].mean():.4f} (rooms {np.round(cov_d[p], 3)}), holes {hole_d[p].mean():.3f}")
gain_d = cov_d["active"] - np.maximum(cov_d["circle"], cov_d["random"])
print(f"per-room coverage gain over the better baseline {np.round(gain_d, 3)}")
print(f"dense part {time.perf_counter() - t_dense:.1f} s")
fig, ax = plt.subplots(figsize=(5, 3.4))
for p in A.POLICIES:
    c = np.asarray(dense[p][0])
    ax.errorbar(np.arange(1, 7), c.mean(0), c.std(0), label=p, capsize=2)
ax.set_xlabel("views")
ax.set_ylabel("coverage (confident GT surface)")
ax.set_title("24^3 rooms, 8 boxes, 64 x 128 panoramas")
ax.legend()
plt.show()

# %% [markdown]
# In this regime the utility controller's coverage is level with the circle's (and its holes fewer, within the
# rooms' spread): the abstract's "improves scene coverage" does not reproduce robustly in our reconstruction.
# The paper's own utility and generator may differ (its text was not available).

# %%
assert fl_aware < fl_plain, (fl_aware, fl_plain)
