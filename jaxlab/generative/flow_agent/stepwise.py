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
    """``pi(z, g, avail)``: MLP on the task condition, output ``e_hat (D,)`` (``kind="regress"``) or logits over
    the tools (``kind="classify"``) **[chosen]**."""

    mlp: eqx.nn.MLP
    kind: str = eqx.field(static=True)

    def __init__(self, world: ToolWorld, kind: str = "regress", width: int = 256, depth: int = 2, *, key: Any):
        if kind not in ("regress", "classify"):
            raise ValueError(f"kind must be 'regress' or 'classify', got {kind!r}")
        self.kind = kind
        out = world.dim if kind == "regress" else world.n_tools
        self.mlp = eqx.nn.MLP(3 * world.dim, out, width, depth, activation=jax.nn.silu, key=key)

    def __call__(self, c: Float[Array, " C"]) -> Array:
        return self.mlp(c)


class StepwiseAgent(eqx.Module):
    """Step-wise baseline as an agent: a plan of one tool, the best available tool compatible with ``z``
    (nearest by cosine to ``e_hat``, or highest logit among the *seen* tools for the classifier)."""

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
    """Train the step-wise policy on the first tool of each reference plan: cosine loss ``1 - cos(e_hat, e_k)``
    (``regress``) or cross-entropy over the tools (``classify``); AdamW lr 1e-3, clipping 1.0."""
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
