"""Proxy rewards and ensembles (claims `alignment:proxy_objective_gap_identity_and_bound`,
`alignment:proxy_gaps_shrink_with_beta_on_the_fixed_instance`, `alignment:ensembles_shrink_the_gap_like_one_over_m`),
data-set frontiers and the REINFORCE baseline."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from scipy import special

from jaxlab.alignment import (
    dataset_frontier,
    ensemble_proxy,
    frontier_from_samples,
    frontier_point,
    kl_regularized_objective,
    proxy_gaps,
    reinforce_kl_run,
    tilted_log_policy,
)

V = 30


def random_instances(seed, count):
    rng = np.random.default_rng(seed)
    log_pi0 = np.log(rng.dirichlet(np.ones(V), size=count))
    r = rng.standard_normal((count, V))
    e = rng.uniform(0.05, 1.0, size=(count, 1)) * rng.standard_normal((count, V))
    beta = np.exp(rng.uniform(np.log(0.05), np.log(5.0), size=count))
    return tuple(jnp.asarray(a) for a in (log_pi0, r, e, beta))


INST = random_instances(0, 300)
gaps_batch = jax.jit(jax.vmap(proxy_gaps))


def test_objective_gap_identity_and_hoeffding_bound():
    log_pi0, r, e, beta = INST
    g = gaps_batch(log_pi0, r, e, beta)
    obj = jax.vmap(kl_regularized_objective)
    tilt = jax.vmap(tilted_log_policy)
    direct = obj(tilt(log_pi0, r, beta), log_pi0, r, beta) - obj(tilt(log_pi0, r + e, beta), log_pi0, r, beta)
    # the direct difference of two O(1) objectives carries O(1e-15) absolute rounding
    np.testing.assert_allclose(g.objective_gap, direct, rtol=1e-10, atol=1e-13)
    assert float(g.objective_gap.min()) >= 0.0
    assert bool(jnp.all(g.objective_gap <= g.hoeffding_bound))
    np.testing.assert_allclose(g.hoeffding_bound, (e.max(1) - e.min(1)) ** 2 / (8 * beta), rtol=1e-14)
    # the gap's second form: E_{π̂}[e] − β ln E_{π_β}[e^{e/β}], by scipy
    for i in range(5):
        pib = np.exp(np.asarray(tilted_log_policy(log_pi0[i], r[i], beta[i])))
        hat = special.softmax(np.asarray(log_pi0[i] + (r[i] + e[i]) / beta[i]))
        b = float(beta[i])
        ref = hat @ np.asarray(e[i]) - b * special.logsumexp(np.asarray(e[i]) / b, b=pib)
        np.testing.assert_allclose(g.objective_gap[i], ref, rtol=1e-9)
        np.testing.assert_allclose(g.true_reward_gap[i], (pib - hat) @ np.asarray(r[i]), rtol=1e-10, atol=1e-15)
    # small errors: Δ_obj ≈ Var_{π_β}(e)/(2β)
    small = 1e-4 * e[0]
    pib = jnp.exp(tilted_log_policy(log_pi0[0], r[0], beta[0]))
    var = pib @ small**2 - (pib @ small) ** 2
    np.testing.assert_allclose(proxy_gaps(log_pi0[0], r[0], small, beta[0]).objective_gap, var / (2 * beta[0]),
                               rtol=1e-3)


def test_objective_gap_increases_with_the_error_scale():
    log_pi0, r, e, beta = INST
    scales = jnp.linspace(0.1, 3.0, 30)
    g = jax.vmap(lambda s: gaps_batch(log_pi0[:50], r[:50], s * e[:50], beta[:50]).objective_gap)(scales)
    assert bool(jnp.all(jnp.diff(g, axis=0) > 0))


def test_fixed_instance_gaps_decrease_in_beta():
    log_pi0 = jnp.log(jnp.array([0.1, 0.2, 0.3, 0.25, 0.15]))
    r = jnp.array([0.0, 0.25, 0.5, 0.75, 1.0])
    e = jnp.array([0.3, -0.1, 0.0, 0.2, -0.2])
    g = jax.vmap(proxy_gaps, in_axes=(None, None, None, 0))(log_pi0, r, e, jnp.array([0.1, 0.25, 0.5, 1.0]))
    assert bool(jnp.all(jnp.diff(g.objective_gap) < 0)) and bool(jnp.all(jnp.diff(g.true_reward_gap) < 0))
    assert float(g.true_reward_gap.min()) > 0


def test_ensembles_shrink_the_gap_like_one_over_m():
    r = jnp.linspace(0.0, 1.0, 50)
    log_pi0 = jnp.full(50, -jnp.log(50.0))
    errors = 0.2 * jax.random.normal(jax.random.key(0), (4000, 16, 50))
    ms = (1, 2, 4, 8, 16)

    # ē for every M at once: running means of the members (ensemble_proxy itself is checked below)
    ebar = jnp.cumsum(errors, axis=1)[:, jnp.array(ms) - 1] / jnp.array(ms, dtype=float)[:, None]
    gaps = jax.jit(jax.vmap(jax.vmap(lambda eb: proxy_gaps(log_pi0, r, eb, 0.1).objective_gap)))(ebar)
    means = np.asarray(gaps.mean(0))
    assert np.all(np.diff(means) < 0)
    scaled = np.array(ms) * means
    assert np.all(scaled[2:] > scaled[-1] / 2) and np.all(scaled[2:] < 2 * scaled[-1])
    np.testing.assert_allclose(means, [0.115, 0.070, 0.040, 0.021, 0.011], rtol=0.15)
    # the ensemble's error range never exceeds the worst member's
    em = errors[0, :4]
    np.testing.assert_allclose(ensemble_proxy(r, em), r + ebar[0, 2], rtol=1e-12)
    rng_bar = jnp.ptp(ensemble_proxy(r, em) - r)
    assert float(rng_bar) <= float(jnp.max(jnp.ptp(em, axis=1)))


def test_dataset_frontier_is_the_shared_beta_average():
    x = jax.random.normal(jax.random.key(3), (5, 4000)) * jnp.arange(1.0, 6.0)[:, None]
    betas = jnp.array([0.5, 2.0, 8.0])
    per = frontier_from_samples(x, betas)
    avg = dataset_frontier(x, betas)
    np.testing.assert_allclose(avg.kl, per.kl.mean(0), rtol=1e-12)
    np.testing.assert_allclose(avg.gain, per.gain.mean(0), rtol=1e-12)
    np.testing.assert_allclose(avg.ess, per.ess.min(0), rtol=1e-12)
    # sample-level identities: K̂L in [0, ln n], Ĵ = ĝain/β, rKL = Ĵ − K̂L ≥ 0
    assert float(per.kl.min()) >= 0 and float(per.kl.max()) <= np.log(4000)
    np.testing.assert_allclose(per.jeffreys, per.gain / betas, rtol=1e-12)
    assert float(per.reverse_kl.min()) >= 0
    # the default grid is 256 log-spaced values in [1e-3, 1e3]·sd
    default = frontier_from_samples(x[0])
    assert default.beta.shape == (256,)
    np.testing.assert_allclose(default.beta[jnp.array([0, -1])] / jnp.std(x[0]), [1e-3, 1e3], rtol=1e-12)
    assert not bool(default.reliable[0]) and bool(default.reliable[-1])


@pytest.mark.slow  # the notebook runs the same baseline by default
def test_reinforce_stays_below_the_frontier_and_approaches_it():
    rng = np.random.default_rng(4)
    log_pi0 = jax.nn.log_softmax(jnp.asarray(rng.standard_normal(20)))
    r = jnp.asarray(rng.standard_normal(20))
    betas = jnp.array([0.3, 1.0])
    train = jax.jit(jax.vmap(lambda b: reinforce_kl_run(jax.random.key(0), log_pi0, r, b, num_steps=400,
                                                       optimizer=optax.adam(0.05), thin=40)[1].infos))
    infos = train(betas)
    for j, b in enumerate(betas):
        best = frontier_point(log_pi0, r, b)
        optimum = float(best.expected_reward - b * best.kl)
        objective = np.asarray(infos.objective[j])
        assert objective[-1] <= optimum + 1e-12
        assert optimum - objective[-1] < 0.05 * (optimum - float(jnp.exp(log_pi0) @ r))
        assert objective[-1] > objective[0]
