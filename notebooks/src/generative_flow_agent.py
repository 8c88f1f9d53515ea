# %% [markdown]
# # FlowAgent: a whole tool chain as one conditional flow-matching trajectory
#
# Huang et al., "Tools as Continuous Flow for Evolving Agentic Reasoning" (FlowAgent, arXiv:2605.07339) embed
# tools in a semantic space and generate a whole tool chain as one continuous latent trajectory with a
# conditional flow-matching (CFM) model, decoded to tools by proximity and re-planned on feedback. Only the
# abstract could be read: the toy world, the network and the closed loop below are reconstructed from the abstract
# (**[chosen]**, `jaxlab.generative.flow_agent`). The paper claims that this degrades more slowly with the
# horizon than step-wise tool selection and reaches tools unseen in training.
#
# The CFM objective (Lipman et al. 2023; Tong et al. 2024) with $x_t = t\,x_1 + (1-t)\,x_0$,
# $x_0\sim\mathcal N(0, I)$:
#
# $$\mathcal L(\theta) = \mathbb E_{t, x_0, x_1, c}\,\lVert v_\theta(x_t, t, c) - (x_1 - x_0)\rVert^2 .$$
#
# Here $x_1 = \tau = [e_{k_1},\dots,e_{k_n}, e_{stop},\dots]\in\mathbb R^{K\times D}$ ($K = 8$, $D = 16$) and
# $c = [P_{in}[s]\,\Vert\,P_{out}[g]\,\Vert\,\text{summary of the unavailable tools}]$.

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from jaxlab.generative import flow_agent as FA
from jaxlab.generative import flow_matching as FM
from jaxlab.generative.flow_agent import claims as C  # the claims' own estimators
from jaxlab.generative.flow_agent.evaluation import _task_pools

t_start = time.perf_counter()

# %% [markdown]
# ## 1. The CFM loss floor (claim `flow_agent:cfm_gaussian_loss_floor`)
#
# With the independent coupling from $\mathcal N(0,1)$ to $\mathcal N(m, s^2)$ the loss cannot go below the
# conditional variance of $x_1 - x_0$ given $x_t$, integrated over $t$:
# $\int_0^1 s^2/((1-t)^2 + t^2 s^2)\,dt = s\pi/2$. The analytic marginal velocity
# $u^*(x,t) = m + a(t)(x - tm)$ attains it.

# %%
for i, s in enumerate((0.5, 1.0, 2.0)):
    k0, k1, k2 = jax.random.split(jax.random.key(i), 3)
    x0, x1 = jax.random.normal(k0, (200_000, 1)), 3 + s * jax.random.normal(k1, (200_000, 1))
    loss = FM.cfm_loss(lambda x, t, c, s=s: FM.gaussian_optimal_velocity(x, t, 3.0, s), k2, x0, x1)
    print(f"s = {s}: Monte-Carlo loss of u* {float(loss):.4f}, s pi / 2 = {s * np.pi / 2:.4f}")

# %% [markdown]
# ## 2. The tool world and the decoding margin
#
# 12 data types in a cyclic pipeline, 40 tools (one or two stages ahead, plus alternatives), 8 of them unseen in
# training. A waypoint within half the smallest angle $\theta_{min}$ between tool/STOP embeddings of its tool
# decodes to that tool, wherever it sits in the plan.

# %%
world = FA.make_tool_world(jax.random.key(0))
E = np.concatenate([np.asarray(world.emb), np.asarray(world.stop)[None]])
cosines = np.clip(E @ E.T, -1, 1)
np.fill_diagonal(cosines, -1)
theta_min = float(np.arccos(cosines.max()))
dist, _ = FA.shortest_plans(world, jnp.ones(world.n_tools, bool))
print(f"theta_min = {theta_min:.3f} rad; shortest-plan lengths {np.bincount(np.asarray(dist).ravel())[1:]} "
      f"for n = 1..{int(dist.max())}")

# %% [markdown]
# ## 3. Train FlowAgent and the step-wise baselines
#
# 20k sampled (task, availability, BFS reference plan over the seen tools) examples. FlowAgent: the trajectory
# velocity MLP, 3,000 AdamW steps. Step-wise: a policy MLP regressing the next reference tool's embedding
# (cosine loss), and a soft-max classifier over the seen tools, 1,000 steps each. **[Reduced for the notebook's
# time budget: FlowAgent at width 256 and batch 128; the claims train the default width 1024 with
# batch 256, about 20x the compute, whose first plans are far more often valid (87 % vs about 15 %).]**

# %%
tasks = FA.training_tasks(jax.random.key(1), world, 20000)
t0 = time.perf_counter()
flow, losses = FA.train_flowagent(jax.random.key(2), world, tasks=tasks, return_losses=True, width=256, batch=128)
losses = jax.block_until_ready(losses)
t_flow = time.perf_counter() - t0
regress = FA.train_stepwise(jax.random.key(3), world, tasks=tasks, steps=1000)
classify = FA.train_stepwise(jax.random.key(3), world, tasks=tasks, steps=1000, kind="classify")
print(f"{tasks.s.shape[0]} training tasks; FlowAgent CFM loss {float(losses[:100].mean()):.3f} -> "
      f"{float(losses[-100:].mean()):.3f} in {t_flow:.1f} s")

# %% [markdown]
# ## 4. Closed-loop evaluation: success vs horizon, tool failures, unseen tools
#
# 64 episodes per horizon $n = 1..6$ (the reference plan length), all horizons in one jitted, vmapped call.
# A tool fails with probability $p_{fail}$ and stays unavailable; FlowAgent re-generates the whole plan
# (with type repair) after a failure or an inexecutable step, the step-wise agents choose one tool per step.
# The BFS oracle (the classical anchor, `FA.OraclePlanner`) succeeds in every episode without failures and in
# 95-98 % with $p_{fail} = 0.2$ (100 episodes per horizon); it is left out here to save its compilation.

# %%
agents = {"FlowAgent": FA.FlowAgentPlanner(flow, repair=True), "step-wise (regress)": FA.StepwiseAgent(regress),
          "step-wise (classifier)": FA.StepwiseAgent(classify)}
P_FAILS, N_EP = (0.0, 0.2), 64
res = {(a, p): FA.evaluate(jax.random.key(4), world, ag, N_EP, p) for a, ag in agents.items() for p in P_FAILS}
unseen = {(a, p): FA.evaluate(jax.random.key(5), world, ag, N_EP, p, unseen_only=True)
          for a, ag in agents.items() for p in P_FAILS}
for p in P_FAILS:
    print(f"p_fail = {p}")
    for a in agents:
        r, u = res[a, p], unseen[a, p]
        print(f"  {a:23s} success n=1..6 " + " ".join(f"{r[n]['success']:.2f}" for n in sorted(r))
              + f" | unseen {np.mean([v['success'] for v in u.values()]):.2f}"
              + f" | first plan valid {np.mean([v['valid'] for v in r.values()]):.2f}"
              + f", re-plans {np.mean([v['replans'] for v in r.values()]):.2f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
for ax, p in zip(axes[:2], P_FAILS, strict=True):
    for a in agents:
        r = res[a, p]
        ax.plot(sorted(r), [r[n]["success"] for n in sorted(r)], "o-", label=a)
    ax.set_xlabel("horizon n (reference plan length)")
    ax.set_ylabel("success rate")
    ax.set_title(f"p_fail = {p}")
    ax.set_ylim(0.5, 1.02)
axes[0].legend()
width = 0.2
for i, a in enumerate(agents):
    axes[2].bar(np.arange(len(P_FAILS)) + i * width,
                [np.mean([v["success"] for v in unseen[a, p].values()]) for p in P_FAILS], width, label=a)
axes[2].set_xticks(np.arange(len(P_FAILS)) + width, [f"p_fail = {p}" for p in P_FAILS])
axes[2].set_ylabel("success on tasks needing an unseen tool")
axes[2].set_ylim(0.5, 1.02)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. The CFM loss against its floors (claim `flow_agent:flowagent_cfm_loss_decreases`)
#
# The condition $c = (s, g, \text{avail})$ fixes the reference plan, so given $c$ the target $x_1 = \tau(c)$ is a
# point and $u_t = \tau(c) - x_0$: the exact minimum of the loss is 0, every field $v(t, c)$ that ignores $x_t$ has
# loss $\ge \mathbb E|x_0|^2/(KD) = 1$ (equality at $v = \tau(c)$, what a trainer regressing on $x_1$ learns), and
# every field that ignores $c$ at least the conditional variance of the plan mixture (Monte Carlo). The claim asks
# the trained net to beat the $x_t$-blind minimum by 4 SE; it does, but it stays above the $c$-blind floor: the MLP
# underfits the $1/(1-t)$ gain of the exact field near $t = 1$.

# %%
per = C._heldout_cfm_losses(flow, world, tasks, jax.random.key(9), 4000)
blind = C._condition_blind_floor(world, tasks, jax.random.key(10), 2000)
print(f"held-out CFM loss {per.mean():.4f} +- {per.std() / np.sqrt(per.size):.4f}; x_t-blind minimum 1; "
      f"c-blind floor {blind.mean():.4f} +- {blind.std() / np.sqrt(blind.size):.4f}; exact minimum 0")

# %% [markdown]
# ## 6. Off the ceiling: success within a step budget (claim `flow_agent:flowagent_degrades_more_slowly_with_horizon`)
#
# Without a budget every agent is near the ceiling. Counting an episode as a success only when it reaches $g$
# within $n + 1$ steps takes the step-wise agent off it. The paper's gain, drop$_{step}$ - drop$_{Flow}$ with
# drop = success($n$=1) - success($n$=6), is then within noise of 0 and FlowAgent is below the step-wise agent at
# nearly every horizon: the claim is registered as **not reproduced** (there, 500 episodes per cell and
# p_fail in {0, 0.2, 0.4}: gain +0.013 +- 0.007, FlowAgent 0.027 +- 0.002 below the step-wise agent). The
# state $(z, g, \text{avail})$ is fully observed and every failure triggers a re-plan, so the step-wise policy is
# already Markov-optimal: a global plan has nothing to add.

# %%
s_all, g_all, length, _ = _task_pools(world, FA.K_DEFAULT)
rng = np.random.default_rng(0)
idx = np.concatenate([rng.choice(np.flatnonzero(length == n), N_EP) for n in range(1, 7)])
n_ep = np.repeat(np.arange(1, 7), N_EP)
budget = {}
for a in ("FlowAgent", "step-wise (regress)"):
    f = FA.run_episodes(jax.random.split(jax.random.key(6), idx.size), world, jnp.asarray(s_all[idx], jnp.int32),
                        jnp.asarray(g_all[idx], jnp.int32), agents[a], p_fail=0.2)
    ok = np.asarray(f.success) & (np.asarray(f.t) <= n_ep + 1)
    budget[a] = np.array([ok[n_ep == n].mean() for n in range(1, 7)])
    print(f"{a:20s} success within n + 1 steps, p_fail = 0.2, n = 1..6: " + " ".join(f"{v:.2f}" for v in budget[a]))
drops = {a: v[0] - v[-1] for a, v in budget.items()}
gain = drops["step-wise (regress)"] - drops["FlowAgent"]
gain_se = np.sqrt(sum(v[i] * (1 - v[i]) / N_EP for v in budget.values() for i in (0, -1)) + 1e-12)
print(f"gain (paper: > 0) {gain:+.3f} +- {gain_se:.3f}")

# %% [markdown]
# ## 7. What is measured
#
# The closed loop makes FlowAgent reliable even though its first plans are often invalid: every failure or
# inexecutable step triggers a fresh plan, so its success rate is far above its first-plan validity. Of the
# paper's two comparisons (claims of `jaxlab verify flow_agent`, full-size FlowAgent, 500 episodes per cell,
# p_fail in {0, 0.2, 0.4}): FlowAgent does **not** degrade more slowly with the horizon than the step-wise agent
# (section 6; not reproduced), and it **does** beat the seen-tools classifier on tasks that need an unseen tool
# (0.873 vs 0.737, +0.136 +- 0.006), but so does the regression step-wise agent (0.883), which also decodes by
# embedding proximity: the gain comes from the semantic tool embeddings, not from the flow. Asserted below:
# FlowAgent without failures succeeds in >= 80 % of the episodes at every horizon while its first plans are
# valid far less often; its loss beats the $x_t$-blind minimum 1 by 4 SE; and no significant horizon gain.

# %%
flow0 = [res["FlowAgent", 0.0][n]["success"] for n in range(1, 7)]
valid0 = np.mean([v["valid"] for v in res["FlowAgent", 0.0].values()])
gap = (np.mean([v["success"] for v in unseen["FlowAgent", 0.2].values()])
       - np.mean([v["success"] for v in unseen["step-wise (classifier)", 0.2].values()]))
print(f"FlowAgent at p_fail = 0: success min over n {min(flow0):.2f}, first plans valid {valid0:.2f}; unseen-tool "
      f"gap to the classifier at p_fail = 0.2: {gap:+.2f}; notebook body {time.perf_counter() - t_start:.1f} s")
assert min(flow0) >= 0.8
assert np.mean(flow0) > valid0 + 0.2
assert per.mean() + 4 * per.std() / np.sqrt(per.size) < 1.0
assert gain < 4 * gain_se
