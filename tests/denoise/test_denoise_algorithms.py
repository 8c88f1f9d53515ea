"""The denoise recursions as jaxlab.core.Algorithm factories (RLS, the denoised optimiser, tracking along a
trajectory) reproduce the existing functions exactly, under jit; bad inputs of the issue-24 sweep raise clear
errors naming the argument, eagerly and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.core import Algorithm, run
from jaxlab.optim import (
    disk,
    ema,
    gaussian_noise,
    harmonic,
    igt,
    rls_algorithm,
    rls_init,
    rls_step,
    track,
    two_point,
)
from jaxlab.optim import run as denoise_run
from jaxlab.optim.denoise import denoised_optimizer_algorithm, denoiser_tracking_algorithm

H = jnp.arange(1.0, 5.0)


def loss(x):
    return 0.5 * jnp.sum(H * x**2) + jnp.sum(x**3) / 6


def _assert_trees_equal(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_rls_algorithm_reproduces_rls_step():
    xs = jax.random.normal(jax.random.key(0), (20, 3))
    gs = xs @ jnp.diag(jnp.array([1.0, 2.0, 3.0])) + 0.5
    algo = rls_algorithm(1e-2)
    assert isinstance(algo, Algorithm)
    final, trace = jax.jit(lambda x, g: run(algo.step, algo.init(3), None, xs=(x, g)))(xs, gs)
    state, outs = jax.jit(lambda x, g: jax.lax.scan(lambda s, xg: rls_step(s, *xg), rls_init(3, 1e-2), (x, g)))(
        xs, gs)
    _assert_trees_equal(final, state)
    np.testing.assert_array_equal(np.asarray(trace.infos.g_hat), np.asarray(outs))


@pytest.mark.parametrize("make", [lambda: disk(0.7, 0.5), lambda: igt(harmonic()), lambda: ema(0.3),
                                  lambda: two_point(harmonic())])
def test_denoised_optimizer_algorithm_reproduces_run(make):
    den, inner, noise = make(), optax.sgd(0.05), gaussian_noise(0.3)
    x0 = jnp.ones(4)
    want_params, want_info = denoise_run(jax.random.key(1), loss, x0, den, inner, noise, 30)
    algo = denoised_optimizer_algorithm(loss, den, inner, noise)
    final, trace = jax.jit(lambda k: run(algo.step, algo.init(x0), k, 30))(jax.random.key(1))
    _assert_trees_equal(final.params, want_params)
    _assert_trees_equal(trace.infos, want_info)


@pytest.mark.parametrize("mode", ["oracle", "dp"])
def test_tracking_algorithm_reproduces_track(mode):
    den = two_point(harmonic())
    xs = jnp.cumsum(0.1 * jax.random.normal(jax.random.key(2), (25, 4)), axis=0)
    shape = (25, 2, 4) if mode == "oracle" else (25, 4)
    noise = jax.random.normal(jax.random.key(3), shape)
    want = track(jax.grad(loss), xs, den, noise, mode=mode)
    algo = denoiser_tracking_algorithm(jax.grad(loss), den, mode=mode)
    _, trace = jax.jit(lambda x, w: run(algo.step, algo.init(x[0]), None, xs=(x, w)))(xs, noise)
    _assert_trees_equal(trace.infos, want)


def test_disk_rejects_a_string_kappa_at_construction():
    with pytest.raises(TypeError, match="kappa must be a real number"):
        disk(kappa="0.7")
    with pytest.raises(TypeError, match="gamma must be a real number"):
        disk(gamma="0.5")
    with pytest.raises(TypeError, match="alpha must be a real number"):
        ema("0.1")
    with pytest.raises(TypeError, match="s must be a real number"):
        two_point(0.5, s="1.5")


def test_kappa_out_of_range_raises_eagerly_and_under_jit():
    with pytest.raises(ValueError, match="kappa must lie in"):
        disk(kappa=1.5)
    params = {"w": jnp.ones(3)}

    def two_updates(kappa):
        den = disk(kappa=kappa)
        _, state = den.update(params, den.init(params), params)
        m, _ = den.update(params, state, params)  # the second step weighs the new observation by kappa
        return m["w"]

    np.testing.assert_allclose(jax.jit(two_updates)(0.7), 1.0)
    with pytest.raises(Exception, match="kappa must lie in"):
        jax.block_until_ready(jax.jit(two_updates)(1.5))


def test_update_with_a_gradient_tree_unlike_the_state_names_updates():
    den = disk()
    params = {"w": jnp.ones(3)}
    state = den.init(params)
    bad_shape = {"w": jnp.ones(4)}
    with pytest.raises(ValueError, match=r"updates must have the leaf shapes of params: leaf \['w'\]"):
        den.update(bad_shape, state, params)
    with pytest.raises(ValueError, match=r"updates must have the leaf shapes of params"):
        jax.jit(den.update)(bad_shape, state, params)
    # params consistent with the updates but not with the state the denoiser was initialised with
    with pytest.raises(ValueError, match="updates must have the leaf shapes of the denoiser state"):
        den.update(bad_shape, state, bad_shape)
    with pytest.raises(ValueError, match="updates must have the pytree structure of the denoiser state"):
        jax.jit(den.update)({"v": jnp.ones(3)}, state, {"v": jnp.ones(3)})


def test_mle_ridge_checks_hold_under_jit():
    from jaxlab.optim import quadratic_mle

    xs = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="at least 4 rows"):
        quadratic_mle(xs, xs)
    with pytest.raises(Exception, match="at least 4 rows"):
        jax.block_until_ready(jax.jit(lambda r: quadratic_mle(xs, xs, ridge=r)[0])(0.0))
    with pytest.raises(Exception, match="ridge must be >= 0"):
        jax.block_until_ready(jax.jit(lambda r: quadratic_mle(xs, xs, ridge=r)[0])(-1.0))
    with pytest.raises(Exception, match="ridge must be > 0"):
        jax.block_until_ready(jax.jit(lambda r: rls_init(3, r).P)(-1.0))


def test_dp_denoised_algorithm_reproduces_dp_run():
    from jaxlab.optim import dp_denoised_algorithm, dp_run

    data = jax.random.normal(jax.random.key(4), (40, 3))

    def per_example_loss(p, x):
        return jnp.sum((p - x) ** 2)

    kw = dict(l2_clip=1.0, noise_multiplier=0.8, sample_rate=0.25, max_batch=20)
    want_params, want_info = dp_run(jax.random.key(5), per_example_loss, jnp.zeros(3), data, disk(), optax.sgd(0.1),
                                    num_steps=15, **kw)
    algo = dp_denoised_algorithm(per_example_loss, data, disk(), optax.sgd(0.1), **kw)
    final, trace = jax.jit(lambda k: run(algo.step, algo.init(jnp.zeros(3)), k, 15))(jax.random.key(5))
    _assert_trees_equal(final.params, want_params)
    _assert_trees_equal(trace.infos, want_info)
    with pytest.raises(ValueError, match="l2_clip must be > 0"):
        dp_denoised_algorithm(per_example_loss, data, disk(), optax.sgd(0.1), **{**kw, "l2_clip": 0.0})


def test_loglog_slope_matches_scipy_linregress():
    """The slope and its standard error used by the claim `denoise:two_point_nonconvex_rate_is_not_t_to_minus_12_19`
    equal scipy's linear regression on the (log T, log value) points, and recover a planted exponent."""
    from scipy.stats import linregress

    from jaxlab.optim.denoise.claims import loglog_slope

    ts = np.array([250, 1000, 4000, 16000])
    rng = np.random.default_rng(0)
    values = [3.0 * t ** (-12 / 19) * np.exp(0.05 * rng.standard_normal(8)) for t in ts]
    slope, se = loglog_slope(ts, values)
    ref = linregress(np.repeat(np.log(ts), 8), np.log(np.concatenate(values)))
    assert abs(slope - ref.slope) < 1e-12 and abs(se - ref.stderr) < 1e-12
    assert abs(slope + 12 / 19) < 4 * se
