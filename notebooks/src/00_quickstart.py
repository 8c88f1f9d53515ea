# %% [markdown]
# # jaxlab quickstart: kernels, MMD, and a sharded batch
#
# This notebook shows the shared primitives every jaxlab area builds on:
# Gaussian Gram matrices, the weighted MMD² between two samples, and a batch of MMD² evaluations laid out over
# all devices with `sharded_vmap`. It checks one closed form: for $X \sim N(0, I_d)$ and
# $Y \sim N(\delta e_1, I_d)$ with the Gaussian kernel of length scale $\ell$,
#
# $$\mathrm{MMD}^2 = 2\Big(\frac{\ell^2}{\ell^2 + 2}\Big)^{d/2}\Big(1 - e^{-\delta^2 / (2(\ell^2 + 2))}\Big).$$

# %%
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

jax.config.update("jax_enable_x64", True)
from jaxlab.core import sharded_vmap
from jaxlab.core.quadrature import gaussian_rule
from jaxlab.kernels import gram, ksd, mmd2

print(jax.devices())

# %% [markdown]
# ## A Gram matrix and its spectrum

# %%
X = jax.random.normal(jax.random.key(0), (300, 2))
K = gram(X, lengthscale=1.0)
eig = jnp.linalg.eigvalsh(K)
print(f"K is {K.shape}, smallest eigenvalue {float(eig.min()):.2e} (PSD), largest {float(eig.max()):.1f}")

# %% [markdown]
# ## MMD² against the closed form, for samples and for a weighted quadrature rule
#
# A sample of size $n$ gives a noisy (biased V-statistic) estimate; a Gauss–Hermite rule with weights is a
# weighted particle set whose MMD² matches the closed form to rounding.

# %%
d, ell = 2, 1.0
deltas = np.linspace(0.0, 3.0, 13)
exact = 2 * (ell**2 / (ell**2 + 2)) ** (d / 2) * (1 - np.exp(-(deltas**2) / (2 * (ell**2 + 2))))
Z, w = gaussian_rule(jnp.zeros(d), jnp.eye(d), 24)
quad = np.array([float(mmd2(Z, w, Z + jnp.array([dl, 0.0]), w, lengthscale=ell)) for dl in deltas])

keys = jax.random.split(jax.random.key(1), 2 * len(deltas)).reshape(len(deltas), 2)
sample = lambda k, dl: mmd2(  # noqa: E731
    jax.random.normal(k[0], (400, d)), None, jax.random.normal(k[1], (400, d)) + jnp.array([dl, 0.0]), None,
    lengthscale=ell)
samp = np.asarray(jax.jit(jax.vmap(sample))(keys, jnp.asarray(deltas)))

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(deltas, exact, "k-", label="closed form")
ax.plot(deltas, quad, "o", mfc="none", label="Gauss–Hermite rule (weighted)")
ax.plot(deltas, samp, "x", label="400 + 400 samples")
ax.set_xlabel(r"mean shift $\delta$")
ax.set_ylabel(r"MMD$^2$")
ax.legend()
plt.tight_layout()
plt.show()
quad_err = float(np.max(np.abs(quad - exact)))
print(f"max |quadrature - closed form| = {quad_err:.2e}")

# %% [markdown]
# ## KSD: a sample from the target scores better than a shifted one

# %%
S = jax.random.normal(jax.random.key(2), (500, 2))
print("KSD, sample of N(0, I):   ", float(ksd(S, None, -S, lengthscale=1.0)))
print("KSD, sample of N(e1, I):  ", float(ksd(S + jnp.array([1.0, 0.0]), None, -(S + jnp.array([1.0, 0.0])),
                                              lengthscale=1.0)))

# %% [markdown]
# ## A sharded batch
#
# `sharded_vmap` splits the leading axis over every device (one here; set
# `XLA_FLAGS=--xla_force_host_platform_device_count=8` before starting Python to simulate eight) and gives the
# same numbers as `jax.vmap`.

# %%
batch = jax.random.normal(jax.random.key(3), (10, 200, 2))
Y = jax.random.normal(jax.random.key(4), (200, 2)) + 0.5
f = lambda x: mmd2(x, None, Y, None, lengthscale=1.0)  # noqa: E731
sharded = sharded_vmap(f)(batch)
plain = jax.vmap(f)(batch)
shard_err = float(jnp.max(jnp.abs(sharded - plain)))
print(f"{len(jax.devices())} device(s); max |sharded - vmap| = {shard_err:.1e}")

# %%
assert quad_err < 1e-11, quad_err
assert shard_err < 1e-14, shard_err
