"""MSIP benchmark (float32, CPU): step time and Gram/solve GFLOP/s at N = 1000, d = 10, and quality at equal
steps, against BlackJAX SVGD and a numpy reference of the same MSIP step.

The authors' PyTorch code (``nak_torch``) is not on PyPI and torch is not installed here, so the MSIP peer is
our own numpy float32 implementation of the same step (Gram matrix, ``np.linalg.solve``, no explicit inverse).
Flush-to-zero state is reported for both stacks: XLA's CPU runtime flushes subnormals, numpy does not.

Run: ``python bench/sampling.py`` (with the Langevin benchmark), or ``python bench/_sampling_msip.py [step|quality]``
(one JSON line per case; both groups by default).
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import math
from functools import partial

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core.bench import (
    calibration_gflops,
    emit,
    time_fn,
    time_interleaved,
    time_under_load,
)
from jaxlab.core.quadrature import gauss_hermite
from jaxlab.sampling import msip as M
from jaxlab.sampling.msip import benchmarks as B
from jaxlab.sampling.msip.iteration import _solve_map

AREA = "msip"
TINY32 = np.float32(np.finfo(np.float32).tiny)


def flush_to_zero() -> dict:
    """Whether halving the smallest normal float32 gives 0 (subnormals flushed) in XLA and in numpy."""
    xla = float(jax.jit(lambda x: x * 0.5)(jnp.asarray(TINY32))) == 0.0
    return {"ftz_xla": xla, "ftz_numpy": bool(TINY32 * np.float32(0.5) == 0.0)}


def numpy_msip_step(Y, lr, sigma, gamma, jitter, grad_log_density, log_density):
    """Reference MSIP step with the Fredholm estimator in numpy float32 (same math as ``msip_step``)."""
    log_v0 = log_density(Y)
    r = gamma * sigma**2 * grad_log_density(Y)
    sq = (Y * Y).sum(1)
    K = np.exp(-np.maximum(sq[:, None] + sq[None] - 2 * Y @ Y.T, 0) / np.float32(2 * sigma**2))
    K[np.diag_indices_from(K)] += np.float32(jitter)
    v = np.exp(log_v0 - log_v0.max())
    sol = np.linalg.solve(K, np.concatenate([v[:, None] * (Y + r), v[:, None]], axis=1))
    T = sol[:, :-1] / sol[:, -1:]
    return (1 - lr) * Y + lr * T, sol[:, -1] / sol[:, -1].sum()


def funnel_numpy(d, scale=3.0):
    def log_density(Y):
        return (-0.5 * Y[:, 0] ** 2 / scale**2 - 0.5 * (d - 1) * Y[:, 0]
                - 0.5 * (Y[:, 1:] ** 2).sum(1) * np.exp(-Y[:, 0])).astype(np.float32)

    def grad(Y):
        e = np.exp(-Y[:, 0])
        g0 = -Y[:, 0] / scale**2 - 0.5 * (d - 1) + 0.5 * (Y[:, 1:] ** 2).sum(1) * e
        return np.concatenate([g0[:, None], -Y[:, 1:] * e[:, None]], axis=1).astype(np.float32)

    return log_density, grad


def step_cases(calib, ftz):
    n, d = 1000, 10
    target = B.funnel(d)
    sigma = M.default_lengthscale(n, d)
    Y0 = jax.random.normal(jax.random.key(0), (n, d), dtype=jnp.float32)
    est = M.fredholm_estimator(target.log_density, gamma=0.9)
    state = M.msip_init(Y0, est, lengthscale=sigma, key=jax.random.key(1))
    step = jax.jit(partial(M.msip_step, estimator=est, step_size=0.1))
    ours = time_fn(step, jax.random.key(2), state, repeats=7)

    lp_np, grad_np = funnel_numpy(d)
    Yn = np.asarray(Y0)
    peer = time_fn(lambda: numpy_msip_step(Yn, 0.1, sigma, 0.9, 1e-7, grad_np, lp_np), repeats=5)
    load = time_under_load({"ours": (step, (jax.random.key(2), state)),
                            "numpy": (lambda: numpy_msip_step(Yn, 0.1, sigma, 0.9, 1e-7, grad_np, lp_np), ())},
                           ours["median_s"], peer="numpy")
    new_state, _ = step(jax.random.key(2), state)
    Y_ref = numpy_msip_step(Yn, np.float32(0.1), np.float32(sigma), np.float32(0.9), 1e-7, grad_np, lp_np)[0]
    agree = float(np.max(np.abs(np.asarray(new_state.particles) - Y_ref)))
    emit(AREA, "msip_step_N1000_d10_fredholm_f32", ours_s=ours["median_s"], peer="numpy MSIP step (float32)",
         peer_s=peer["median_s"], compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
         quality={"max_abs_diff_particles_vs_numpy": agree}, **ftz, goal_metric="ours_s", goal_op="<=",
         goal_value=0.050, under_load=load)

    score = jax.grad(target.log_density)
    for rule in ("fixed", "median"):
        kw = {} if rule == "median" else {"update_kernel_parameters": lambda s: s}
        svgd = blackjax.svgd(score, optax.sgd(0.1), **kw)
        s0 = svgd.init(Y0, {"length_scale": jnp.float32(2 * sigma**2)})
        # round-robin timing of the two steps, so that the load of a shared machine hits both alike
        t = time_interleaved({"ours": (step, (jax.random.key(2), state)), "svgd": (jax.jit(svgd.step), (s0,))},
                             repeats=7)
        load = None
        if rule == "fixed":  # the same pair with every core busy with another process (LAPACK threads contend)
            load = time_under_load({"ours": (step, (jax.random.key(2), state)), "svgd": (jax.jit(svgd.step), (s0,))},
                                   t["ours"]["median_s"], peer="svgd", repeats=7)
        # issue 27: MSIP step <= 0.5x BlackJAX SVGD's time (ratio >= 2), quiet and busy
        emit(AREA, f"msip_step_vs_svgd_{rule}_N1000_d10_f32", ours_s=t["ours"]["median_s"],
             peer=f"blackjax.svgd step ({rule} bandwidth)", peer_s=t["svgd"]["median_s"],
             compile_s=ours["first_s"] - ours["median_s"], calibration=calib, peer_compile_s=t["svgd"]["first_s"],
             ours_over_peer=t["ours"]["median_s"] / t["svgd"]["median_s"], **ftz, goal_ratio=2.0, lapack=True,
             under_load=load)
        if load is not None:
            emit(AREA, f"msip_step_vs_svgd_{rule}_N1000_d10_f32_busy", ours_s=load["ours_s"],
                 peer=f"blackjax.svgd step ({rule} bandwidth), every core busy", peer_s=load["peer_s"],
                 compile_s=0.0, calibration=calib, ours_over_peer=load["ours_s"] / load["peer_s"],
                 ours_slowdown_under_load=load["slowdown"], **ftz, goal_ratio=2.0, under_load=load)

    # The Gram/solve part alone: Gram (2N²d), Cholesky factorisation (N³/3), two triangular solves with d + 1
    # columns.
    log_v0, r = est(None, Y0, jnp.float32(sigma))
    solve = jax.jit(_solve_map)
    t = time_fn(solve, Y0, log_v0, r, jnp.float32(sigma), jnp.float32(1e-7), repeats=7)
    flops = 2 * n * n * d + n**3 / 3 + 2 * 2 * n * n * (d + 1)
    emit(AREA, "gram_cholesky_solve_N1000_d10_f32", ours_s=t["median_s"], peer="calibration matmul (numpy)",
         peer_s=flops / (calib * 1e9), compile_s=t["first_s"] - t["median_s"], calibration=calib,
         gflops=flops / t["median_s"] / 1e9, **ftz, lapack=True, goal=None,
         no_goal_reason="a throughput row: ratio is the fraction of the numpy matmul's GFLOP/s that Gram + Cholesky "
         "+ solves reach, with no target")


def quality_cases(calib, ftz):
    target = B.gmm()
    ref = B.make_reference(target.sample(jax.random.key(123), 10_000).astype(jnp.float32), lengthscale=1.5)
    score = jax.grad(target.log_density)
    est = M.gradient_free_estimator(target.log_density, quadrature=gauss_hermite(4, 2, dtype=jnp.float32))
    n_steps = 200
    for n in (40, 160):
        Y0 = 2.0 * jax.random.normal(jax.random.key(n), (n, 2), dtype=jnp.float32)
        # float32 Cholesky needs more than the float64 default jitter 1e-7 once N is large (NaN at N = 160)
        ours_fn = jax.jit(lambda k, Y: M.msip(k, Y, est, num_steps=n_steps, step_size=0.5, lengthscale=0.5,
                                              jitter=1e-4)[0])
        ours = time_fn(ours_fn, jax.random.key(1), Y0, repeats=3)
        st = ours_fn(jax.random.key(1), Y0)
        svgd = blackjax.svgd(score, optax.sgd(0.3))
        h0 = float(np.median(np.linalg.norm(np.asarray(Y0)[:, None] - np.asarray(Y0)[None], axis=-1))) ** 2
        s0 = svgd.init(Y0, {"length_scale": jnp.float32(h0 / math.log(n))})
        peer_fn = jax.jit(lambda s, svgd=svgd: jax.lax.fori_loop(0, n_steps, lambda i, x: svgd.step(x), s))
        peer = time_fn(peer_fn, s0, repeats=3)
        Xs = peer_fn(s0).particles
        q_ours = {k: float(v) for k, v in B.particle_metrics(st.particles, st.weights, ref, score).items()}
        q_peer = {k: float(v) for k, v in B.particle_metrics(Xs, None, ref, score).items()}
        emit(AREA, f"gmm3_2d_N{n}_{n_steps}steps_quality", ours_s=ours["median_s"],
             peer="blackjax.svgd (median rule, sgd 0.3)", peer_s=peer["median_s"],
             compile_s=ours["first_s"] - ours["median_s"], calibration=calib,
             quality={"ours": q_ours, "peer": q_peer, "mmd2_ratio_peer_over_ours": q_peer["mmd2"] / q_ours["mmd2"]},
             evals_per_run={"ours_density": n * 16 * n_steps, "peer_gradient_as_traced": n * n * n_steps}, **ftz,
             goal_metric="mmd2_ratio_peer_over_ours", goal_op=">=", goal_value=1.0, lapack=True)


if __name__ == "__main__":
    import sys

    calib = calibration_gflops()
    ftz = flush_to_zero()
    if "quality" not in sys.argv[1:]:
        step_cases(calib, ftz)
    if "step" not in sys.argv[1:]:
        quality_cases(calib, ftz)
