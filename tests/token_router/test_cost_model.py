"""Step-cost fit, throughput models and delayed-batching parameters against closed forms and NumPy references."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, stats

from jaxlab.serving.token_router import (
    StepCostModel,
    derive_delayed_batching,
    fit_step_cost,
    throughput_lockstep,
    throughput_separate,
    throughput_sequential,
    throughput_shared,
)

COST = StepCostModel(jnp.array([2.0, 10.0]), jnp.array([0.05, 0.4]))
HALF = jnp.array([0.5, 0.5])


def shared_reference(alpha, beta, q, n, b):
    """The shared-device cycle model of `cost_model` with the integer k(B) found by counting S steps (no logarithms)."""
    n0, k = n - q * b, 0
    while n - n0 * (1 - q) ** k < b - 1e-9:
        k += 1
    return (b / q) / (alpha[1] + k * alpha[0] + (beta[0] + beta[1]) * b / q), k


def test_fit_step_cost_matches_scipy_linregress():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 200, 40).astype(float)
    y = 1.7 + 0.03 * n + rng.normal(0, 0.2, 40)
    alpha, beta, r2 = fit_step_cost(n, y)
    ref = stats.linregress(n, y)
    np.testing.assert_allclose([alpha, beta, r2], [ref.intercept, ref.slope, ref.rvalue**2], rtol=1e-10)
    # exact line: exact recovery and R^2 = 1; the fit also runs under jit
    a2, b2, r22 = jax.jit(fit_step_cost)(jnp.asarray(n), 0.5 + 0.25 * jnp.asarray(n))
    np.testing.assert_allclose([a2, b2, r22], [0.5, 0.25, 1.0], rtol=1e-12)


@pytest.mark.parametrize(("alpha", "beta", "n"), [(3.0, 0.5, 10), (0.7, 0.0, 4), (2.0, 1.3, 1)])
def test_separate_single_model_closed_form(alpha, beta, n):
    x = throughput_separate(StepCostModel(jnp.array([alpha]), jnp.array([beta])), jnp.array([1.0]), n)
    np.testing.assert_allclose(x, n / (alpha + beta * n), rtol=1e-12)


def test_separate_two_models_solves_flow_balance_like_brentq():
    v = np.array([1.0, 0.3])  # R2R-style visits
    x = float(throughput_separate(COST, jnp.asarray(v), 32))
    a, b = np.asarray(COST.alpha), np.asarray(COST.beta)

    def f(z):
        return np.sum(v * a * z / (1 - b * z)) - 32

    ref = optimize.brentq(f, 1e-12, 1 / b.max() - 1e-12, xtol=1e-15)
    np.testing.assert_allclose(x, ref, rtol=1e-10)
    # batches b_m = v_m X T_m(b_m / v_m) add up to N
    bm = v * a * x / (1 - b * x)
    np.testing.assert_allclose(bm.sum(), 32, rtol=1e-10)


@pytest.mark.parametrize("n", [8, 32, 128])
def test_shared_curve_matches_counting_reference(n):
    bs = np.arange(1, n)
    got = np.asarray(jax.vmap(lambda b: throughput_shared(COST, 0.2, n, b))(jnp.asarray(bs, float)))
    ref = [shared_reference(np.asarray(COST.alpha), np.asarray(COST.beta), 0.2, n, b)[0] for b in bs]
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(throughput_shared(COST, 0.2, n, jnp.asarray(bs)), ref, rtol=1e-12)


@pytest.mark.parametrize(("n", "b_star", "x_star"), [(8, 5, 0.8547), (32, 23, 1.6028), (128, 92, 2.0264)])
def test_derived_parameters_are_the_spec_values(n, b_star, x_star):
    p = derive_delayed_batching(COST, 0.2, n)
    assert p.batch_threshold == b_star
    np.testing.assert_allclose(p.predicted_throughput, x_star, atol=5e-5)
    _, k = shared_reference(np.asarray(COST.alpha), np.asarray(COST.beta), 0.2, n, b_star)
    nbar = (b_star * 0.8 / 0.2) / max(k, 1)
    np.testing.assert_allclose(p.timeout, k * (2.0 + 0.05 * nbar), rtol=1e-12)


def test_lockstep_and_sequential_closed_forms():
    n, q = 16, 0.2
    x = float(throughput_lockstep(COST, q, n))
    assert math.isclose(x, n / (2.0 * (1 - q**n) + 10.0 * (1 - (1 - q) ** n) + 0.45 * n), rel_tol=1e-12)
    # q = 0: only S ever runs; one S step per N tokens
    assert math.isclose(float(throughput_lockstep(COST, 0.0, n)), n / (2.0 + 0.45 * n), rel_tol=1e-12)
    assert math.isclose(float(throughput_sequential(COST, q)), 1 / (0.8 * 2.0 + 0.2 * 10.0 + 0.45), rel_tol=1e-12)


BAD = [
    (lambda: throughput_separate(StepCostModel(jnp.array([0.0, 1.0]), jnp.array([0.1, 0.1])), HALF, 4),
     "alpha"),
    (lambda: throughput_separate(StepCostModel(jnp.array([1.0, 1.0]), jnp.array([-0.1, 0.1])), HALF, 4),
     "beta"),
    (lambda: throughput_separate(StepCostModel(jnp.array([1.0, jnp.nan]), jnp.array([0.1, 0.1])), HALF, 4), "finite"),
    (lambda: throughput_separate(StepCostModel(jnp.array([1.0, jnp.inf]), jnp.array([0.1, 0.1])), HALF, 4), "finite"),
    (lambda: throughput_separate(COST, jnp.array([1.2, 0.2]), 4), "visits"),
    (lambda: throughput_separate(COST, jnp.array([0.8, 0.2]), 0), "n_requests"),
    (lambda: throughput_separate(COST, jnp.array([0.8, 0.3]), 4, exclusive=True), "sum to 1"),
    (lambda: throughput_separate(COST, jnp.array([0.8, jnp.nan]), 4), "visits"),
    (lambda: throughput_shared(COST, 0.0, 8, 2), "q_large"),
    (lambda: throughput_shared(COST, 1.0, 8, 2), "q_large"),
    (lambda: throughput_shared(COST, 1.5, 8, 2), "q_large"),
    (lambda: throughput_shared(COST, 0.2, 8, 0), "batch_threshold"),
    (lambda: throughput_shared(COST, 0.2, 8, 9), "batch_threshold"),
    (lambda: derive_delayed_batching(COST, 1.0, 8), "q_large"),
    (lambda: derive_delayed_batching(COST, 0.2, 0), "n_requests"),
    (lambda: throughput_lockstep(COST, -0.1, 8), "q_large"),
    (lambda: throughput_lockstep(COST, 0.2, 0), "n_requests"),
    (lambda: fit_step_cost(jnp.array([1.0, 1.0, 1.0]), jnp.array([1.0, 2.0, 3.0])), "distinct"),
    (lambda: fit_step_cost(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0, 3.0])), "latencies"),
]


@pytest.mark.parametrize(("call", "match"), BAD)
def test_bad_inputs_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()
