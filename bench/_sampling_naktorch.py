"""MSIP side by side with the authors' PyTorch code, ``nak_torch`` (spec ``sampling.md`` A.7, issue 3).

What is compared (Fredholm estimator, CPU):

- **agreement** (float64, N = 100, 50 steps, same target, initial particles, σ, η, γ, δ): their ``msip(...)``
  entry point against :func:`jaxlab.sampling.msip.msip`; max abs difference of the final nodes and of the
  normalized weights (target 1e-6), the difference after steps 1, 10, ..., 50, and the error of one step of each
  and after 50 steps against an extended-precision (``np.longdouble``) run, to tell which side a difference comes
  from.
- **step time** (funnel in d = 10 as in ``bench/_sampling_msip.py``, N ∈ {100, 1000}, float32 and float64): our
  jitted :func:`msip_step` against their loop body (kernel matrix + δI, ``MSIPFredholm.get_v_evals``,
  ``get_msip_wts``, ``torch.linalg.inv``, the MSIP map, relaxation) in eager torch with flush-to-zero off and on,
  and with the ``torch.compile`` wrapping that their ``msip(compile_step=True)`` applies (N = 1000 only unless
  ``NAK_TORCH_COMPILE=all``; ``NAK_TORCH_COMPILE=0`` skips it), timed round-robin
  (:func:`jaxlab.core.bench.time_interleaved`). Every row states the flush-to-zero state: XLA's CPU runtime
  flushes subnormals in all its threads; ``torch.set_flush_denormal(True)`` sets FTZ/DAZ in the calling thread
  only, so intra-op worker threads keep subnormals (``ftz_torch_fraction`` = fraction of a 4M-element
  elementwise product of the smallest normal by 0.5 that came out 0: 0.5 with 2 threads). Each row also gives
  the medians of process CPU time (``ours_cpu_s``, ``peer_cpu_s``), steadier than wall time on a loaded machine.
- **threads** (``NAK_BENCH_THREADS``): unset, every library keeps its defaults; ``openblas1`` pins OpenBLAS to one
  thread, which only concerns jaxlab: XLA's CPU Cholesky is a LAPACK custom call into scipy's OpenBLAS, whose
  thread pool, on 2 shared cores, made our N = 1000 float32 step 60-900 ms instead of 11-25 ms; ``1`` runs
  XLA, OpenBLAS, OpenMP and torch on one thread each (torch's FTZ then covers all its work).

Parameter conversion (nak_torch commit 146e9da, 2026-03-27; no conversion of values is needed, but two
defaults differ and must be passed explicitly):

==========================================  ================================================================
nak_torch                                   jaxlab
==========================================  ================================================================
``kernel_length_scale`` σ, kernel           ``lengthscale`` σ, same kernel ``exp(-|x-y|²/(2σ²))``
``exp(-|x-y|²/(2σ²))``
``lr`` η, ``Y ← (1-η) Y + η T(Y)``          ``lr`` η, same relaxation
``gradient_decay`` γ (``r = γσ²∇log π̃``);   ``fredholm_estimator(log_density, gamma=γ)``, same ``r``;
default **1.0** in ``process_msip_density`` default **0.9**
``kernel_diag_infl`` δ, default **0.0**     ``jitter`` δ, default 1e-7: Cholesky of ``K + δI``
(then ``pinv(K)``); δ > 0: ``inv(K + δI)``
for the map, ``solve(K + δI, v̂0)`` for the
weights
``log v0 = log π̃(y)`` (Fredholm)            the same
``traj_wts[t]``: normalized weights at      ``state.weights``: normalized weights at ``state.particles``
``trajectories[t]``; ``t = n_steps`` is     (``msip(n_steps=...)`` returns the state after ``n_steps``
the state after ``n_steps`` steps           steps)
``bounds``: clamp after each step           ``bounds``: the same
``use_quantile_length_scale`` q             ``lengthscale_rule`` q (selection, not interpolation; not
(``torch.quantile``, interpolated)          compared here)
==========================================  ================================================================

Getting nak_torch (GitHub ``AyoubBelhadji/nak_torch``, not on PyPI)::

    git clone https://github.com/AyoubBelhadji/nak_torch /tmp/nak_torch
    # or, from a bare mirror: git --git-dir=<mirror> archive HEAD | tar -x -C /tmp/nak_torch
    pip install torch==2.13.0   # nak_torch also imports numpy, jaxtyping and tqdm (all in our venv)

It is imported from ``$NAK_TORCH_PATH/src`` (default ``/tmp/nak_torch``), not installed (its ``pyproject``
asks for Python >= 3.12; the code imports on 3.11). Without torch or nak_torch the script prints one skip line
and exits 0. Their code is only called here, never copied into jaxlab.

Run: ``python bench/_sampling_naktorch.py [agree|step]`` (one JSON line per case; both groups by default);
``NAK_BENCH_N=1000`` restricts the step cases to one N.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# NAK_BENCH_THREADS=1: single-threaded XLA and torch (steadier on a shared machine; FTZ then covers all of torch)
# (OpenBLAS, which runs the LAPACK calls of both XLA's Cholesky and numpy, and OpenMP pinned to one thread too:
# their idle worker threads spin and show up as CPU time of the other stack)
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + (
    " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    if os.environ.get("NAK_BENCH_THREADS") == "1" else "")).strip()
os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
                  if os.environ.get("NAK_BENCH_THREADS") == "1" else {})
# NAK_BENCH_THREADS=openblas1: only OpenBLAS single-threaded (XLA and torch keep their thread pools); it affects
# jaxlab alone (XLA's CPU Cholesky calls scipy's OpenBLAS LAPACK; torch has its own BLAS)
os.environ.update({"OPENBLAS_NUM_THREADS": "1"} if os.environ.get("NAK_BENCH_THREADS") == "openblas1" else {})

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.sampling import msip as M
from jaxlab.sampling.msip import benchmarks as B
from jaxlab.sampling.msip.iteration import _spd_solve

jax.config.update("jax_enable_x64", True)

AREA = "msip"
THREADS = os.environ.get("NAK_BENCH_THREADS")
GAMMA, LR, JITTER = 0.9, 0.1, 1e-7
GMM_MEANS = [[-4.0, 0.0], [4.0, 0.0], [0.0, 4.0]]  # jaxlab.sampling.benchmarks.gmm() default, unit std
FUNNEL_SCALE = 3.0


def import_nak():
    """Import torch and nak_torch, or print one skip line and exit 0."""
    path = os.environ.get("NAK_TORCH_PATH", "/tmp/nak_torch")
    for p in (os.path.join(path, "src"), path):
        if os.path.isdir(os.path.join(p, "nak_torch")):
            sys.path.insert(0, p)
            break
    try:
        import torch
        from nak_torch.algorithms.msip import msip  # noqa: F401
    except ImportError as e:
        print(f"skip: torch or nak_torch not importable (NAK_TORCH_PATH={path}): {e}")
        sys.exit(0)
    if THREADS == "1":
        torch.set_num_threads(1)


def thread_env() -> dict:
    import torch

    return {"torch_threads": torch.get_num_threads(), "bench_threads": THREADS or "default",
            "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
            "xla_flags": os.environ.get("XLA_FLAGS", "")}


def ftz_state(dtype) -> dict:
    """Flush-to-zero as observed now: XLA (all threads) and torch (fraction of a multithreaded op flushed)."""
    import torch

    tiny = float(jnp.finfo(dtype).tiny)
    half = jax.jit(lambda x: x * 0.5)
    xla = float(jnp.mean(half(jnp.full((4_000_000,), tiny, dtype)) == 0))
    tdt = torch.float32 if dtype == jnp.float32 else torch.float64
    frac = (torch.full((4_000_000,), tiny, dtype=tdt) * 0.5 == 0).double().mean().item()
    return {"ftz_xla_fraction": xla, "ftz_torch_fraction": frac, **thread_env()}


def torch_gmm_log_density(dtype):
    import torch

    means = torch.tensor(GMM_MEANS, dtype=dtype)

    def log_density(x):  # per point, like B.gmm().log_density
        return torch.logsumexp(-((x - means) ** 2).sum(1) / 2.0, 0)

    return log_density


def torch_funnel_log_density(d):
    import torch

    def log_density(x):  # per point, like B.funnel(d).log_density
        return (-0.5 * x[0] ** 2 / FUNNEL_SCALE**2 - 0.5 * (d - 1) * x[0]
                - 0.5 * (x[1:] ** 2).sum() * torch.exp(-x[0]))

    return log_density


# ------------------------------------------------------------------------------------------------ agreement


def longdouble_gmm_msip(Y, sigma, n_steps):
    """Fredholm MSIP for the 2-D GMM in ``np.longdouble`` (x87 80-bit on x86, eps 1e-19): the nodes after 1 and
    after ``n_steps`` steps, and the normalized weights at the initial and at the final nodes."""
    L = np.longdouble
    Y = np.asarray(Y).astype(L)
    n, d = Y.shape
    m = np.asarray(GMM_MEANS, dtype=L)

    def solve(Y):
        a = -((Y[:, None] - m[None]) ** 2).sum(-1) / 2
        p = np.exp(a - a.max(1, keepdims=True))
        lp = a.max(1) + np.log(p.sum(1))
        r = L(GAMMA) * L(sigma) ** 2 * ((p / p.sum(1, keepdims=True))[:, :, None] * (m[None] - Y[:, None])).sum(1)
        K = np.exp(-((Y[:, None] - Y[None]) ** 2).sum(-1) / (2 * L(sigma) ** 2)) + L(JITTER) * np.eye(n, dtype=L)
        v = np.exp(lp - lp.max())
        rhs = np.concatenate([v[:, None] * (Y + r), v[:, None]], axis=1)
        C = np.zeros_like(K)  # Cholesky K = C Cᵀ (LAPACK has no long double)
        for j in range(n):
            C[j, j] = np.sqrt(K[j, j] - (C[j, :j] ** 2).sum())
            C[j + 1:, j] = (K[j + 1:, j] - C[j + 1:, :j] @ C[j, :j]) / C[j, j]
        z = np.zeros_like(rhs)
        for i in range(n):
            z[i] = (rhs[i] - C[i, :i] @ z[:i]) / C[i, i]
        x = np.zeros_like(rhs)
        for i in reversed(range(n)):
            x[i] = (z[i] - C[i + 1:, i] @ x[i + 1:]) / C[i, i]
        return x[:, :d] / x[:, d:], x[:, d] / x[:, d].sum()

    T, w0 = solve(Y)
    Y1 = Y = (1 - L(LR)) * Y + L(LR) * T
    for _ in range(n_steps - 1):
        T = solve(Y)[0]
        Y = (1 - L(LR)) * Y + L(LR) * T
    return Y1, w0, Y, solve(Y)[1]


def agree_case(calib, name, Y0, n_steps=50):
    import torch
    from nak_torch.algorithms.msip import msip as nak_msip

    n, d = Y0.shape
    sigma = M.default_lengthscale(n, d)
    est = M.fredholm_estimator(B.gmm().log_density, gamma=GAMMA)
    lp_t = torch_gmm_log_density(torch.float64)
    Y0_t = torch.as_tensor(np.asarray(Y0))

    def ours():
        return M.msip(jax.random.key(1), Y0, est, num_steps=n_steps, step_size=LR, lengthscale=sigma, jitter=JITTER,
                      return_trajectory=True)

    def theirs():
        return nak_msip(lp_t, n, n_steps, d, LR, sigma, init_particles=Y0_t, kernel_diag_infl=JITTER,
                        gradient_decay=GAMMA, keep_all=True, compile_step=False)

    t = time_interleaved({"ours": (ours, ()), "theirs": (theirs, ())}, repeats=3)
    final, trace = ours()
    traj, wts = theirs()
    # trace.states[k] is the state after k + 1 steps; traj[k] / wts[k] after k steps
    P = np.concatenate([np.asarray(Y0)[None], np.asarray(trace.states.particles)])
    W = np.concatenate([np.asarray(M.msip_init(Y0, est, lengthscale=sigma, key=jax.random.key(0),
                                               jitter=JITTER).weights)[None], np.asarray(trace.states.weights)])
    dn = np.abs(P - traj.numpy()).max(axis=(1, 2))
    dw = np.abs(W - wts.numpy()).max(axis=1)
    Yf = np.asarray(final.particles)
    dist = np.where(np.eye(n, dtype=bool), np.inf, np.sqrt(((P[:, :, None] - P[:, None]) ** 2).sum(-1)))
    # sensitivity of our own run to a 1e-12 relative perturbation of the initial particles
    Yp = np.asarray(M.msip(jax.random.key(1), Y0 * (1 + 1e-12), est, num_steps=n_steps, step_size=LR, lengthscale=sigma,
                           jitter=JITTER)[0].particles)

    # one step against the long-double reference; ours also with a direct-difference Gram matrix
    Y1_ref, w0_ref, Yn_ref, wn_ref = longdouble_gmm_msip(Y0, sigma, n_steps)
    Y0l = np.asarray(Y0).astype(np.longdouble)
    Kd = jnp.asarray(np.exp(-((Y0l[:, None] - Y0l[None]) ** 2).sum(-1) / (2 * np.longdouble(sigma) ** 2)),
                     jnp.float64)
    lv, r = est(None, Y0, jnp.float64(sigma))
    v = jnp.exp(lv - lv.max())
    sol = _spd_solve(Kd + JITTER * jnp.eye(n), jnp.concatenate([v[:, None] * (Y0 + r), v[:, None]], 1))
    Y1_direct = (1 - LR) * Y0 + LR * sol[:, :-1] / sol[:, -1:]
    q = {
        "max_abs_diff_nodes": float(dn[-1]), "max_abs_diff_weights": float(dw[-1]),
        "max_abs_final_node": float(np.abs(Yf).max()),
        "diff_nodes_after_steps": {k: float(dn[k]) for k in (1, 10, 20, 30, 40, 50) if k <= n_steps},
        "diff_weights_after_steps": {k: float(dw[k]) for k in (0, 1, 10, 20, 30, 40, 50) if k <= n_steps},
        "min_pair_distance_over_run": float(dist.min()), "sigma": sigma,
        "negative_weight_mass_final": float(-np.minimum(np.asarray(final.weights), 0).sum()),
        "self_diff_nodes_after_1e-12_perturbation": float(np.abs(Yp - Yf).max()),
        "one_step_err_vs_longdouble": {
            "ours_nodes": float(np.abs(P[1] - Y1_ref).max()),
            "theirs_nodes": float(np.abs(traj[1].numpy() - Y1_ref).max()),
            "ours_direct_gram_nodes": float(np.abs(np.asarray(Y1_direct) - Y1_ref).max()),
            "ours_weights": float(np.abs(W[0] - w0_ref).max()),
            "theirs_weights": float(np.abs(wts[0].numpy() - w0_ref).max()),
        },
        "final_err_vs_longdouble": {
            "ours_nodes": float(np.abs(Yf - Yn_ref).max()),
            "theirs_nodes": float(np.abs(traj[-1].numpy() - Yn_ref).max()),
            "ours_weights": float(np.abs(W[-1] - wn_ref).max()),
            "theirs_weights": float(np.abs(wts[-1].numpy() - wn_ref).max()),
        },
        "cond_K0": float(np.linalg.cond(np.asarray(Kd) + JITTER * np.eye(n))),
    }
    emit(AREA, name, ours_s=t["ours"]["median_s"], peer="nak_torch msip (compile_step=False, float64)",
         peer_s=t["theirs"]["median_s"], compile_s=t["ours"]["first_s"] - t["ours"]["median_s"], calibration=calib,
         quality=q, agreement_goal=1e-6, agrees=bool(dn[-1] <= 1e-6 and dw[-1] <= 1e-6),
         max_abs_diff=float(max(dn[-1], dw[-1])), goal_metric="max_abs_diff", goal_op="<=", goal_value=1e-6,
         lapack=True,
         params={"N": n, "d": d, "sigma": sigma, "lr": LR, "gamma": GAMMA, "jitter": JITTER, "steps": n_steps},
         **ftz_state(jnp.float64))


def agree_cases(calib):
    target = B.gmm()
    n = 100
    # particles drawn from the target: K stays well conditioned (cond ~ 2e2), weights stay positive
    agree_case(calib, "agree_gmm3_2d_N100_50steps_target_init_f64",
               target.sample(jax.random.key(0), n).astype(jnp.float64))
    # spread N(0, 4I) start: particles pass within 1e-6 of each other, K is jitter-limited (cond ~ 1e7)
    agree_case(calib, "agree_gmm3_2d_N100_50steps_spread_init_f64",
               2.0 * jax.random.normal(jax.random.key(0), (n, 2), dtype=jnp.float64))


# ------------------------------------------------------------------------------------------------ step time


def their_step_fns(d, n, sigma, compiled):
    """Their loop body from ``nak_torch.algorithms.msip.msip`` (one iteration, ``kernel_diag_infl > 0``)."""
    import torch
    from nak_torch.algorithms.msip.msip import process_msip_density
    from nak_torch.algorithms.msip.msip_map import calculate_msip_map, get_msip_wts, msip_map
    from nak_torch.tools.kernel import default_kernel_matrix

    est = process_msip_density(torch_funnel_log_density(d), gradient_decay=GAMMA)
    idx = torch.arange(n)
    if compiled:  # what msip(compile_step=True) wraps
        est_v, get_w = torch.compile(est.get_v_evals), torch.compile(get_msip_wts)
        cmap = torch.compile(msip_map)

        def tmap(e, Y, Kinv):
            return cmap(e, Y, Kinv, output_idx=None)
    else:  # calculate_msip_map is decorated with torch.compile: take the undecorated function
        est_v, get_w = est.get_v_evals, get_msip_wts
        vmap = torch.vmap(calculate_msip_map._torchdynamo_orig_callable, in_dims=(0, None, None, None))

        def tmap(e, Y, Kinv):
            with torch.no_grad():
                return vmap(Kinv, Y.clone(), *e)

    def step(Y):
        K = default_kernel_matrix(Y, sigma)
        K[idx, idx] += JITTER
        e = est_v(Y, sigma)
        w = get_w(Y, e, K)
        T = tmap(e, Y, torch.linalg.inv(K))
        with torch.no_grad():
            return (1.0 - LR) * Y + LR * T, w

    return step


def with_ftz(fn, flag):
    import torch

    def call(*args):
        torch.set_flush_denormal(flag)
        try:
            return fn(*args)
        finally:
            torch.set_flush_denormal(False)

    return call


def with_cpu_time(fn, log):
    """``fn`` that also appends the process CPU time of each call (all threads, outputs ready) to ``log``."""

    def call(*args):
        t0 = time.process_time()
        out = jax.tree_util.tree_map(lambda a: a.block_until_ready() if hasattr(a, "block_until_ready") else a,
                                     fn(*args))
        log.append(time.process_time() - t0)
        return out

    return call


def step_cases(calib):
    import torch
    from nak_torch.algorithms.msip import msip as nak_msip

    d = 10
    target = B.funnel(d)
    est = M.fredholm_estimator(target.log_density, gamma=GAMMA)
    compile_mode = os.environ.get("NAK_TORCH_COMPILE", "1000")
    for n in (int(v) for v in os.environ.get("NAK_BENCH_N", "100,1000").split(",")):
        sigma = M.default_lengthscale(n, d)
        Y0_64 = jax.random.normal(jax.random.key(0), (n, d), dtype=jnp.float64)
        ref_step = their_step_fns(d, n, sigma, False)
        Y1_ref, w0_ref = (a.numpy() for a in ref_step(torch.as_tensor(np.asarray(Y0_64))))
        for dtype in (jnp.float32, jnp.float64):
            tag = "f32" if dtype == jnp.float32 else "f64"
            Y0 = Y0_64.astype(dtype)
            Y0_t = torch.as_tensor(np.asarray(Y0))
            state = M.msip_init(Y0, est, lengthscale=sigma, key=jax.random.key(1), jitter=JITTER)
            ours = jax.jit(partial(M.msip_step, estimator=est, step_size=LR, jitter=JITTER))
            eager = their_step_fns(d, n, sigma, False)
            calls = {"ours": (ours, (jax.random.key(2), state)),
                     "eager_ftz_off": (with_ftz(eager, False), (Y0_t,)),
                     "eager_ftz_on": (with_ftz(eager, True), (Y0_t,))}
            if compile_mode == "all" or (compile_mode == "1000" and n == 1000):
                calls["compiled_ftz_off"] = (with_ftz(their_step_fns(d, n, sigma, True), False), (Y0_t,))
            cpu = {k: [] for k in calls}
            calls = {k: (with_cpu_time(fn, cpu[k]), args) for k, (fn, args) in calls.items()}
            t = time_interleaved(calls, repeats=7 if n == 1000 else 15)
            cpu = {k: float(np.median(v[1:])) for k, v in cpu.items()}  # without the first (compiling) call

            # same first step on both sides (and their loop body == their msip entry point)
            s1, _ = ours(jax.random.key(2), state)
            Y1_t, w0_t = (a.numpy() for a in eager(Y0_t))
            traj, wts = nak_msip(torch_funnel_log_density(d), n, 1, d, LR, sigma, init_particles=Y0_t,
                                 kernel_diag_infl=JITTER, gradient_decay=GAMMA, compile_step=False)
            K = np.exp(-((np.asarray(Y0)[:, None] - np.asarray(Y0)[None]) ** 2).sum(-1) / (2 * sigma**2))
            tiny = np.finfo(np.dtype(dtype)).tiny
            q = {"one_step_diff_nodes": float(np.abs(np.asarray(s1.particles) - Y1_t).max()),
                 "init_diff_weights": float(np.abs(np.asarray(state.weights) - w0_t).max()),
                 "ours_vs_f64_nodes": float(np.abs(np.asarray(s1.particles, np.float64) - Y1_ref).max()),
                 "theirs_vs_f64_nodes": float(np.abs(Y1_t.astype(np.float64) - Y1_ref).max()),
                 "ours_vs_f64_weights": float(np.abs(np.asarray(state.weights, np.float64) - w0_ref).max()),
                 "theirs_vs_f64_weights": float(np.abs(w0_t.astype(np.float64) - w0_ref).max()),
                 "step_glue_vs_their_msip": float(max(np.abs(traj[1].numpy() - Y1_t).max(),
                                                      np.abs(wts[0].numpy() - w0_t).max())),
                 "subnormal_K_entries": int(((K > 0) & (K < tiny)).sum())}
            for peer, label in (("eager_ftz_off", "torch eager, flush-to-zero off"),
                                ("eager_ftz_on", "torch eager, set_flush_denormal(True) (main thread only)"),
                                ("compiled_ftz_off", "torch.compile as msip(compile_step=True), FTZ off")):
                if peer not in t:
                    continue
                torch.set_flush_denormal(peer.endswith("_on"))
                ftz = ftz_state(dtype)
                torch.set_flush_denormal(False)
                emit(AREA, f"step_funnel10_N{n}_{tag}_vs_{peer}", ours_s=t["ours"]["median_s"],
                     peer=f"nak_torch MSIP loop body ({label}, {tag})", peer_s=t[peer]["median_s"],
                     compile_s=t["ours"]["first_s"] - t["ours"]["median_s"], calibration=calib,
                     ours_min_s=t["ours"]["min_s"], peer_min_s=t[peer]["min_s"], peer_first_s=t[peer]["first_s"],
                     ours_cpu_s=cpu["ours"], peer_cpu_s=cpu[peer], ours_over_peer_cpu=cpu["ours"] / cpu[peer],
                     ours_over_peer=t["ours"]["median_s"] / t[peer]["median_s"], goal_ratio=1 / 0.33,  # <= 0.33x
                     **({"goal_metric": "ours_s", "goal_op": "<=", "goal_value": 0.050}
                        if (n, tag) == (1000, "f32") else {}),
                     lapack=True, quality=q, load_avg=os.getloadavg()[0],
                     params={"N": n, "d": d, "sigma": sigma, "lr": LR, "gamma": GAMMA, "jitter": JITTER}, **ftz)


if __name__ == "__main__":
    import_nak()
    calib = calibration_gflops()
    t0 = time.perf_counter()
    if "step" not in sys.argv[1:]:
        agree_cases(calib)
    if "agree" not in sys.argv[1:]:
        step_cases(calib)
    print(f"# total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
