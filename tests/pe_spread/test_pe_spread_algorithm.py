"""The spread-regularised trainer as an Algorithm (jaxlab.core.train): it reproduces the hand-written optax step,
the runner and the old step function, under jit; the renamed keyword still works with a warning."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.attention.pe_spread import (
    PEClassifier,
    PEClassifierMetrics,
    init,
    learned_pe_init,
    make_step,
    pe_classifier_algorithm,
    sample_batch,
    spread_penalty,
    train,
)
from jaxlab.core import Algorithm, run
from jaxlab.core.train import TrainInfo, TrainState

TASK = dict(task="majority", lam=0.3, batch_size=6, n_min=4, n_max=6, vocab=5)


def _model():
    return PEClassifier(jax.random.key(0), vocab=5, d=4, num_classes=5, num_heads=2,
                        pe=learned_pe_init(jax.random.key(1), 6, 4, std=0.5), pe_trainable=True)


def _reference_step(model, optimizer):
    """The training step written out: grad of cross-entropy + spread penalty, optax update, apply."""
    static = eqx.filter(model, eqx.is_array, inverse=True)

    def loss(params, tokens, mask, labels):
        m = eqx.combine(params, static)
        logits = jax.vmap(m)(tokens, mask)
        ce = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))
        return ce + spread_penalty(m.pe, TASK["lam"]), ce

    def step(key, params, opt_state):
        tokens, mask, labels = sample_batch(key, "majority", 6, 4, 6, 5)
        grads, ce = jax.grad(loss, has_aux=True)(params, tokens, mask, labels)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, ce

    return step


def test_algorithm_matches_the_reference_step_under_jit():
    model, optimizer = _model(), optax.adam(1e-2)
    algo = pe_classifier_algorithm(model, optimizer, **TASK)
    assert isinstance(algo, Algorithm)
    state = algo.init(model)
    assert isinstance(state, TrainState) and int(state.step) == 0
    step, ref = jax.jit(algo.step), jax.jit(_reference_step(model, optimizer))
    params, opt_state = eqx.filter(model, eqx.is_array), optimizer.init(eqx.filter(model, eqx.is_array))
    for key in jax.random.split(jax.random.key(2), 4):
        state, info = step(key, state)
        params, opt_state, ce = ref(key, params, opt_state)
        for a, b in zip(jax.tree.leaves(state.params), jax.tree.leaves(params), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(info.aux.task_loss, ce, rtol=1e-12)
    assert isinstance(info, TrainInfo) and isinstance(info.aux, PEClassifierMetrics)
    assert int(state.step) == 4
    np.testing.assert_allclose(info.loss, info.aux.task_loss + info.aux.penalty, rtol=1e-12)


def test_given_batch_equals_the_batch_drawn_from_the_key():
    model, optimizer = _model(), optax.sgd(0.1)
    algo = pe_classifier_algorithm(model, optimizer, **TASK)
    key = jax.random.key(3)
    drawn, _ = jax.jit(algo.step)(key, algo.init())
    given, _ = jax.jit(algo.step)(key, algo.init(), sample_batch(key, "majority", 6, 4, 6, 5))
    for a, b in zip(jax.tree.leaves(drawn.params), jax.tree.leaves(given.params), strict=True):
        np.testing.assert_array_equal(a, b)


def test_train_and_make_step_drive_the_algorithm():
    model, optimizer = _model(), optax.adam(1e-2)
    algo = pe_classifier_algorithm(model, optimizer, **TASK)
    final, trace = jax.jit(lambda k: run(algo.step, algo.init(model), k, 6, thin=2))(jax.random.key(4))
    trained, got = train(jax.random.key(4), model, optimizer, 6, thin=2, **TASK)
    np.testing.assert_allclose(trained.pe, final.params.pe, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.infos.aux.penalty, trace.infos.aux.penalty, rtol=1e-12)
    state = init(model, optimizer)
    a, _ = jax.jit(make_step(model, optimizer, **TASK))(jax.random.key(5), state)
    b, _ = jax.jit(algo.step)(jax.random.key(5), state)
    np.testing.assert_array_equal(a.params.pe, b.params.pe)


def test_old_batch_keyword_warns_and_still_works():
    key = jax.random.key(6)
    with pytest.warns(DeprecationWarning, match="'batch' is deprecated"):
        old = sample_batch(key, "position", batch=4, n_min=4, n_max=8, vocab=16)
    new = sample_batch(key, "position", 4, 4, 8, 16)
    for a, b in zip(old, new, strict=True):
        np.testing.assert_array_equal(a, b)
    model = _model()
    kw = {k: v for k, v in TASK.items() if k != "batch_size"}
    with pytest.warns(DeprecationWarning, match="'batch' is deprecated"):
        trained_old, _ = train(key, model, optax.sgd(0.1), 2, batch=6, **kw)
    trained_new, _ = train(key, model, optax.sgd(0.1), 2, batch_size=6, **kw)
    np.testing.assert_array_equal(trained_old.pe, trained_new.pe)
    with pytest.warns(DeprecationWarning, match="'batch' is deprecated"):
        make_step(model, optax.sgd(0.1), batch=6, **kw)
    with pytest.raises(TypeError, match="got both"):
        sample_batch(key, "position", batch=4, batch_size=4, n_min=4, n_max=8, vocab=16)


def test_factory_checks_lam_eagerly_and_under_jit():
    model = _model()
    kw = {k: v for k, v in TASK.items() if k != "lam"}
    with pytest.raises(ValueError, match="lam must be >= 0"):
        pe_classifier_algorithm(model, optax.sgd(0.1), lam=-1.0, **kw)

    def one_step(lam):
        algo = pe_classifier_algorithm(model, optax.sgd(0.1), lam=lam, **kw)
        return algo.step(jax.random.key(0), algo.init())[1].loss

    with pytest.raises(Exception, match="lam must be >= 0"):
        jax.block_until_ready(jax.jit(one_step)(-1.0))
