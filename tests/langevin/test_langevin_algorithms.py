"""ULA and annealed Langevin as jaxlab.core.Algorithm factories (they reproduce ula_run and annealed_langevin
exactly, under jit), their value checks eagerly and under jit, and the DSM score fit on the one trainer."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import Algorithm, run
from jaxlab.sampling import annealed_langevin as al


def score(theta):
    return -(theta - 1.0) / 0.5


def score_t(theta, t):
    return -(theta - 1.0) / (0.5 + t)


X0 = jax.random.normal(jax.random.key(0), (16, 2))
TS = jnp.array([0.9, 0.5, 0.2, 0.05])
HS = jnp.array([0.05, 0.04, 0.02, 0.01])
KS = jnp.array([3, 2, 4, 1], dtype=jnp.int32)


def _assert_trees_equal(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def test_ula_algorithm_reproduces_ula_run_under_jit():
    want = al.ula_run(jax.random.key(1), X0, score, 0.1, 7, save_states=True)
    algo = al.ula_algorithm(score, step_size=0.1)
    assert isinstance(algo, Algorithm)
    got = jax.jit(lambda s, k: run(algo.step, s, k, 7, save_states=True))(algo.init(X0), jax.random.key(1))
    _assert_trees_equal(want, got)
    assert type(got[0]).__name__ == "ULAState" and type(got[1].infos).__name__ == "ULAInfo"


@pytest.mark.parametrize("max_k", [None, 4])
def test_ald_algorithm_reproduces_annealed_langevin_under_jit(max_k):
    want = al.annealed_langevin(jax.random.key(2), X0, score_t, TS, HS, KS, max_k=max_k)
    algo = al.ald_algorithm(score_t, TS, HS, KS, max_k=max_k)
    state, trace = jax.jit(lambda s, k: run(algo.step, s, k, 4))(algo.init(X0), jax.random.key(2))
    np.testing.assert_array_equal(state.particles, want)
    assert int(state.level) == 4
    np.testing.assert_array_equal(trace.infos.k, KS)


def test_step_size_checks_hold_eagerly_and_under_jit():
    raises_eager_and_jit(lambda h: run(al.ula_algorithm(score, h).step, al.ula_init(X0), jax.random.key(0), 2)[0]
                         .position, -0.1, match="step_size must be > 0")
    raises_eager_and_jit(lambda h: al.ula_run(jax.random.key(0), X0, score, h, 2)[0].position, 0.0,
                         match="h must be > 0")


def test_schedule_checks_hold_eagerly_and_under_jit():
    raises_eager_and_jit(lambda ts: al.annealed_langevin(jax.random.key(0), X0, score_t, ts, HS, KS),
                         jnp.array([0.5, 0.9, 0.2, 0.05]), match="ts must be strictly decreasing")
    raises_eager_and_jit(lambda hs: al.annealed_langevin(jax.random.key(0), X0, score_t, TS, hs, KS),
                         HS.at[2].set(-0.1), match=r"hs must lie in \(0.0, inf\]")
    raises_eager_and_jit(lambda ks: al.annealed_langevin(jax.random.key(0), X0, score_t, TS, HS, ks, max_k=3),
                         KS, match="max_k must be >= max")


def test_train_score_net_equals_the_hand_written_adam_loop():
    """The one trainer reproduces the optax loop that train_score_net was written with, bit for bit."""
    toy_mu = jnp.array([1.0, -0.5])

    def simulate(key, B):
        k1, k2 = jax.random.split(key)
        th = toy_mu + jax.random.normal(k1, (B, 2))
        return th, th + jax.random.normal(k2, (B, 2))

    net = al.ScoreNet(jax.random.key(1), 2, 2, al.vp_alpha, width=8, depth=1)
    got, losses = al.train_score_net(jax.random.key(2), simulate, net, num_steps=5, batch_size=16)

    # the loop train_score_net had before the one trainer: value_and_grad -> update -> apply_updates under run
    opt = optax.adam(optax.cosine_decay_schedule(3e-3, 5, 0.05))
    params, static = eqx.partition(net, eqx.is_inexact_array)

    def loss_fn(p, k, th, x):
        return al.dsm_loss(eqx.combine(p, static), k, th, x)

    def step(k, state):
        p, opt_state = state
        k_sim, k_loss = jax.random.split(k)
        th, x = simulate(k_sim, 16)
        loss, g = jax.value_and_grad(loss_fn)(p, k_loss, th, x)
        updates, opt_state = opt.update(g, opt_state, p)
        return (optax.apply_updates(p, updates), opt_state), loss

    (want, _), trace = run(step, (params, opt.init(params)), jax.random.key(2), 5)
    np.testing.assert_array_equal(losses, trace.infos)
    _assert_trees_equal(eqx.filter(got, eqx.is_inexact_array), want)
