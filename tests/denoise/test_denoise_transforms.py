"""Recursive denoisers E0-E3 as optax transformations: the exactness, bias and
variance claims of area `denoise` (`jaxlab.optim.denoise.claims`), optax composition, bad inputs."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from denoise_reference import reference_denoise

from jaxlab.optim import (
    Denoiser,
    DenoiseState,
    disk,
    ema,
    find_state,
    gaussian_noise,
    harmonic,
    igt,
    run,
    track,
    two_point,
)
from jaxlab.optim.denoise.claims import (
    D,
    T,
    grad_cubic,
    max_error,
    mc_claim,
    mc_error,
    trajectory,
    two_point_oracle_variance,
)

# --- exactness on quadratics (`denoise:quadratic_exactness_of_igt_disk_two_point`) -----------------------


@pytest.mark.parametrize("make", [lambda: igt(harmonic()), lambda: igt(0.3), lambda: disk(0.4, 0.3), lambda: disk(),
                                  lambda: two_point(harmonic()), lambda: two_point(0.3, s=1.2)])
def test_transport_estimators_are_exact_on_quadratics(make):
    assert max_error(make()) <= 1e-12


def test_ema_is_biased_on_a_moving_quadratic():
    assert max_error(ema(harmonic())) >= 0.1


# --- cubic exactness of E3 (`denoise:two_point_is_exact_on_cubics`) ----------------------------------------


@pytest.mark.parametrize("alpha", [harmonic(), 0.3])
def test_two_point_is_exact_on_cubics(alpha):
    assert max_error(two_point(alpha), grad_cubic) <= 1e-10


@pytest.mark.parametrize("make", [lambda: igt(harmonic()), lambda: disk()])
def test_one_point_estimators_are_biased_on_cubics(make):
    assert max_error(make(), grad_cubic) >= 1e-3


# --- error variance (`denoise:igt_error_follows_one_over_t` and its neighbours) -----------------------------


def test_variance_follows_one_over_t_in_dp_mode():
    # sigma^2 d / T = 0.1 for E1 and E3 (alpha_t = 1/t, noise added once per step), within 4 SE of the replicates
    for den, seed in ((igt(harmonic()), 1), (two_point(harmonic()), 2)):
        r = mc_claim(den, "dp", 2000, D / T, seed=seed)
        assert r.passed, r.details
        assert r.tolerance < 0.05 * D / T  # 4 SE at 2000 replicates: about 4 %


def test_mc_claim_fails_a_planted_bias():
    # the same replicates against a prediction 10 % off: 10 SE at 2000 replicates (SE about 1 %)
    assert not mc_claim(igt(harmonic()), "dp", 2000, 1.1 * D / T, seed=1).passed
    assert mc_error(igt(harmonic()), "dp", 2000) == pytest.approx(mc_claim(igt(harmonic()), "dp", 2000, 0.1, seed=1)
                                                                  .measured, rel=1e-12)


def test_two_point_oracle_variance():
    expected = two_point_oracle_variance()
    assert expected == pytest.approx(0.18229, abs=1e-5)
    r = mc_claim(two_point(harmonic()), "oracle", 4000, expected, seed=3)
    assert r.passed, r.details


def test_disk_stationary_error():
    kappa, c = 0.7, 0.3 / (0.7 * 0.5)
    r = mc_claim(disk(), "dp", 1000, kappa / (2 - kappa) * D, seed=4, last=50)
    assert r.passed, r.details
    oracle = kappa / (2 - kappa) * (c**2 + (1 - c) ** 2) * D
    assert oracle == pytest.approx(4.0659, abs=1e-4)
    r = mc_claim(disk(), "oracle", 1000, oracle, seed=5, last=50)
    assert r.passed, r.details


# --- reference implementation, same injected noise -------------------------------------------------------


@pytest.mark.parametrize("mode", ["oracle", "dp"])
@pytest.mark.parametrize("method", ["ema", "igt", "disk", "two_point"])
def test_matches_numpy_reference_draw_for_draw(method, mode):
    xs = trajectory(seed=11, num_steps=25, d=D)
    alpha = 0.3
    den = {"ema": ema(alpha), "igt": igt(alpha), "disk": disk(0.7, 0.5), "two_point": two_point(alpha)}[method]
    rng = np.random.default_rng(12)
    noise = rng.standard_normal((25, den.num_queries, D) if mode == "oracle" else (25, D))
    ref = reference_denoise(method, xs, grad_cubic, noise, mode=mode, alpha=lambda t: alpha)
    want = np.sum((ref - np.asarray(jax.vmap(grad_cubic)(xs))) ** 2, axis=1)
    got = track(grad_cubic, xs, den, jnp.asarray(noise), mode=mode).error2
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_zero_init_ema_equals_optax_ema():
    alpha = 0.2
    gs = jnp.asarray(np.random.default_rng(0).standard_normal((15, 4)))
    params = jnp.zeros(4)
    ours, ref = ema(alpha, init="zero"), optax.ema(1 - alpha, debias=False)
    s1, s2 = ours.init(params), ref.init(params)
    for g in gs:
        u1, s1 = ours.update(g, s1, params)
        u2, s2 = ref.update(g, s2, params)
        np.testing.assert_allclose(u1, u2, rtol=1e-13)


# --- optax composition, jit, vmap ---------------------------------------------------------------------------


def test_is_an_optax_transformation_and_chains_with_adam():
    den = disk()
    assert isinstance(den, optax.GradientTransformation) and isinstance(den, Denoiser)
    params = {"w": jnp.ones(3), "b": jnp.zeros(())}
    tx = optax.chain(den, optax.adam(0.1))
    opt_state = tx.init(params)
    adam, adam_state = optax.adam(0.1), optax.adam(0.1).init(params)
    m = None
    for i in range(3):
        ds = find_state(opt_state)
        assert isinstance(ds, DenoiseState) and int(ds.count) == i
        points = den.query_points(ds, params)
        grads = tuple(jax.tree_util.tree_map(lambda x: 2.0 * x + 1.0, p) for p in points)
        q = den.combine(ds, grads)
        updates, opt_state = jax.jit(tx.update)(q, opt_state, params)
        m = q if i == 0 else jax.tree_util.tree_map(lambda a, b: 0.3 * a + 0.7 * b, m, q)
        ref, adam_state = adam.update(m, adam_state, params)
        chex.assert_trees_all_close(updates, ref, rtol=1e-12)
        params = optax.apply_updates(params, updates)


def test_combine_is_vmappable_over_examples():
    den = two_point(0.3)
    params = jnp.arange(4.0)
    state = den.update(jnp.ones(4), den.init(params), params)[1]
    per_example = tuple(jnp.asarray(np.random.default_rng(i).standard_normal((6, 4))) for i in range(2))
    batched = jax.vmap(den.combine, in_axes=(None, 0))(state, per_example)
    np.testing.assert_allclose(batched.mean(0), den.combine(state, tuple(g.mean(0) for g in per_example)),
                               rtol=1e-12)


def test_run_driver_denoises_and_optimizes():
    loss = lambda x: 0.5 * jnp.sum(jnp.linspace(0.5, 3.0, 5) * x**2) + jnp.sum(x)  # noqa: E731
    key = jax.random.key(0)
    common = dict(params0=jnp.full(5, 2.0), inner=optax.sgd(0.05), noise_fn=gaussian_noise(1.0), num_steps=200)
    _, info_igt = run(key, loss, denoiser=igt(0.1), **common)
    _, info_ema = run(key, loss, denoiser=ema(0.1), **common)
    assert float(info_igt.loss[-50:].mean()) < float(info_igt.loss[0]) - 1.0
    # Transport removes the EMA's lag bias early on, while the iterates move fast.
    assert float(info_igt.error2[5:40].mean()) < float(info_ema.error2[5:40].mean())


# --- bad inputs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ctor,kwargs,match", [
    (ema, {"alpha": 0.0}, "alpha must lie in"),
    (igt, {"alpha": 1.5}, "alpha must lie in"),
    (disk, {"kappa": 0.0}, "kappa must lie in"),
    (disk, {"kappa": 1.2}, "kappa must lie in"),
    (disk, {"gamma": 0.0}, "gamma must be > 0"),
    (disk, {"gamma": -0.5}, "gamma must be > 0"),
    (disk, {"gamma": float("inf")}, "gamma must be > 0 and finite"),
    (two_point, {"alpha": 0.3, "s": 1.0}, r"s must lie in \(1.0, 2.0\)"),
    (two_point, {"alpha": 0.3, "s": 2.0}, r"s must lie in \(1.0, 2.0\)"),
    (ema, {"alpha": 0.5, "init": "ones"}, "init must be"),
])
def test_bad_hyperparameters(ctor, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ctor(**kwargs)


def test_schedule_out_of_range_raises_under_jit():
    den = igt(lambda count: 2.0 + 0.0 * count)
    params = jnp.ones(2)
    with pytest.raises(Exception, match=r"schedule must return values in \(0, 1\]"):
        jax.jit(den.update)(jnp.ones(2), den.init(params), params)


def test_update_needs_params_and_matching_structure():
    den = disk()
    params = {"a": jnp.ones(2)}
    state = den.init(params)
    with pytest.raises(ValueError, match="params must be the current parameters"):
        den.update(params, state)
    with pytest.raises(ValueError, match="updates must have the pytree structure of params"):
        den.update({"b": jnp.ones(2)}, state, params)


def test_combine_needs_one_gradient_per_query():
    den = two_point(0.3)
    state = den.init(jnp.ones(2))
    with pytest.raises(ValueError, match="grads must be a tuple of 2 gradient"):
        den.combine(state, (jnp.ones(2),))
    with pytest.raises(ValueError, match="grads must be a tuple of 1 gradient"):
        ema(0.5).combine(state, (jnp.ones(2), jnp.ones(2)))


def test_integer_dtypes_are_rejected():
    den = igt(0.5)
    with pytest.raises(TypeError, match="params must have floating dtypes"):
        den.init(jnp.ones(3, dtype=jnp.int32))
    params = jnp.ones(3)
    with pytest.raises(TypeError, match="updates must have floating dtypes"):
        den.update(jnp.ones(3, dtype=jnp.int32), den.init(params), params)
    with pytest.raises(TypeError, match=r"grads\[0\] must have floating dtypes"):
        den.combine(den.init(params), (jnp.ones(3, dtype=jnp.int32),))


def test_find_state_requires_a_denoiser():
    with pytest.raises(ValueError, match="exactly one DenoiseState, got 0"):
        find_state(optax.adam(0.1).init(jnp.ones(2)))
