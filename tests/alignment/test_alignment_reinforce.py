"""REINFORCE with a KL penalty as an Algorithm: the factory reproduces the hand-written policy-gradient step and
the runner, under jit."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.alignment import (
    ReinforceInfo,
    ReinforceState,
    reinforce_kl_algorithm,
    reinforce_kl_init,
    reinforce_kl_run,
    reinforce_kl_step,
)
from jaxlab.core import Algorithm, run

LOG_PI0 = jax.nn.log_softmax(jnp.array([0.3, -1.0, 0.5, 2.0, 0.0, -0.4]))
R = jnp.array([0.0, 1.0, -0.5, 0.2, 2.0, 0.7])


def _reference_step(key, logits, opt_state, beta, optimizer, batch_size):
    """The score-function update written out: grad of the surrogate, optax update, apply."""

    def surrogate(th):
        log_pi = jax.nn.log_softmax(th)
        y = jax.random.categorical(key, jax.lax.stop_gradient(th), shape=(batch_size,))
        f = R[y] - beta * (jax.lax.stop_gradient(log_pi[y]) - LOG_PI0[y])
        return -jnp.mean((f - jnp.mean(f)) * log_pi[y])

    updates, opt_state = optimizer.update(jax.grad(surrogate)(logits), opt_state, logits)
    return optax.apply_updates(logits, updates), opt_state


def test_algorithm_matches_the_reference_loop_under_jit():
    optimizer = optax.adam(0.1)
    algo = reinforce_kl_algorithm(LOG_PI0, R, 0.4, optimizer=optimizer, batch_size=16)
    assert isinstance(algo, Algorithm)
    state = algo.init()
    assert isinstance(state, ReinforceState)
    np.testing.assert_array_equal(state.logits, reinforce_kl_init(LOG_PI0, optimizer).logits)
    step = jax.jit(algo.step)
    ref = jax.jit(lambda k, th, s: _reference_step(k, th, s, 0.4, optimizer, 16))
    logits, opt_state = LOG_PI0, optimizer.init(LOG_PI0)
    for key in jax.random.split(jax.random.key(0), 5):
        state, info = step(key, state)
        logits, opt_state = ref(key, logits, opt_state)
        np.testing.assert_allclose(state.logits, logits, rtol=1e-13, atol=1e-14)
    assert isinstance(info, ReinforceInfo)
    log_pi = jax.nn.log_softmax(state.logits)
    kl = float(jnp.sum(jnp.exp(log_pi) * (log_pi - LOG_PI0)))
    np.testing.assert_allclose(float(info.kl), kl, rtol=1e-12)


def test_runner_and_step_function_equal_the_algorithm():
    algo = reinforce_kl_algorithm(LOG_PI0, R, 0.4, batch_size=8)
    final, trace = jax.jit(lambda k: run(algo.step, algo.init(), k, 12, thin=3))(jax.random.key(1))
    got, got_trace = jax.jit(lambda k: reinforce_kl_run(k, LOG_PI0, R, 0.4, num_steps=12, batch_size=8, thin=3))(
        jax.random.key(1))
    np.testing.assert_array_equal(got.logits, final.logits)
    np.testing.assert_array_equal(got_trace.infos.objective, trace.infos.objective)
    optimizer = optax.adam(0.1)
    state = reinforce_kl_init(LOG_PI0, optimizer)
    a, ia = jax.jit(algo.step)(jax.random.key(2), state)
    b, ib = jax.jit(lambda k, s: reinforce_kl_step(k, s, LOG_PI0, R, 0.4, optimizer, 8))(jax.random.key(2), state)
    np.testing.assert_array_equal(a.logits, b.logits)
    np.testing.assert_array_equal(ia.gain, ib.gain)


def test_factory_rejects_bad_inputs_eagerly_and_under_jit():
    with pytest.raises(ValueError, match="beta must lie in"):
        reinforce_kl_algorithm(LOG_PI0, R, -1.0)
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        reinforce_kl_algorithm(LOG_PI0, R, 1.0, batch_size=1)
    with pytest.raises(Exception, match="beta must lie in"):
        jax.block_until_ready(jax.jit(lambda b: reinforce_kl_run(jax.random.key(0), LOG_PI0, R, b,
                                                                 num_steps=2)[0].logits)(-1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reinforce_kl_algorithm(LOG_PI0, R, 1.0)
