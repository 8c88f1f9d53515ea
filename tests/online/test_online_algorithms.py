"""The online learners as jaxlab.core.Algorithm factories: each reproduces its runner (and the plain step
functions) exactly, under jit; bad hyperparameters raise eagerly and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.core import Algorithm, run
from jaxlab.online import ogd, vaw


@pytest.fixture(scope="module")
def stream():
    features = jax.random.normal(jax.random.key(0), (60, 4))
    targets = features @ jnp.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * jax.random.normal(jax.random.key(1), (60,))
    return features, targets


def _assert_trees_equal(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("method", ["sherman_morrison", "solve"])
@pytest.mark.parametrize("factory, runner",
                         [(vaw.vaw_algorithm, vaw.run), (vaw.ridge_ftl_algorithm, vaw.ridge_ftl_run)])
def test_vaw_and_ftl_algorithms_reproduce_their_runners(stream, method, factory, runner):
    features, targets = stream
    algo = factory(0.5, method=method)
    assert isinstance(algo, Algorithm)

    @jax.jit
    def drive(features, targets):
        return run(algo.step, algo.init(4), None, xs=(features, targets))

    final, trace = drive(features, targets)
    want_final, want_info = runner(features, targets, 0.5, method=method)
    _assert_trees_equal(final, want_final)
    np.testing.assert_array_equal(np.asarray(trace.infos.y_hat[:, 0]), np.asarray(want_info.y_hat))
    np.testing.assert_array_equal(np.asarray(trace.infos.loss), np.asarray(want_info.loss))
    np.testing.assert_array_equal(np.asarray(trace.infos.leverage), np.asarray(want_info.leverage))


def test_vaw_algorithm_step_is_the_plain_step(stream):
    features, targets = stream
    algo = vaw.vaw_algorithm(2.0)
    s1 = algo.init(4)
    s2 = vaw.init(4, 2.0)
    s3 = s2
    for t in range(5):
        s1, i1 = jax.jit(algo.step)(None, s1, (features[t], targets[t]))
        s2, i2 = jax.jit(vaw.step)(s2, features[t], targets[t])
        _assert_trees_equal((s1, i1), (s2, i2))
        # op by op, the rank-one update P - w w^T is not fused into multiply-adds: equal up to their rounding
        s3, i3 = vaw.step(s3, features[t], targets[t])
        for x, y in zip(jax.tree_util.tree_leaves((s2, i2)), jax.tree_util.tree_leaves((s3, i3)), strict=True):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-14, atol=1e-16)
        np.testing.assert_array_equal(np.asarray(s3.P), np.asarray(s3.P).T)  # exactly symmetric, both ways
        np.testing.assert_array_equal(np.asarray(s2.P), np.asarray(s2.P).T)


def test_ogd_algorithm_reproduces_the_runner(stream):
    features, targets = stream
    opt = optax.sgd(1e-2)
    algo = ogd.ogd_algorithm(opt, radius=3.0)
    final, trace = jax.jit(lambda f, y: run(algo.step, algo.init(4), None, xs=(f, y)))(features, targets)
    want_final, want_info = ogd.run(features, targets, opt, radius=3.0)
    _assert_trees_equal(final, want_final)
    np.testing.assert_array_equal(np.asarray(trace.infos.y_hat[:, 0]), np.asarray(want_info.y_hat))
    s = ogd.init(4, opt)
    for t in range(3):
        s, info = ogd.step(s, features[t], targets[t], opt, radius=3.0)
    s_algo = algo.init(4)
    for t in range(3):
        s_algo, info_algo = algo.step(jax.random.key(9), s_algo, (features[t], targets[t]))  # key ignored
    _assert_trees_equal((s, info), (s_algo, info_algo))


def test_bad_hyperparameters_raise_eagerly_and_under_jit(stream):
    features, targets = stream
    with pytest.raises(ValueError, match="lam must be > 0"):
        vaw.vaw_algorithm(-1.0).init(4)
    with pytest.raises(Exception, match="lam must be > 0"):
        jax.block_until_ready(jax.jit(lambda lam: vaw.vaw_algorithm(lam).init(4).P)(-1.0))
    with pytest.raises(Exception, match="lam must be > 0"):
        jax.block_until_ready(jax.jit(lambda lam: vaw.run(features, targets, lam)[1].loss)(-1.0))
    with pytest.raises(ValueError, match="method must be one of"):
        vaw.vaw_algorithm(1.0, method="qr")
    with pytest.raises(ValueError, match="radius must be > 0"):
        ogd.ogd_algorithm(optax.sgd(0.1), radius=0.0)
    with pytest.raises(TypeError, match="optimizer must be an optax"):
        ogd.ogd_algorithm("sgd")


@pytest.mark.parametrize("mode", ["arx", "precondition"])
def test_usp_vaw_algorithm_reproduces_usp_vaw_run(mode):
    from jaxlab.online import lds, usp

    params, u = lds.deterministic_lds(300)
    y, _ = lds.simulate(jax.random.key(0), params, u)
    want_state, want_info = usp.usp_vaw_run(y[:, 0], u, n=4, mode=mode)
    xs = usp.usp_stream(y[:, 0], u, n=4, mode=mode)
    algo = usp.usp_vaw_algorithm(1.0)
    final, trace = jax.jit(lambda xs: run(algo.step, algo.init(xs[0].shape[1]), None, xs=xs))(xs)
    _assert_trees_equal(final, want_state)
    np.testing.assert_array_equal(np.asarray(trace.infos.y_hat[:, 0]), np.asarray(want_info.y_hat))
    np.testing.assert_array_equal(np.asarray(trace.infos.loss), np.asarray(want_info.loss))


def test_spectral_ogd_algorithm_reproduces_spectral_ogd_run():
    from jaxlab.online import spectral, usp

    u = np.cos(np.arange(100.0)[:, None] / 3)
    y = np.sin(np.arange(100.0) / 5)
    opt = optax.sgd(1e-3)
    c = usp.chebyshev_coeffs(2)
    want_state, want_info = spectral.spectral_ogd_run(y, u, opt, L=32, k=5, c=c)
    sigma, phi = spectral.hankel_filters(32, 5, dtype=jnp.asarray(y).dtype)
    feats, y_tilde = spectral.spectral_features(y, u, sigma, phi, c=c)
    algo = spectral.spectral_ogd_algorithm(opt)
    final, trace = jax.jit(lambda xs: run(algo.step, algo.init(feats.shape[1]), None, xs=xs))(
        (feats, y_tilde, jnp.asarray(y)))
    _assert_trees_equal(final, want_state)
    np.testing.assert_array_equal(np.asarray(trace.infos.y_hat[:, 0]), np.asarray(want_info.y_hat))


def test_stream_and_lds_checks_hold_under_jit():
    from jaxlab.online import lds

    features = jnp.ones((5, 2)).at[2, 0].set(jnp.nan)
    with pytest.raises(ValueError, match="features must be finite"):
        vaw.run(features, jnp.ones(5))
    with pytest.raises(Exception, match="features must be finite"):
        jax.block_until_ready(jax.jit(lambda f: vaw.run(f, jnp.ones(5))[1].loss)(features))
    params, u = lds.deterministic_lds(20)
    with pytest.raises(ValueError, match="obs_noise must be >= 0"):
        lds.simulate(jax.random.key(0), params, u, obs_noise=-1.0)
    with pytest.raises(Exception, match="obs_noise must be >= 0"):
        jax.block_until_ready(jax.jit(lambda s: lds.simulate(jax.random.key(0), params, u, obs_noise=s)[0])(-1.0))


@pytest.mark.parametrize("where", ["features", "targets"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("t", [0, 7])  # first and last round
def test_ogd_run_rejects_every_non_finite_input_under_jit(where, bad, t):
    # under jit the check reads the per-round losses first; it must still see a bad entry anywhere, for any
    # optimizer (optax.zero_nans would hide a NaN gradient from the final state, not from the loss)
    a, y = jnp.ones((8, 3)), jnp.ones(8)
    a, y = (a.at[t, 1].set(bad), y) if where == "features" else (a, y.at[t].set(bad))
    for opt in (optax.sgd(0.1), optax.chain(optax.zero_nans(), optax.sgd(0.1))):
        with pytest.raises(ValueError, match=f"{where} must be finite"):
            ogd.run(a, y, opt)
        with pytest.raises(Exception, match=f"{where} must be finite"):
            jax.block_until_ready(jax.jit(lambda a, y, opt=opt: ogd.run(a, y, opt)[1].y_hat)(a, y))
    good = jax.jit(lambda a, y: ogd.run(a, y, optax.sgd(0.1)))(jnp.ones((8, 3)), jnp.ones(8))
    ref = ogd.run(jnp.ones((8, 3)), jnp.ones(8), optax.sgd(0.1))
    np.testing.assert_array_equal(np.asarray(good[1].y_hat), np.asarray(ref[1].y_hat))
