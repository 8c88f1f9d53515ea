"""Value checks of the throughput model and routers hold eagerly and under ``jit`` (errors naming the argument)."""

import jax
import jax.numpy as jnp
import pytest

from jaxlab.serving.token_router import (
    StepCostModel,
    bernoulli_router,
    confidence_router,
    fit_step_cost,
    throughput_lockstep,
    throughput_separate,
    throughput_shared,
)

COST = (jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4]))


def _both(fn, args, match):
    with pytest.raises(ValueError, match=match):
        fn(*args)
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_cost_model_values():
    _both(lambda a: throughput_lockstep(StepCostModel(a, COST[1]), 0.2, 8), (jnp.array([0.0, 10.0]),),
          r"cost.alpha \(fixed step cost\) must be > 0")
    _both(lambda b: throughput_lockstep(StepCostModel(COST[0], b), 0.2, 8), (jnp.array([0.05, -0.4]),),
          r"cost.beta \(cost per token\) must be >= 0")


def test_fractions_and_thresholds():
    cost = StepCostModel(*COST)
    _both(lambda q: throughput_lockstep(cost, q, 8), (jnp.asarray(1.5),), "q_large must lie in")
    _both(lambda q: throughput_shared(cost, q, 8, 2), (jnp.asarray(0.0),), "q_large must lie in")
    _both(lambda b: throughput_shared(cost, 0.2, 8, b), (jnp.asarray(9.0),), "batch_threshold must lie in")
    _both(lambda q: bernoulli_router(jax.random.key(0), 4, q), (jnp.asarray(jnp.nan),), "q_large must be finite")
    _both(lambda t: confidence_router(jnp.zeros((2, 3)), t), (jnp.asarray(-0.5),), "tau must lie in")


def test_visits_and_fit():
    cost = StepCostModel(*COST)
    _both(lambda v: throughput_separate(cost, v, 8), (jnp.zeros(2),), "visits must have a positive entry")
    _both(lambda v: throughput_separate(cost, v, 8, exclusive=True), (jnp.array([0.5, 0.7]),),
          r"visits \(exclusive routing\) must")
    _both(lambda n: fit_step_cost(n, jnp.array([1.0, 2.0, 3.0])), (jnp.array([4.0, 4.0, 4.0]),),
          "batch_tokens must contain at least two distinct token counts")


def test_bernoulli_router_old_keyword_warns_and_matches():
    with pytest.warns(DeprecationWarning, match="batch_size"):
        old = bernoulli_router(jax.random.key(3), batch=16, q_large=0.3)
    assert bool(jnp.all(old == bernoulli_router(jax.random.key(3), batch_size=16, q_large=0.3)))
