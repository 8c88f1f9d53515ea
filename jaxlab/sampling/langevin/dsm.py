r"""A trained score for compositional SBI: an equinox network fitted by denoising score matching.

The whole pipeline of Geffner et al. (arXiv:2209.14249) and Linhart et al. (arXiv:2404.07593), as analysed by
Touron et al. (arXiv:2605.21253): simulate pairs ``(θ_0, x) ~ λ(θ) p(x | θ)`` one observation at a time,
fit ``s(θ, x, t) ≈ ∇log p_t(θ | x)`` by denoising score matching, then compose it over n observations
(:func:`jaxlab.sampling.langevin.scores.make_composite_score`) and sample the tall posterior with annealed
Langevin.

Denoising score matching (VP diffusion, noise prediction): with ``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε``,

    L(φ) = E_{t ~ U[t_min, 1], (θ_0, x), ε} || ε̂_φ(θ_t, x, t) - ε ||²,     s_φ(θ, x, t) = -ε̂_φ(θ, x, t) / sqrt(1-α_t),

whose minimiser gives the score of ``p_t(θ | x)`` (Vincent 2011). The network is a small MLP on
``(θ, x, embedding(t))``; training is the one trainer step of :mod:`jaxlab.core.train` (optax's Adam), driven by
:func:`jaxlab.core.run`.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float

from jaxlab.core.citations import cites
from jaxlab.core.loop import run
from jaxlab.core.train import make_train_step, train_init
from jaxlab.core.validation import check_int, check_positive
from jaxlab.sampling.langevin.papers import GEFFNER, LINHART, TOURON

__all__ = ["ScoreNet", "dsm_loss", "train_score_net"]


class ScoreNet(eqx.Module):
    """Noise-prediction MLP ``ε̂(θ, x, t)``; :meth:`score` turns it into ``s(θ, x, t) = -ε̂ / sqrt(1-α_t)``."""

    mlp: eqx.nn.MLP
    alpha_fn: Callable = eqx.field(static=True)

    def __init__(self, key, d: int, x_dim: int, alpha_fn: Callable, *, width: int = 64, depth: int = 3):
        d = check_int(d, "d", min_value=1)
        x_dim = check_int(x_dim, "x_dim", min_value=1)
        self.mlp = eqx.nn.MLP(d + x_dim + 4, d, width, depth, activation=jax.nn.silu, key=key)
        self.alpha_fn = alpha_fn

    def __call__(self, theta: Float[Array, " d"], x: Float[Array, " x_dim"], t) -> Float[Array, " d"]:
        t = jnp.asarray(t, theta.dtype)
        freqs = jnp.array([1.0, 4.0], theta.dtype) * jnp.pi * t
        emb = jnp.concatenate([jnp.sin(freqs), jnp.cos(freqs)])
        return self.mlp(jnp.concatenate([theta, jnp.atleast_1d(x), emb]))

    def score(self, theta, x, t):
        """Posterior score estimate ``s(θ, x, t)`` (the ``post_score_fn`` of a composite score)."""
        return -self(theta, x, t) / jnp.sqrt(1.0 - self.alpha_fn(jnp.asarray(t, theta.dtype)))


@cites(TOURON, GEFFNER)
def dsm_loss(net: Callable, key, theta0: Float[Array, "B d"], x: Float[Array, "B x_dim"], *,
             alpha_fn: Callable | None = None, t_min: float = 1e-3):
    """Monte Carlo denoising score-matching loss on a batch of simulated pairs ``(θ_0, x)``.

    ``net(θ_t, x, t) -> ε̂`` is any noise predictor; ``alpha_fn`` defaults to ``net.alpha_fn``."""
    k_t, k_e = jax.random.split(key)
    B = theta0.shape[0]
    t = jax.random.uniform(k_t, (B,), theta0.dtype, t_min, 1.0)
    eps = jax.random.normal(k_e, theta0.shape, theta0.dtype)
    a = (net.alpha_fn if alpha_fn is None else alpha_fn)(t)[:, None]
    theta_t = jnp.sqrt(a) * theta0 + jnp.sqrt(1.0 - a) * eps
    pred = jax.vmap(net)(theta_t, x, t)
    return jnp.mean(jnp.sum((pred - eps) ** 2, -1))


@cites(TOURON, LINHART)
def train_score_net(
    key, simulate: Callable, net: ScoreNet, *, num_steps: int = 2000, batch_size: int = 256,
    learning_rate: float = 3e-3, t_min: float = 1e-3,
) -> tuple[ScoreNet, Array]:
    """Fit ``net`` by denoising score matching on fresh simulations every step.

    Args:
      key: PRNG key.
      simulate: ``(key, batch_size) -> (θ_0 (B, d), x (B, x_dim))``, one observation per parameter.
      net: the initial :class:`ScoreNet`.
      num_steps, batch_size, learning_rate: Adam with a cosine-decayed learning rate.

    Returns:
      ``(trained net, losses (num_steps,))``.
    """
    num_steps = check_int(num_steps, "num_steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    learning_rate = check_positive(learning_rate, "learning_rate")
    opt = optax.adam(optax.cosine_decay_schedule(learning_rate, num_steps, 0.05))
    params, static = eqx.partition(net, eqx.is_inexact_array)

    def loss_fn(p, k, th, x):
        return dsm_loss(eqx.combine(p, static), k, th, x, t_min=t_min)

    train_step = make_train_step(loss_fn, opt)

    def step(k, state):
        k_sim, k_loss = jax.random.split(k)
        th, x = simulate(k_sim, batch_size)
        return train_step(state, k_loss, th, x)

    final, trace = run(step, train_init(params, opt), key, num_steps)
    return eqx.combine(final.params, static), trace.infos.loss
