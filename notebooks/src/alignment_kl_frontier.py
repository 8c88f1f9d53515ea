# %% [markdown]
# # The reward–KL frontier of KL-regularised alignment, best-of-N and a policy-gradient baseline
#
# Monteiro Paes, Mackraz, Theobald, Danieli, *Theoretical Limits of Language Model Alignment* (arXiv:2605.07105).
# For a KL budget ε, the largest reward gain of any policy is reached by the tilted policy
# π_β ∝ π₀ e^{r/β} with KL(π_β‖π₀) = ε, and that gain equals β times the Jeffreys divergence
# KL(π_β‖π₀) + KL(π₀‖π_β). The paper reports that best-of-N sits close to this frontier and PPO/GRPO below it.
#
# Small-scale reproduction (our choice of setting): a "toy LM" with V = 1000 outputs,
# π₀ = softmax(logits), logits ~ N(0, 2²), rewards r ~ N(0, 1) (numpy `default_rng(0)`). We compute
# 1. the exact frontier on the finite space, and its estimate from n = 10⁴ base samples;
# 2. exact (tie-aware) best-of-N for N = 1..256 and its fraction of the frontier gain at the same KL;
# 3. a tabular REINFORCE policy with a KL penalty (optax Adam, batch 64, 200 steps), a stand-in for PPO/GRPO;
# 4. proxy rewards r + e_m and reward-model ensembles: objective and true-reward gaps against β.
#
# No reward model of a real LM ships with the installed packages, so the synthetic reward is the only one here.

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)
from jaxlab.alignment import (best_of_n, bon_kl_formula, ensemble_proxy, frontier, frontier_from_samples,
                              frontier_point, gain_at_kl, proxy_gaps, reinforce_kl_run)


rng = np.random.default_rng(0)
V = 1000
log_pi0 = jax.nn.log_softmax(jnp.asarray(2.0 * rng.standard_normal(V)))
r = jnp.asarray(rng.standard_normal(V))
betas = jnp.logspace(-3, 3, 2000)
exact = frontier(log_pi0, r, betas)
print(f"E_pi0[r] = {float(jnp.exp(log_pi0) @ r):.4f}, max r = {float(r.max()):.3f}")
print("Jeffreys identity, max |gain - beta * J|:", float(jnp.max(jnp.abs(exact.gain - betas * exact.jeffreys))))

# %% [markdown]
# ## Best-of-N against the frontier
#
# Exact BoN on the finite space: reward level j has probability F_j^N − F_{j−1}^N. Its exact KL is below the
# continuous formula ln N − (N−1)/N; we compare its gain with the frontier gain at its exact KL.

# %%
ns = jnp.arange(1.0, 257.0)
_, bon_kl, bon_gain = jax.jit(jax.vmap(best_of_n, in_axes=(None, None, 0)))(log_pi0, r, ns)
fraction = bon_gain[1:] / gain_at_kl(exact, bon_kl[1:])
for n in (2, 4, 16, 64, 256):
    print(f"N = {n:3d}: exact KL {float(bon_kl[n - 1]):.3f} (formula {float(bon_kl_formula(n)):.3f}), "
          f"BoN / frontier gain = {float(fraction[n - 2]):.4f}")

# %% [markdown]
# ## Frontier from base-model samples and the REINFORCE baseline
#
# The estimator only needs rewards of samples from π₀: weights softmax(r_i/β), gain Σ w_i r_i − r̄ and
# KL Σ w_i ln(n w_i) ≤ ln n. Points with ESS < 100 or KL > ln(n)/2 are flagged unreliable.

# %%
y = jax.random.categorical(jax.random.key(1), log_pi0, shape=(10_000,))
est = frontier_from_samples(r[y], betas)
ok = np.asarray(est.reliable)
err = jnp.abs(est.gain - gain_at_kl(exact, est.kl))[ok]
print(f"sample frontier: {ok.sum()} reliable points, max |gain error| there = {float(err.max()):.3f}")

rl_betas = jnp.array([0.1, 0.2, 0.4, 0.8, 1.6])
train = jax.jit(jax.vmap(lambda b: reinforce_kl_run(jax.random.key(2), log_pi0, r, b, num_steps=200,
                                                   batch_size=64, optimizer=optax.adam(0.1))[1].infos))
infos = train(rl_betas)
rl_kl, rl_gain = infos.kl[:, -1], infos.gain[:, -1]
rl_fraction = rl_gain / gain_at_kl(exact, rl_kl)
opt = jax.vmap(frontier_point, in_axes=(None, None, 0))(log_pi0, r, rl_betas)
for b, k, g, f, o in zip(rl_betas, rl_kl, rl_gain, rl_fraction, opt.kl):
    print(f"REINFORCE beta = {float(b):.1f}: KL {float(k):.3f} (optimum's KL {float(o):.3f}), gain {float(g):.3f}, "
          f"{float(f):.3f} of the frontier")

# %%
fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
ax[0].plot(exact.kl, exact.gain, "k-", lw=2, label="exact frontier (tilted policy)")
ax[0].plot(est.kl[ok], est.gain[ok], "c--", label="estimate from 10^4 base samples")
ax[0].plot(bon_kl, bon_gain, "o", ms=3, color="tab:orange", label="best-of-N (exact KL), N = 1..256")
ax[0].plot(bon_kl_formula(ns), bon_gain, ".", ms=2, color="tab:red", label="best-of-N at ln N − (N−1)/N")
ax[0].plot(rl_kl, rl_gain, "s", color="tab:blue", label="REINFORCE + KL penalty, 200 steps")
ax[0].set(xlabel="KL(π‖π₀)", ylabel="reward gain", xlim=(0, 5.2), title="toy LM, V = 1000")
ax[0].legend(fontsize=8)
ax[1].semilogx(ns[1:], fraction, color="tab:orange")
ax[1].set(xlabel="N", ylabel="BoN gain / frontier gain at the same KL", title="best-of-N is near the limit")
plt.tight_layout()

# %% [markdown]
# ## Proxy rewards and ensembles
#
# Aligning to r̂ = r + e instead of r costs Δ_obj = β KL(π̂_β‖π_β) in the regularised objective (a derived
# identity) and Δ_true = E_{π_β}[r] − E_{π̂_β}[r] in true reward; the derived bound is (range e)²/(8β).
# Averaging M reward models with independent errors divides Var(e) by M.

# %%
e_all = 0.3 * jax.random.normal(jax.random.key(3), (200, 16, V))  # 200 draws of 16 proxies
proxy_betas = jnp.logspace(-1.3, 0.7, 12)

@jax.jit
def mean_gaps(errs):
    bar = jax.vmap(lambda em: ensemble_proxy(r, em) - r)(errs)
    g = jax.vmap(lambda eb: jax.vmap(lambda b: proxy_gaps(log_pi0, r, eb, b))(proxy_betas))(bar)
    return jax.tree.map(lambda a: a.mean(0), g)

gaps = {m: mean_gaps(e_all[:, :m]) for m in (1, 4, 16)}
fig, ax = plt.subplots(1, 2, figsize=(12, 4))
for m, g in gaps.items():
    ax[0].loglog(proxy_betas, g.objective_gap, "o-", label=f"M = {m}")
    ax[1].semilogx(proxy_betas, g.true_reward_gap, "o-", label=f"M = {m}")
ax[0].set(xlabel="β", ylabel="mean objective gap β KL(π̂_β‖π_β)")
ax[1].set(xlabel="β", ylabel="mean true-reward gap")
ax[0].legend(); ax[1].legend(); plt.tight_layout()
ratio_1_16 = gaps[1].objective_gap / gaps[16].objective_gap
print("objective gap M=1 / M=16 per beta:", np.round(np.asarray(ratio_1_16), 1))

# %% [markdown]
# ## Check
#
# BoN reaches ≥ 99% of the frontier gain for N ≥ 64 (expected on this setting: 0.87, 0.89, 0.96, 0.99, 0.998 at
# N = 2, 4, 16, 64, 256), every policy lies on or below the frontier, and a 16-model ensemble cuts the objective gap by > 7× at every β (→ 16× at large β).

# %%
f = {n: float(fraction[n - 2]) for n in (2, 4, 16, 64, 256)}
print("BoN fractions:", {n: round(v, 3) for n, v in f.items()})
assert abs(f[2] - 0.87) < 0.01 and abs(f[16] - 0.96) < 0.01 and f[256] > 0.995
assert float(fraction.max()) < 1.0 and float(rl_fraction.max()) <= 1.0 + 1e-9
assert float(rl_fraction.min()) > 0.5
assert float(ratio_1_16.min()) > 7.0 and float(ratio_1_16.max()) > 15.0
