# %% [markdown]
# # Annealed Langevin with composite scores: exact W2, the chained bound, and what the tuning rules cost
#
# Paper: Touron, Cardoso, Arbel, Rodrigues, *Theoretical guidelines for annealed Langevin dynamics in compositional
# simulation-based inference* (arXiv:2605.21253), with the composite scores of Geffner et al. (2209.14249) and
# Linhart et al. (2404.07593). Only the abstract of the paper was available: the bound (Dalalyan–Karagulyan per
# level, chained over levels) and the tuning rules R1–R2 (`jaxlab.sampling.langevin.bounds`) are reconstructed
# from the abstract.
#
# **Claim.** On the Gaussian toy `gaussian_toy` (d = 2, n = 10), for both bridging densities (Geffner's and Linhart's):
# the chained bound is above the exact W2 of annealed Langevin to the last bridging density, for every step size h
# below the stability cap and every number of steps per level k; a Monte Carlo run agrees with the exact
# propagation; and at equal target accuracy the rules need fewer total Langevin steps with Linhart's score.

# %%
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
import matplotlib.pyplot as plt
from jaxlab.sampling import annealed_langevin as al
from jaxlab.sampling.langevin.models import gaussian_toy

toy = gaussian_toy(jax.random.key(0), 10)
L = 25
ts = jnp.linspace(1.0, 1e-3, L)
INIT = (jnp.zeros(2), jnp.eye(2))
levels = {}
for kind in ("geffner", "linhart"):
    means, precs = al.bridging_gaussians(kind, ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
    m, M = al.level_constants(precs)
    levels[kind] = (means, precs, m, M, al.path_w2(means, precs, *INIT))
    print(kind, "min cap 2/(m+M):", float(al.stability_cap(m, M).min()), " path length sum W_l:", float(levels[kind][4].sum()))


# %% [markdown]
# Exact W2 (closed-form propagation of the Gaussian through every ULA step) and the chained bound, over a grid of constant h (as a fraction of the smallest stability cap) and k.

# %%
@jax.jit
def exact_and_bound(means, precs, m, M, W, h, k):
    hs, ks = jnp.full((L,), h), jnp.full((L,), k, dtype=jnp.int32)
    ms, Cs = al.ald_gaussian_moments((means, precs), hs, ks, *INIT)
    exact = al.w2_gaussian(ms[-1], Cs[-1], means[-1], jnp.linalg.inv(precs[-1]))
    return exact, al.ald_w2_bound(W, m, M, hs, ks, 2)

grid = jax.jit(jax.vmap(exact_and_bound, (None,) * 5 + (0, 0)))
fracs = np.geomspace(0.01, 0.95, 8)
k_values = np.array([1, 2, 5, 10, 20, 50, 100])
res = {}
for kind, lv in levels.items():
    cap = float(al.stability_cap(lv[2], lv[3]).min())
    hh, kk = np.meshgrid(fracs * cap, k_values, indexing="ij")
    e, b = grid(*lv, hh.ravel(), kk.ravel().astype(np.int32))
    res[kind] = (cap, np.asarray(e).reshape(hh.shape), np.asarray(b).reshape(hh.shape))
    print(kind, "min(bound - exact) over the grid:", float(np.min(res[kind][2] - res[kind][1])))

# %% [markdown]
# Monte Carlo check of a few settings: 20,000 particles, the score of each level's bridging density, W2 of the Gaussian fit of the particles.

# %%
j_h = 5  # the grid's h = 0.26 cap
def make_mc(kind):
    means, precs = levels[kind][:2]
    bridge = al.geffner_bridging_gaussian if kind == "geffner" else al.linhart_bridging_gaussian
    def score(theta, t):
        mean, prec = bridge(al.vp_alpha(t), toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
        return -prec @ (theta - mean)
    @jax.jit
    def mc_w2(h, k, key):
        x0 = jax.random.normal(jax.random.fold_in(key, 1), (20000, 2))
        out = al.annealed_langevin(key, x0, score, ts, jnp.full((L,), h), jnp.full((L,), k, dtype=jnp.int32))
        return al.w2_gaussian(out.mean(0), jnp.cov(out.T), means[-1], jnp.linalg.inv(precs[-1]))
    return mc_w2

mc = {}
for kind in levels:
    mc_w2 = make_mc(kind)
    mc[kind] = [(k, float(mc_w2(fracs[j_h] * res[kind][0], k, jax.random.key(k)))) for k in (1, 5, 20)]
mc

# %%
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
j5 = list(k_values).index(5)
i3 = j_h
for kind, color in (("geffner", "C0"), ("linhart", "C1")):
    cap, e, b = res[kind]
    axes[0].loglog(fracs * cap, e[:, j5], color=color, label=f"{kind}: exact W2")
    axes[0].loglog(fracs * cap, b[:, j5], color=color, ls="--", label=f"{kind}: bound")
    axes[1].loglog(k_values, e[i3], color=color, label=f"{kind}: exact W2")
    axes[1].loglog(k_values, b[i3], color=color, ls="--", label=f"{kind}: bound")
    ks_mc, w_mc = zip(*mc[kind])
    axes[1].plot(ks_mc, w_mc, "o", color=color, label=f"{kind}: Monte Carlo (h = 0.26 cap)")
axes[0].set(xlabel="step size h (k = 5)", ylabel="W2 to the last bridging density", title="in h")
axes[1].set(xlabel="steps per level k (h = 0.26 cap)", title="in k")
axes[0].legend(fontsize=7); axes[1].legend(fontsize=7)

targets = np.array([0.1, 0.2, 0.5, 1.0])
cost = {}
for kind, lv in levels.items():
    cost[kind] = [int(al.tune_ald(lv[4], lv[2], lv[3], 2, 0.0, float(t), n=10).total_steps) for t in targets]
    axes[2].loglog(targets, cost[kind], "o-", label=kind)
axes[2].set(xlabel="target accuracy eps*", ylabel="total Langevin steps (rules R1-R2)", title="cost of the rules")
axes[2].legend()
plt.tight_layout()
cost

# %% [markdown]
# **Measured figures.** The smallest gap between the bound and the exact W2 over the whole grid (must be ≥ 0), the Monte Carlo / exact agreement, and the ratio of total steps Linhart / Geffner at every target (must be ≤ 1).

# %%
gap = min(float(np.min(b - e)) for _, e, b in res.values())
ratio = max(c_l / c_g for c_l, c_g in zip(cost["linhart"], cost["geffner"]))
mc_err = max(abs(w / float(res[kind][1][i3, list(k_values).index(k)]) - 1) for kind in mc for k, w in mc[kind])
print(f"min(bound - exact) = {gap:.4f};  max MC/exact - 1 = {mc_err:.3f};  max steps ratio Linhart/Geffner = {ratio:.3f}")
assert gap >= 0 and ratio <= 1 and mc_err < 0.1
