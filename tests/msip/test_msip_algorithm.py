"""MSIP as a jaxlab.core.Algorithm: the factory reproduces msip() and msip_step exactly (under jit); renamed
keywords; the bad inputs of the issue-24 sweep (wrong particle dimension, a string estimator), eager and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import Algorithm, run
from jaxlab.sampling import benchmarks
from jaxlab.sampling import msip as M

RNG = np.random.default_rng(7)
Y0 = jnp.asarray(RNG.normal(size=(6, 2)))
KEY = jax.random.key(4)


def lp(x):
    return -0.5 * jnp.sum(x**2)


EST = M.fredholm_estimator(lp)


@pytest.mark.parametrize("kw", [{"lengthscale": 0.7}, {"lengthscale_rule": 0.4, "bounds": (-1.5, 1.5)}])
def test_algorithm_reproduces_msip_exactly_under_jit(kw):
    final, trace = M.msip(KEY, Y0, EST, num_steps=6, step_size=0.3, return_trajectory=True, **kw)
    algo = M.msip_algorithm(EST, step_size=0.3, **kw)
    assert isinstance(algo, Algorithm)
    k0, k1 = jax.random.split(KEY)
    state = algo.init(Y0, k0)
    got, got_trace = jax.jit(lambda s, k: run(algo.step, s, k, 6, save_states=True))(state, k1)
    for a, b in zip(jax.tree_util.tree_leaves((final, trace)), jax.tree_util.tree_leaves((got, got_trace)),
                    strict=True):
        np.testing.assert_array_equal(a, b)


def test_algorithm_step_equals_msip_step_under_jit():
    algo = M.msip_algorithm(EST, step_size=0.25, lengthscale=0.6, jitter=1e-6)
    state = algo.init(Y0, KEY)
    want = jax.jit(lambda k, s: M.msip_step(k, s, estimator=EST, step_size=0.25, jitter=1e-6))(jax.random.key(1),
                                                                                            state)
    got = jax.jit(algo.step)(jax.random.key(1), state)
    for a, b in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got), strict=True):
        np.testing.assert_array_equal(a, b)
    assert type(got[0]).__name__ == "MSIPState" and type(got[1]).__name__ == "MSIPInfo"


def test_renamed_keywords_warn_and_give_the_same_result():
    new, _ = M.msip(KEY, Y0, EST, num_steps=3, step_size=0.4, lengthscale=0.7)
    with pytest.warns(DeprecationWarning, match="is deprecated") as caught:
        old, _ = M.msip(KEY, Y0, EST, n_steps=3, lr=0.4, lengthscale=0.7)
    assert {"'n_steps'", "'lr'"} <= {str(w.message).split()[3] for w in caught}
    np.testing.assert_array_equal(old.particles, new.particles)
    state = M.msip_init(Y0, EST, lengthscale=0.7, key=KEY)
    with pytest.warns(DeprecationWarning, match="'lr' is deprecated"):
        M.msip_step(KEY, state, estimator=EST, lr=0.4)
    with pytest.warns(DeprecationWarning, match="'n_steps' is deprecated"):
        M.mean_shift(KEY, Y0[0], M.gaussian_estimator(jnp.zeros(2), jnp.eye(2)), n_steps=2, lengthscale=0.5)
    with pytest.raises(TypeError, match="got both 'lr'"):
        M.msip(KEY, Y0, EST, num_steps=3, lr=0.4, step_size=0.4)


def test_particles_of_the_wrong_dimension_name_y0():
    Y3 = jnp.asarray(RNG.normal(size=(5, 3)))
    target = benchmarks.gmm()  # 2-D
    est = M.fredholm_estimator(target.log_density)
    raises_eager_and_jit(lambda Y: M.msip(KEY, Y, est, num_steps=2)[0].particles, Y3,
                         match=r"particles \(Y0\) must have d = 2 columns")
    # a user density for another dimension: its broadcast error is reported against Y0
    user = M.gradient_free_estimator(lambda x: -0.5 * jnp.sum((x - jnp.ones(2)) ** 2))
    raises_eager_and_jit(lambda Y: M.msip(KEY, Y, user, num_steps=2)[0].particles, Y3,
                         match=r"particles \(Y0\) have d = 3 columns")


def test_a_string_estimator_is_a_type_error_listing_the_factories():
    raises_eager_and_jit(lambda Y: M.msip(KEY, Y, "gaussian", num_steps=2)[0].particles, Y0,
                         match="estimator must be a callable.*fredholm_estimator.*empirical_estimator")
    with pytest.raises(TypeError, match="estimator must be a callable"):
        M.msip_algorithm("gaussian")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"step_size": 1.5}, r"step_size must lie in \(0.0, 1.0\]"),
        ({"lengthscale": -1.0}, "lengthscale must be > 0"),
        ({"jitter": -1e-3}, "jitter must be >= 0"),
        ({"lengthscale_rule": 1.5}, r"lengthscale_rule must lie in \[0.0, 1.0\]"),
    ],
)
def test_hyperparameter_checks_hold_eagerly_and_under_jit(kwargs, match):
    (name, value), = kwargs.items()
    raises_eager_and_jit(lambda v: M.msip(KEY, Y0, EST, num_steps=2, **{name: v})[0].particles, value, match=match)
    with pytest.raises(ValueError, match=match):
        M.msip_algorithm(EST, **kwargs)


def test_non_finite_particles_raise_eagerly_and_under_jit():
    raises_eager_and_jit(lambda Y: M.msip(KEY, Y, EST, num_steps=2)[0].particles, Y0.at[1, 0].set(jnp.nan),
                         match="Y0 must be finite")
