"""Bad inputs raise clear errors at the boundary; extreme β stays finite."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.alignment import (
    bernoulli_frontier,
    best_of_n,
    beta_for_kl,
    bon_from_samples,
    bon_kl_formula,
    ensemble_proxy,
    exponential_frontier,
    frontier,
    frontier_from_samples,
    frontier_point,
    gain_from_samples,
    kl_max,
    max_gain_at_kl,
    proxy_gaps,
    tilted_log_policy,
)

LOG_PI0 = jnp.log(jnp.array([0.2, 0.5, 0.3]))
R = jnp.array([0.0, 1.0, 2.0])


@pytest.mark.parametrize("beta", [0.0, -1.0, float("inf"), float("nan")])
def test_beta_must_be_positive_and_finite(beta):
    with pytest.raises(ValueError, match=r"beta must lie in \(0.0, inf\)"):
        frontier_point(LOG_PI0, R, beta)
    with pytest.raises(ValueError, match="betas must lie in"):
        frontier(LOG_PI0, R, jnp.array([1.0, beta]))
    with pytest.raises(ValueError, match="beta must lie in"):
        proxy_gaps(LOG_PI0, R, R, beta)


def test_best_of_n_needs_n_at_least_one():
    for bad in (0, 0.5, -3):
        with pytest.raises(ValueError, match="n must lie in"):
            best_of_n(LOG_PI0, R, bad)
        with pytest.raises(ValueError, match="n_bon must lie in"):
            bon_from_samples(jnp.arange(5.0), bad)
    with pytest.raises(ValueError, match="n must lie in"):
        bon_kl_formula(jnp.array([2.0, 0.0]))


def test_kl_budget_must_be_reachable():
    with pytest.raises(ValueError, match="eps must lie in"):
        beta_for_kl(LOG_PI0, R, -0.1)
    kmax = float(kl_max(LOG_PI0, R))
    np.testing.assert_allclose(kmax, -np.log(0.3), rtol=1e-12)
    with pytest.raises(ValueError, match=r"eps must be < KL_max = 1\.20397.*got eps = 1\.5"):
        max_gain_at_kl(LOG_PI0, R, 1.5)
    with pytest.raises(ValueError, match="eps must be < KL_max"):
        beta_for_kl(LOG_PI0, R, kmax)
    with pytest.raises(ValueError, match="lo and hi must satisfy"):
        beta_for_kl(LOG_PI0, R, 0.1, lo=2.0, hi=1.0)


def test_constant_rewards_have_no_beta_for_a_budget():
    flat = jnp.full(3, 0.7)
    p = frontier_point(LOG_PI0, flat, 0.3)
    assert float(p.gain) == 0.0 and abs(float(p.kl)) < 1e-15
    with pytest.raises(ValueError, match="r must not be constant"):
        beta_for_kl(LOG_PI0, flat, 0.1)
    with pytest.raises(ValueError, match="r must not be constant"):
        frontier_from_samples(jnp.ones(10))


def test_log_pi0_must_be_normalised_and_match_r():
    with pytest.raises(ValueError, match=r"log_pi0 must be normalised .* got logsumexp = 0\.693"):
        frontier_point(jnp.log(jnp.array([1.0, 0.5, 0.5])), R, 1.0)
    with pytest.raises(ValueError, match="log_pi0 must be log-probabilities"):
        tilted_log_policy(jnp.array([0.0, jnp.nan, -jnp.inf]), R, 1.0)
    with pytest.raises(ValueError, match=r"r must have the shape of log_pi0 \(3,\), got shape \(4,\)"):
        frontier_point(LOG_PI0, jnp.arange(4.0), 1.0)
    with pytest.raises(ValueError, match="e must have the shape of r"):
        proxy_gaps(LOG_PI0, R, jnp.zeros(2), 1.0)
    with pytest.raises(ValueError, match=r"errors must have shape \(M >= 1, 3\)"):
        ensemble_proxy(R, jnp.zeros((2, 4)))


def test_rewards_must_be_finite_floats():
    for bad in (jnp.array([0.0, jnp.nan, 1.0]), jnp.array([0.0, jnp.inf, 1.0])):
        with pytest.raises(ValueError, match="r must be finite"):
            frontier_point(LOG_PI0, bad, 1.0)
        with pytest.raises(ValueError, match="r must be finite"):
            gain_from_samples(bad, 1.0)
    with pytest.raises(TypeError, match="r must have a float dtype"):
        frontier_point(LOG_PI0, np.array([0, 1, 2]), 1.0)
    with pytest.raises(TypeError, match="r must have a float dtype"):
        gain_from_samples(np.arange(10), 1.0)


def test_sample_estimators_need_two_samples():
    with pytest.raises(ValueError, match="r must hold at least 2 samples"):
        gain_from_samples(jnp.array([1.0]), 1.0)
    with pytest.raises(ValueError, match="r must be 1 or 2-dimensional"):
        frontier_from_samples(jnp.zeros((2, 2, 2)))


def test_closed_forms_domain():
    with pytest.raises(ValueError, match=r"beta must lie in \(1.0, inf\)"):
        exponential_frontier(0.9)
    with pytest.raises(ValueError, match=r"p must lie in \(0.0, 1.0\)"):
        bernoulli_frontier(1.0, 1.0)


def test_tiny_beta_does_not_overflow_and_reports_ess():
    x = jnp.linspace(0.0, 1000.0, 101)
    est = frontier_from_samples(x, jnp.array([1e-6, 1e6]))
    assert bool(jnp.all(jnp.isfinite(est.gain))) and bool(jnp.all(jnp.isfinite(est.kl)))
    np.testing.assert_allclose(est.gain[0], 500.0, rtol=1e-12)  # all weight on the largest reward
    np.testing.assert_allclose(est.ess, [1.0, 101.0], rtol=1e-3)
    np.testing.assert_allclose(est.kl[0], np.log(101), rtol=1e-12)
    assert not bool(est.reliable[0])
    p = frontier_point(LOG_PI0, 1e4 * R, 1e-3)
    np.testing.assert_allclose(p.kl, -np.log(0.3), rtol=1e-12)
    grid = frontier(LOG_PI0, 1e4 * R, jnp.array([1e-3, 1e-9]))  # the one-pass grid: no eps * range / beta error
    np.testing.assert_allclose(grid.kl, -np.log(0.3), rtol=1e-12)


def _raises_under_jit(fn, *args, match):
    """The same bad value passed as a traced argument raises at run time with the eager message."""
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_value_checks_hold_under_jit():
    _raises_under_jit(lambda b: frontier_point(LOG_PI0, R, b).gain, -1.0, match=r"beta must lie in \(0.0, inf\)")
    _raises_under_jit(lambda b: frontier(LOG_PI0, R, b).gain, jnp.array([1.0, jnp.nan]), match="betas must lie in")
    _raises_under_jit(lambda lp: frontier_point(lp, R, 1.0).gain, jnp.log(jnp.array([1.0, 0.5, 0.5])),
                      match=r"log_pi0 must be normalised")
    _raises_under_jit(lambda lp: tilted_log_policy(lp, R, 1.0), jnp.array([0.0, jnp.nan, -jnp.inf]),
                      match="log_pi0 must be log-probabilities")
    _raises_under_jit(lambda r: frontier_point(LOG_PI0, r, 1.0).gain, jnp.array([0.0, jnp.inf, 1.0]),
                      match="r must be finite")
    _raises_under_jit(lambda n: best_of_n(LOG_PI0, R, n)[1], 0.5, match="n must lie in")
    _raises_under_jit(lambda eps: beta_for_kl(LOG_PI0, R, eps), 1.5, match="eps must be < KL_max")
    _raises_under_jit(lambda eps: beta_for_kl(LOG_PI0, R, eps), -0.1, match="eps must lie in")
    _raises_under_jit(lambda r: beta_for_kl(LOG_PI0, r, 0.1), jnp.full(3, 0.7), match="r must not be constant")
    _raises_under_jit(lambda x: frontier_from_samples(x).gain, jnp.ones(10), match="r must not be constant")
    _raises_under_jit(lambda b: exponential_frontier(b).gain, 0.9, match=r"beta must lie in \(1.0, inf\)")
    _raises_under_jit(lambda p: bernoulli_frontier(p, 1.0).gain, 1.0, match=r"p must lie in \(0.0, 1.0\)")


def test_a_half_precision_policy_is_a_dtype_error_not_an_unnormalised_one():
    import jax
    import jax.numpy as jnp
    import pytest

    from jaxlab.alignment import frontier

    log_pi0 = jnp.log(jnp.full(4, 0.25, dtype=jnp.float16))
    r = jnp.arange(4.0, dtype=jnp.float16)
    with pytest.raises(TypeError, match="log_pi0 must be float32 or float64, got dtype float16"):
        frontier(log_pi0, r, jnp.array([1.0]))
    with pytest.raises(TypeError, match="log_pi0 must be float32 or float64"):
        jax.jit(lambda p, q: frontier(p, q, jnp.array([1.0])))(log_pi0, r)
