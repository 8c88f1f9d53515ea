"""Best-of-N: continuous KL formula, exact tie-aware policy on finite spaces, order-statistic estimator and the
BoN/frontier ratios (claims `alignment:gaussian_bon_gain_matches_monte_carlo`,
`alignment:gaussian_bon_is_90_to_94_percent_of_the_frontier`, `alignment:uniform_bon_approaches_the_frontier`,
`alignment:exponential_bon_is_not_near_optimal`, `alignment:discrete_bon_kl_is_below_the_formula`)."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy import integrate, special, stats

from jaxlab.alignment import (
    best_of_n,
    bon_from_samples,
    bon_kl_formula,
    exponential_bon_gain,
    exponential_frontier,
    frontier,
    gain_at_kl,
    gaussian_bon_gain,
    uniform_bon_gain,
    uniform_frontier,
)

NS = jnp.array([2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0])


def toy_lm(seed=0, V=1000):
    rng = np.random.default_rng(seed)
    logits, r = 2.0 * rng.standard_normal(V), rng.standard_normal(V)
    return jax.nn.log_softmax(jnp.asarray(logits)), jnp.asarray(r)


bon_over_n = jax.jit(jax.vmap(best_of_n, in_axes=(None, None, 0)))


def test_gaussian_bon_gain_closed_values_and_monte_carlo():
    np.testing.assert_allclose(gaussian_bon_gain(2), 1 / np.sqrt(np.pi), rtol=1e-12)
    np.testing.assert_allclose(gaussian_bon_gain(16), 1.765991, atol=5e-7)
    np.testing.assert_allclose(gaussian_bon_gain(1, 2.0), 0.0, atol=1e-12)
    rng = np.random.default_rng(0)
    for n in (2, 4, 16):
        mc = rng.standard_normal((100_000, n)).max(1).mean()
        assert abs(mc - float(gaussian_bon_gain(n))) < 0.01
    # the quantile form E r = ∫ F⁻¹(u) N u^{N−1} du, by scipy quad
    for n in (3, 50):
        ref = integrate.quad(lambda u, n=n: stats.norm.ppf(u) * n * u ** (n - 1), 0, 1, limit=200)[0]
        np.testing.assert_allclose(gaussian_bon_gain(n, 1.7), 1.7 * ref, rtol=1e-7)


def test_uniform_and_exponential_bon_gains():
    for n in (1, 2, 7, 30):
        ref_u = integrate.quad(lambda u, n=n: u * n * u ** (n - 1), 0, 1)[0] - 0.5
        np.testing.assert_allclose(uniform_bon_gain(n), ref_u, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(exponential_bon_gain(n), sum(1 / k for k in range(1, n + 1)) - 1, atol=1e-12)


def test_continuous_limit_of_the_exact_policy_is_the_formula():
    # uniform π₀ on V = 20000 distinct Gaussian quantiles approximates a continuous reward
    V = 20_000
    r = jnp.asarray(stats.norm.ppf((np.arange(V) + 0.5) / V))
    log_pi0 = jnp.full(V, -np.log(V))
    _, kl, gain = jax.vmap(best_of_n, in_axes=(None, None, 0))(log_pi0, r, NS[:5])
    np.testing.assert_allclose(kl, bon_kl_formula(NS[:5]), rtol=2e-3)
    np.testing.assert_allclose(gain, jax.vmap(gaussian_bon_gain)(NS[:5]), rtol=2e-3)


def test_exact_policy_matches_enumeration_with_ties():
    # 6 outputs with tied rewards; enumerate all 6^3 draws of N = 3 with uniform tie-breaking
    pi0 = np.array([0.1, 0.25, 0.05, 0.3, 0.2, 0.1])
    r = np.array([0.0, 1.0, 1.0, -0.5, 2.0, 1.0])
    want = np.zeros(6)
    for draw in itertools.product(range(6), repeat=3):
        p = np.prod(pi0[list(draw)])
        best = [y for y in draw if r[y] == max(r[list(draw)])]
        for y in best:
            want[y] += p / len(best)
    log_bon, kl, gain = best_of_n(jnp.log(pi0), jnp.asarray(r), 3)
    np.testing.assert_allclose(np.exp(log_bon), want, rtol=1e-12)
    np.testing.assert_allclose(kl, special.rel_entr(want, pi0).sum(), rtol=1e-12)
    np.testing.assert_allclose(gain, want @ r - pi0 @ r, rtol=1e-12)
    assert float(kl) < float(bon_kl_formula(3))


def test_discrete_bon_kl_is_below_the_formula_with_a_growing_gap():
    log_pi0, r = toy_lm()
    ns = jnp.array([2.0, 4.0, 16.0, 64.0, 256.0])
    log_bon, kl, _ = bon_over_n(log_pi0, r, ns)
    np.testing.assert_allclose(jnp.exp(log_bon).sum(1), 1.0, rtol=1e-12)
    gap = bon_kl_formula(ns) - kl
    assert float(jnp.min(gap)) > 0.0
    assert bool(jnp.all(jnp.diff(gap) > 0))
    np.testing.assert_allclose([kl[-1], bon_kl_formula(256.0)], [3.61, 4.55], atol=0.005)
    # the exact KL from the returned policy agrees with scipy
    np.testing.assert_allclose(kl[2], special.rel_entr(np.exp(log_bon[2]), np.exp(log_pi0)).sum(), rtol=1e-10)


def test_bon_sits_below_the_frontier_with_the_spec_ratios():
    # Gaussian: frontier gain at KL is σ√(2 KL)
    gauss = jax.vmap(gaussian_bon_gain)(NS) / jnp.sqrt(2 * bon_kl_formula(NS))
    assert float(gauss.min()) > 0.9 and float(gauss.max()) < 0.94
    grid = jnp.logspace(-3, 3, 4000)
    unif = jax.vmap(uniform_bon_gain)(NS) / gain_at_kl(uniform_frontier(grid), bon_kl_formula(NS))
    assert float(unif.min()) >= 0.94 and bool(jnp.all(jnp.diff(unif) > 0)) and float(unif[-1]) > 0.9999
    n3 = jnp.array([2.0, 4.0, 16.0])
    expo = jax.vmap(exponential_bon_gain)(n3) / gain_at_kl(exponential_frontier(1.0 + grid), bon_kl_formula(n3))
    # closed form (H_N - 1) / g*(KL_N), g* = -W_{-1}(-exp(-1 - KL)) - 1: 0.66100, 0.68277, 0.72323
    kl = np.log([2.0, 4.0, 16.0]) - np.array([1 / 2, 3 / 4, 15 / 16])
    g_star = -special.lambertw(-np.exp(-1.0 - kl), -1).real - 1.0
    np.testing.assert_allclose(expo, (np.array([1.5, 25 / 12, special.digamma(17.0) + np.euler_gamma]) - 1) / g_star,
                               rtol=1e-5)
    # finite space: exact BoN against the exact frontier at the same (exact) KL
    log_pi0, r = toy_lm()
    _, kl, gain = bon_over_n(log_pi0, r, jnp.array([2.0, 16.0, 256.0]))
    front = frontier(log_pi0, r, jnp.logspace(-4, 4, 3000))
    ratio = gain / gain_at_kl(front, kl)
    assert float(ratio.max()) < 1.0
    np.testing.assert_allclose(ratio, [0.87, 0.96, 0.998], atol=0.005)


def test_order_statistic_estimator_is_exact_bon_on_the_empirical_distribution():
    x = jax.random.normal(jax.random.key(1), (2, 3000))
    kl, gain = bon_from_samples(x, 8)
    np.testing.assert_allclose(kl, bon_kl_formula(8), rtol=1e-14)
    uniform = jnp.full(3000, -np.log(3000))
    for i in range(2):
        np.testing.assert_allclose(gain[i], best_of_n(uniform, x[i], 8)[2], rtol=1e-10)


def test_a_level_too_small_to_resolve_as_a_cdf_difference_gets_its_exact_bon_mass():
    """A level of mass δ = 1e-12 sitting at F = 1/2: P(level) / δ = ((1/2 + δ)^N − (1/2)^N) / δ, summed exactly as
    Σ_k C(N, k) (1/2)^(N−k) δ^(k−1). The difference F_le − F_lt alone resolves δ only to ~1e-16 / 1e-12 = 1e-4."""
    delta, n = 1e-12, 16
    pi0 = np.array([0.5, delta, 0.5 - delta])
    log_bon, _, _ = best_of_n(jnp.log(pi0), jnp.array([0.0, 1.0, 2.0]), n)
    ratio = sum(math.comb(n, k) * 0.5 ** (n - k) * delta ** (k - 1) for k in range(1, n + 1))
    np.testing.assert_allclose(float(log_bon[1]), np.log(delta) + np.log(ratio), rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.exp(np.asarray(log_bon)).sum(), 1.0, rtol=1e-14)


def test_exact_bon_in_float32_follows_float64_on_many_tied_levels():
    """50,000 outputs in ~800 reward levels: the float32 policy agrees with float64 to 1e-4 in log-probability
    (the mass of a level and its BoN mass come from the same two CDF values, so their ratio keeps float32 accuracy
    even where the level's mass is below the CDF's resolution)."""
    rng = np.random.default_rng(3)
    logits = 2.0 * rng.standard_normal(50_000)
    log_pi0 = logits - special.logsumexp(logits)
    r = np.round(rng.standard_normal(50_000), 2)
    lb64, kl64, gain64 = best_of_n(jnp.asarray(log_pi0), jnp.asarray(r), 16)
    lb32, kl32, gain32 = best_of_n(jnp.asarray(log_pi0, jnp.float32), jnp.asarray(r, jnp.float32), 16)
    finite = np.isfinite(np.asarray(lb64))
    assert lb32.dtype == jnp.float32 and np.array_equal(finite, np.isfinite(np.asarray(lb32)))
    np.testing.assert_allclose(np.asarray(lb32, np.float64)[finite], np.asarray(lb64)[finite], rtol=0, atol=1e-4)
    np.testing.assert_allclose([kl32, gain32], [kl64, gain64], rtol=2e-6)


def test_blocked_prefix_sums_and_counts_equal_cumsum():
    from jaxlab.alignment.kl_limits import _prefix_count, _prefix_sum

    rng = np.random.default_rng(0)
    for size in (1, 31, 32, 33, 1000):
        x = rng.random(size)
        np.testing.assert_allclose(_prefix_sum(jnp.asarray(x)), np.cumsum(x), rtol=1e-13)
        np.testing.assert_allclose(_prefix_sum(jnp.asarray(x), reverse=True), np.cumsum(x[::-1])[::-1], rtol=1e-13)
        flags = rng.random(size) < 0.3
        for float_below in (2**24, 0):  # the float32 path, and the int32-offset path of very long arrays
            got = _prefix_count(jnp.asarray(flags), float_below=float_below)
            assert got.dtype == jnp.int32 and np.array_equal(got, np.cumsum(flags))
