# %% [markdown]
# # Evolutionary Forecasting: one short-horizon model rolled out vs horizon-specific direct models
#
# Ma et al., "To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series" (arXiv:2601.23114)
# train one model $f_\theta:\mathbb{R}^{T\times C}\to\mathbb{R}^{H\times C}$ on a short output horizon $H$ and
# reach any evaluation horizon $L$ by *evolution*: predict $s\le H$ steps, append them to the window, repeat,
#
# $$W_0 = X,\qquad \hat Y_k = f_\theta(W_{k-1})_{[:s]},\qquad W_k = \mathrm{concat}(W_{k-1},\hat Y_k)_{[-T:]},
# \qquad k = 1..\lceil L/s\rceil .$$
#
# Direct forecasting (DF) is the case $H = s = L$. The paper claims that a model trained for a long horizon and
# truncated is worse than one trained short (Fig. 1), blames conflicting gradients of near and far targets, and
# that one EF model beats the horizon-specific DF models. Here: (1) the exact identity behind EF on an AR(1)
# process, (2) EF vs DF with shared-parameter MLPs on the ETT-like synthetic series (small scale), (3) the
# gradient-conflict diagnostic, (4) DLinear on the real ETTh1 as context against the DLinear paper's numbers.

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from jaxlab import forecasting as F

t_start = time.perf_counter()

# %% [markdown]
# ## 1. AR(1) oracle: EF returns the conditional mean for every training horizon
#
# For $y_{t+1} = \varphi y_t + e_t$, $\mathrm{var}\,e = 1$, the block predictor
# $f(W) = [\varphi,\dots,\varphi^H]\,W_{-1}$ rolled out gives $\varphi^k y_t$ whatever $H$ is, and the $k$-step
# MSE is $(1-\varphi^{2k})/(1-\varphi^2)$.

# %%
phi, L_ar, n_mc = 0.9, 96, 100_000
ser = jax.vmap(lambda k: F.ar1_series(k, 2 + L_ar, phi))(jax.random.split(jax.random.key(0), n_mc))
X_ar, Y_ar = ser[:, :2], ser[:, 2:]
mse_k = {}
for H in (1, 4, 24):
    pred = jax.jit(jax.vmap(lambda x, H=H: F.ef_forecast(F.ar1_oracle(phi, H), x, L_ar)))(X_ar)
    mse_k[H] = np.mean((np.asarray(pred) - np.asarray(Y_ar)) ** 2, axis=(0, 2))
k = np.arange(1, L_ar + 1)
closed = (1 - phi ** (2 * k)) / (1 - phi**2)
ar_ratio = mse_k[24].mean() / closed.mean()
print(f"mean k-step MSE: EF(H=24) {mse_k[24].mean():.4f}, closed form {closed.mean():.4f} (ratio {ar_ratio:.4f});"
      f" H = 1 vs 24 forecasts differ by {np.max(np.abs(mse_k[1] - mse_k[24])):.1e} in MSE")

# %% [markdown]
# ## 2. EF vs DF on the ETT-like series
#
# `ett_like` has ETTh1's length, 7 channels and 12/4/4-month splits: daily and weekly sinusoids, a slow random
# walk, a shared latent factor and AR(1) noise. MLPs $T\to128\to128\to H$ (shared hidden layers, RevIN inside
# every evolution step), $T = 336$, 400 AdamW steps each **[reduced from 2,000 and DF only at
# L = 96 and 720, to fit the notebook's time budget; the claims use 2,000 steps and all four DF models]**: one EF
# model with $H = 96$, DF models with $H = L$.

# %%
T, LS, LS_DF = 336, (96, 192, 336, 720), (96, 720)
tr, va, te = F.ett_splits(F.ett_like(jax.random.key(0)), T)
(tr, va, te), _ = F.standard_scale(tr, va, te)
models = {H: F.train_forecaster(jax.random.key(1), F.MLPForecaster(T, H, key=jax.random.key(2), width=128), tr,
                                num_steps=400) for H in LS_DF}
ef = F.evaluate_horizons(models[96], te, LS, "ef", window_stride=8)
df = F.evaluate_horizons(models, te, LS_DF, "df", window_stride=8)
trunc = F.evaluate_horizons(models[720], te, [96], "ef", window_stride=8)[96]
print(F.horizon_table({"EF": ef, "DF": df}))
print(f"MSE@96: trained H=96 {ef[96]['mse']:.4f}, trained H=720 and truncated {trunc['mse']:.4f}")
print(f"trained 2 MLPs and scored them in {time.perf_counter() - t_start:.1f} s")

# %% [markdown]
# ## 3. Gradient conflict of the near and far targets
#
# For the DF-720 model, $\cos(\nabla_\theta\ell_{near}, \nabla_\theta\ell_{far})$ with the split at 96 steps, per
# minibatch of 64 windows. A Linear model has none: its output rows are disjoint parameters, so the cosine is
# exactly 0.

# %%
Xg, Yg = F.make_windows(tr, T, 720, stride=10)
g_mlp = F.gradient_conflict(models[720], Xg, Yg, 96)
g_lin = F.gradient_conflict(F.Linear(T, 720, key=jax.random.key(3)), Xg, Yg, 96)
print(f"MLP DF-720: cos mean {float(g_mlp['cos_mean']):+.3f}, fraction < 0 {float(g_mlp['frac_negative']):.2f}; "
      f"Linear: max |cos| {float(np.max(np.abs(g_lin['cos']))):.1e}")
for name, v in g_mlp["per_group"].items():
    print(f"  {name:22s} {float(v):+.3f}")

# %% [markdown]
# ## 4. Context: DLinear on ETTh1 (the real data, shipped in `jaxlab.data`)
#
# Train-split standard scaling, $T = 336$, 300 AdamW steps per model (EF from one $H = 96$ model; DF at 720).
# The DLinear paper reports (DF, its own full training) MSE 0.375 / 0.405 / 0.439 / 0.472 at
# $L$ = 96 / 192 / 336 / 720. Context only, not a test.

# %%
etth1 = F.load_ett_csv()
e_tr, e_va, e_te = F.ett_splits(etth1, T)
(e_tr, e_va, e_te), _ = F.standard_scale(e_tr, e_va, e_te)
dl = {H: F.train_forecaster(jax.random.key(4), F.DLinear(T, H, key=jax.random.key(5)), e_tr, num_steps=300)
      for H in LS_DF}
e_ef = F.evaluate_horizons(dl[96], e_te, LS, "ef", window_stride=8)
e_df = F.evaluate_horizons(dl, e_te, LS_DF, "df", window_stride=8)
published = dict(zip(LS, (0.375, 0.405, 0.439, 0.472), strict=True))
print(F.horizon_table({"EF-DLin": e_ef, "DF-DLin": e_df}))
print("published DLinear MSE:", published)

# %% [markdown]
# ## 5. The truncation anomaly and the 2,880-step roll-out on ETTh1, trained to the validation optimum
#
# The paper's protocol stops training on the validation loss. On ETTh1 the validation MSE of the
# $T\to256\to256\to H$ MLPs is lowest after about 250 AdamW steps (one epoch of the train split) and rises
# after it: trained 2,000 steps, both models overfit, the $H = 96$ one more (7.5x fewer targets per window), and the
# truncated $H = 720$ model comes out *better* at 96 (ratio 0.84 on ETTh1). At the validation optimum the anomaly
# of Fig. 1 appears: the truncated model is worse. The claims `truncated_long_mlp_is_worse_at_96` and
# `ef_stays_bounded_at_2880` check it over five seeds; here seed 0. The roll-out of the $H = 96$ model over
# 2,880 steps (30 evolutions) is scored against the variance of the validation + test span.

# %%
h_tr, h_va, h_te = F.ett_splits(jnp.asarray(etth1, jnp.result_type(float)), T)
(h_tr, h_va, h_te), _ = F.standard_scale(h_tr, h_va, h_te)
h_mlp = {H: F.train_forecaster(jax.random.key(1), F.MLPForecaster(T, H, key=jax.random.key(2)), h_tr, num_steps=250)
         for H in LS_DF}
h_mse96 = {H: F.evaluate_horizons(m, h_te, [96])[96]["mse"] for H, m in h_mlp.items()}
trunc_ratio = h_mse96[720] / h_mse96[96]
span = jnp.concatenate([h_va, h_te[T:]])
span_var = float(jnp.mean(jnp.var(span[T:], axis=0)))
ef2880 = F.evaluate_horizons(h_mlp[96], span, [2880], window_stride=96)[2880]["mse"] / span_var
print(f"ETTh1 MSE@96: trained H=96 {h_mse96[96]:.4f}, trained H=720 and truncated {h_mse96[720]:.4f} "
      f"(ratio {trunc_ratio:.3f}); EF to 2,880 steps: MSE / variance {ef2880:.3f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
axes[0].plot(k, closed, "k-", lw=2, label="closed form")
for H, m in mse_k.items():
    axes[0].plot(k, m, "--", label=f"EF oracle, H={H}")
axes[0].set_xlabel("step k")
axes[0].set_ylabel("k-step MSE")
axes[0].set_title("AR(1), phi = 0.9")
axes[0].legend()
for ax, (a, b, title) in zip(axes[1:], ((ef, df, "ETT-like, MLP"), (e_ef, e_df, "ETTh1, DLinear")), strict=True):
    ax.plot(LS, [a[L]["mse"] for L in LS], "o-", label="EF (one H = 96 model)")
    ax.plot(LS_DF, [b[L]["mse"] for L in LS_DF], "s", ms=9, label="DF (one model per L)")
    ax.set_xlabel("horizon L")
    ax.set_ylabel("test MSE")
    ax.set_title(title)
axes[2].plot(LS, [published[L] for L in LS], "k:", label="DLinear paper (DF)")
for ax in axes[1:]:
    ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# **Reading.** The AR(1) identity holds: EF with any training horizon gives the conditional mean and its
# $k$-step error, and a Linear model's near and far gradients never conflict (disjoint rows). On ETTh1, with
# models trained to their validation optimum, the truncated $H = 720$ MLP is worse at 96 than the $H = 96$ one
# (Fig. 1's anomaly) and the $H = 96$ model rolled out 2,880 steps stays within twice the series variance. Trained
# far past that optimum (2,000 steps) the anomaly inverts, and on the synthetic series one seed's roll-out drifts
# to 6.6x the variance: both effects come from overfitting, not from EF. On ETTh1, the short DLinear training of
# section 4 lands near the DLinear paper's numbers, with EF close to DF.

# %%
elapsed = time.perf_counter() - t_start
print(f"notebook body: {elapsed:.1f} s")
assert abs(ar_ratio - 1) < 0.02, ar_ratio
assert np.max(np.abs(np.asarray(g_lin["cos"]))) == 0.0
assert trunc_ratio > 1.0, trunc_ratio
assert np.isfinite(ef2880) and ef2880 <= 2.0, ef2880
assert all(np.isfinite(ef[L]["mse"]) and ef[L]["mse"] < 2 * float(np.var(np.asarray(te))) for L in LS)
