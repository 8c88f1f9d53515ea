"""The scaling fits as jaxlab.core.Algorithm factories (same iterates as the step functions, under jit), and
bad values rejected eagerly and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import Algorithm, run
from jaxlab.scaling import conditioning as C
from jaxlab.scaling import fit as F
from jaxlab.scaling.designs import factorial_design
from jaxlab.scaling.laws import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates


def _problem(noise=0.01):
    N, D = factorial_design(jnp.logspace(8, 10, 5), jnp.array([5.0, 20.0, 80.0]))
    X = covariates(N, D)
    log_L = chinchilla_log_loss(HOFFMANN_2022, X) + noise * jax.random.normal(jax.random.key(0), N.shape)
    start = ChinchillaParams(*(jnp.asarray(v) for v in (5.0, 5.0, 0.3, 0.3, 0.3)))
    return X, log_L, start


def _assert_trees_equal(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_lm_algorithm_reproduces_lm_step_and_lm_run():
    X, log_L, start = _problem()
    algo = F.lm_algorithm("chinchilla", X, log_L, huber_delta=1e-3)
    assert isinstance(algo, Algorithm)
    step = jax.jit(algo.step)
    ref_step = jax.jit(lambda s: F.lm_step("chinchilla", s, X, log_L, 1e-3))
    s, ref = algo.init(start), F.lm_init("chinchilla", start, X, log_L, huber_delta=1e-3)
    _assert_trees_equal(s, ref)
    values = []
    for _ in range(6):
        s, info = step(jax.random.key(0), s)
        ref = ref_step(ref)
        _assert_trees_equal(s, ref)
        assert float(info.value) == float(ref.value) and float(info.lam) == float(ref.lam)
        values.append(float(info.value))
    res, trace = F.lm_run("chinchilla", start, X, log_L, 6, huber_delta=1e-3)
    np.testing.assert_allclose(np.asarray(trace.infos), values, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(res.theta), np.asarray(s.theta), rtol=1e-12)


def test_lbfgs_algorithm_reproduces_lbfgs_step_and_run_drives_it():
    X, log_L, start = _problem()
    algo = F.lbfgs_algorithm("chinchilla", X, log_L)
    step = jax.jit(algo.step)
    ref_step = jax.jit(lambda s: F.lbfgs_step("chinchilla", s, X, log_L))
    s, ref = algo.init(start), F.lbfgs_init("chinchilla", start, X, log_L)
    for _ in range(4):
        s, info = step(None, s)
        ref, value = ref_step(ref)
        _assert_trees_equal(s, ref)
        assert float(info.value) == float(value)
    final, trace = jax.jit(lambda s0: run(algo.step, s0, jax.random.key(1), 4))(algo.init(start))
    np.testing.assert_allclose(np.asarray(trace.infos.value)[-1], float(s.value), rtol=1e-12)
    assert int(final.step) == 4


def test_fit_values_are_checked_eagerly_and_under_jit():
    X, log_L, _ = _problem()
    raises_eager_and_jit(lambda y: F.objective("chinchilla", HOFFMANN_2022, X, y), log_L.at[2].set(jnp.nan),
                         match="log_L must be finite")
    raises_eager_and_jit(lambda d: F.huber(jnp.ones(3), d), -1.0, match="delta must be > 0")
    raises_eager_and_jit(lambda lam0: F.lm_init("chinchilla", HOFFMANN_2022, X, log_L, lam0), 0.0,
                         match="lam0 must be > 0")


def test_law_and_conditioning_values_are_checked_eagerly_and_under_jit():
    N = jnp.logspace(8, 10, 4)
    raises_eager_and_jit(covariates, N, 20 * N, 40 * N, match=r"U \(unique tokens\) must be <= D")
    raises_eager_and_jit(covariates, -N, 20 * N, match="N must lie in")
    raises_eager_and_jit(C.tpp_threshold, 1.0, match="kappa_max must be > 1")
    raises_eager_and_jit(lambda n: C.asymptotic_collinear_kappa(n, 0.3, 0.01), jnp.full(4, 1e9),
                         match="two distinct values")
    raises_eager_and_jit(lambda n, d: C.is_well_conditioned(n, d, 0.3, 0.31, 100.0), N, 20 * N,
                         match="ill-conditioned by construction")
    raises_eager_and_jit(lambda a: ChinchillaParams.from_natural(406.4, 410.7, 1.69, a, 0.28), 0.0,
                         match="alpha must lie in")


def test_conditioning_checks_pass_good_inputs_under_jit():
    N, D = factorial_design(jnp.logspace(8, 10, 5), jnp.array([5.0, 20.0, 80.0]))
    eager = C.is_well_conditioned(N, D, 0.3, 0.31, 100.0)
    assert bool(jax.jit(lambda n, d: C.is_well_conditioned(n, d, 0.3, 0.31, 100.0))(N, D)) == bool(eager)
    assert float(jax.jit(C.tpp_threshold)(100.0)) == float(C.tpp_threshold(100.0))


@pytest.mark.parametrize("name", ["scaling_lm", "scaling_lbfgs"])
def test_registered_examples_decrease_the_objective(name):
    from jaxlab.core import algorithms

    algo, state, xs = algorithms()[name].example(jax.random.key(0))
    assert xs is None
    v0 = float(state.value)
    final, _ = run(algo.step, state, jax.random.key(0), 5)
    assert float(final.value) < v0
