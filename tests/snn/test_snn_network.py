"""The conv DSN network: trace bookkeeping, energy report against direct counts, the training step, data."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.snn import (
    apply,
    digits_dataset,
    digits_events,
    energy_pj,
    energy_report,
    make_model,
    sop_conv,
    sop_dense,
    train_algorithm,
    trainable,
    trained_model,
)

japply = eqx.filter_jit(apply)


@pytest.fixture(scope="module")
def batch():
    xtr, ytr, _, _ = digits_dataset()
    return jnp.asarray(xtr[:16], jnp.float64), jnp.asarray(ytr[:16])


def test_energy_report_matches_direct_counts(batch):
    x, _ = batch
    model, state = make_model(jax.random.key(0), channels=(4, 6), num_steps=3)
    logits, _, tr = japply(model, state, x)
    assert logits.shape == (16, 10) and tr.s1.shape == (3, 16, 4, 8, 8) and tr.s2.shape == (3, 16, 6, 4, 4)
    rep = energy_report(model, x, tr)
    sops = sop_conv(tr.s1, tr.d2, 3, 2, 1) + sop_dense(tr.s2.reshape(3, 16, -1), jnp.ones((3, 16, 10)))
    flops = 3 * 16 * 4 * 64 * 9  # T * B * (C1 H W) * (C_in k k)
    np.testing.assert_allclose(rep["sops"], sops / 16, rtol=1e-14)
    np.testing.assert_allclose(rep["energy_pj"], energy_pj(flops, sops) / 16, rtol=1e-14)
    assert float(rep["sops"]) < float(rep["sops_no_dormancy"])
    assert 0 < float(rep["dormant2"]) < 1


def test_lif_network_has_no_dormancy_and_matches_dsn_until_gating(batch):
    x, _ = batch
    dsn, state = make_model(jax.random.key(0), channels=(4, 6), num_steps=4)
    lif, _ = make_model(jax.random.key(0), channels=(4, 6), num_steps=4, dormant=False)
    _, _, tr_d = japply(dsn, state, x)
    _, _, tr_l = japply(lif, state, x)
    np.testing.assert_array_equal(tr_l.d1, 1.0)
    np.testing.assert_array_equal(tr_l.d2, 1.0)
    # the first layer sees the same input: its spikes agree wherever the DSN gate is open
    awake = np.asarray(tr_d.d1) == 1
    np.testing.assert_array_equal(np.asarray(tr_d.s1)[awake], np.asarray(tr_l.s1)[awake])
    rep = energy_report(lif, x, tr_l)
    assert float(rep["sops"]) == float(rep["sops_no_dormancy"])


@pytest.mark.slow
def test_training_lowers_loss_and_keeps_dormancy_threshold(batch):
    model, state = make_model(jax.random.key(1), channels=(4, 4), num_steps=2)
    algo = train_algorithm(model, optax.adam(3e-2))
    train_state = algo.init(model, state)
    step = jax.jit(algo.step)
    losses = []
    for _ in range(8):
        train_state, met = step(None, train_state, batch)
        losses.append(float(met.loss))
    model, state = trained_model(model, train_state)
    assert losses[-1] < 0.8 * losses[0]
    assert float(model.v_dormant) == -0.05
    assert 0 <= float(met.dormant2) <= 1
    grads_leaves = jax.tree_util.tree_leaves(eqx.filter(trainable(model), eqx.is_array))
    assert all(jnp.all(jnp.isfinite(g)) for g in grads_leaves)


def test_digits_events_closed_form():
    img = np.zeros((1, 1, 3, 3), np.float32)
    img[0, 0, 0, 0] = 1.0
    ev = digits_events(img, 3)
    assert ev.shape == (1, 3, 2, 3, 3)
    # t = 0: ON where the image is bright; t = 1: shift right by one -> OFF at (0, 0), ON at (1, 0) (dy = 1)
    on0 = np.zeros((3, 3))
    on0[0, 0] = 1
    np.testing.assert_array_equal(ev[0, 0, 0], on0)
    np.testing.assert_array_equal(ev[0, 0, 1], 0)
    np.testing.assert_array_equal(ev[0, 1, 1], on0)
    assert ev[0, 1, 0, 1, 0] == 1 and ev[0, 1, 0].sum() == 1
    # t = 2: shift (1, 1) -> the pixel moves from (1, 0) to (1, 1)
    assert ev[0, 2, 0, 1, 1] == 1 and ev[0, 2, 1, 1, 0] == 1 and ev[0, 2].sum() == 2


def test_digits_dataset_split_and_range():
    xtr, ytr, xte, _ = digits_dataset(0.25, seed=3)
    assert xtr.shape[1:] == (1, 8, 8) and len(xtr) + len(xte) == 1797 and len(xte) == 449
    assert xtr.min() >= 0 and xtr.max() <= 1 and set(np.unique(ytr)) == set(range(10))


def test_network_bad_inputs(batch):
    x, _ = batch
    model, state = make_model(jax.random.key(0), channels=(4, 6), num_steps=3)
    with pytest.raises(ValueError, match="x must be images"):
        apply(model, state, jnp.concatenate([x, x], 1))
    with pytest.raises(ValueError, match="event input x must be"):
        apply(model, state, jnp.zeros((4, 5, 1, 8, 8)))
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        make_model(jax.random.key(0), num_steps=0)
    with pytest.raises(ValueError, match="v_dormant must be < v_th"):
        from jaxlab.snn import DSNParams

        make_model(jax.random.key(0), params=DSNParams(v_dormant=1.5))
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        digits_events(np.zeros((1, 1, 8, 8)), 0)
