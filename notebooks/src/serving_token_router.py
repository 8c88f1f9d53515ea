# %% [markdown]
# # TokenRouter-style delayed batching: a throughput model, a simulator and a real tiny-model engine
#
# Token-level routing picks, for every generated token, which model produces it (here a small S and a large L,
# L for a fraction $q_L = 0.2$ of tokens). A request-centric *lockstep* engine steps all $N$ requests together,
# so nearly every step pays L's fixed cost $\alpha_L$ for a handful of tokens. TokenRouter is model-centric: one
# subserver per model, and L's step is *delayed* until $B_L$ requests wait for it. With step costs
# $T_m(n) = \alpha_m + \beta_m n$ jaxlab's reconstruction from the abstract (the paper's text was not available)
# predicts, on one shared device,
#
# $$X(B) = \frac{B/q_L}{\alpha_L + k(B)\,\alpha_S + (\beta_S + \beta_L)\,B/q_L},\qquad
# X_{sync} = \frac{N}{\alpha_S(1-q_L^N) + \alpha_L(1-(1-q_L)^N) + (\beta_S+\beta_L)N},$$
#
# with $k(B)$ the number of S steps it takes to refill L's queue, and $B_L^* = \arg\max_B X(B)$.
# We (1) measure and fit $T_m(n)$ for two tiny JAX decoders, (2) check the model against a discrete-event
# simulator (DES) on the default workload, and (3) run the real engine against lockstep decoding.

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from jaxlab.serving.engine import TokenRouterEngine, measure_step_cost, reference_decode, table_router
from jaxlab.serving.tiny_lm import TinyDecoder
from jaxlab.serving.token_router import (
    StepCostModel,
    bernoulli_router,
    derive_delayed_batching,
    throughput_lockstep,
    throughput_sequential,
    throughput_shared,
)
from jaxlab.serving.token_router.simulator import bernoulli_sim_router, simulate

t_start = time.perf_counter()
small = TinyDecoder(jax.random.key(0), num_layers=2, d_model=64, num_heads=2)
large = TinyDecoder(jax.random.key(1), num_layers=6, d_model=256, num_heads=4)
grid = [(1, 4), (4, 4), (16, 4)]  # (requests, tokens each): 4, 16, 64 input tokens
# the engine below uses the same cache shape (16 slots, 32 positions): its steps reuse these compilations
fits = {name: measure_step_cost(m, grid, ctx=32, n_slots=16) for name, m in (("S", small), ("L", large))}
for name, (a, b, r2, n, lat) in fits.items():
    print(f"{name}: alpha = {a:.3f} ms, beta = {b:.4f} ms/token, R^2 = {r2:.3f}; latencies {np.round(lat, 2)} ms "
          f"at n = {n.astype(int)}")
# a noisy fit on a shared machine can put S's intercept just below 0: floor both coefficients
cpu_cost = StepCostModel(jnp.array([max(fits[k][0], 1e-3) for k in "SL"]),
                         jnp.array([max(fits[k][1], 1e-6) for k in "SL"]))

# %% [markdown]
# ## The model against the simulator (default workload: $\alpha = (2, 10)$ ms, $\beta = (0.05, 0.4)$ ms/token)

# %%
cost = StepCostModel(jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4]))
q, N = 0.2, 32
route_sim = bernoulli_sim_router(q)
bs = np.arange(1, N)
model_curve = np.asarray(throughput_shared(cost, q, N, jnp.asarray(bs, float)))
des_b = [1, 2, 4, 8, 12, 16, 20, 23, 26, 31]
des_curve = [np.mean([simulate("async_delayed", cost, route_sim, N, 4000, batch_threshold=b, seed=s).throughput
                      for s in range(2)]) for b in des_b]
p = derive_delayed_batching(cost, q, N)
rows = {
    "sequential": simulate("sequential", cost, route_sim, N, 4000).throughput,
    "lockstep": np.mean([simulate("lockstep", cost, route_sim, N, 4000, seed=s).throughput for s in range(2)]),
    "async greedy": np.mean([simulate("async_greedy", cost, route_sim, N, 4000, seed=s).throughput for s in range(2)]),
    "async delayed (B_L*)": np.mean([simulate("async_delayed", cost, route_sim, N, 4000, seed=s).throughput
                                     for s in range(2)]),
}
print(f"B_L* = {p.batch_threshold}, tau_L* = {p.timeout:.1f} ms, "
      f"model X(B_L*) = {p.predicted_throughput:.4f} tokens/ms")
print(f"X_sync = {float(throughput_lockstep(cost, q, N)):.4f}, X_seq = {float(throughput_sequential(cost, q)):.4f}")
print(f"{'DES policy':22s} {'tokens/ms':>9s} {'vs lockstep':>11s}")
for k, v in rows.items():
    print(f"{k:22s} {v:9.4f} {v / rows['lockstep']:11.2f}x")

# %%
fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
ax[0].plot(bs, model_curve, label="model X(B)")
ax[0].plot(des_b, des_curve, "o", label="DES (2 seeds)")
ax[0].axhline(float(throughput_lockstep(cost, q, N)), color="gray", ls="--", label="lockstep X_sync")
ax[0].axvline(p.batch_threshold, color="k", lw=0.8, ls=":")
ax[0].set_xlabel("L batch threshold B")
ax[0].set_ylabel("tokens / ms")
ax[0].set_title(f"shared device, N = {N}, q_L = {q}")
ax[0].legend()

# %% [markdown]
# ## The real engine: two tiny decoders on this CPU, N = 16
# Same prompts, same routing table, same models; every policy produces exactly the tokens of the cache-free routed
# reference decode, only the schedule differs. Steps are padded to 4, 16 or 64 tokens (few compilations).

# %%
P, NEW, N_REAL = 32, 24, 16
table = np.asarray(bernoulli_router(jax.random.key(2), P * 48, q)).reshape(P, 48)
route = table_router(table)
prompts = [np.random.default_rng(i).integers(0, 256, 8) for i in range(P)]
kw = dict(n_slots=N_REAL, token_buckets=(4, 16, 64))
engines = {
    "lockstep": TokenRouterEngine((small, large), route, policy="lockstep", **kw),
    "async delayed": TokenRouterEngine((small, large), route, cost=cpu_cost, q_large=q, **kw),
}
real, outs = {}, {}
for _ in range(2):  # the first round compiles
    for k, e in engines.items():
        outs[k], st = e.run(prompts, NEW)
        real[k] = st
ref = reference_decode((small, large), route, prompts[:2], NEW)
same = all(np.array_equal(a, b) for k in engines for a, b in zip(outs[k][:2], ref, strict=True))
pred = derive_delayed_batching(cpu_cost, q, N_REAL)
print(f"fitted CPU costs: B_L* = {pred.batch_threshold}, predicted X(B_L*)/X_sync = "
      f"{pred.predicted_throughput / float(throughput_lockstep(cpu_cost, q, N_REAL)):.2f}")
for k, st in real.items():
    print(f"{k:14s} {st.throughput:8.0f} tokens/s  {st.throughput / real['lockstep'].throughput:5.2f}x  "
          f"steps S/L {st.steps}  mean batch S/L {st.mean_batch[0]:.1f}/{st.mean_batch[1]:.1f}")
print("outputs equal the routed reference decode:", same)
ax[1].bar(list(real), [st.throughput for st in real.values()])
ax[1].set_ylabel("decode tokens / s (this CPU)")
ax[1].set_title("real engine, N = 16")
plt.tight_layout()
plt.show()

# %% [markdown]
# On this CPU the large model is compute-bound (its per-token cost $\beta_L$ is large against $\alpha_L$), so the
# model predicts a much smaller gain from delayed batching than on the default workload's GPU-like costs; the measured
# real-engine ratio is machine dependent and is not asserted. The assertion is on the simulator: delayed batching
# at the derived threshold beats lockstep by at least 1.2x (claim `token_router:delayed_beats_lockstep`) and sits
# within 10 % of the model.

# %%
ratio = rows["async delayed (B_L*)"] / float(throughput_lockstep(cost, q, N))
gap = abs(rows["async delayed (B_L*)"] / p.predicted_throughput - 1)
print(f"DES delayed / X_sync = {ratio:.3f}; |DES / model - 1| = {gap:.3f}; "
      f"notebook ran in {time.perf_counter() - t_start:.1f} s")
assert same
assert ratio >= 1.2 and gap <= 0.10
