# %% [markdown]
# # Gradient denoising: error curves, a non-convex rate study, and DP training on digits
#
# **Claim (2026 paper, abstract only; full text not located).** An optimizer-agnostic *denoiser* placed between a
# noisy gradient oracle and an unmodified optimizer (SGD, Adam) lowers the gradient error: the
# maximum-likelihood estimator is optimal on quadratics/cubics, cheap recursive estimators reach the same
# order, a recursive two-query estimator reaches $O(T^{-12/19})$ on smooth non-convex problems, and denoising
# improves DP training. jaxlab implements the denoisers as optax transformations (`jaxlab.optim`):
#
# | name | query points | combination | exact on |
# |---|---|---|---|
# | E0 `ema(alpha)` | $x_t$ | $g(x_t)$ | constants |
# | E1 `igt(alpha)` (Arnold et al. 2019) | $x_t + r_t d_t$ | $g(z_t)$ | quadratics |
# | E2 `disk(kappa, gamma)` (Zhang et al., ICLR 2025, arXiv:2410.03883) | $x_t+\gamma d_t,\ x_t$ | $c\,g_1+(1-c)\,g_2$ | quadratics |
# | E3 `two_point(alpha, s)` **[reconstruction]** | $x_t+\gamma_1 d_t,\ x_t+\gamma_2 d_t$ | $a\,g_1 + (1-a)\,g_2$ | cubics |
#
# with $m_t = (1-\alpha_t) m_{t-1} + \alpha_t q_t$, $d_t = x_t - x_{t-1}$, $r_t = (1-\alpha_t)/\alpha_t$.
# With $\alpha_t = 1/t$ the transported estimators have error $E\|e_t\|^2 = \sigma^2 d/t$ (DP-mode noise, one
# draw per combined query), the order of the MLE with known Hessian.

# %%
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax

from jaxlab.optim import (
    disk,
    dp_run,
    ema,
    harmonic,
    igt,
    noise_multiplier_for,
    rls_init,
    rls_step,
    track,
    two_point,
)
from jaxlab.optim.denoise.claims import D, T, grad_quadratic, trajectory

jax.config.update("jax_enable_x64", True)

t_start = time.perf_counter()

# %% [markdown]
# ## 1. Error curves on a quadratic
#
# $d = 10$, $f(x) = \frac12 x^\top H x + \mathbf 1^\top x$, $H = \mathrm{diag}(\mathrm{linspace}(0.5, 3, 10))$, a random-walk
# trajectory, $\sigma = 1$, DP-mode noise, $\alpha_t = 1/t$ (DiSK: its constant $\kappa = 0.7$, whose stationary
# error is $\kappa/(2-\kappa)\,\sigma^2 d = 5.38$). The online MLE (recursive least squares on $[x, 1]$, ridge
# $10^{-6}$) sees one noisy gradient per step at $x_t$.

# %%
reps = 500
xs = trajectory()
rng = np.random.default_rng(0)
noise = jnp.asarray(rng.standard_normal((reps, T, D)))
denoisers = {"E0 EMA": ema(harmonic()), "E1 IGT": igt(harmonic()), "E2 DiSK (kappa=0.7)": disk(),
             "E3 two-point": two_point(harmonic())}


def error_curve(den):
    errors = jax.jit(jax.vmap(lambda w: track(grad_quadratic, xs, den, w, mode="dp").error2))(noise)
    return np.asarray(errors.mean(0))


curves = {name: error_curve(den) for name, den in denoisers.items()}

def rls_errors(w):
    def body(state, inputs):
        x, wt = inputs
        g = grad_quadratic(x)
        state, g_hat = rls_step(state, x, g + wt)
        return state, jnp.sum((g_hat - g) ** 2)
    return jax.lax.scan(body, rls_init(D, 1e-6), (xs, w))[1]

curves["MLE (online RLS)"] = np.asarray(jax.jit(jax.vmap(rls_errors))(noise).mean(0))
t = np.arange(1, T + 1)
fig, ax = plt.subplots(figsize=(6, 4))
for name, c in curves.items():
    ax.loglog(t, c, label=name)
ax.loglog(t, D / t, "k--", label=r"$\sigma^2 d / t$")
ax.set_xlabel("t (oracle calls per query point)")
ax.set_ylabel(r"$E\|m_t - \nabla f(x_t)\|^2$")
ax.legend(fontsize=8)
plt.show()
for name, c in curves.items():
    print(f"{name:22s} E||e_T||^2 = {c[-1]:.4f}   (sigma^2 d / T = {D / T:.3f})")

# %% [markdown]
# ## 2. Non-convex rate study: $T^{-12/19}$ is not reproduced
#
# $f(x) = \sum_i x_i^2/2 + 2\sin^2 x_i$ (non-convex, every derivative bounded), $d = 20$, $x_1 = 2$, oracle noise
# $\sigma = 1$ on each query, inner `optax.sgd`, measured by the average $\frac1T\sum_t \|\nabla f(x_t)\|^2$ (the
# quantity of SGD's $T^{-1/2}$ rate), 8 seeds. Our reading of the paper's rate: balancing progress
# $\Delta/(\eta T)$, variance $\eta\sigma^2\alpha$ and the squared bias $(\eta/\alpha)^{6}$ of a cubic-exact
# transport (E3) gives $T^{-12/19}$ with $\eta = T^{-7/19}$, $\alpha = T^{-5/19}$. Below: E3 on that schedule,
# plain SGD with the same $\eta$, and SGD with $\eta = 1/\sqrt T$ (its classical schedule), for
# $T \in \{250, 1000, 4000\}$ (the claim `denoise:two_point_nonconvex_rate_is_not_t_to_minus_12_19` adds
# $T = 16000$: E3 slope $-0.448 \pm 0.005$, SGD $-0.504 \pm 0.001$).

# %%
from jaxlab.optim.denoise.claims import average_grad_norm2, loglog_slope

Ts = np.array([250, 1000, 4000])
rate_runs = {
    "E3, eta=T^-7/19, alpha=T^-5/19": [average_grad_norm2(two_point(T ** (-5 / 19)), T ** (-7 / 19), int(T))
                                       for T in Ts.astype(float)],
    "SGD, eta=T^-7/19": [average_grad_norm2(ema(1.0), T ** (-7 / 19), int(T)) for T in Ts.astype(float)],
    "SGD, eta=T^-1/2": [average_grad_norm2(ema(1.0), T ** -0.5, int(T)) for T in Ts.astype(float)],
}
rate_slopes = {k: loglog_slope(Ts, v) for k, v in rate_runs.items()}
fig, ax = plt.subplots(figsize=(6, 4))
for name, v in rate_runs.items():
    m, se = rate_slopes[name]
    ax.loglog(Ts, [x.mean() for x in v], "o-", label=f"{name} (slope {m:.3f} ± {se:.3f})")
ax.loglog(Ts, 7.5 * (Ts / 250) ** (-12 / 19), "k--", label="T^-12/19 (claimed)")
ax.set_xlabel("T")
ax.set_ylabel(r"$\frac{1}{T}\sum_t \|\nabla f(x_t)\|^2$")
ax.legend(fontsize=8)
plt.show()
for name, v in rate_runs.items():
    m, se = rate_slopes[name]
    print(f"{name:32s}", " ".join(f"{x.mean():.3f}" for x in v), f" slope {m:+.3f} +- {se:.3f}")

# %% [markdown]
# **Diagnosis.** SGD's own rate shows ($\approx -1/2$), so the measure is the right one; E3 on the $T^{-12/19}$
# schedule decays more slowly than that, with the exponent of plain SGD at the same step size (E3 is lower by a
# constant factor only). The analysis' variance term $\eta\sigma^2\alpha$ ignores that the filter's error is
# correlated with the iterate and that the filter has unit gain at low frequency, where an SGD iterate near a
# minimum collects its noise: the noise floor stays of the order of SGD's $\eta\sigma^2\mathrm{tr}(H)/2$, i.e.
# $\propto T^{-7/19}$ on the larger step the rate needs, and the fitted slope lands between $-7/19$ and $-12/19$.
# The rate is registered as a documented negative result.

# %%
e3_slope, e3_se = rate_slopes["E3, eta=T^-7/19, alpha=T^-5/19"]
assert all(np.all(np.isfinite(x)) for v in rate_runs.values() for x in v)
assert all(np.all(np.diff([x.mean() for x in v]) < 0) for v in rate_runs.values())
assert e3_slope - 4 * e3_se > -12 / 19, (e3_slope, e3_se)  # the measured exponent lies above -12/19

# %% [markdown]
# ## 3. DP training of a small classifier on scikit-learn's digits
#
# 1797 8×8 images, 80/20 split, MLP 64-128-10 (equinox), DP-Adam (lr 2e-3), per-example clipping $C = 1$,
# Poisson sampling with rate $64/1437$, $\delta = 10^{-5}$, noise multiplier from the RDP accountant of
# `dp-accounting` for $\varepsilon \in \{1, 8\}$. The denoisers combine the per-example gradients at their query
# points *before* clipping, so each step is one Gaussian release (same privacy) at up to two gradient passes.
# Shortened to 8 epochs and 2 seeds (our planned setting: 30 epochs, 5 seeds, DP-SGD too, $\varepsilon = 4$); the full
# configuration is in `bench/optim.py`. An earlier pilot run found the ordering can flip: reported, not asserted.

# %%
from sklearn.datasets import load_digits

X, y = load_digits(return_X_y=True)
perm = np.random.default_rng(0).permutation(len(X))
X, y = (X[perm] / 16.0).astype(np.float32), y[perm]
n_train = int(0.8 * len(X))
Xtr, ytr, Xte, yte = map(jnp.asarray, (X[:n_train], y[:n_train], X[n_train:], y[n_train:]))
batch, epochs, clip, delta = 64, 8, 1.0, 1e-5
rate, num_steps = batch / n_train, epochs * n_train // batch
sigmas = {eps: noise_multiplier_for(eps, delta, rate, num_steps) for eps in (1.0, 8.0)}
print("noise multipliers:", {k: round(v, 3) for k, v in sigmas.items()})

def train(make, key, sigma, alpha):
    k_init, k_run = jax.random.split(key)
    params, static = eqx.partition(eqx.nn.MLP(64, 10, 128, 1, key=k_init, dtype=jnp.float32), eqx.is_array)

    def loss(p, ex):
        return optax.softmax_cross_entropy_with_integer_labels(eqx.combine(p, static)(ex[0]), ex[1])

    params, info = dp_run(k_run, loss, params, (Xtr, ytr), make(alpha), optax.adam(2e-3), l2_clip=clip,
                          noise_multiplier=sigma, sample_rate=rate, num_steps=num_steps, max_batch=128)
    model = eqx.combine(params, static)
    return jnp.mean(jnp.argmax(jax.vmap(model)(Xte), -1) == yte), jnp.max(info.batch_size)

# (program, alpha): plain DP-Adam is E0 with alpha = 1 and shares its compiled program.
dp_makers = {"plain DP-Adam": (ema, 1.0), "E0 EMA(0.9)": (ema, 0.1), "E2 DiSK": (lambda a: disk(a, 0.5), 0.7),
             "E3 two-point": (lambda a: two_point(a, 1.5), 0.3)}
compiled = {}
acc = {}
for name, (make, alpha) in dp_makers.items():
    f = compiled.setdefault(make, jax.jit(lambda key, sigma, alpha, make=make: train(make, key, sigma, alpha)))
    for eps, sigma in sigmas.items():
        out = [f(jax.random.key(s), sigma, alpha) for s in range(2)]
        assert max(int(b) for _, b in out) <= 128  # no Poisson batch was truncated
        acc[(name, eps)] = np.array([float(a) for a, _ in out])
fig, ax = plt.subplots(figsize=(6, 3.5))
for i, eps in enumerate(sigmas):
    means = [acc[(n, eps)].mean() for n in dp_makers]
    stds = [acc[(n, eps)].std() for n in dp_makers]
    ax.bar(np.arange(len(dp_makers)) + 0.4 * i, means, 0.4, yerr=stds, label=f"eps = {eps:g}")
ax.set_xticks(np.arange(len(dp_makers)) + 0.2, list(dp_makers), fontsize=8)
ax.set_ylabel("test accuracy")
ax.set_ylim(0.5, 1.0)
ax.legend()
plt.show()
for (name, eps), a in acc.items():
    print(f"{name:14s} eps={eps:g}: {a.mean():.3f} +- {a.std():.3f}")
assert all(np.all(a > 0.3) for a in acc.values())  # every run learned (10 classes: chance is 0.1)

# %% [markdown]
# ## Verdict
#
# The transported estimators (E1, E3) reach the $\sigma^2 d/t$ law, the order of the MLE; EMA does not, because
# its lag bias does not vanish while the iterate moves. Measured figure asserted below: the final error of
# E1 and E3 against $\sigma^2 d / T = 0.1$ (500 repetitions, ±15%). The non-convex rate $T^{-12/19}$ is not
# reproduced (section 2: the measured exponent of E3 lies above it, and above SGD's $-1/2$).

# %%
final = {k: curves[k][-1] for k in ("E1 IGT", "E3 two-point")}
print(final, f"notebook ran in {time.perf_counter() - t_start:.1f} s")
assert all(abs(v - D / T) <= 0.15 * D / T for v in final.values())
assert curves["E0 EMA"][-1] > 2 * D / T
