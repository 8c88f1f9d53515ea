import contextlib
import io

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import run


def ar1_step(key, x):
    x = 0.5 * x + jax.random.normal(key, x.shape)
    return x, jnp.sum(x)


def python_loop(key, x, n):
    keys = jax.random.split(key, n)
    xs, infos = [], []
    for k in keys:
        x, info = ar1_step(k, x)
        xs.append(x)
        infos.append(info)
    return x, np.stack(xs), np.stack(infos)


RUN = jax.jit(lambda key, x: run(ar1_step, x, key, 12, thin=3, save_states=True))


def test_run_matches_a_python_loop_with_the_same_keys():
    key, x0 = jax.random.key(0), jnp.zeros(3)
    final, trace = RUN(key, x0)
    ref_final, ref_states, ref_infos = python_loop(key, x0, 12)
    np.testing.assert_allclose(final, ref_final, rtol=1e-14)
    np.testing.assert_allclose(trace.states, ref_states[2::3], rtol=1e-14)
    np.testing.assert_allclose(trace.infos, ref_infos[2::3], rtol=1e-14)


def test_run_is_deterministic_and_vmappable_over_keys():
    keys = jax.random.split(jax.random.key(1), 4)
    finals, _ = jax.vmap(RUN, in_axes=(0, None))(keys, jnp.zeros(3))
    again, _ = RUN(keys[2], jnp.zeros(3))
    np.testing.assert_array_equal(finals[2], again)


def test_progress_meter_prints_and_leaves_results_unchanged():
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        on = jax.jit(lambda k: run(ar1_step, jnp.ones(2), k, 10, progress=True, label="ar1"))(jax.random.key(2))
        jax.effects_barrier()
    off = jax.jit(lambda k: run(ar1_step, jnp.ones(2), k, 10))(jax.random.key(2))
    for a, b in zip(jax.tree.leaves(on), jax.tree.leaves(off), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)
    assert "ar1" in buf.getvalue() and "10/10" in buf.getvalue()


@pytest.mark.parametrize("unroll", [2, 3, 5])
def test_unroll_changes_nothing_but_the_loop(unroll):
    """Unrolled (also by a count that does not divide the steps, and with thinning) the states and infos are those of
    the plain loop."""
    key, x0 = jax.random.key(3), jnp.zeros(3)
    for thin in (1, 3):
        want = jax.jit(lambda k, x, thin=thin: run(ar1_step, x, k, 12, thin=thin, save_states=True))(key, x0)
        got = jax.jit(lambda k, x, thin=thin: run(ar1_step, x, k, 12, thin=thin, save_states=True,
                                                   unroll=unroll))(key, x0)
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match="unroll must be >= 1"):
        run(ar1_step, x0, key, 4, unroll=0)


def test_zero_steps_and_no_states():
    final, trace = run(ar1_step, jnp.ones(2), jax.random.key(0), 0)
    np.testing.assert_array_equal(final, jnp.ones(2))
    assert trace.states is None and trace.infos.shape == (0,)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_steps must be a multiple of thin=4"):
        run(ar1_step, jnp.ones(2), jax.random.key(0), 10, thin=4)
    with pytest.raises(ValueError, match="num_steps must be >= 0"):
        run(ar1_step, jnp.ones(2), jax.random.key(0), -1)
    with pytest.raises(TypeError, match="num_steps must be a Python int"):
        run(ar1_step, jnp.ones(2), jax.random.key(0), 2.0)


class RunWithAndWithoutJit(chex.TestCase):
    """The driver gives the Python loop's numbers eagerly and under ``jit``, key-driven and data-driven."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_key_driven(self):
        f = self.variant(lambda key, x: run(ar1_step, x, key, 6))
        key, x0 = jax.random.key(5), jnp.ones(2)
        final, trace = f(key, x0)
        ref_final, _, ref_infos = python_loop(key, x0, 6)
        np.testing.assert_allclose(final, ref_final, rtol=1e-14)
        np.testing.assert_allclose(trace.infos, ref_infos, rtol=1e-14)

    @chex.variants(with_jit=True, without_jit=True)
    def test_data_driven(self):
        # running mean of a stream: x_t enters as data, no key
        step = lambda key, s, x: ((s[0] + (x - s[0]) / (s[1] + 1), s[1] + 1), s[0])  # noqa: E731
        xs = jnp.array([2.0, 4.0, 9.0, 1.0])
        (mean, count), _ = self.variant(lambda xs: run(step, (jnp.zeros(()), jnp.zeros(())), None, xs=xs))(xs)
        np.testing.assert_allclose(mean, 4.0, rtol=1e-15)
        assert float(count) == 4.0
