"""Benchmark of jaxlab.optim denoisers (spec grad_denoise.md section 7), float32, one JSON line per case.

(a) per-step overhead of each denoiser over a bare ``optax.adam`` step on a ~1.07M-parameter MLP: the
    update alone (the denoiser's query_points + combine + chain update, no gradient evaluation; memory-bound),
    a training step excluding the extra gradient query (one gradient evaluation, batch 128: the issue's goal),
    and a full step with every gradient pass a denoiser needs; all variants round-robin, each timed call after
    one untimed call of itself (steady state: timed right after a gradient step of another variant, adam's bare
    update read 1.08-1.36x faster relative to ours, i.e. the update-only overheads 1.08 / 1.31 / 1.28 / 1.34 for
    ema / igt / disk / two_point, against 1.36 / 1.69 / 1.84 / 1.74 in steady state);
(b) gradient-estimation MSE on the spec-4 quadratic: ``igt``/``two_point`` (alpha_t = 1/t) against
    ``optax.ema`` (best decay of a grid), and against the NumPy loop reference of tests/denoise (same noise);
(c) DP training on scikit-learn digits at eps = 4 (sigma from dp-accounting): ``dp_run`` with and without
    DiSK against a bare optax DP-SGD loop (``optax.contrib.differentially_private_aggregate``) with the same
    sigma, clip, Poisson batches and steps. Opacus (the spec's peer) needs PyTorch, which is not installed
    here: the optax loop is the closest honest reference.

Run: ``python bench/optim.py``.
"""

from __future__ import annotations

import functools
import pathlib
import sys
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core.bench import calibration_gflops, emit, time_fn, time_interleaved
from jaxlab.optim import disk, dp_run, ema, find_state, harmonic, igt, noise_multiplier_for, track, two_point
from jaxlab.optim.denoise.claims import D, T, grad_quadratic, trajectory, two_point_oracle_variance

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "denoise"))
from denoise_reference import reference_denoise

AREA = "denoise"
CAL = calibration_gflops()


def mlp_case():
    key = jax.random.key(0)
    model = eqx.nn.MLP(784, 10, 1280, 1, key=key)  # 784*1280 + 1280 + 1280*10 + 10 = 1,017,610 parameters
    params, static = eqx.partition(model, eqx.is_array)
    n_params = sum(x.size for x in jax.tree_util.tree_leaves(params))
    x = jax.random.normal(jax.random.key(1), (128, 784))
    y = jax.random.randint(jax.random.key(2), (128,), 0, 10)

    def loss(p):
        logits = jax.vmap(eqx.combine(p, static))(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    return params, jax.grad(loss), n_params


def bench_overhead():
    params, grad_fn, n_params = mlp_case()
    grads = grad_fn(params)
    adam = optax.adam(1e-3)

    @jax.jit
    def bare(state, params):
        updates, state = adam.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    @jax.jit
    def bare_full(state, params):
        updates, state = adam.update(grad_fn(params), state, params)
        return optax.apply_updates(params, updates), state

    dens = [("ema", ema(0.1)), ("igt", igt(0.1)), ("disk", disk()), ("two_point", two_point(0.3))]
    calls = {"bare": (bare, (adam.init(params), params)), "bare_full": (bare_full, (adam.init(params), params))}
    for name, den in dens:
        tx = optax.chain(den, adam)

        def step(state, params, den=den, tx=tx, mode="update"):
            ds = find_state(state)
            points = den.query_points(ds, params)
            if mode == "one_grad":  # one gradient evaluation per step, reused for every query slot
                g = (grad_fn(points[0]),) * len(points)
            elif mode == "full":
                g = tuple(grad_fn(p) for p in points)
            else:
                g = tuple(grads for _ in points)
            updates, state = tx.update(den.combine(ds, g), state, params)
            return optax.apply_updates(params, updates), state

        for mode in ("update", "one_grad", "full"):
            calls[f"{name}_{mode}"] = (jax.jit(functools.partial(step, mode=mode)), (tx.init(params), params))
    # round-robin timing: the machine's load hits every variant alike; one warm-up call of the same variant
    # before each timed one, so that no call is timed with the caches left cold by another variant's gradient step
    t = time_interleaved(calls, repeats=15, warmup=1)
    for name, den in dens:
        cases = [("overhead", "update", "bare", "optax.adam (bare update)",
                  "update only: query points + combine + chain update, no gradient (memory-bound)"),
                 ("step_excl_extra_query", "one_grad", "bare_full", "optax.adam (grad + update)",
                  "training step with one gradient evaluation (the issue's goal: overhead_x <= 1.3)"),
                 ("full_step", "full", "bare_full", "optax.adam (grad + update)",
                  f"training step with all {den.num_queries} gradient queries")]
        for label, mode, ref, peer, note in cases:
            ours, base = t[f"{name}_{mode}"], t[ref]
            # issue 27: the update's overhead <= 1.3x adam's bare update; the one-gradient step keeps the same
            # bound (the earlier issue's goal); a full step pays every gradient query, so it has none
            goal = ({"goal": None, "no_goal_reason": f"the cost of all {den.num_queries} gradient queries against "
                     "one: reported for scale, with no target"} if mode == "full" else
                    {"goal_metric": "overhead_x", "goal_op": "<=", "goal_value": 1.3})
            emit(AREA, f"{label}_{name}_1M_mlp", ours_s=ours["median_s"], peer=peer, peer_s=base["median_s"],
                 compile_s=ours["first_s"] - ours["median_s"], calibration=CAL,
                 quality={"overhead_x": ours["median_s"] / base["median_s"], "n_params": n_params,
                          "queries": den.num_queries}, note=note, **goal)


def bench_quadratic_mse():
    reps = 2000
    xs = trajectory().astype(jnp.float32)
    noise = jnp.asarray(np.random.default_rng(0).standard_normal((reps, T, 2, D)), dtype=jnp.float32)

    def ours_fn(den):
        def final(wi):
            return track(grad_quadratic, xs, den, wi[:, :den.num_queries]).error2[-1]
        return jax.jit(lambda w: jax.vmap(final)(w).mean())

    def optax_ema_fn(decay):
        tx = optax.ema(decay, debias=True)

        def one(w):
            def body(state, inputs):
                x, wt = inputs
                m, state = tx.update(grad_quadratic(x) + wt[0], state)
                return state, jnp.sum((m - grad_quadratic(x)) ** 2)
            return jax.lax.scan(body, tx.init(xs[0]), (xs, w))[1][-1]
        return jax.jit(lambda w: jax.vmap(one)(w).mean())

    peer_mse = {dec: float(optax_ema_fn(dec)(noise)) for dec in (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)}
    best_decay = min(peer_mse, key=peer_mse.get)
    theory = {"igt": D / T, "two_point": two_point_oracle_variance()}
    dens = {"igt": igt(harmonic()), "two_point": two_point(harmonic())}
    fns = {name: ours_fn(den) for name, den in dens.items()}
    # ours and the peer round-robin in one process (the peer timed alone swung 4-10 ms between runs)
    timed = time_interleaved({"peer": (optax_ema_fn(best_decay), (noise,)),
                              **{name: (f, (noise,)) for name, f in fns.items()}}, repeats=9)
    for name, f in fns.items():
        t = timed[name]
        emit(AREA, f"quadratic_mse_{name}_vs_optax_ema", ours_s=t["median_s"], peer=f"optax.ema(decay={best_decay})",
             peer_s=timed["peer"]["median_s"], compile_s=t["first_s"], calibration=CAL,
             quality={"ours_mse": float(f(noise)), "peer_mse": peer_mse[best_decay], "theory_ours": theory[name],
                      "reps": reps, "oracle_mode": 1}, goal_ratio=1.0)

    # NumPy loop reference, same noise, one repetition (float64 reference vs float32 jaxlab).
    w = np.asarray(noise[0], dtype=np.float64)
    for name, den, kw in [("disk", disk(), {}), ("two_point", two_point(0.3), {"alpha": lambda t: 0.3})]:
        f = jax.jit(lambda wi, den=den: track(grad_quadratic, xs, den, wi[:, :den.num_queries]).error2)
        t = time_fn(f, noise[0], repeats=5)
        t0 = time.perf_counter()
        ref = reference_denoise(name, np.asarray(xs, np.float64), lambda x: np.linspace(0.5, 3, D) * x + 1.0,
                                w[:, :den.num_queries], **kw)
        t_ref = time.perf_counter() - t0
        ref_err = np.sum((ref - (np.linspace(0.5, 3, D) * np.asarray(xs, np.float64) + 1.0)) ** 2, axis=1)
        emit(AREA, f"trajectory_{name}_vs_numpy_loop", ours_s=t["median_s"], peer="numpy loop reference",
             peer_s=t_ref, compile_s=t["first_s"], calibration=CAL,
             quality={"max_rel_diff_error2": float(np.max(np.abs(np.asarray(f(noise[0])) - ref_err) / ref_err))},
             goal_ratio=1.0)


def bench_dp_digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(X))
    X, y = (X[perm] / 16.0).astype(np.float32), y[perm]
    n = int(0.8 * len(X))
    Xtr, ytr, Xte, yte = map(jnp.asarray, (X[:n], y[:n], X[n:], y[n:]))
    batch, epochs, clip, eps, delta, max_batch = 64, 15, 1.0, 4.0, 1e-5, 128
    rate, steps = batch / n, epochs * n // batch
    sigma = noise_multiplier_for(eps, delta, rate, steps)
    lr = 0.5

    def setup(key):
        params, static = eqx.partition(eqx.nn.MLP(64, 10, 128, 1, key=key), eqx.is_array)
        loss = lambda p, ex: optax.softmax_cross_entropy_with_integer_labels(eqx.combine(p, static)(ex[0]), ex[1])  # noqa: E731
        acc = lambda p: jnp.mean(jnp.argmax(jax.vmap(eqx.combine(p, static))(Xte), -1) == yte)  # noqa: E731
        return params, loss, acc

    def ours(key, den):
        k1, k2 = jax.random.split(key)
        params, loss, acc = setup(k1)
        params, _ = dp_run(k2, loss, params, (Xtr, ytr), den, optax.sgd(lr), l2_clip=clip, noise_multiplier=sigma,
                           sample_rate=rate, num_steps=steps, max_batch=max_batch)
        return acc(params)

    def peer(key):
        k1, k2 = jax.random.split(key)
        params, loss, acc = setup(k1)
        # optax divides by the padded batch length; rescale to the expected Poisson batch size, as dp_run does.
        tx = optax.chain(optax.contrib.differentially_private_aggregate(clip, sigma, k2),
                         optax.scale(max_batch / (rate * n)), optax.sgd(lr))

        def step(carry, k):
            p, s = carry
            mask = jax.random.bernoulli(k, rate, (n,))
            idx = jnp.nonzero(mask, size=max_batch, fill_value=0)[0]
            valid = (jnp.arange(max_batch) < mask.sum()).astype(jnp.float32)
            g = jax.vmap(jax.grad(lambda p, x, yy, v: v * loss(p, (x, yy))), in_axes=(None, 0, 0, 0))(
                p, Xtr[idx], ytr[idx], valid)
            u, s = tx.update(g, s, p)
            return (optax.apply_updates(p, u), s), None

        (params, _), _ = jax.lax.scan(step, (params, tx.init(params)), jax.random.split(k2, steps))
        return acc(params)

    peer_f = jax.jit(peer)
    keys = [jax.random.key(s) for s in range(3)]
    peer_acc = np.mean([float(peer_f(k)) for k in keys])
    dens = {"plain": ema(1.0), "disk": disk(0.7, 0.5), "two_point": two_point(0.3)}
    fns = {name: jax.jit(lambda k, den=den: ours(k, den)) for name, den in dens.items()}
    # every training run and the peer's round-robin (timed one after the other, plain read 0.89-1.18x)
    timed = time_interleaved({"peer": (peer_f, (keys[0],)), **{n: (f, (keys[0],)) for n, f in fns.items()}},
                             repeats=3)
    t_peer = timed["peer"]
    for name, f in fns.items():
        t = timed[name]
        acc = np.mean([float(f(k)) for k in keys])
        emit(AREA, f"dp_digits_eps4_{name}", ours_s=t["median_s"], peer="optax DP-SGD loop (Opacus not installed)",
             peer_s=t_peer["median_s"], compile_s=t["first_s"], calibration=CAL,
             quality={"test_acc_ours": float(acc), "test_acc_peer": float(peer_acc), "noise_multiplier": sigma,
                      "steps": steps, "seeds": len(keys)}, goal_ratio=1.0)  # issue 27: >= 1x the optax loop


if __name__ == "__main__":
    bench_overhead()
    bench_quadratic_mse()
    bench_dp_digits()
