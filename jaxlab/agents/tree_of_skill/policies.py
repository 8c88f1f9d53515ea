r"""Tree-of-Skill's networks: the goal-conditioned skill policy ``pi_k(u | o, g * m, m)`` (an actor-critic, what
PPO trains) and the guiding network ``G_{k' <- k}(o) = (mu_g, log sigma_g)`` that hands the current skill a goal
for its successor (equinox modules).

Paper: "Tree-of-Skill: neural-symbolic dynamic skill chaining in behavior-tree-driven RL" (2026; abstract only,
authors and arXiv id not retrieved); the architectures (tanh MLPs, a state-independent ``log_std``, a bounded
``mu_g``) are **[chosen]**.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

__all__ = ["GuidingNet", "SkillPolicy", "mlp"]


def mlp(key: jax.Array, n_in: int, n_out: int | str, width: int, depth: int) -> eqx.nn.MLP:
    """A tanh MLP ``n_in -> n_out`` (``"scalar"`` for a scalar output) with ``depth`` hidden layers of ``width``."""
    return eqx.nn.MLP(n_in, n_out, width, depth, activation=jnp.tanh, key=key)


class SkillPolicy(eqx.Module):
    """Goal-conditioned Gaussian actor-critic ``pi_k(u | o, g * m, m) = N(mu(x), diag(exp(log_std))^2)`` with
    ``x = [o, where(m > 0, g, 0), m]`` (two tanh MLPs, a state-independent ``log_std``; **[chosen]**).

    The goal enters only through ``where(m > 0, g, 0)`` and ``m``. ``policy(obs, goal, mask)`` returns
    ``(mean (action_dim,), log_std (action_dim,), value ())``; :meth:`act` the mean, :meth:`sample` a draw.

    Args:
      key: PRNG key of the initialisation.
      obs_dim: observation size.
      action_dim: action size.
      d_g: padded goal dimension (the MLPs read ``obs_dim + 2 d_g`` inputs).
      width: hidden width of both MLPs.
      depth: number of hidden layers of both MLPs.
      init_log_std: initial value of every ``log_std`` entry.

    Attributes:
      actor: the mean network ``x -> mu(x)``, an ``eqx.nn.MLP`` with ``action_dim`` outputs.
      critic: the value network ``x -> V(x)``, an ``eqx.nn.MLP`` with a scalar output.
      log_std: ``(action_dim,)`` float array, the log standard deviation of the Gaussian.
    """

    actor: eqx.nn.MLP
    critic: eqx.nn.MLP
    log_std: jax.Array

    def __init__(self, key: jax.Array, obs_dim: int, action_dim: int, d_g: int, width: int = 64, depth: int = 2,
                 init_log_std: float = -0.5):
        ka, kc = jax.random.split(key)
        n_in = obs_dim + 2 * d_g
        self.actor = mlp(ka, n_in, action_dim, width, depth)
        self.critic = mlp(kc, n_in, "scalar", width, depth)
        self.log_std = jnp.full((action_dim,), init_log_std)

    def __call__(self, obs, goal, mask):
        x = jnp.concatenate([obs, jnp.where(mask > 0, goal, 0.0), mask])
        return self.actor(x), self.log_std, self.critic(x)

    def act(self, obs, goal, mask):
        """Deterministic action (the mean), for evaluation."""
        return self(obs, goal, mask)[0]

    def sample(self, obs, goal, mask, key):
        """An action drawn from the policy, ``mean + exp(log_std) * N(0, I)`` (what PPO trains and scores)."""
        mean, log_std, _ = self(obs, goal, mask)
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape, mean.dtype)


class GuidingNet(eqx.Module):
    """The guiding network ``G_{k' <- k}(o) -> (mu_g, log sigma_g)`` that hands skill ``k`` a goal for its
    successor ``k'`` (**[chosen]** architecture): with ``z = MLP(o)`` split in two halves ``z_1, z_2``,
    ``mu_g = mu_scale * tanh(z_1)`` (bounded to the goal space) and ``log sigma_g = clip(z_2 + init_log_sigma,
    -5, 1)``; ``net(obs)`` returns both, ``(d_g,)`` each.

    Args:
      key: PRNG key of the initialisation.
      obs_dim: observation size.
      d_g: padded goal dimension.
      width: hidden width of the MLP.
      depth: number of hidden layers.
      mu_scale: bound of ``|mu_g|``.
      init_log_sigma: offset of ``log sigma_g`` (its value at ``z_2 = 0``).

    Attributes:
      mlp: the tanh ``eqx.nn.MLP`` ``obs_dim -> 2 d_g``.
      mu_scale: float, bound of ``|mu_g|`` (static).
      init_log_sigma: float, offset of ``log sigma_g`` (static).
    """

    mlp: eqx.nn.MLP
    mu_scale: float = eqx.field(static=True)
    init_log_sigma: float = eqx.field(static=True)

    def __init__(self, key: jax.Array, obs_dim: int, d_g: int, width: int = 64, depth: int = 2,
                 mu_scale: float = 1.0, init_log_sigma: float = -1.0):
        self.mlp = mlp(key, obs_dim, 2 * d_g, width, depth)
        self.mu_scale = float(mu_scale)
        self.init_log_sigma = float(init_log_sigma)

    def __call__(self, obs):
        out = self.mlp(obs)
        d = out.shape[0] // 2
        return self.mu_scale * jnp.tanh(out[:d]), jnp.clip(out[d:] + self.init_log_sigma, -5.0, 1.0)

