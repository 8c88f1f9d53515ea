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
    """Noise-prediction MLP ``ε̂(θ, x, t)``; :meth:`score` turns it into ``s(θ, x, t) = -ε̂ / sqrt(1-α_t)``.

    The input is ``(θ, x, sin(πt), sin(4πt), cos(πt), cos(4πt))`` (a small time embedding, chosen here); the
    architecture (SiLU MLP) is ours, not the papers'. Calling the module, ``net(θ (d,), x (x_dim,) or scalar,
    t)`` returns ``ε̂`` of shape ``(d,)``.

    Args:
      key: PRNG key initialising the MLP.
      d: parameter dimension, int ``>= 1``.
      x_dim: observation dimension, int ``>= 1``.
      alpha_fn: the noise schedule ``t -> α_t`` the network is trained for.
      width: hidden width of the MLP.
      depth: number of hidden layers.

    Attributes:
      mlp: the :class:`equinox.nn.MLP` from ``d + x_dim + 4`` inputs to ``d`` outputs.
      alpha_fn: the noise schedule (a static field).

    Raises:
      TypeError: ``d`` or ``x_dim`` is not an int.
      ValueError: ``d`` or ``x_dim`` is below 1.
    """

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
        """Posterior score estimate ``s(θ, x, t) = -ε̂(θ, x, t) / sqrt(1 - α_t)`` (a ``post_score_fn``).

        Args:
          theta: ``(d,)`` float array.
          x: ``(x_dim,)`` float array (or a scalar when ``x_dim = 1``), one observation.
          t: float (or 0-d array), the diffusion time, ``α_t < 1``.

        Returns:
          ``(d,)`` float array.
        """
        return -self(theta, x, t) / jnp.sqrt(1.0 - self.alpha_fn(jnp.asarray(t, theta.dtype)))


@cites(TOURON, GEFFNER)
def dsm_loss(net: Callable, key, theta0: Float[Array, "B d"], x: Float[Array, "B x_dim"], *,
             alpha_fn: Callable | None = None, t_min: float = 1e-3):
    """Monte Carlo denoising score-matching loss on a batch of simulated pairs ``(θ_0, x)``.

    ``(1/B) Σ_b ||ε̂(θ_t^b, x^b, t^b) - ε^b||²`` with ``t^b ~ U[t_min, 1)``, ``ε^b ~ N(0, I)`` and
    ``θ_t = sqrt(α_t) θ_0 + sqrt(1-α_t) ε``: one sample of ``(t, ε)`` per pair (Vincent 2011's denoising score
    matching in noise-prediction form, as trained by Geffner et al., arXiv:2209.14249). No input validation.

    Args:
      net: any noise predictor ``net(θ_t (d,), x, t) -> ε̂ (d,)`` (vmapped over the batch), e.g. a
        :class:`ScoreNet`.
      key: PRNG key for ``t`` and ``ε``.
      theta0: ``(B, d)`` float array of parameters ``θ_0``.
      x: ``(B, x_dim)`` (or ``(B,)``) array of the matching observations.
      alpha_fn: the noise schedule ``t -> α_t``; ``None`` means ``net.alpha_fn``.
      t_min: smallest diffusion time drawn.

    Returns:
      0-d float array, the loss.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.sampling.langevin import dsm_loss, vp_alpha
      >>> zero = lambda theta, x, t: jnp.zeros_like(theta)  # predicts no noise: loss = E||ε||² = d
      >>> theta0 = jax.random.normal(jax.random.key(0), (256, 2))
      >>> loss = dsm_loss(zero, jax.random.key(1), theta0, theta0, alpha_fn=vp_alpha)
      >>> round(float(loss))
      2
    """
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
    """Fit ``net`` by denoising score matching (:func:`dsm_loss`) on fresh simulations every step.

    Adam with a learning rate decayed by a cosine from ``learning_rate`` to ``0.05 · learning_rate`` over
    ``num_steps`` (chosen here), driven by :func:`jaxlab.core.run` with :func:`jaxlab.core.make_train_step`.

    Args:
      key: PRNG key, split into one key per step (simulation and loss).
      simulate: ``simulate(key, batch_size) -> (θ_0 (B, d), x (B, x_dim))``, one observation per parameter
        (``B = batch_size``), written in JAX (it is traced).
      net: the initial :class:`ScoreNet`.
      num_steps: number of Adam steps, int ``>= 1``.
      batch_size: simulated pairs per step, int ``>= 1``.
      learning_rate: positive float, the initial learning rate.
      t_min: smallest diffusion time of the loss.

    Returns:
      ``(trained_net, losses)``: the trained :class:`ScoreNet` and a ``(num_steps,)`` float array of losses.

    Raises:
      TypeError: ``num_steps`` or ``batch_size`` is not an int.
      ValueError: ``num_steps`` or ``batch_size`` is below 1, or ``learning_rate`` is not positive and finite.

    Example (a full training run, so a literal block the doctests do not execute)::

        import jax
        from jaxlab.sampling.langevin import ScoreNet, train_score_net, vp_alpha

        def simulate(key, b):
            k1, k2 = jax.random.split(key)
            theta = jax.random.normal(k1, (b, 1))
            return theta, theta + 0.5 * jax.random.normal(k2, (b, 1))

        net = ScoreNet(jax.random.key(0), 1, 1, vp_alpha, width=16, depth=1)
        net, losses = train_score_net(jax.random.key(1), simulate, net, num_steps=2000, batch_size=256)
        post_score_fn = net.score    # (θ, x, t) -> s(θ, x, t), for make_composite_score
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
