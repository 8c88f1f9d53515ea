"""Benchmark of jaxlab's ULA / annealed Langevin against BlackJAX on the same targets (float32, CPU).

Cases (one JSON line each, ``ratio`` = peer time / our time, > 1 means jaxlab is faster):

- ``ula_d10_10x10000``: 10 chains x 10,000 ULA steps on a d = 10 Gaussian; peer: BlackJAX's overdamped
  Langevin (Euler) step, the ULA update inside ``blackjax.mala``, vmapped over chains and scanned. Timed runs keep
  only the final state; quality (untimed runs keeping 100 snapshots): the worst relative error of the empirical
  variance against ULA's exact stationary variance (both samplers).
- ``mala_d10_10x10000``: the same work with ``blackjax.mala`` (Metropolis-adjusted, for scale only).
- ``ald_linhart_1000x400x5``: annealed Langevin, 400 levels x 5 steps, 1,000 particles, Linhart's composite
  score on the B.5 toy (d = 2, n = 10); peer: the same level loop written with BlackJAX's Langevin step.
  Reports chains x steps per second and the W2 of the final particles' Gaussian fit to the tall posterior.
- ``ula_P10000_d{2,100}``: 10^4 particles x 20 steps (spec B.7; quality is then the transient variance).

Run: ``python bench/sampling.py`` (with the MSIP benchmark), or ``python bench/_sampling_langevin.py``.
"""

from __future__ import annotations

import functools

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
from blackjax.mcmc.diffusions import DiffusionState, overdamped_langevin

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved, time_under_load
from jaxlab.sampling import annealed_langevin as al
from jaxlab.sampling.langevin.models import gaussian_toy, gaussian_toy_scores

AREA = "langevin"


def gaussian_target(d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    P = (Q * np.linspace(1.0, 4.0, d)) @ Q.T
    return jnp.asarray(P, jnp.float32)


def ula_case(P_chains: int, d: int, steps: int, h: float, calib: float, name: str, with_mala: bool = False):
    P = gaussian_target(d)
    score = lambda th: -P @ th  # noqa: E731
    logdensity = lambda th: -0.5 * th @ P @ th  # noqa: E731
    x0 = jnp.zeros((P_chains, d), jnp.float32)
    thin = max(1, steps // 100)
    n_out = steps // thin

    @functools.partial(jax.jit, static_argnums=1)
    def ours(key, save=False):
        final, trace = al.ula_run(key, x0, score, h, steps, thin=thin, save_states=save)
        return final.position, (trace.states.position if save else None)

    step = overdamped_langevin(jax.value_and_grad(logdensity))

    @functools.partial(jax.jit, static_argnums=1)
    def peer(key, save=False):
        state = jax.vmap(lambda x: DiffusionState(x, *jax.value_and_grad(logdensity)(x)))(x0)

        def body(s, k):
            s = jax.vmap(step, (0, 0, None))(jax.random.split(k, P_chains), s, h)
            return s, None

        if not save:
            s, _ = jax.lax.scan(body, state, jax.random.split(key, steps))
            return s.position, None
        keys = jax.random.split(key, steps).reshape(n_out, thin)

        def block(s, ks):
            s, _ = jax.lax.scan(body, s, ks)
            return s, s.position

        s, traj = jax.lax.scan(block, state, keys)
        return s.position, traj

    # exact ULA stationary covariance: Σ_∞ = 2h (I - A²)^{-1} with A = I - hP
    p, Qm = np.linalg.eigh(np.asarray(P, np.float64))
    stat = (Qm * (1.0 / (p * (1 - h * p / 2)))) @ Qm.T

    def quality(traj):
        x = np.asarray(traj[n_out // 2:], np.float64).reshape(-1, d)
        return float(np.max(np.abs(np.var(x, 0) / np.diag(stat) - 1)))

    key = jax.random.key(0)
    cases = {"ours": (ours, (key,)), "peer": (peer, (key,))}
    if with_mala:
        mala = blackjax.mala(logdensity, h)

        @jax.jit
        def peer_mala(key):
            state = jax.vmap(mala.init)(x0)

            def body(s, k):
                s, info = jax.vmap(mala.step)(jax.random.split(k, P_chains), s)
                return s, info.acceptance_rate.mean()

            s, acc = jax.lax.scan(body, state, jax.random.split(key, steps))
            return s.position, acc.mean()

        cases["mala"] = (peer_mala, (key,))
    timed = time_interleaved(cases, repeats=5)  # round-robin: the two timed one after the other swung 0.85-1.26
    t_ours, t_peer = timed["ours"], timed["peer"]
    work = P_chains * steps
    emit(AREA, name, ours_s=t_ours["median_s"], peer="blackjax.overdamped_langevin", peer_s=t_peer["median_s"],
         compile_s=t_ours["first_s"] - t_ours["median_s"], calibration=calib,
         quality={"var_relerr_ours": quality(ours(key, True)[1]), "var_relerr_peer": quality(peer(key, True)[1])},
         chain_steps_per_s=work / t_ours["median_s"], peer_compile_s=t_peer["first_s"] - t_peer["median_s"],
         goal_ratio=1.0)
    if with_mala:
        emit(AREA, name.replace("ula", "mala"), ours_s=t_ours["median_s"], peer="blackjax.mala",
             peer_s=timed["mala"]["median_s"], compile_s=t_ours["first_s"] - t_ours["median_s"], calibration=calib,
             quality={"mala_acceptance": float(peer_mala(key)[1])}, goal=None,
             no_goal_reason="for scale only: MALA adds a Metropolis test to every ULA step, so the work differs")


def ald_case(calib: float):
    toy = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), gaussian_toy(jax.random.key(0), 10))
    prior_fn, post_fn = gaussian_toy_scores(toy, al.vp_alpha)
    score = al.make_composite_score("linhart", prior_fn, post_fn, toy.xs, prior_cov=toy.cov_prior,
                                    post_covs=toy.post_cov)
    ts, hs, ks = al.ald_default_schedule(400, 5, 0.5)
    ts, hs = ts.astype(jnp.float32), hs.astype(jnp.float32)
    P = 1000
    x0 = jax.random.normal(jax.random.key(1), (P, 2), jnp.float32)

    @jax.jit
    def ours(key):
        return al.annealed_langevin(key, x0, score, ts, hs, ks)

    @jax.jit
    def peer(key):
        # BlackJAX's Langevin step needs (logdensity, grad): hand it the composite score with a dummy value
        def level(x, xs):
            t, h, k = xs
            step = overdamped_langevin(lambda th: (jnp.zeros((), th.dtype), score(th, t)))
            s = jax.vmap(lambda th: DiffusionState(th, jnp.zeros((), th.dtype), score(th, t)))(x)

            def body(s, kk):
                return jax.vmap(step, (0, 0, None))(jax.random.split(kk, P), s, h), None

            s, _ = jax.lax.scan(body, s, jax.random.split(k, 5))
            return s.position, None

        keys = jax.random.split(key, ts.shape[0])
        x, _ = jax.lax.scan(level, x0, (ts, hs, keys))
        return x

    mu_n, cov_n = al.tall_posterior_gaussian(toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)

    def w2(x):
        x = np.asarray(x, np.float64)
        return float(al.w2_gaussian(jnp.asarray(x.mean(0)), jnp.asarray(np.cov(x.T)), mu_n, cov_n))

    key = jax.random.key(2)
    timed = time_interleaved({"ours": (ours, (key,)), "peer": (peer, (key,))}, repeats=3)
    t_ours, t_peer = timed["ours"], timed["peer"]
    load = time_under_load({"ours": (ours, (key,)), "peer": (peer, (key,))}, t_ours["median_s"], peer="peer",
                           repeats=3)
    work = P * 400 * 5
    emit(AREA, "ald_linhart_1000x400x5", ours_s=t_ours["median_s"], peer="blackjax.overdamped_langevin loop",
         peer_s=t_peer["median_s"], compile_s=t_ours["first_s"] - t_ours["median_s"], calibration=calib,
         quality={"w2_to_tall_posterior_ours": w2(ours(key)), "w2_to_tall_posterior_peer": w2(peer(key))},
         chain_steps_per_s=work / t_ours["median_s"], peer_chain_steps_per_s=work / t_peer["median_s"],
         goal_ratio=1.0, under_load=load)  # Linhart's score inverts Lambda_t at every call


def main():
    calib = calibration_gflops()
    ula_case(10, 10, 10_000, 0.1, calib, "ula_d10_10x10000", with_mala=True)
    ald_case(calib)
    for d in (2, 100):
        ula_case(10_000, d, 20, 0.1, calib, f"ula_P10000_d{d}")


if __name__ == "__main__":
    main()
