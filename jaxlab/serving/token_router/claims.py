"""Claims of TokenRouter-style delayed batching (area ``token_router``): the
single-model limit, the shared-device throughput model against the discrete-event simulator, delayed batching
against greedy launch and lockstep, the separate-device negative control, and the real tiny-model engine.

The throughput model and scheduler are a reconstruction from the abstract, not the paper's text. Default workload:
q = (0.8, 0.2), alpha = (2, 10) ms, beta = (0.05, 0.4) ms/token, 6000 tokens, seeds 0..2.
"""

from __future__ import annotations

import functools
import math
import statistics

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core import ClaimResult, claim
from jaxlab.core.verification import by_precision, mean_and_se
from jaxlab.serving.token_router.cost_model import (
    StepCostModel,
    derive_delayed_batching,
    throughput_lockstep,
    throughput_separate,
)
from jaxlab.serving.token_router.papers import TOKEN_ROUTER
from jaxlab.serving.token_router.simulator import bernoulli_sim_router, simulate

TITLE = "TokenRouter: delayed batching from a throughput model, simulator and a real tiny-model engine"
MODULES = ("jaxlab.serving.token_router", "jaxlab.serving.token_router.cost_model",
           "jaxlab.serving.token_router.routers", "jaxlab.serving.token_router.simulator",
           "jaxlab.serving.token_router.tiny_lm", "jaxlab.serving.token_router.engine")

_AREA = "token_router"


@functools.cache
def _cost() -> StepCostModel:
    """The default workload's step costs (built on first use: importing the claims touches no XLA backend)."""
    return StepCostModel(jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4]))


Q, TOKENS, SEEDS = 0.2, 6000, (0, 1, 2)
RATIO_SEEDS = tuple(range(10))  # delayed_beats_greedy_async: per-seed ratios, their spread gives the SE
GRID = (1, 2, 4, 8, 16, 32, 64, 128)


@functools.cache
def _des(policy: str, n: int, b: int | None = None, deployment: str = "shared") -> float:
    """Mean DES throughput over seeds 0..2 (tokens/ms); ``b`` = L's batch threshold (derived when None)."""
    kw = {} if b is None else {"batch_threshold": b}
    return float(np.mean([simulate(policy, _cost(), bernoulli_sim_router(Q), n, TOKENS, deployment=deployment,
                                   seed=s, **kw).throughput for s in SEEDS]))


@claim(area=_AREA, paper=TOKEN_ROUTER)
def single_model_limit_is_exact() -> ClaimResult:
    """with one model F(X) = N gives N / (alpha + beta N), and the greedy DES reproduces it; measured = max
    relative error of the bisection and of the DES (shared and separate) over N = 1, 8, 32, 128."""
    one = StepCostModel(jnp.array([3.0]), jnp.array([0.5]))
    err = 0.0
    for n in (1, 8, 32, 128):
        exact = n / (3.0 + 0.5 * n)
        err = max(err, abs(float(throughput_separate(one, jnp.array([1.0]), n)) / exact - 1))
        for dep in ("shared", "separate"):
            r = simulate("async_greedy", one, lambda rng, ids, pos: np.zeros(len(ids), int), n, 128 * 47,
                         deployment=dep)
            err = max(err, abs(r.throughput / exact - 1))
    # float32: the bisection stops at a bracket 4 eps32 wide (its midpoint ≤ 2 eps32 off the float32 root) and F(X)
    # = alpha X/(1 - beta X) rounds ≤ 4 times, moving the root by ≤ 4 eps32 (F's relative slope at the root is ≥ 1);
    # the DES runs in float64: ≤ 6 eps32 ≈ 7.2e-7
    return ClaimResult.at_most(err, by_precision(1e-9, 6 * 2.0**-23),
                               details="bisection and DES vs N/(alpha + beta N)")


@claim(area=_AREA, paper=TOKEN_ROUTER)
def derived_threshold_matches_spec_values() -> ClaimResult:
    """(model part) B_L* = 5, 23, 92 and X(B_L*) = 0.8547, 1.6028, 2.0264 tokens/ms for N = 8, 32, 128;
    measured = max |X(B_L*) - listed value| over the three N (a wrong B_L* fails outright)."""
    want = {8: (5, 0.8547), 32: (23, 1.6028), 128: (92, 2.0264)}
    err, got = 0.0, []
    for n, (b, x) in want.items():
        p = derive_delayed_batching(_cost(), Q, n)
        got.append(f"N={n}: B*={p.batch_threshold}, X={p.predicted_throughput:.4f}")
        err = max(err, abs(p.predicted_throughput - x) if p.batch_threshold == b else np.inf)
    return ClaimResult.at_most(err, 5e-5, details="; ".join(got))


@claim(area=_AREA, paper=TOKEN_ROUTER)
def des_at_derived_threshold_within_10pct_of_model() -> ClaimResult:
    """DES throughput at B_L* (mean of seeds 0..2) is within 10 % of the model value X(B_L*) for
    N = 8, 32, 128; measured = max relative gap."""
    gaps, det = [], []
    for n in (8, 32, 128):
        p = derive_delayed_batching(_cost(), Q, n)
        x = _des("async_delayed", n)
        gaps.append(abs(x / p.predicted_throughput - 1))
        det.append(f"N={n}: DES {x:.4f} vs model {p.predicted_throughput:.4f}")
    return ClaimResult.at_most(max(gaps), 0.10, details="; ".join(det))


@claim(area=_AREA, paper=TOKEN_ROUTER)
def derived_threshold_near_best_of_grid() -> ClaimResult:
    """DES throughput at B_L* is >= 0.95x the best DES throughput over B in {1, 2, 4, ..., 128} and
    [1, N]; measured = min over N = 8, 32, 128 of (DES at B_L*) / (best on the grid)."""
    ratios, det = [], []
    for n in (8, 32, 128):
        grid = [b for b in GRID if b <= n]
        xs = [_des("async_delayed", n, b) for b in grid]
        ratios.append(_des("async_delayed", n) / max(xs))
        det.append(f"N={n}: best B={grid[int(np.argmax(xs))]} ({max(xs):.4f}), ratio {ratios[-1]:.3f}")
    return ClaimResult.at_least(min(ratios), 0.95, details="; ".join(det))


@claim(area=_AREA, paper=TOKEN_ROUTER)
def delayed_beats_greedy_async() -> ClaimResult:
    """DES throughput at B_L* over greedy asynchronous launch (B_L = 1) is about 1.6 for N = 8 and 32 (the
    reconstruction expects about 1.65 and 1.61): the mean of the per-seed ratios over seeds 0..9 must reach 1.6
    within seed noise, mean + 4 SE >= 1.6 for each N (SE from the 10 seeds; a ratio of 1.25, or a bias of 4 SE
    below 1.6, fails), and 1.25, the bar this claim had before, stays a hard floor whatever the SE.
    Measured: the mean ratio of the N closest to failing."""
    stats = {}
    for n in (8, 32):
        ratios = [simulate("async_delayed", _cost(), bernoulli_sim_router(Q), n, TOKENS, seed=s).throughput
                  / simulate("async_greedy", _cost(), bernoulli_sim_router(Q), n, TOKENS, seed=s).throughput
                  for s in RATIO_SEEDS]
        stats[n] = mean_and_se(np.asarray(ratios))
    worst = min(stats, key=lambda n: stats[n][0] + 4 * stats[n][1])
    mean, se = stats[worst]
    det = ", ".join(f"N={n}: {m:.4f} (SE {e:.4f})" for n, (m, e) in stats.items())
    return ClaimResult(mean, ">= 1.6 within 4 SE", 1.6 - 4 * se,
                       all(math.isfinite(m) and m + 4 * e >= 1.6 and m >= 1.25 for m, e in stats.values()), det)


@claim(area=_AREA, paper=TOKEN_ROUTER)
def delayed_beats_lockstep() -> ClaimResult:
    """DES throughput at B_L* >= 1.2x X_sync for N = 8, 32 and >= 1.1x for N = 128 (the reconstruction
    expects about 1.56, 1.34, 1.16); measured = min over N of ratio / required ratio (pass at >= 1)."""
    need = {8: 1.2, 32: 1.2, 128: 1.1}
    r = {n: _des("async_delayed", n) / float(throughput_lockstep(_cost(), Q, n)) for n in need}
    lock = {n: _des("lockstep", n) / float(throughput_lockstep(_cost(), Q, n)) for n in need}
    det = ", ".join(f"N={n}: {v:.3f} (DES lockstep / X_sync {lock[n]:.3f})" for n, v in r.items())
    return ClaimResult.at_least(min(r[n] / need[n] for n in need), 1.0, details=det)


@claim(area=_AREA, paper=TOKEN_ROUTER)
def separate_devices_gain_nothing_from_waiting() -> ClaimResult:
    """(negative control) on separate devices greedy launch >= 0.95x delayed launch at every B of the
    grid, N = 8, 32, 128; measured = min over N and B of greedy / delayed."""
    worst, det = np.inf, []
    for n in (8, 32, 128):
        g = _des("async_greedy", n, deployment="separate")
        r = min(g / _des("async_delayed", n, b, "separate") for b in GRID if b <= n)
        worst = min(worst, r)
        det.append(f"N={n}: {r:.3f}")
    return ClaimResult.at_least(worst, 0.95, details="; ".join(det))


@claim(area=_AREA, paper=TOKEN_ROUTER, quick=False)
def real_engine_beats_lockstep() -> ClaimResult:
    """(soft, machine dependent) two tiny JAX decoders (S: 2 layers, d 64; L: 6 layers, d 256) on CPU,
    Bernoulli router q_L = 0.2, N = 16: decode tokens/s of the asynchronous engine with B_L* derived from the
    fitted step costs vs the lockstep engine, median of 3 interleaved runs after a warm-up (float32); measured =
    the ratio, which must exceed 1.2, the gain expected of the asynchronous engine at this workload. A wall-clock
    figure: it holds on a quiet machine (1.35-1.48 measured on 2 CPU cores), not with another process busy on
    the same cores (0.89-1.08), so run it alone."""
    from jaxlab.serving.token_router.engine import TokenRouterEngine, measure_step_cost, table_router
    from jaxlab.serving.token_router.routers import bernoulli_router
    from jaxlab.serving.token_router.tiny_lm import TinyDecoder

    # float32 weights and caches (the models' default dtype) even when verify runs in float64
    s = TinyDecoder(jax.random.key(0), num_layers=2, d_model=64, num_heads=2)
    lg = TinyDecoder(jax.random.key(1), num_layers=6, d_model=256, num_heads=4)
    grid = [(1, 1), (4, 1), (16, 1), (4, 4), (16, 4)]
    fits = [measure_step_cost(m, grid, ctx=48) for m in (s, lg)]
    cost = StepCostModel(jnp.array([max(f[0], 1e-3) for f in fits]), jnp.array([max(f[1], 1e-6) for f in fits]))
    n_prompts, n = 48, 16
    route = table_router(np.asarray(bernoulli_router(jax.random.key(2), n_prompts * 48, Q)).reshape(n_prompts, 48))
    prompts = [np.random.default_rng(i).integers(0, 256, 8) for i in range(n_prompts)]
    engines = {"delayed": TokenRouterEngine((s, lg), route, n_slots=n, cost=cost, q_large=Q),
               "lockstep": TokenRouterEngine((s, lg), route, n_slots=n, policy="lockstep")}
    tps = {k: [] for k in engines}
    for rep in range(4):
        for k, e in engines.items():
            tput = e.run(prompts, 40)[1].throughput
            if rep:  # the first round compiles
                tps[k].append(tput)
    ratio = statistics.median(tps["delayed"]) / statistics.median(tps["lockstep"])
    det = (f"tokens/s delayed {statistics.median(tps['delayed']):.0f} vs lockstep "
           f"{statistics.median(tps['lockstep']):.0f}; B_L*={engines['delayed'].batch_threshold}; fitted alpha "
           f"{np.round(np.asarray(cost.alpha), 3)} ms, beta {np.round(np.asarray(cost.beta), 4)} ms/token, "
           f"R2 {fits[0][2]:.2f}/{fits[1][2]:.2f}")
    return ClaimResult.at_least(ratio, 1.2, details=det)
