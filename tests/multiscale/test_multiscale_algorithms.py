"""Spherical SGD as jaxlab.core.Algorithm factories (same iterates as spherical_step and the runners, under
jit), renamed keywords, and the zero-vector check of overlaps, eagerly and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import Algorithm, run
from jaxlab.multiscale import (
    MSIMConfig,
    lr_schedule,
    msim_forward,
    online_sgd_algorithm,
    overlaps,
    run_online_sgd,
    run_shallow_sgd,
    sample_features,
    sgd_init,
    shallow_sgd_algorithm,
    spherical_sgd_algorithm,
    spherical_step,
)

D = 4
CFG = MSIMConfig(D, 2, ("tanh", "linear"))


def _data(n=12):
    ws = sample_features(jax.random.key(0), D, 2)
    X = jax.random.normal(jax.random.key(1), (n, D * D))
    return ws, X, jax.vmap(lambda x: msim_forward(ws, x, CFG))(X)


def test_spherical_sgd_algorithm_is_spherical_step_and_run_feeds_it_the_data():
    _, X, Y = _data()
    sched = lr_schedule(D, 0.3, 5, 0.2)
    algo = spherical_sgd_algorithm(CFG, sched)
    assert isinstance(algo, Algorithm)
    state = algo.init(jax.random.key(2))
    np.testing.assert_array_equal(np.asarray(state.u), np.asarray(sgd_init(jax.random.key(2), D).u))
    step = jax.jit(algo.step)
    ref_step = jax.jit(lambda s, x, y: spherical_step(s, x, y, sched(s.step), CFG))
    s, ref = state, state
    losses = []
    for t in range(X.shape[0]):
        s, info = step(None, s, (X[t], Y[t]))
        ref, ref_info = ref_step(ref, X[t], Y[t])
        np.testing.assert_array_equal(np.asarray(s.u), np.asarray(ref.u))
        assert float(info.loss) == float(ref_info.loss)
        assert float(info.learning_rate) == pytest.approx(float(sched(t)), rel=1e-12)
        losses.append(float(info.loss))
    final, trace = jax.jit(lambda s0: run(algo.step, s0, None, xs=(X, Y)))(state)
    np.testing.assert_allclose(np.asarray(final.u), np.asarray(s.u), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(trace.infos.loss), losses, rtol=1e-12, atol=1e-15)
    assert int(final.step) == X.shape[0]


def test_online_and_shallow_factories_are_what_the_runners_run():
    ws, _, _ = _data()
    key = jax.random.key(3)
    final, traj = run_online_sgd(key, ws, CFG, 20, 0.05, record_every=5)
    algo = online_sgd_algorithm(ws, CFG, 0.05)
    k_init, k_run = jax.random.split(key)
    s = algo.init(k_init)
    step = jax.jit(algo.step)
    recorded = []
    for t, k in enumerate(jax.random.split(k_run, 20)):
        s, info = step(k, s)
        if (t + 1) % 5 == 0:
            recorded.append(np.asarray(info.overlaps))
    np.testing.assert_allclose(np.asarray(s.u), np.asarray(final.u), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(traj), np.stack(recorded), rtol=1e-12, atol=1e-15)

    u, ov = run_shallow_sgd(key, ws, CFG, 10, 0.05, record_every=5)
    algo = shallow_sgd_algorithm(ws, CFG, 0.05)
    s = algo.init(k_init)
    for k in jax.random.split(k_run, 10):
        s, info = jax.jit(algo.step)(k, s)
    np.testing.assert_allclose(np.asarray(s.u), np.asarray(u), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(float(info.overlap), float(ov[-1]), rtol=1e-12)


def test_renamed_keywords_warn_and_give_the_same_numbers():
    ws, X, Y = _data(1)
    st = sgd_init(jax.random.key(1), D)
    with pytest.warns(DeprecationWarning, match="eta"):
        old = spherical_step(st, X[0], Y[0], eta=1e-3, cfg=CFG)
    new = spherical_step(st, X[0], Y[0], learning_rate=1e-3, cfg=CFG)
    np.testing.assert_array_equal(np.asarray(old[0].u), np.asarray(new[0].u))
    with pytest.warns(DeprecationWarning, match="n_steps"):
        a = run_online_sgd(jax.random.key(0), ws, CFG, n_steps=4, schedule=0.1)
    b = run_online_sgd(jax.random.key(0), ws, CFG, num_steps=4, schedule=0.1)
    np.testing.assert_array_equal(np.asarray(a[1]), np.asarray(b[1]))
    with pytest.warns(DeprecationWarning, match="n_steps"):
        run_shallow_sgd(jax.random.key(0), ws, CFG, n_steps=2, schedule=0.1)


def test_overlaps_rejects_a_zero_vector_eagerly_and_under_jit():
    ws = sample_features(jax.random.key(0), D, 2)
    raises_eager_and_jit(overlaps, ws.at[1].set(0.0), ws, match="ws_hat must have nonzero rows")
    raises_eager_and_jit(overlaps, ws, ws.at[0].set(0.0), match="ws must have nonzero rows")
    raises_eager_and_jit(overlaps, ws.at[0, 1].set(jnp.nan), ws, match="ws_hat must be finite")
    np.testing.assert_allclose(np.asarray(jax.jit(overlaps)(2 * ws, -ws)), 1.0, rtol=1e-12)


def test_learning_rate_is_checked_eagerly_and_under_jit():
    _, X, Y = _data(1)
    st = sgd_init(jax.random.key(1), D)
    raises_eager_and_jit(lambda lr: spherical_step(st, X[0], Y[0], lr, CFG), 0.0, match="learning_rate must be > 0")
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        spherical_sgd_algorithm(CFG, -1.0)
