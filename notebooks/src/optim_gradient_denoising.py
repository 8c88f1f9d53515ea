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
    gaussian_noise,
    harmonic,
    igt,
    noise_multiplier_for,
    rls_init,
    rls_step,
    run,
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
# ## 2. Non-convex rate study (report only)
#
# $f(x) = \sum_i x_i^2/2 + 2\sin^2 x_i$, $d = 20$, $\sigma = 1$ (DP mode), normalized steps
# $x \leftarrow x - \eta\, m/\|m\|$, 5 seeds (rows of the parameter array), tuned over
# $\eta = c/\sqrt T$, $c \in \{0.1, 0.3, 1, 3\}$ and $\alpha \in \{0.03, 0.1, 0.3\}$ (DiSK: $\kappa = \alpha$,
# $\gamma = 0.5$; SGD: no denoiser). The figure is the mean of $\|\nabla f(x_t)\|^2$ over the last 10% of steps,
# best tuning, for $T \in \{100, 400, 1600\}$ (our planned range is $10^3..1.6\cdot 10^4$; shortened to fit
# a notebook). The paper claims $T^{-12/19}$ for its two-query method versus $T^{-1/2}$ for SGD; an earlier pilot
# run found no robust ordering, so the slopes are reported, not asserted.

# %%
d2, seeds = 20, 5
Ts = np.array([100, 400, 1600])
cs = np.array([0.1, 0.3, 1.0, 3.0])
alphas = np.array([0.03, 0.1, 0.3])


def loss(x):
    return jnp.sum(x**2 / 2 + 2 * jnp.sin(x) ** 2)


x0 = jnp.full((seeds, d2), 2.0)
normalize_rows = optax.stateless(
    lambda u, p: jax.tree_util.tree_map(lambda v: v / (jnp.linalg.norm(v, axis=-1, keepdims=True) + 1e-12), u))
# SGD is E0 with alpha = 1 (m_t = q_t): it shares E0's compiled program, as extra grid cells.
programs = {"E0 EMA": ema, "E2 DiSK": lambda a: disk(a, 0.5), "E3 two-point": two_point}

def grad2_path(make, lr, alpha):
    inner = optax.chain(normalize_rows, optax.scale(-lr))
    _, info = run(jax.random.key(1), loss, x0, make(alpha), inner, gaussian_noise(1.0), int(Ts.max()), mode="dp")
    return info.grad_norm2 / seeds

TT, CC, AA = np.meshgrid(Ts, cs, alphas, indexing="ij")
steps = np.arange(int(Ts.max()))
best, slopes = {}, {}
for name, make in programs.items():
    lr, al, tt = (CC / np.sqrt(TT)).ravel(), AA.ravel(), TT.ravel()
    if name == "E0 EMA":
        T1, C1 = np.meshgrid(Ts, cs, indexing="ij")
        lr, al, tt = np.r_[lr, (C1 / np.sqrt(T1)).ravel()], np.r_[al, np.ones(C1.size)], np.r_[tt, T1.ravel()]
    path = jax.jit(jax.vmap(lambda lr, a, make=make: grad2_path(make, lr, a)))
    g2 = np.asarray(path(jnp.asarray(lr), jnp.asarray(al)))
    window = (steps >= 0.9 * tt[:, None]) & (steps < tt[:, None])
    score = (g2 * window).sum(1) / window.sum(1)
    groups = {name: al < 1.0, "SGD": al == 1.0} if name == "E0 EMA" else {name: al < 1.0}
    for label, sel in groups.items():
        best[label] = np.array([score[sel & (tt == T_)].min() for T_ in Ts])
        slopes[label] = np.polyfit(np.log(Ts), np.log(best[label]), 1)[0]
makers = ["SGD", "E0 EMA", "E2 DiSK", "E3 two-point"]
fig, ax = plt.subplots(figsize=(6, 4))
for name in makers:
    ax.loglog(Ts, best[name], "o-", label=f"{name} (slope {slopes[name]:.2f})")
ax.set_xlabel("T")
ax.set_ylabel(r"best mean $\|\nabla f\|^2$, last 10%")
ax.legend(fontsize=8)
plt.show()
for name in makers:
    print(f"{name:14s}", " ".join(f"{v:.4f}" for v in best[name]), f" slope {slopes[name]:+.2f}",
          "(claimed -0.63 for the two-query method, -0.5 for SGD)")
assert all(np.all(np.isfinite(b)) and np.all(np.diff(b) < 0) for b in best.values())

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
# E1 and E3 against $\sigma^2 d / T = 0.1$ (500 repetitions, ±15%).

# %%
final = {k: curves[k][-1] for k in ("E1 IGT", "E3 two-point")}
print(final, f"notebook ran in {time.perf_counter() - t_start:.1f} s")
assert all(abs(v - D / T) <= 0.15 * D / T for v in final.values())
assert curves["E0 EMA"][-1] > 2 * D / T
