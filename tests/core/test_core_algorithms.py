"""The iteration protocol: every registered Algorithm steps as ``(state, info)`` under jit and vmap; ``run``
with ``xs``; the one trainer; keyword deprecation."""

import warnings

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.core import (
    Algorithm,
    AlgorithmSpec,
    algorithms,
    make_train_step,
    register_algorithm,
    renamed_kwargs,
    run,
    train_init,
    trainer,
)

REGISTRY = algorithms()


def _structure(tree):
    leaves = jax.tree_util.tree_leaves(tree)
    return jax.tree_util.tree_structure(tree), [(jnp.shape(x), jnp.result_type(x)) for x in leaves]


def _from(xs, t):
    return None if xs is None else jax.tree_util.tree_map(lambda a: a[t:], xs)


def _first(xs):
    return None if xs is None else jax.tree_util.tree_map(lambda a: a[0], xs)


def _step(algo, key, state, xs):
    return algo.step(key, state) if xs is None else algo.step(key, state, _first(xs))


def test_the_registry_holds_algorithm_specs():
    assert REGISTRY, "no algorithm registered"
    for name, spec in REGISTRY.items():
        assert isinstance(spec, AlgorithmSpec), name
        assert callable(spec.factory) and callable(spec.example), name


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_algorithm_steps_under_jit_and_vmap(name):
    spec = REGISTRY[name]
    algo, state, xs = spec.example(jax.random.key(0))
    assert isinstance(algo, Algorithm), f"{name}: example must return an Algorithm"
    structure = _structure(state)

    # jit: a few steps, each returning (state, info) with the state's structure, shapes and dtypes unchanged
    step = jax.jit(lambda k, s, x: _step(algo, k, s, x))
    s = state
    for t, k in enumerate(jax.random.split(jax.random.key(1), 3)):
        out = step(k, s, _from(xs, t))
        assert isinstance(out, tuple) and len(out) == 2, f"{name}: step must return (state, info)"
        s, _info = out
        assert _structure(s) == structure, f"{name}: the state changed structure, shape or dtype at step {t}"
    chex.assert_tree_all_finite(jax.tree_util.tree_leaves(s))

    # run drives it (keys, or xs with keys)
    final, trace = run(algo.step, state, jax.random.key(2), None if xs is not None else 3, xs=xs)
    assert _structure(final) == structure
    assert len(jax.tree_util.tree_leaves(trace.infos)) == len(jax.tree_util.tree_leaves(_info))

    # vmap over keys: one batched step; every leaf gains a leading axis of 4
    keys = jax.random.split(jax.random.key(3), 4)
    batched, _ = jax.jit(jax.vmap(lambda k: _step(algo, k, state, xs)))(keys)
    for (shape, dtype), leaf in zip(structure[1], jax.tree_util.tree_leaves(batched), strict=True):
        assert jnp.shape(leaf) == (4, *shape) and jnp.result_type(leaf) == dtype, name


def test_register_algorithm_rejects_a_second_factory_under_a_taken_name():
    def factory():
        return Algorithm(lambda x: x, lambda k, s: (s, None))

    def example(key):
        return factory(), jnp.zeros(()), None

    register_algorithm("_test_walk", factory, example, area="core")
    register_algorithm("_test_walk", factory, example, area="core")  # same factory: a no-op

    def other():
        return factory()

    with pytest.raises(ValueError, match="already registered"):
        register_algorithm("_test_walk", other, example, area="core")
    with pytest.raises(TypeError, match="callable"):
        register_algorithm("_test_bad", None, example, area="core")


def test_run_with_xs_steps_once_per_entry_and_needs_no_key():
    step = lambda k, s, x: (s + x, s * 1.0)  # noqa: E731
    final, trace = run(step, jnp.zeros(()), None, xs=jnp.arange(6.0))
    assert float(final) == 15.0
    np.testing.assert_array_equal(trace.infos, [0, 0, 1, 3, 6, 10])
    _, trace = run(step, jnp.zeros(()), None, xs=jnp.arange(6.0), thin=3, save_states=True)
    np.testing.assert_array_equal(trace.states, [3, 15])
    # a pytree stream, with keys: the keys are the key-driven run's keys
    final, trace = run(lambda k, s, x: (s + x[0] * x[1], k), jnp.zeros(()), jax.random.key(4),
                       xs=(jnp.arange(3.0), jnp.ones(3)))
    assert float(final) == 3.0
    np.testing.assert_array_equal(jax.random.key_data(trace.infos),
                                  jax.random.key_data(jax.random.split(jax.random.key(4), 3)))


def test_run_rejects_inconsistent_arguments():
    step = lambda k, s, x: (s, s)  # noqa: E731
    with pytest.raises(ValueError, match="leading length 4"):
        run(step, 0.0, None, 3, xs=jnp.zeros(4))
    with pytest.raises(ValueError, match="same leading axis"):
        run(step, 0.0, None, xs=(jnp.zeros(4), jnp.zeros(5)))
    with pytest.raises(TypeError, match="needs num_steps"):
        run(lambda k, s: (s, s), 0.0, jax.random.key(0))
    with pytest.raises(TypeError, match="needs a PRNG key"):
        run(lambda k, s: (s, s), 0.0, None, 3)


def test_make_train_step_equals_a_hand_written_optax_step():
    loss = lambda w, x, y: jnp.mean((x @ w - y) ** 2)  # noqa: E731
    x = jax.random.normal(jax.random.key(0), (16, 3))
    y = x @ jnp.array([1.0, -2.0, 0.5])
    opt = optax.adam(0.05)
    step = jax.jit(make_train_step(loss, opt))
    state = train_init(jnp.zeros(3), opt)
    w, s = jnp.zeros(3), opt.init(jnp.zeros(3))
    for _ in range(5):
        state, info = step(state, x, y)
        value, g = jax.value_and_grad(loss)(w, x, y)
        u, s = opt.update(g, s, w)
        w = optax.apply_updates(w, u)
        # jit may fuse the arithmetic differently from the eager reference: equal to the last ulps
        np.testing.assert_allclose(info.loss, value, rtol=1e-14)
    np.testing.assert_allclose(state.params, w, rtol=1e-13)
    assert int(state.step) == 5


def test_trainer_is_an_algorithm_over_batches_with_aux():
    loss = lambda w, key, batch: (jnp.mean((batch[0] @ w - batch[1]) ** 2), {"w0": w[0]})  # noqa: E731
    algo = trainer(loss, optax.sgd(0.1), has_aux=True)
    xb = jax.random.normal(jax.random.key(1), (10, 8, 2))
    yb = xb @ jnp.array([0.5, 1.5])
    final, trace = run(algo.step, algo.init(jnp.zeros(2)), jax.random.key(0), xs=(xb, yb))
    assert trace.infos.loss.shape == (10,) and trace.infos.aux["w0"].shape == (10,)
    assert float(trace.infos.loss[-1]) < float(trace.infos.loss[0])
    assert int(final.step) == 10
    with pytest.raises(TypeError, match="optimizer must be an optax"):
        trainer(loss, "adam")


def test_renamed_kwargs_warns_and_forwards():
    @renamed_kwargs(n_steps="num_steps", lr="learning_rate")
    def f(x, *, num_steps=1, learning_rate=0.1):
        return x * num_steps + learning_rate

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(2, num_steps=3, learning_rate=1.0) == 7.0
    with pytest.warns(DeprecationWarning, match="'n_steps' is deprecated.*'num_steps'"):
        assert f(2, n_steps=3) == pytest.approx(6.1)
    with pytest.raises(TypeError, match="both 'lr'"):
        f(1, lr=0.1, learning_rate=0.2)
    with pytest.raises(ValueError, match="no parameter 'steps'"):
        renamed_kwargs(n="steps")(lambda x: x)
    assert f.__name__ == "f"
