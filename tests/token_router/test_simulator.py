"""Discrete-event simulator: exact closed forms in degenerate cases, a brute-force replay of the KV catch-up,
agreement with the fluid throughput models, and bad inputs."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.serving.token_router import (
    StepCostModel,
    derive_delayed_batching,
    throughput_lockstep,
    throughput_sequential,
)
from jaxlab.serving.token_router.simulator import bernoulli_sim_router, simulate

COST = StepCostModel(jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4]))
ROUTER = bernoulli_sim_router(0.2)


def always(model):
    return lambda rng, ids, pos: np.full(len(ids), model)


@pytest.mark.parametrize("deployment", ["shared", "separate"])
@pytest.mark.parametrize("policy", ["async_greedy", "lockstep"])
def test_single_model_greedy_is_exact(policy, deployment):
    one = StepCostModel(jnp.array([3.0]), jnp.array([0.5]))
    r = simulate(policy, one, always(0), 8, 600, deployment=deployment)
    assert abs(r.throughput / (8 / (3.0 + 0.5 * 8)) - 1) < 1e-12
    assert r.per_model_steps.tolist() == [75] and set(r.batch_sizes[0].tolist()) == {8}


def test_sequential_with_alternating_router_is_exact():
    # token t of every request alternates S, L: each step processes 2 tokens (1 new + 1 catch-up) after the first
    alt = lambda rng, ids, pos: (pos % 2).astype(int)  # noqa: E731
    r = simulate("sequential", COST, alt, 3, 3000, prompt_len=2)
    # 1500 S and 1500 L steps of 2 tokens each, except the first S visit of each request (1 token)
    assert abs(r.makespan - (1500 * 2.0 + 1500 * 10.0 + 2 * 3000 * 0.225 - 3 * 0.05)) < 1e-9
    assert r.processed_tokens.sum() == 2 * 3000 - 3  # every token processed by both models but the first 3


def test_every_token_is_processed_once_per_model():
    r = simulate("async_delayed", COST, ROUTER, 16, 4000, seed=3)
    # after the warm-up, each model processed every produced token (minus its outstanding catch-up)
    assert r.tokens >= 4000
    assert np.all(r.processed_tokens <= r.tokens) and np.all(r.processed_tokens >= r.tokens - 16 * 40)
    assert r.batch_sizes[1].min() >= 1 and sum(len(b) for b in r.batch_sizes) == r.per_model_steps.sum()


def test_lockstep_and_sequential_match_their_closed_forms():
    lock = np.mean([simulate("lockstep", COST, ROUTER, 16, 6000, seed=s).throughput for s in range(3)])
    seq = simulate("sequential", COST, ROUTER, 16, 6000).throughput
    assert abs(lock / float(throughput_lockstep(COST, 0.2, 16)) - 1) < 0.03
    assert abs(seq / float(throughput_sequential(COST, 0.2)) - 1) < 0.03


def test_delayed_batching_near_the_model_and_better_than_greedy():
    p = derive_delayed_batching(COST, 0.2, 8)
    d = np.mean([simulate("async_delayed", COST, ROUTER, 8, 3000, seed=s).throughput for s in range(2)])
    explicit = simulate("async_delayed", COST, ROUTER, 8, 3000, batch_threshold=p.batch_threshold,
                        timeout=p.timeout, seed=0)
    assert explicit.throughput == simulate("async_delayed", COST, ROUTER, 8, 3000, seed=0).throughput
    g = np.mean([simulate("async_greedy", COST, ROUTER, 8, 3000, seed=s).throughput for s in range(2)])
    assert abs(d / p.predicted_throughput - 1) < 0.1
    assert d > 1.25 * g
    # the L steps really wait for B_L* requests (or an empty S queue)
    assert np.median(explicit.batch_sizes[1]) >= p.batch_threshold


def test_separate_devices_gain_nothing_from_waiting():
    g = simulate("async_greedy", COST, ROUTER, 16, 3000, deployment="separate").throughput
    d = simulate("async_delayed", COST, ROUTER, 16, 3000, deployment="separate", batch_threshold=12,
                 timeout=50.0).throughput
    assert g >= 0.95 * d


def test_same_seed_same_result_and_zero_timeout_is_greedy():
    a = simulate("async_delayed", COST, ROUTER, 8, 1000, batch_threshold=4, timeout=0.0, seed=5)
    b = simulate("async_greedy", COST, ROUTER, 8, 1000, seed=5)
    assert a.throughput == b.throughput and a.per_model_steps.tolist() == b.per_model_steps.tolist()


BAD = [
    (dict(policy="fifo"), "policy"),
    (dict(deployment="cloud"), "deployment"),
    (dict(n_requests=0), "n_requests"),
    (dict(n_tokens=0), "n_tokens"),
    (dict(policy="async_delayed", batch_threshold=0), "batch_threshold"),
    (dict(policy="async_delayed", batch_threshold=9), "batch_threshold"),
    (dict(policy="async_delayed", batch_threshold=3, timeout=-1.0), "timeout"),
    (dict(policy="lockstep", batch_threshold=3), "async_delayed"),
    (dict(policy="sequential", deployment="separate"), "shared"),
    (dict(router_fn=always(2)), "outside the model set"),
    (dict(router_fn=always(-1)), "outside the model set"),
    (dict(router_fn=lambda rng, ids, pos: np.zeros(len(ids) + 1, int)), "shape"),
    (dict(cost=StepCostModel(jnp.array([2.0, -1.0]), jnp.array([0.1, 0.1]))), "alpha"),
    (dict(cost=StepCostModel(jnp.array([2.0, 1.0]), jnp.array([0.1, -0.1]))), "beta"),
]


@pytest.mark.parametrize(("kw", "match"), BAD)
def test_bad_inputs_raise(kw, match):
    args = dict(policy="async_greedy", cost=COST, router_fn=ROUTER, n_requests=8, n_tokens=100)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        simulate(args.pop("policy"), args.pop("cost"), args.pop("router_fn"), args.pop("n_requests"),
                 args.pop("n_tokens"), **args)
