"""Benchmark of jaxlab.serving token routing (issue 15 part A): decode throughput of the TokenRouter-style engine
(model-centric subservers, delayed batching with B_L* derived from fitted step costs) against lockstep routed
decoding (request-centric: every step all requests, S on its sub-batch then L on its sub-batch), same tiny models
(S: 2 layers, d 64; L: 6 layers, d 256; random init, float32), same Bernoulli routing table (q_L = 0.2), same
prompts (8 tokens, 40 new, 48 prompts, closed system of N concurrent requests), one process.

Each engine run is one timed call; the runs are interleaved round-robin by ``time_interleaved`` (the first call of
each, which compiles the step shapes, is reported as ``compile_s``). ``ratio`` = lockstep time / engine time =
engine throughput / lockstep throughput; goal: >= 1.5 (the paper reports 1.83x-64x on GPUs). Also reported: the
fitted step costs and the throughput-model prediction of the ratio, X(B_L*) / X_sync. Run:
``python bench/_agents_token_router.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.serving.token_router import StepCostModel, bernoulli_router, derive_delayed_batching, throughput_lockstep
from jaxlab.serving.token_router.engine import TokenRouterEngine, measure_step_cost, table_router
from jaxlab.serving.token_router.tiny_lm import TinyDecoder

AREA = "token_router"
Q, PROMPTS, PROMPT_LEN, NEW = 0.2, 48, 8, 40


def main() -> None:
    cal = calibration_gflops()
    small = TinyDecoder(jax.random.key(0), num_layers=2, d_model=64, num_heads=2)
    large = TinyDecoder(jax.random.key(1), num_layers=6, d_model=256, num_heads=4)
    grid = [(1, 1), (4, 1), (16, 1), (4, 4), (16, 4)]
    fits = [measure_step_cost(m, grid, ctx=48) for m in (small, large)]
    cost = StepCostModel(jnp.array([max(f[0], 1e-3) for f in fits]), jnp.array([max(f[1], 1e-6) for f in fits]))
    table = np.asarray(bernoulli_router(jax.random.key(2), PROMPTS * 48, Q)).reshape(PROMPTS, 48)
    route = table_router(table)
    prompts = [np.random.default_rng(i).integers(0, 256, PROMPT_LEN) for i in range(PROMPTS)]
    for n in (16, 32):
        ours = TokenRouterEngine((small, large), route, n_slots=n, cost=cost, q_large=Q)
        greedy = TokenRouterEngine((small, large), route, n_slots=n, policy="async_greedy")
        lock = TokenRouterEngine((small, large), route, n_slots=n, policy="lockstep")
        outs = {}

        def runner(name, engine, outs=outs):
            def go():
                out, stats = engine.run(prompts, NEW)
                outs[name] = (out, stats)
                return stats.tokens

            return go

        t = time_interleaved({"ours": (runner("ours", ours), ()), "greedy": (runner("greedy", greedy), ()),
                              "lockstep": (runner("lockstep", lock), ())}, repeats=5)
        same = all(np.array_equal(a, b) for a, b in zip(outs["ours"][0], outs["lockstep"][0], strict=True))
        p = derive_delayed_batching(cost, Q, n)
        predicted = p.predicted_throughput / float(throughput_lockstep(cost, Q, n))
        tokens = outs["ours"][1].tokens
        common = dict(quality={"outputs_equal": float(same), "tokens": tokens,
                               "tokens_per_s_ours": tokens / t["ours"]["median_s"]},
                      calibration=cal, n_requests=n, batch_threshold=p.batch_threshold, predicted_ratio=predicted,
                      alpha_ms=[float(a) for a in cost.alpha], beta_ms=[float(b) for b in cost.beta],
                      r2=[fits[0][2], fits[1][2]], dtype="float32")
        emit(AREA, f"engine_vs_lockstep_N{n}", ours_s=t["ours"]["median_s"], peer="jaxlab lockstep engine",
             peer_s=t["lockstep"]["median_s"], compile_s=t["ours"]["first_s"] - t["ours"]["median_s"], **common,
             goal_ratio=1.5)
        emit(AREA, f"engine_vs_async_greedy_N{n}", ours_s=t["ours"]["median_s"], peer="jaxlab async greedy engine",
             peer_s=t["greedy"]["median_s"], compile_s=t["ours"]["first_s"] - t["ours"]["median_s"], **common,
             goal_ratio=1.0)


if __name__ == "__main__":
    main()
