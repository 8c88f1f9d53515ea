"""Synthetic tasks and spread-regularised training (optax + jaxlab.core.run)."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.attention.pe_spread.pe import learned_pe_init, spread
from jaxlab.attention.pe_spread.training import TASKS, PEClassifier, sample_batch, train


def test_task_labels_match_numpy():
    tokens, mask, labels = sample_batch(jax.random.key(0), "majority", 64, 5, 20, 6)
    t, m = np.asarray(tokens), np.asarray(mask)
    ref = [np.argmax(np.bincount(t[b][m[b]], minlength=6)) for b in range(64)]
    np.testing.assert_array_equal(np.asarray(labels), ref)
    assert m.sum(1).min() >= 5 and m.sum(1).max() <= 20 and np.all(m[:, :5])
    tokens, _, labels = sample_batch(jax.random.key(1), "position", 16, 8, 8, 16, k=3)
    np.testing.assert_array_equal(np.asarray(labels), np.asarray(tokens[:, 3]))
    tokens, mask, labels = sample_batch(jax.random.key(2), "needle", 64, 5, 20, 10)
    t, m, y = np.asarray(tokens), np.asarray(mask), np.asarray(labels)
    low = (t < 5) & m  # exactly one needle (a token of the first half), inside the valid length, equal to the label
    assert np.all(low.sum(1) == 1) and np.all(t[(t < 5)] == y) and np.all(t[~(t < 5)] >= 5)
    assert np.all(t < 10) and len(np.unique(y)) == 5 and len(np.unique(np.argmax(low, 1))) > 10


def test_task_index_selects_the_named_task_under_vmap():
    key = jax.random.key(3)
    got = jax.jit(jax.vmap(lambda i: sample_batch(key, i, 8, 4, 12, 10)))(jnp.arange(len(TASKS)))
    for i, name in enumerate(TASKS):
        want = sample_batch(key, name, 8, 4, 12, 10)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g[i]), np.asarray(w))
    with pytest.raises(ValueError, match=r"task index must be in \[0, 3\)"):
        sample_batch(key, 3, 8, 4, 12, 10)
    with pytest.raises(ValueError, match="scalar integer index"):
        sample_batch(key, jnp.array([0, 1]), 8, 4, 12, 10)


@pytest.mark.slow
def test_spread_penalty_shrinks_the_learned_table_and_training_learns():
    def arm(lam):
        model = PEClassifier(jax.random.key(0), vocab=8, d=8, num_classes=8, num_heads=2,
                             pe=learned_pe_init(jax.random.key(1), 16, 8, std=0.5), pe_trainable=True)
        model, trace = train(jax.random.key(2), model, optax.adam(1e-2), 60, thin=20, task="majority", lam=lam,
                             batch_size=32, n_min=8, n_max=16, vocab=8)
        return spread(model.pe), trace.infos.aux.task_loss, trace.infos.aux.penalty

    s, loss, pen = jax.jit(jax.vmap(arm))(jnp.array([0.0, 1.0]))
    s0 = float(spread(learned_pe_init(jax.random.key(1), 16, 8, std=0.5)))
    assert float(s[1]) < 0.5 * s0 < float(s[0])  # λ = 1 pulls the table together, λ = 0 leaves it
    assert float(pen[0, -1]) == 0.0 and float(pen[1, -1]) > 0.0
    assert float(loss[0, -1]) < 0.8 * float(loss[0, 0])  # the task loss goes down


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="task must be one of"):
        sample_batch(jax.random.key(0), "sum", 4, 4, 8, 16)
    with pytest.raises(ValueError, match="k must be <= 3"):
        sample_batch(jax.random.key(0), "position", 4, 4, 8, 16, k=5)
    with pytest.raises(ValueError, match=r"pe must have shape \(n_E, 8\)"):
        PEClassifier(jax.random.key(0), vocab=4, d=8, num_classes=4, pe=jnp.zeros((10, 6)))


def test_task_index_is_checked_under_jit():
    with pytest.raises(Exception, match=r"task index must be in \[0, 3\)"):
        jax.block_until_ready(jax.jit(lambda i: sample_batch(jax.random.key(0), i, 4, 4, 8, 16))(3)[2])
