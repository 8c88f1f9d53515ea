"""Benchmark of jaxlab.scaling against scipy and optimistix (spec section 7, issue 5).

Case 1 (float64, as the issue asks): Huber (delta = 1e-3) fit of the 240 Epoch Chinchilla points from 1024 starts
drawn from the Hoffmann 4500-start grid. jaxlab: ``fit_multistart`` (Huber Levenberg-Marquardt: IRLS steps, the
exact Hessian once the damping is small; also its L-BFGS and its optimistix BFGS, each on 32 and on all 1024
starts), vmapped over a pool of 128 starts refilled from the waiting ones on the host between chunks of 8 steps,
one pool per usable core, each on its own host thread (the 1024-start LM row also reports one pool on one thread).
Peers: scipy ``minimize(L-BFGS-B)`` looping over 32 of the starts, as a user would write it: the objective's value
and gradient come from one ``jax.jit(jax.value_and_grad(F))`` call per evaluation, converted to a float and a numpy
array (time measured in this run and extrapolated x32 for 1024 starts), and
optimistix ``LevenbergMarquardt`` vmapped over 128 of the starts (jaxlab timed on the same 128) on the signed-root
residuals r~ = sign(r) sqrt(2 H(r)) (so that sum r~^2 / 2 = sum H(r), the same objective). The BFGS rows time jaxlab
and the scipy loop round-robin in one process (``time_interleaved``), so that load on the shared machine hits both.
Case 2 (float32): least-squares Levenberg-Marquardt on 1000 synthetic 12-run designs, jaxlab vmapped
``lm_solve`` vs a scipy ``least_squares(method="lm")`` loop (50 designs, extrapolated).
"""

from __future__ import annotations

import functools
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optimistix as optx  # noqa: E402
from scipy import optimize  # noqa: E402

from jaxlab.core.bench import calibration_gflops, emit, time_fn, time_interleaved, time_under_load  # noqa: E402
from jaxlab.scaling import fit as F  # noqa: E402
from jaxlab.scaling.datasets import load_chinchilla  # noqa: E402
from jaxlab.scaling.designs import cycled_design  # noqa: E402
from jaxlab.scaling.laws import BESIROGLU_2024, ChinchillaParams, chinchilla_log_loss, covariates  # noqa: E402

AREA = "scaling"
N_SCIPY = 32  # scipy starts actually run (time extrapolated to 1024)
N_OX = 128  # starts given to both optimistix and jaxlab in the head-to-head LM case


def _params(v):
    return ChinchillaParams(*(v[..., j] for j in range(5)))


def _quality(theta, value, best_value):
    A, B, E, alpha, beta = (float(t) for t in ChinchillaParams(*theta).to_natural())
    A, B = round(A, 2), round(B, 1)
    return {"best_objective": float(value), "rel_gap_to_ours": float(value) / best_value - 1,
            "A": A, "B": B, "alpha": alpha, "beta": beta, "E": E}


def epoch_case(calib: float) -> None:
    d = load_chinchilla()
    X, log_L = covariates(d.N, d.D), jnp.log(d.L)
    grid = F.hoffmann_init_grid()
    idx = np.random.default_rng(0).choice(4500, 1024, replace=False)
    starts = jax.tree.map(lambda a: a[idx], grid)
    starts_v = np.stack([np.asarray(a) for a in starts], axis=1)

    lm = lambda th: F.fit_multistart("chinchilla", th, X, log_L, method="lm", huber_delta=1e-3)[0]  # noqa: E731
    # the same starts in one pool on one host thread (the default runs one pool per usable core, here two)
    one = functools.partial(F._compact_multistart, F.resolve_law("chinchilla"), "lm",
                            F._multistart_options("lm", dict(huber_delta=1e-3)), groups=1)
    t_one = time_fn(lambda th: one(th, X, log_L).value, starts, repeats=5)
    best, every = F.fit_multistart("chinchilla", starts, X, log_L, method="lm", huber_delta=1e-3)
    best_v = float(best.value)
    q_ours = _quality(best.theta, best_v, best_v)
    # the work: one step of one start evaluates the law and its Jacobian at n = 240 points and solves a 5 x 5 system
    start_steps = int(np.sum(np.asarray(every.steps)))

    # scipy L-BFGS-B loop (64 starts, extrapolated to 1024)
    vg = jax.jit(jax.value_and_grad(lambda v: F.objective("chinchilla", _params(v), X, log_L)))
    vg(jnp.asarray(starts_v[0]))

    def scipy_fun(v):
        val, g = vg(jnp.asarray(v))
        return float(val), np.asarray(g)

    scipy_loop = functools.partial(_scipy_loop, scipy_fun, starts_v)
    # round-robin with the scipy loop over N_SCIPY starts (timed 5 times, not once), extrapolated to 1024
    t = time_interleaved({"lm": (lm, (starts,)), "scipy": (scipy_loop, ())}, repeats=5)
    t_lm, t_scipy = t["lm"], t["scipy"]["median_s"] * 1024 / N_SCIPY
    sc = scipy_loop()
    sc_best = min(sc, key=lambda r: r.fun if np.isfinite(r.fun) else np.inf)
    emit(AREA, "epoch_huber_1024_starts_f64", ours_s=t_lm["median_s"],
         peer=f"scipy L-BFGS-B loop (x{1024 // N_SCIPY} from {N_SCIPY})", peer_s=t_scipy,
         compile_s=t_lm["first_s"] - t_lm["median_s"], calibration=calib,
         quality={"ours": q_ours, "peer_subset": _quality(sc_best.x, sc_best.fun, best_v),
                  "start_steps": start_steps, "us_per_start_step": 1e6 * t_lm["median_s"] / start_steps,
                  "ours_one_pool_s": t_one["median_s"], "ratio_one_pool": t_scipy / t_one["median_s"]},
         method="jaxlab fit_multistart(method='lm', huber_delta=1e-3)", goal_ratio=50.0)  # issue 30
    # (the pool's 128 vmapped 5 x 5 solves per step run in array operations, jaxlab.core.linalg.solve: no LAPACK)

    # optimistix Levenberg-Marquardt on the signed-root Huber residuals, vmapped over the same 1024 starts
    # (written without jnp.sign at r = 0: |r| <= delta is the quadratic zone where r~ = r)
    def residuals(v, args):
        r = chinchilla_log_loss(_params(v), X) - log_L
        a = jnp.abs(r)
        return jnp.where(a <= 1e-3, r, jnp.sign(r) * jnp.sqrt(2e-3 * jnp.maximum(a, 1e-3) - 1e-6))

    solver = optx.LevenbergMarquardt(rtol=1e-10, atol=1e-12)

    @jax.jit
    def ox(v0s):
        # only .value leaves the vmap: optimistix 0.1.0's Solution state holds a jaxpr that vmap rejects
        val = jax.vmap(lambda v: optx.least_squares(residuals, solver, v, max_steps=1000, throw=False).value)(v0s)
        return val, jax.vmap(lambda v: F.objective("chinchilla", _params(v), X, log_L))(val)

    m = N_OX
    t_ox = time_fn(ox, jnp.asarray(starts_v[:m]), repeats=1)
    s_m = jax.tree.map(lambda a: a[:m], starts)
    t_lm_m = time_fn(lm, s_m, repeats=3)
    ox_v, ox_vals = ox(jnp.asarray(starts_v[:m]))
    i = int(jnp.argmin(jnp.where(jnp.isfinite(ox_vals), ox_vals, jnp.inf)))
    emit(AREA, f"epoch_huber_{m}_starts_f64_vs_optimistix", ours_s=t_lm_m["median_s"],
         peer="optimistix LevenbergMarquardt (vmapped, same starts)", peer_s=t_ox["median_s"],
         compile_s=t_lm_m["first_s"] - t_lm_m["median_s"], calibration=calib,
         quality={"ours": q_ours, "peer": _quality(ox_v[i], ox_vals[i], best_v)},
         peer_compile_s=t_ox["first_s"] - t_ox["median_s"], goal_ratio=3.0)  # issue 30

    # jaxlab's own L-BFGS multistart (optax zoom line search) on the scipy subset, vs the same scipy loop
    s_sub = jax.tree.map(lambda a: a[:N_SCIPY], starts)
    lb = lambda th: F.fit_multistart("chinchilla", th, X, log_L)[0]  # noqa: E731
    t_lb = time_fn(lb, s_sub, repeats=1)
    best_lb = lb(s_sub)
    emit(AREA, f"epoch_huber_{N_SCIPY}_starts_f64_lbfgs", ours_s=t_lb["median_s"], peer="scipy L-BFGS-B loop",
         peer_s=t_scipy * N_SCIPY / 1024, compile_s=t_lb["first_s"] - t_lb["median_s"], calibration=calib,
         quality={"ours": _quality(best_lb.theta, best_lb.value, best_v),
                  "peer": _quality(sc_best.x, sc_best.fun, best_v)},
         method="jaxlab fit_multistart(method='lbfgs')", goal_ratio=1.0)  # issue 30

    # the same L-BFGS multistart on all 1024 starts, against the scipy loop's time for 1024 (x32 from 32)
    t_lb_all = time_fn(lb, starts, repeats=1)
    best_lb_all = lb(starts)
    emit(AREA, "epoch_huber_1024_starts_f64_lbfgs", ours_s=t_lb_all["median_s"],
         peer=f"scipy L-BFGS-B loop (x{1024 // N_SCIPY} from {N_SCIPY})", peer_s=t_scipy,
         compile_s=t_lb_all["first_s"] - t_lb_all["median_s"], calibration=calib,
         quality={"ours": _quality(best_lb_all.theta, best_lb_all.value, best_v),
                  "peer_subset": _quality(sc_best.x, sc_best.fun, best_v)},
         method="jaxlab fit_multistart(method='lbfgs')", goal=None,
         no_goal_reason="issue 30's quasi-Newton goals (>= 1x scipy at 32 starts, >= 10x at 1024) are carried by "
         "the BFGS rows (optimistix BFGS, the issue's alternative where it is faster); this row tracks optax "
         "L-BFGS, which the claims use, so that a regression shows in --compare")

    bfgs_rows(calib, X, log_L, starts, scipy_fun, starts_v, best_v)


def _scipy_loop(scipy_fun, starts_v):
    """The peer: scipy L-BFGS-B from each of the first N_SCIPY starts, one after the other."""
    return [optimize.minimize(scipy_fun, starts_v[i], jac=True, method="L-BFGS-B") for i in range(N_SCIPY)]


def bfgs_rows(calib, X, log_L, starts, scipy_fun, starts_v, best_v) -> None:
    """jaxlab's BFGS multistart (optimistix BFGS, compacted) on 32 and on 1024 starts, timed round-robin with the
    scipy L-BFGS-B loop over the 32 starts (x32 for 1024)."""
    s_sub = jax.tree.map(lambda a: a[:N_SCIPY], starts)
    bf = lambda th: F.fit_multistart("chinchilla", th, X, log_L, method="bfgs")  # noqa: E731
    scipy_loop = functools.partial(_scipy_loop, scipy_fun, starts_v)

    t = time_interleaved({"scipy": (scipy_loop, ()), "bfgs_32": (bf, (s_sub,)), "bfgs_1024": (bf, (starts,))},
                         repeats=5)
    sc = scipy_loop()
    sc_best = min(sc, key=lambda r: r.fun if np.isfinite(r.fun) else np.inf)
    peer = {"peer": _quality(sc_best.x, sc_best.fun, best_v), "peer_evaluations": int(sum(r.nfev for r in sc))}
    for name, th, peer_s, label in [("bfgs_32", s_sub, t["scipy"]["median_s"], "scipy L-BFGS-B loop"),
                                    ("bfgs_1024", starts, t["scipy"]["median_s"] * 1024 / N_SCIPY,
                                     f"scipy L-BFGS-B loop (x{1024 // N_SCIPY} from {N_SCIPY})")]:
        best, every = bf(th)
        steps = np.asarray(every.steps)
        n = steps.size
        emit(AREA, f"epoch_huber_{n}_starts_f64_bfgs", ours_s=t[name]["median_s"], peer=label, peer_s=peer_s,
             compile_s=t[name]["first_s"] - t[name]["median_s"], calibration=calib,
             quality={"ours": _quality(best.theta, best.value, best_v), **peer,
                      "start_steps": int(steps.sum()), "max_steps_reached": int(np.sum(~np.asarray(every.converged))),
                      "us_per_start_step": 1e6 * t[name]["median_s"] / int(steps.sum())},
             method="jaxlab fit_multistart(method='bfgs')", goal_ratio=10.0 if n == 1024 else 1.0)  # issue 30


def synthetic_lm_case(calib: float) -> None:
    n_designs, n_scipy = 1000, 50
    N = np.logspace(8, np.log10(3e9), 12)
    Nd, Dd = cycled_design(N, jnp.array([5.0, 20.0, 80.0]))
    X32 = covariates(Nd.astype(jnp.float32), Dd.astype(jnp.float32))
    clean = chinchilla_log_loss(jax.tree.map(lambda a: a.astype(jnp.float32), BESIROGLU_2024), X32)
    noise = 0.005 * jax.random.normal(jax.random.key(1), (n_designs, 12), dtype=jnp.float32)
    Y = clean + noise
    start = ChinchillaParams(*(jnp.float32(v) for v in (6.0, 7.0, 0.5, 0.3, 0.3)))

    @jax.jit
    def ours(Y):
        res = jax.vmap(lambda y: F.lm_solve("chinchilla", start, X32, y, max_steps=100, tol=1e-7))(Y)
        return res.value

    t = time_fn(ours, Y, repeats=3)
    load = time_under_load({"ours": (ours, (Y,))}, t["median_s"], repeats=3)
    costs = np.asarray(ours(Y))
    Xn = covariates(np.asarray(Nd, np.float64), np.asarray(Dd, np.float64))
    xn, yn = np.asarray(Xn.log_N), np.asarray(Xn.log_D)

    def resid(v, y):
        terms = np.stack([v[0] - v[3] * xn, v[1] - v[4] * yn, np.full_like(xn, v[2])])
        m = terms.max(0)
        return m + np.log(np.exp(terms - m).sum(0)) - y

    t0 = time.perf_counter()
    sc = [optimize.least_squares(resid, np.array([6.0, 7.0, 0.5, 0.3, 0.3]), args=(np.asarray(Y[i], np.float64),),
                                 method="lm") for i in range(n_scipy)]
    t_sc = (time.perf_counter() - t0) / n_scipy * n_designs
    emit(AREA, "lm_1000_designs_f32", ours_s=t["median_s"], peer="scipy least_squares(lm) loop (x20 from 50)",
         peer_s=t_sc, compile_s=t["first_s"] - t["median_s"], calibration=calib,
         quality={"ours_median_cost": float(np.median(costs[:n_scipy])),
                  "peer_median_cost": float(np.median([r.cost for r in sc])),
                  "ours_s_per_fit": t["median_s"] / n_designs, "peer_s_per_fit": t_sc / n_designs},
         goal_ratio=1.0, under_load=load)  # 1000 vmapped 5 x 5 solves per step: LAPACK (jaxlab.core.linalg)


if __name__ == "__main__":
    calib = calibration_gflops()
    epoch_case(calib)
    synthetic_lm_case(calib)
