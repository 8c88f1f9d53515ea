"""Benchmark of the alignment-limits area: exact reward–KL frontiers, the sample-based frontier estimator and
best-of-N, jaxlab (jit + vmap, float32) against numpy/scipy implementations of the same computations, side by
side in one process, medians after a warm-up call (compile time reported separately).

The peer: the spec names TRL's ``BestOfNSampler`` and PPO/GRPO trainers, but those select among generations of a
torch language model; given the rewards of n samples, what remains is the tilt, the KL/gain sums and the
order-statistic weights, so the peer is numpy/scipy code of exactly that work (a loop over β, vectorised over
prompts and outputs). No public code of the paper exists.

Issue 6 goal: exact frontier over 1000 prompts x 50,000 outputs x 64 betas at >= 10x numpy. That size is 3.2e9
tilt evaluations; on a shared 2-core CPU the default case is scaled down (same per-element work) and reports the
throughput in elements per second; ``ALIGNMENT_FULL=1`` also runs the full size once, round-robin with numpy.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp

jax.config.update("jax_enable_x64", True)  # for the float64 agreement checks; timings use float32 arrays

from jaxlab.alignment import best_of_n, bon_from_samples, frontier, frontier_from_samples  # noqa: E402
from jaxlab.core.bench import calibration_gflops, emit, time_interleaved  # noqa: E402

AREA = "alignment"


def numpy_frontier(log_pi0: np.ndarray, r: np.ndarray, betas: np.ndarray):
    """(P, V) problems, (B,) betas -> KL, reverse KL and gain of shape (P, B): a loop over β."""
    pi0 = np.exp(log_pi0)
    mean0 = np.sum(pi0 * r, axis=1)
    kl, rkl, gain = (np.empty((r.shape[0], betas.size), r.dtype) for _ in range(3))
    for j, b in enumerate(betas):
        a = log_pi0 + r / b
        log_pi = a - logsumexp(a, axis=1, keepdims=True)
        pi = np.exp(log_pi)
        kl[:, j] = np.sum(pi * (log_pi - log_pi0), axis=1)
        rkl[:, j] = np.sum(pi0 * (log_pi0 - log_pi), axis=1)
        gain[:, j] = np.sum(pi * r, axis=1) - mean0
    return kl, rkl, gain


def numpy_sample_frontier(r: np.ndarray, betas: np.ndarray):
    """(P, n) rewards -> K̂L, ĝain, ESS of shape (P, B) with self-normalised weights, a loop over β."""
    n = r.shape[1]
    rbar = r.mean(axis=1, keepdims=True)
    kl, gain, ess = (np.empty((r.shape[0], betas.size), r.dtype) for _ in range(3))
    for j, b in enumerate(betas):
        a = r / b
        log_w = a - logsumexp(a, axis=1, keepdims=True)
        w = np.exp(log_w)
        gain[:, j] = np.sum(w * (r - rbar), axis=1)
        kl[:, j] = np.sum(w * log_w, axis=1) + np.log(n)
        ess[:, j] = 1.0 / np.sum(w * w, axis=1)
    return kl, gain, ess


def numpy_bon_from_samples(r: np.ndarray, n_bon: float):
    n = r.shape[1]
    i = np.arange(1, n + 1, dtype=r.dtype)
    w = (i / n) ** n_bon - ((i - 1) / n) ** n_bon
    return np.sort(r, axis=1) @ w - r.mean(axis=1)


def numpy_best_of_n(log_pi0: np.ndarray, r: np.ndarray, n_bon: float):
    """Exact tie-aware BoN KL and gain for (P, V) problems, by sorting and reward levels (np.unique per prompt)."""
    kls, gains = [], []
    for lp, rr in zip(log_pi0, r, strict=True):
        pi0 = np.exp(lp)
        levels, inv = np.unique(rr, return_inverse=True)
        q = np.bincount(inv, weights=pi0, minlength=levels.size)
        F = np.cumsum(q)
        p_level = F**n_bon - np.concatenate([[0.0], F[:-1]]) ** n_bon
        pi = pi0 * (p_level / q)[inv]
        kls.append(np.sum(np.where(pi > 0, pi * np.log(pi / pi0), 0.0)))
        gains.append(pi @ rr - pi0 @ rr)
    return np.array(kls), np.array(gains)


def rel_err(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-6)))


def problems(rng, P: int, V: int, dtype):
    logits = 2.0 * rng.standard_normal((P, V))
    log_pi0 = logits - logsumexp(logits, axis=1, keepdims=True)
    return log_pi0.astype(dtype), rng.standard_normal((P, V)).astype(dtype)


def main() -> None:
    calib = calibration_gflops()
    rng = np.random.default_rng(0)

    # 1. exact frontier on finite spaces: P prompts x V outputs x B betas
    P, V, B = 32, 50_000, 16
    log_pi0, r = problems(rng, P, V, np.float64)
    betas = np.logspace(-1, 1, B)
    ours_fn = jax.jit(jax.vmap(frontier, in_axes=(0, 0, None)))
    ours64 = ours_fn(jnp.asarray(log_pi0[:4]), jnp.asarray(r[:4]), jnp.asarray(betas))
    ref64 = numpy_frontier(log_pi0[:4], r[:4], betas)
    diff64 = max(float(np.max(np.abs(np.asarray(a) - b)))
                 for a, b in zip((ours64.kl, ours64.reverse_kl, ours64.gain), ref64, strict=True))
    lp32, r32, b32 = log_pi0.astype(np.float32), r.astype(np.float32), betas.astype(np.float32)
    args = (jnp.asarray(lp32), jnp.asarray(r32), jnp.asarray(b32))
    # the floor of this work on XLA-CPU: one fused exp-and-sum per (prompt, output, beta), nothing else
    floor_fn = jax.jit(lambda a, b, c: jnp.sum(jnp.exp(a[..., None] - b[..., None] / c), axis=1))
    timed = time_interleaved({"ours": (ours_fn, args), "peer": (numpy_frontier, (lp32, r32, b32)),
                              "floor": (floor_fn, args)}, repeats=3)
    ours, peer, exp_floor = timed["ours"], timed["peer"], timed["floor"]
    out, ref = ours_fn(*args), numpy_frontier(log_pi0, r, betas)
    rel32 = max(rel_err(out.kl, ref[0]), rel_err(out.gain, ref[2]))
    emit(AREA, f"exact_frontier_P{P}_V{V}_B{B}_float32", ours_s=ours["median_s"], peer="numpy loop over beta",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff_float64": diff64, "max_rel_diff_float32_vs_float64": rel32},
         elements_per_s=P * V * B / ours["median_s"], exp_floor_s=exp_floor["median_s"],
         exp_floor_fraction=exp_floor["median_s"] / ours["median_s"],
         full_issue_size_s_estimate=1000 * 50_000 * 64 / (P * V * B) * ours["median_s"], goal_ratio=10.0)

    if os.environ.get("ALIGNMENT_FULL") == "1":  # the issue's size, 1000 x 50,000 x 64 (minutes on 2 cores)
        P, V, B = 1000, 50_000, 64
        lp32, r32 = problems(np.random.default_rng(1), P, V, np.float32)
        b32 = np.logspace(-1, 1, B).astype(np.float32)
        t = time_interleaved({"ours": (ours_fn, tuple(map(jnp.asarray, (lp32, r32, b32)))),
                              "numpy": (numpy_frontier, (lp32, r32, b32))}, repeats=1)
        emit(AREA, f"exact_frontier_P{P}_V{V}_B{B}_float32", ours_s=t["ours"]["median_s"],
             peer="numpy loop over beta", peer_s=t["numpy"]["median_s"],
             compile_s=t["ours"]["first_s"] - t["ours"]["median_s"], calibration=calib,
             elements_per_s=P * V * B / t["ours"]["median_s"], goal_ratio=10.0)

    # 2. frontier from base-model samples: P prompts x n samples x B betas
    P, n, B = 16, 100_000, 32
    x = rng.standard_normal((P, n)) * rng.uniform(0.5, 2.0, size=(P, 1))
    betas = np.logspace(-1, 1, B)
    samp_fn = jax.jit(frontier_from_samples)
    o64 = samp_fn(jnp.asarray(x[:2]), jnp.asarray(betas))
    ref64 = numpy_sample_frontier(x[:2], betas)
    diff64 = max(float(np.max(np.abs(np.asarray(a) - b))) for a, b in zip((o64.kl, o64.gain), ref64[:2], strict=True))
    x32, b32 = x.astype(np.float32), betas.astype(np.float32)
    timed = time_interleaved({"ours": (samp_fn, (jnp.asarray(x32), jnp.asarray(b32))),
                              "peer": (numpy_sample_frontier, (x32, b32))}, repeats=3)
    ours, peer = timed["ours"], timed["peer"]
    out, ref = samp_fn(jnp.asarray(x32), jnp.asarray(b32)), numpy_sample_frontier(x, betas)
    rel32 = max(rel_err(out.kl, ref[0]), rel_err(out.gain, ref[1]))
    emit(AREA, f"sample_frontier_P{P}_n{n}_B{B}_float32", ours_s=ours["median_s"], peer="numpy loop over beta",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff_float64": diff64, "max_rel_diff_float32_vs_float64": rel32},
         elements_per_s=P * n * B / ours["median_s"], goal_ratio=1.0)

    # 3. best-of-N from samples (order-statistic weights), N = 16
    P, n = 64, 100_000
    x = rng.standard_normal((P, n))
    bon_fn = jax.jit(lambda a: bon_from_samples(a, 16)[1])
    diff64 = float(np.max(np.abs(np.asarray(bon_fn(jnp.asarray(x[:4]))) - numpy_bon_from_samples(x[:4], 16))))
    x32 = x.astype(np.float32)
    timed = time_interleaved({"ours": (bon_fn, (jnp.asarray(x32),)),
                              "peer": (numpy_bon_from_samples, (x32, np.float32(16)))}, repeats=3)
    ours, peer = timed["ours"], timed["peer"]
    rel32 = rel_err(bon_fn(jnp.asarray(x32)), numpy_bon_from_samples(x, 16))
    emit(AREA, f"bon_from_samples_P{P}_n{n}_N16_float32", ours_s=ours["median_s"], peer="numpy sort + weights",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff_float64": diff64, "max_rel_diff_float32_vs_float64": rel32}, goal_ratio=1.0)

    # 4. exact tie-aware best-of-N on finite spaces, N = 16
    P, V = 16, 50_000
    log_pi0, r = problems(rng, P, V, np.float64)
    r = np.round(r, 2)  # ties: about 800 distinct reward levels
    exact_fn = jax.jit(jax.vmap(lambda lp, rr: best_of_n(lp, rr, 16.0)[1:]))
    o64 = exact_fn(jnp.asarray(log_pi0[:4]), jnp.asarray(r[:4]))
    ref64 = numpy_best_of_n(log_pi0[:4], r[:4], 16.0)
    diff64 = max(float(np.max(np.abs(np.asarray(a) - b))) for a, b in zip(o64, ref64, strict=True))
    lp32, r32 = log_pi0.astype(np.float32), r.astype(np.float32)
    timed = time_interleaved({"ours": (exact_fn, (jnp.asarray(lp32), jnp.asarray(r32))),
                              "peer": (numpy_best_of_n, (lp32, r32, np.float32(16)))}, repeats=3)
    ours, peer = timed["ours"], timed["peer"]
    out, ref = exact_fn(jnp.asarray(lp32), jnp.asarray(r32)), numpy_best_of_n(log_pi0, r, 16.0)
    rel32 = max(rel_err(out[0], ref[0]), rel_err(out[1], ref[1]))
    emit(AREA, f"exact_best_of_n_P{P}_V{V}_ties_float32", ours_s=ours["median_s"], peer="numpy unique + bincount",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff_float64": diff64, "max_rel_diff_float32_vs_float64": rel32}, goal_ratio=1.0)


if __name__ == "__main__":
    main()
