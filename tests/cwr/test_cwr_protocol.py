"""The CwR iterative methods as jaxlab Algorithms (minimiser, scorer training), renamed keywords, and bad inputs
raising eagerly and under jit."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.core import run
from jaxlab.losses import cwr
from jaxlab.losses import cwr_check as ck
from jaxlab.losses import cwr_train as tr

P3 = jnp.array([0.5, 0.3, 0.2])


def _ce_risk(u):
    return cwr.conditional_risk(cwr.ce_chow_loss, u, P3)


@pytest.mark.parametrize("optimizer", [optax.adam(0.05), optax.lbfgs()], ids=["adam", "lbfgs"])
def test_minimizer_algorithm_reproduces_minimizer_step_under_jit(optimizer):
    u0 = jnp.array([0.3, -0.2, 0.1])
    algo = cwr.minimizer_algorithm(_ce_risk, optimizer)
    final, trace = jax.jit(lambda s: run(algo.step, s, jax.random.key(0), 25))(algo.init(u0))
    one_step = jax.jit(lambda s: cwr.minimizer_step(None, s, _ce_risk, optimizer))
    state, values = cwr.minimizer_init(u0, optimizer), []
    for _ in range(25):
        state, v = one_step(state)
        values.append(v)
    np.testing.assert_allclose(final.u, state.u, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.infos.value, jnp.stack(values), rtol=1e-12, atol=1e-14)
    assert type(trace.infos).__name__ == "MinimizerInfo"
    ref = cwr.minimize(_ce_risk, u0, jax.random.key(0), 25, optimizer)
    np.testing.assert_array_equal(final.u, ref.u)


def _old_fit(key, model, X, y, loss, num_steps, learning_rate, batch_size):
    """The hand-written training loop that fit used before the shared trainer (value_and_grad, update, apply)."""
    params, static = eqx.partition(model, eqx.is_array)
    opt = optax.adam(optax.cosine_decay_schedule(learning_rate, num_steps, alpha=1e-2))

    def step(k, s):
        p, o = s
        idx = jax.random.randint(k, (batch_size,), 0, X.shape[0])
        value, grad = jax.value_and_grad(
            lambda q: jnp.mean(loss(jax.vmap(eqx.combine(q, static))(X[idx]), y[idx])))(p)
        updates, o = opt.update(grad, o, p)
        return (optax.apply_updates(p, updates), o), value

    (params, _), trace = jax.jit(lambda p, k: run(step, (p, opt.init(p)), k, num_steps))(params, key)
    return eqx.combine(params, static), trace.infos


def test_fit_through_the_shared_trainer_equals_the_hand_written_loop():
    task = tr.make_mixture(jax.random.key(0), 3, dim=4, sep=3.0, eta=0.1)
    X, y, _ = tr.sample_mixture(jax.random.key(1), task, 200)
    s = cwr.surrogate("cwr2d", 3, 0.2)
    model = tr.make_scorer(jax.random.key(2), 4, s.dim, 8)
    got, losses = tr.fit(jax.random.key(3), model, X, y, s.loss, num_steps=40, learning_rate=0.02, batch_size=32)
    ref, ref_losses = _old_fit(jax.random.key(3), model, X, y, s.loss, 40, 0.02, 32)
    np.testing.assert_array_equal(losses, ref_losses)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(ref), strict=True):
        np.testing.assert_array_equal(a, b)


def test_scorer_train_algorithm_steps_under_jit_and_counts_steps():
    task = tr.make_mixture(jax.random.key(0), 3, dim=2)
    X, y, _ = tr.sample_mixture(jax.random.key(1), task, 64)
    model = tr.make_scorer(jax.random.key(2), 2, 3)
    algo = tr.scorer_train_algorithm(model, X, y, cwr.cs_loss, optax.adam(1e-2), batch_size=16)
    state = algo.init(eqx.filter(model, eqx.is_array))
    step = jax.jit(algo.step)
    s1, info = step(jax.random.key(5), state)
    assert int(s1.step) == 1 and info.loss.shape == () and info.aux is None
    idx = jax.random.randint(jax.random.key(5), (16,), 0, 64)
    expected = jnp.mean(cwr.cs_loss(jax.vmap(model)(X[idx]), y[idx]))
    np.testing.assert_allclose(info.loss, expected, rtol=1e-12)


def test_renamed_keywords_warn_and_still_work():
    task = tr.make_mixture(jax.random.key(0), 3, dim=2)
    X, y, _ = tr.sample_mixture(jax.random.key(1), task, 32)
    with pytest.warns(DeprecationWarning, match="'steps' is deprecated.*'num_steps'"):
        _, losses = tr.fit(jax.random.key(2), tr.make_scorer(jax.random.key(3), 2, 3), X, y, cwr.cs_loss,
                           steps=3, batch_size=8)
    assert losses.shape == (3,)
    with pytest.warns(DeprecationWarning, match="num_steps"):
        st = cwr.minimize(_ce_risk, jnp.zeros(3), jax.random.key(0), optimizer=optax.adam(0.1), steps=2)
    assert st.u.shape == (3,)
    with pytest.warns(DeprecationWarning, match="num_steps"):
        u = cwr.minimize_conditional_risk(cwr.ce_chow_loss, P3, 3, jax.random.key(0), steps=2, restarts=1)
    assert u.shape == (3,)
    with pytest.warns(DeprecationWarning, match="num_steps"):
        rep = ck.calibration_report("cs", 3, 0.5, np.array([[0.9, 0.05, 0.05]]), steps=5)
    assert rep.link_errors == 0
    with pytest.raises(TypeError, match="both"):
        tr.fit(jax.random.key(2), tr.make_scorer(jax.random.key(3), 2, 3), X, y, cwr.cs_loss, steps=3,
               num_steps=3)


@pytest.mark.parametrize("loss", [cwr.ce_chow_loss, cwr.ova_hinge_loss, cwr.cs_loss])
def test_scores_and_labels_with_different_batch_sizes_raise_naming_both(loss):
    u, y = jnp.zeros((5, 3)), jnp.zeros(4, jnp.int32)
    pattern = r"u and y must have matching batch shapes.*u of shape \(5, 3\).*y have shape \(4,\)"
    with pytest.raises(ValueError, match=pattern):
        loss(u, y)
    with pytest.raises(Exception, match=pattern):
        jax.jit(loss)(u, y)


def test_batch_mismatch_in_the_2d_surrogates_raises_naming_both():
    with pytest.raises(ValueError, match=r"u and y must have matching batch shapes.*\(6, 2\).*\(5,\)"):
        cwr.cwr2d_loss(jnp.zeros((6, 2)), jnp.zeros(5, jnp.int32), 0.2)
    with pytest.raises(Exception, match="u and y must have matching batch shapes"):
        jax.jit(lambda u, y: cwr.surrogate("cwr2d", 5, 0.2).loss(u, y))(jnp.zeros((6, 2)), jnp.zeros(5, jnp.int32))


_CODE = cwr.bep_code(4)

# (function of one traced argument, bad value, message): each check holds eagerly and under jit
_BAD = [
    (lambda c: cwr.cwr2d_loss(jnp.zeros((3, 2)), jnp.zeros(3, jnp.int32), c), 0.5, "c must lie in"),
    (lambda c: cwr.cwr_target_loss(jnp.array([0, -1]), jnp.array([0, 1]), c), 1.5, "c must lie in"),
    (lambda c: cwr.ce_chow_link(jnp.zeros((2, 3)), c), 0.0, "c must lie in"),
    (lambda c: cwr.generalized_hinge_loss(jnp.zeros((2, 1)), jnp.array([0, 1]), c), 0.6, "c must lie in"),
    (lambda tau: cwr.ova_link(jnp.zeros((2, 3)), tau), 1.0, r"tau must lie in \(-1.0, 1.0\)"),
    (lambda tau: cwr.cs_link(jnp.zeros((2, 3)), tau), 0.0, r"tau must lie in \(0.0, 1.0\)"),
    (lambda theta: cwr.cwr2d_link(jnp.array([[1.0, 0.1]]), 4, theta), 0.5, r"theta must lie in \(0.0, 0.5\)"),
    (lambda a: cwr.cwr2d_loss(jnp.zeros((3, 2)), jnp.zeros(3, jnp.int32), 0.2, a), -1.0, "a must lie in"),
    (lambda mu: cwr.ref2d_loss(jnp.zeros((2, 2)), jnp.array([0, 1]), 4, 0.2, mu), 0.0, "mu must lie in"),
    (lambda y: cwr.cs_loss(jnp.zeros((2, 3)), y), jnp.array([0, 3]), r"y must lie in \[0, 2\]"),
    (lambda y: cwr.cwr2d_loss(jnp.zeros((2, 2)), y, 0.2), jnp.array([0, -1]), "y must lie in"),
    (lambda u: cwr.cs_loss(u, jnp.array([0, 1])), jnp.array([[0.0, jnp.nan, 1.0], [0, 0, 0]]), "u must be finite"),
    (lambda u: cwr.cwr2d_link(u, 4), jnp.array([[jnp.inf, 0.0]]), "u must be finite"),
    # -inf off the label leaves the cross-entropy finite: the check must read u, not the loss
    (lambda u: cwr.ce_chow_loss(u, jnp.array([0, 1])), jnp.array([[0.0, -jnp.inf, 1.0], [0, 0, 0]]),
     "u must be finite"),
    (lambda u: cwr.ova_hinge_loss(u, jnp.array([0, 1])), jnp.array([[0.0, 0.0, -jnp.inf], [0, 0, 0]]),
     "u must be finite"),
    (lambda p: cwr.bayes_risk(p, 0.2), jnp.array([0.5, 0.6]), "p must"),
    (lambda p: cwr.bayes_decision(p, 0.2), jnp.array([-0.1, 1.1]), "p must"),
    (lambda p: cwr.conditional_risk(cwr.cs_loss, jnp.zeros(3), p), jnp.array([0.2, 0.2, 0.2]), "p must"),
    (lambda code: cwr.bep_loss(jnp.zeros((1, 2)), jnp.array([0]), code), _CODE.at[0, 0].set(0.5),
     r"code must have entries in \{-1, \+1\}"),
    (lambda code: cwr.bep_link(jnp.ones((1, 2)), code), _CODE.at[1].set(_CODE[0]), "code must be injective"),
]


@pytest.mark.parametrize("fn, bad, msg", _BAD)
def test_value_checks_raise_eagerly_and_under_jit(fn, bad, msg):
    with pytest.raises(ValueError, match=msg):
        fn(bad)
    with pytest.raises(Exception, match=msg):
        jax.block_until_ready(jax.jit(fn)(bad))
