"""Tiny decoder: KV-cached steps equal the cache-free forward pass; the engine's outputs equal the routed
reference decode token for token under every policy; bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.serving.token_router import StepCostModel, bernoulli_router
from jaxlab.serving.token_router.engine import TokenRouterEngine, measure_step_cost, reference_decode, table_router
from jaxlab.serving.token_router.tiny_lm import TinyDecoder, decode_step, forward

V, T = 32, 32
fwd = jax.jit(forward)


@pytest.fixture(scope="module")
def models():
    s = TinyDecoder(jax.random.key(0), num_layers=1, d_model=16, num_heads=2, vocab=V, max_len=T, dtype=jnp.float64)
    lg = TinyDecoder(jax.random.key(1), num_layers=2, d_model=32, num_heads=4, vocab=V, max_len=T, dtype=jnp.float64)
    return s, lg


@pytest.fixture(scope="module")
def workload():
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, V, rng.integers(2, 6)) for _ in range(7)]
    table = np.asarray(bernoulli_router(jax.random.key(2), 7 * T, 0.3)).reshape(7, T)
    return prompts, table_router(table)


@pytest.fixture(scope="module")
def reference(models, workload):
    prompts, route = workload
    return reference_decode(models, route, prompts, 10)


def test_cached_chunks_equal_full_forward(models):
    _, m = models
    toks = jax.random.randint(jax.random.key(3), (2, 12), 0, V)
    ref = [fwd(m, toks[i]) for i in range(2)]
    cache = m.init_cache(2, 16)
    step = jax.jit(decode_step)
    # row 0 takes chunks of 5 then 1 tokens, row 1 of 2 then 4 (with padding columns in the second step)
    logits, hid, cache = decode_step(m, cache, toks[:, :5], jnp.array([0, 0]), jnp.array([5, 2]))
    np.testing.assert_allclose(logits[0], ref[0][0][4], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(logits[1], ref[1][0][1], rtol=1e-10, atol=1e-12)
    nxt = jnp.stack([jnp.concatenate([toks[0, 5:6], jnp.zeros(3, int)]), toks[1, 2:6]])
    logits, hid, cache = step(m, cache, nxt, jnp.array([5, 2]), jnp.array([1, 4]))
    np.testing.assert_allclose(logits[0], ref[0][0][5], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(logits[1], ref[1][0][5], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hid[1], ref[1][1][5], rtol=1e-10, atol=1e-12)
    # the forward pass is causal: a later token never changes an earlier logit
    other = toks[0].at[8].set((toks[0, 8] + 1) % V)
    changed = fwd(m, other)[0]
    np.testing.assert_allclose(changed[:8], ref[0][0][:8], rtol=1e-12)
    assert not np.allclose(changed[8], ref[0][0][8])


def test_decode_step_vmaps_over_independent_caches(models):
    s, _ = models
    toks = jax.random.randint(jax.random.key(4), (3, 1, 4), 0, V)
    caches = jax.vmap(lambda _: s.init_cache(1, 8))(jnp.arange(3))
    logits, _, _ = jax.jit(jax.vmap(lambda c, t: decode_step(s, c, t, jnp.array([0]))))(caches, toks)
    ref = jax.jit(jax.vmap(lambda t: forward(s, t)[0][-1]))(toks[:, 0])
    np.testing.assert_allclose(logits[:, 0], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("policy", ["async_delayed", "lockstep", "sequential", "async_greedy"])
def test_engine_equals_routed_reference_decode(models, workload, reference, policy):
    prompts, route = workload
    ref = reference
    kw = dict(batch_threshold=3, timeout=1e9) if policy == "async_delayed" else {}
    out, stats = TokenRouterEngine(models, route, n_slots=4, policy=policy, token_buckets=(32,), **kw).run(prompts, 10)
    assert all(np.array_equal(a, b) for a, b in zip(out, ref, strict=True))
    assert stats.tokens == 70 and sum(stats.steps) >= 70 // 4
    # every token is processed once by each model that sees the request after its first visit (prefill included)
    assert stats.tokens_processed[0] <= sum(p.size for p in prompts) + 70
    if policy == "async_delayed":
        assert stats.mean_batch[1] > 1.0  # the large model batches
    if policy == "sequential":
        assert stats.mean_batch == (1.0, 1.0)


@pytest.mark.parametrize("policy", ["async_delayed", "async_greedy"])
def test_step_token_budget_keeps_outputs_and_bounds_batches(models, workload, reference, policy):
    prompts, route = workload
    kw = dict(batch_threshold=3, timeout=1e9) if policy == "async_delayed" else {}
    runs = {b: TokenRouterEngine(models, route, n_slots=4, policy=policy, token_buckets=(32,), max_step_tokens=b,
                                 **kw).run(prompts, 10) for b in (1, 6, None)}
    for out, stats in runs.values():
        assert all(np.array_equal(a, b) for a, b in zip(out, reference, strict=True))
        assert stats.tokens == 70
    assert runs[1][1].mean_batch == (1.0, 1.0)  # every request brings >= 1 token: one request per step
    assert max(runs[None][1].mean_batch) > 1.0
    assert sum(runs[6][1].steps) >= sum(runs[None][1].steps)


def test_routing_really_uses_both_models(models, workload, reference):
    prompts, _ = workload
    only = [reference_decode(models, table_router(np.full((7, T), k)), prompts, 10) for k in (0, 1)]
    for o in only:  # the routed outputs differ from each single-model decode
        assert not all(np.array_equal(a, b) for a, b in zip(o, reference, strict=True))


def test_measured_step_cost_fit(models):
    alpha, beta, r2, n, lat = measure_step_cost(models[1], [(1, 1), (4, 8)], ctx=16, repeats=3)
    assert n.tolist() == [1, 32] and np.all(lat > 0) and alpha > 0
    assert np.isfinite(beta) and r2 <= 1.0


def test_derived_parameters_in_engine(models, workload):
    route = workload[1]
    e = TokenRouterEngine(models, route, n_slots=8, cost=StepCostModel(jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4])),
                          q_large=0.2)
    assert (e.batch_threshold, e.timeout) == (5, 9.0)  # B_L* and tau_L* of the default workload at N = 8


def test_bad_inputs(models, workload):
    prompts, route = workload
    eng = TokenRouterEngine(models, route, n_slots=4, policy="async_greedy", token_buckets=(32,))
    with pytest.raises(ValueError, match="max length"):
        eng.run([np.arange(30) % V], 5)
    with pytest.raises(ValueError, match="max_new_tokens"):
        eng.run(prompts, 0)
    with pytest.raises(ValueError, match="outside the model set"):
        TokenRouterEngine(models, table_router(np.full((7, T), 2)), n_slots=2, policy="lockstep").run(prompts, 2)
    with pytest.raises(ValueError, match="batch_threshold"):
        TokenRouterEngine(models, route, n_slots=2, batch_threshold=3)
    with pytest.raises(ValueError, match="cost and q_large"):
        TokenRouterEngine(models, route, n_slots=2)
    with pytest.raises(ValueError, match="timeout"):
        TokenRouterEngine(models, route, n_slots=2, batch_threshold=1, timeout=-1.0)
    with pytest.raises(ValueError, match="max_step_tokens"):
        TokenRouterEngine(models, route, n_slots=2, policy="async_greedy", max_step_tokens=0)
    with pytest.raises(ValueError, match="policy"):
        TokenRouterEngine(models, route, n_slots=2, policy="fifo")
    s = models[0]
    with pytest.raises(ValueError, match="tokens"):
        decode_step(s, s.init_cache(1, 8), jnp.zeros((1, 2, 2), int), jnp.array([0]))
    with pytest.raises(ValueError, match="pos"):
        decode_step(s, s.init_cache(1, 8), jnp.zeros((1, 4), int), jnp.array([6]))
    with pytest.raises(ValueError, match="lengths"):
        decode_step(s, s.init_cache(1, 8), jnp.zeros((1, 4), int), jnp.array([0]), jnp.array([5]))
