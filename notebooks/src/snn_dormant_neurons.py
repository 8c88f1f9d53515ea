# %% [markdown]
# # Dormant spiking neurons: same accuracy, fewer synaptic operations
#
# The Dormant Spiking Neuron (DSN; github.com/Ruichen0424/DSN) adds an absorbing gate to the LIF neuron:
# once the post-reset potential falls below $V_D < 0$ the neuron is dormant for the rest of the sample,
# never spikes again, and the synaptic work into it can be skipped:
#
# $$D_t = D_{t-1}\,\Theta(V_{t-1} - V_D),\quad H_t = \beta V_{t-1} + X_t,\quad S_t = D_t\,\Theta(H_t - V_{th}),
# \quad V_t = H_t(1 - S_t) + V_{reset} S_t .$$
#
# Claim (paper: 40 % to over 70 % less energy at equal accuracy; the registered claims
# `snn:digits_dsn_matches_lif_accuracy_with_less_sop_energy` and `snn:digits_dsn_cuts_sop_energy_by_40_percent`:
# within 2 accuracy points of LIF, and at least 40 % less SOP energy on a network with two conv layers of 32
# channels, where the cut is larger than on the narrow network below). We train the same small conv SNN
# (conv-BN-DSN-conv-BN-DSN-linear, T = 4) with DSN ($V_D = -0.05$) and plain LIF neurons on scikit-learn's 8x8
# digits, and on an event version of them (ON/OFF events of the digit moved along a saccade path), and count
# synaptic operations with dormant targets skipped:
# $E = 4.6\,\mathrm{pJ}\cdot\mathrm{MAC}_{\text{first layer}} + 0.9\,\mathrm{pJ}\cdot\mathrm{SOP}$.

# %%
import time

import jax
import matplotlib.pyplot as plt
import numpy as np

from jaxlab.snn import DSNParams, digits_dataset, digits_events, evaluate, fit, make_model

t_start = time.perf_counter()
xtr, ytr, xte, yte = digits_dataset()
inputs = {"digits": (xtr, xte), "event digits": (digits_events(xtr, 4), digits_events(xte, 4))}
results = {}
for task, (a, b) in inputs.items():
    for name, dormant in (("DSN", True), ("LIF", False)):
        model, state = make_model(
            jax.random.key(0),
            in_channels=a.shape[-3],
            channels=(8, 16),
            num_steps=4,
            params=DSNParams(v_dormant=-0.05),
            dormant=dormant,
        )
        model, state, losses = fit(jax.random.key(1), model, state, a, ytr, epochs=3, batch_size=64)
        results[task, name] = evaluate(model, state, b, yte)
print(f"trained 4 networks in {time.perf_counter() - t_start:.1f} s")

# %%
print(f"{'task':13s} {'net':4s} {'acc':>6s} {'dormant1':>9s} {'dormant2':>9s} {'SOP/sample':>11s} {'E (nJ)':>8s}")
for (task, name), r in results.items():
    print(
        f"{task:13s} {name:4s} {r['accuracy']:6.3f} {r['dormant1']:9.3f} {r['dormant2']:9.3f} "
        f"{r['sops']:11.0f} {r['energy_pj'] / 1e3:8.1f}"
    )
sop_cut = {t: 1 - results[t, "DSN"]["sops"] / results[t, "LIF"]["sops"] for t in inputs}
e_cut = {t: 1 - results[t, "DSN"]["energy_pj"] / results[t, "LIF"]["energy_pj"] for t in inputs}
gap = {t: results[t, "LIF"]["accuracy"] - results[t, "DSN"]["accuracy"] for t in inputs}
for t in inputs:
    print(
        f"{t}: SOP energy -{100 * sop_cut[t]:.1f} %, total energy -{100 * e_cut[t]:.1f} % "
        f"(paper: 40-70 %), accuracy gap LIF - DSN {100 * gap[t]:+.1f} points"
    )
print(
    f"deeply inhibited (V < -0.05) in the LIF digits net: {results['digits', 'LIF']['deep_inhibition']:.2f} "
    "(paper: up to 0.44 in an ImageNet ResNet-18)"
)

# %% [markdown]
# On static digits the first layer's real-valued MACs (4.6 pJ each) dominate the total, so dormancy's saving
# shows in the SOP part; on event input every layer is synaptic and the saving reaches the total.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
tasks = list(inputs)
w = 0.35
for k, name in enumerate(("LIF", "DSN")):
    axes[0].bar(np.arange(2) + (k - 0.5) * w, [results[t, name]["accuracy"] for t in tasks], w, label=name)
    axes[1].bar(np.arange(2) + (k - 0.5) * w, [0.9 * results[t, name]["sops"] / 1e3 for t in tasks], w, label=name)
axes[0].set_ylim(0.5, 1.0)
axes[0].set_ylabel("test accuracy")
axes[1].set_ylabel("SOP energy per sample (nJ)")
for ax in axes:
    ax.set_xticks(range(2), tasks)
    ax.legend()
fig.suptitle("DSN vs LIF, same conv SNN, T = 4")
fig.tight_layout()
plt.show()

# %%
# Robust checks (CPU runs are not bit-reproducible): DSN within 3 points of LIF on both tasks, SOP energy
# cut by at least 25 % on this narrow network (the claims require >= 40 % on the 32-channel one).
print(f"total run time {time.perf_counter() - t_start:.1f} s")
assert all(g <= 0.03 for g in gap.values()), gap
assert all(c >= 0.25 for c in sop_cut.values()), sop_cut
