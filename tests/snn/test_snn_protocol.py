"""The DSN/LIF neurons and the network's training as jaxlab Algorithms, and bad inputs raising eagerly and under
jit."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.core import run
from jaxlab.snn import (
    DSNParams,
    digits_dataset,
    dsn_algorithm,
    dsn_scan,
    energy_pj,
    heaviside_sg,
    lif_algorithm,
    lif_scan,
    make_model,
    network,
    sop_dense,
    train_algorithm,
    trained_model,
)

P = DSNParams()


def _x(seed=0, shape=(10, 4, 6)):
    return jnp.asarray(np.random.default_rng(seed).normal(0.3, 0.8, shape))


@pytest.mark.parametrize("factory, scan", [(dsn_algorithm, dsn_scan), (lif_algorithm, lif_scan)], ids=["dsn", "lif"])
def test_neuron_algorithm_driven_by_run_equals_the_scan_under_jit(factory, scan):
    x = _x()
    algo = factory(P._replace(v_dormant=-0.2))
    final, trace = jax.jit(lambda s, xs: run(algo.step, s, None, xs=xs))(algo.init((4, 6), jnp.float64), x)
    spikes, state, _ = scan(P._replace(v_dormant=-0.2), x)
    np.testing.assert_array_equal(trace.infos.spikes, spikes)
    np.testing.assert_array_equal(final.v, state.v)
    np.testing.assert_array_equal(final.d, state.d)
    assert type(trace.infos).__name__ == "DSNStepInfo"


def _old_train_step(model, bn, opt_state, batch, optimizer, label_smoothing=0.1):
    """The hand-written step the network used before the shared trainer (value_and_grad, update, apply)."""
    x, y = batch
    diff, static = eqx.partition(model, network._trainable(model))
    (loss, (bn, _, _)), grads = jax.value_and_grad(network._loss, has_aux=True)(
        diff, static, bn, x, y, label_smoothing)
    updates, opt_state = optimizer.update(grads, opt_state, diff)
    return eqx.combine(eqx.apply_updates(diff, updates), static), bn, opt_state, loss


def test_train_algorithm_reproduces_the_hand_written_step_under_jit():
    xtr, ytr, _, _ = digits_dataset()
    batches = [(jnp.asarray(xtr[i : i + 8], jnp.float64), jnp.asarray(ytr[i : i + 8])) for i in (0, 8, 16)]
    model, bn = make_model(jax.random.key(1), channels=(3, 4), num_steps=2)
    opt = optax.adam(3e-2)
    algo = train_algorithm(model, opt)
    state = algo.init(model, bn)
    step = jax.jit(algo.step)
    old = eqx.filter_jit(_old_train_step)
    m_old, bn_old, os_old = model, bn, opt.init(network.trainable(model))
    for batch in batches:
        state, info = step(None, state, batch)
        m_old, bn_old, os_old, loss_old = old(m_old, bn_old, os_old, batch, opt)
        np.testing.assert_array_equal(info.loss, loss_old)
    m_new, bn_new = trained_model(model, state)
    for a, b in zip(jax.tree_util.tree_leaves((m_new, bn_new)), jax.tree_util.tree_leaves((m_old, bn_old)),
                    strict=True):
        np.testing.assert_array_equal(a, b)
    assert int(state.train.step) == 3 and float(m_new.v_dormant) == P.v_dormant
    assert type(info).__name__ == "DSNTrainInfo" and 0 <= float(info.dormant1) <= 1


@pytest.mark.parametrize("scan", [dsn_scan, lif_scan], ids=["dsn", "lif"])
def test_nan_input_raises_naming_the_input_eagerly_and_under_jit(scan):
    x = _x(1, (5, 3)).at[2, 1].set(jnp.nan)
    with pytest.raises(ValueError, match="x_seq must be finite"):
        scan(P, x)
    with pytest.raises(Exception, match="x_seq must be finite"):
        jax.block_until_ready(jax.jit(lambda x: scan(P, x)[0])(x))


def test_nan_step_input_raises_eagerly_and_under_jit():
    algo = dsn_algorithm()
    state, x = algo.init((3,)), jnp.array([0.1, jnp.inf, 0.2])
    with pytest.raises(ValueError, match="x_t must be finite"):
        algo.step(None, state, x)
    with pytest.raises(Exception, match="x_t must be finite"):
        jax.block_until_ready(jax.jit(algo.step)(None, state, x))


# (function of one traced argument, bad value, message): each check holds eagerly and under jit
_BAD = [
    (lambda vd: dsn_scan(P._replace(v_dormant=vd), _x(2, (4, 3)))[0], 2.0, "v_dormant must be < v_th"),
    (lambda vd: dsn_scan(P._replace(v_dormant=vd), _x(2, (4, 3)))[0], 0.1, "v_dormant must be < v_reset"),
    (lambda tau: dsn_scan(P._replace(tau=tau), _x(2, (4, 3)))[0], 0.5, "tau must be > 1"),
    (lambda alpha: heaviside_sg(jnp.ones(3), alpha), -1.0, "alpha must be > 0"),
    (lambda s: sop_dense(s, jnp.ones((2, 1, 3))), jnp.full((2, 1, 4), 0.5), "spikes_in must be binary"),
    (lambda d: sop_dense(jnp.ones((2, 1, 4)), d), jnp.full((2, 1, 3), 2.0), "d_out must be binary"),
    (lambda n: energy_pj(10.0, n), -3.0, "sops must be >= 0"),
    (lambda n: energy_pj(n, 10.0), jnp.nan, "first_layer_flops must be finite"),
]


@pytest.mark.parametrize("fn, bad, msg", _BAD)
def test_value_checks_raise_eagerly_and_under_jit(fn, bad, msg):
    with pytest.raises(ValueError, match=msg):
        fn(bad)
    with pytest.raises(Exception, match=msg):
        jax.block_until_ready(jax.jit(fn)(bad))
