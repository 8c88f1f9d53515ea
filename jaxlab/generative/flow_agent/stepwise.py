r"""FlowAgent's step-wise baselines **[chosen]**: a policy ``pi(z, g, avail)`` that picks one tool at a time.

Paper: T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving Agentic Reasoning"
(FlowAgent), arXiv:2605.07339 (abstract only). The regressor predicts the next reference tool's embedding
``e_hat`` (cosine loss ``1 - cos(e_hat, e_k)``) and is decoded to the nearest available compatible tool; the
classifier is a soft-max over the seen tools (cross-entropy), so it cannot pick unseen tools.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.validation import check_int
from jaxlab.generative.flow_agent.flow_matching import train_scan
from jaxlab.generative.flow_agent.world import K_DEFAULT, Tasks, ToolWorld, _normalize, task_condition, training_tasks

__all__ = [
    "StepwiseAgent",
    "StepwisePolicy",
    "train_stepwise",
]


class StepwisePolicy(eqx.Module):
    """The step-wise policy ``pi(z, g, avail)`` **[chosen]**: an MLP with SiLU on the task condition
    ``c = task_condition(z, g, avail)`` that outputs ``e_hat (D,)`` (``kind="regress"``) or logits over the ``M``
    tools (``kind="classify"``).

    Args:
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld` (sizes).
      kind: ``"regress"`` or ``"classify"``.
      width: int, the hidden width.
      depth: int, the number of hidden layers.
      key: PRNG key (initialisation).

    Attributes:
      mlp: the ``eqx.nn.MLP`` from ``3 D`` to ``D`` (regress) or ``M`` (classify) features.
      kind: ``"regress"`` or ``"classify"`` (static).

    Raises:
      ValueError: an unknown ``kind``.
    """

    mlp: eqx.nn.MLP
    kind: str = eqx.field(static=True)

    def __init__(self, world: ToolWorld, kind: str = "regress", width: int = 256, depth: int = 2, *, key: Any):
        if kind not in ("regress", "classify"):
            raise ValueError(f"kind must be 'regress' or 'classify', got {kind!r}")
        self.kind = kind
        out = world.dim if kind == "regress" else world.n_tools
        self.mlp = eqx.nn.MLP(3 * world.dim, out, width, depth, activation=jax.nn.silu, key=key)

    def __call__(self, c: Float[Array, " C"]) -> Array:
        """The policy output for one condition.

        Args:
          c: ``(3 D,)`` float array, the task condition.

        Returns:
          ``(D,)`` float array ``e_hat`` (regress) or ``(M,)`` logits (classify).
        """
        return self.mlp(c)


class StepwiseAgent(eqx.Module):
    """A step-wise baseline as an agent ``agent(key, world, z, g, avail) -> plan (K,)``: a plan of one tool, the
    available tool compatible with ``z`` of highest cosine to ``e_hat`` (regress) or highest logit among the *seen*
    tools (classify); -1 when there is none.

    Attributes:
      policy: the trained :class:`StepwisePolicy`.
      K: int, the plan length (static).
    """

    policy: StepwisePolicy
    K: int = eqx.field(static=True, default=K_DEFAULT)

    def __call__(self, key, world, z, g, avail):
        out = self.policy(task_condition(world, z, g, avail))
        ok = avail & (world.tool_in == z)
        if self.policy.kind == "regress":
            score = world.emb @ _normalize(out)
        else:
            score, ok = out, ok & world.seen
        k = jnp.where(jnp.any(ok), jnp.argmax(jnp.where(ok, score, -jnp.inf)), -1)
        return jnp.full(self.K, -1, jnp.int32).at[0].set(k.astype(jnp.int32))


@renamed_kwargs(steps="num_steps", batch="batch_size")
def train_stepwise(key: Any, world: ToolWorld, *, kind: str = "regress", num_steps: int = 3000,
                   batch_size: int = 256,
                   K: int = K_DEFAULT, n_train: int = 20000, width: int = 256,
                   tasks: Tasks | None = None) -> StepwisePolicy:
    """Train the step-wise policy on the first tool ``k`` of each reference plan: cosine loss
    ``1 - cos(e_hat, e_k)`` (``kind="regress"``) or cross-entropy over the tools (``kind="classify"``), with
    :func:`~jaxlab.generative.flow_agent.train_scan` (AdamW, learning rate 1e-3, weight decay 1e-4, clipping 1.0).

    Args:
      key: PRNG key (tasks, initialisation, training).
      world: the :class:`~jaxlab.generative.flow_agent.ToolWorld`.
      kind: ``"regress"`` or ``"classify"``.
      num_steps: int >= 1, the optimiser steps (``steps`` is its deprecated name).
      batch_size: int >= 1, examples per step (``batch`` is its deprecated name).
      K: int >= 1, the plan length of the sampled tasks.
      n_train: int >= 1, the tasks drawn when ``tasks`` is None.
      width: int, the hidden width.
      tasks: optional :class:`~jaxlab.generative.flow_agent.Tasks` to train on.

    Returns:
      The trained :class:`StepwisePolicy`.

    Raises:
      TypeError: an int argument that is not an int.
      ValueError: an unknown ``kind``, ``num_steps < 1`` or ``batch_size < 1``; the checks of
        :func:`~jaxlab.generative.flow_agent.training_tasks`.
    """
    steps = check_int(num_steps, "num_steps", min_value=1)
    batch = check_int(batch_size, "batch_size", min_value=1)
    kt, km, kf = jax.random.split(key, 3)
    tasks = training_tasks(kt, world, n_train, K=K) if tasks is None else tasks
    conds = jax.vmap(lambda s, g, a: task_condition(world, s, g, a))(tasks.s, tasks.g, tasks.avail)
    target = tasks.tools[:, 0]
    policy = StepwisePolicy(world, kind, width, key=km)

    def loss_fn(p, k):
        i = jax.random.randint(k, (batch,), 0, conds.shape[0])
        out = jax.vmap(p)(conds[i])
        if kind == "regress":
            return jnp.mean(1 - jnp.sum(_normalize(out) * world.emb[target[i]], axis=1))
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(out), target[i][:, None], axis=1))

    policy, _ = train_scan(kf, policy, loss_fn, num_steps=steps)
    return policy
