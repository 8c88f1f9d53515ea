"""DP helpers: per-example clipping + Gaussian noise (optax's aggregate), denoiser queries, accounting."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.optim import clip_and_noise, disk, dp_query, noise_multiplier_for


def _per_example(seed=0, n=8, d=5):
    return jnp.asarray(3.0 * np.random.default_rng(seed).standard_normal((n, d)))


def test_clip_and_noise_without_noise_matches_numpy():
    g = {"a": _per_example(0), "b": _per_example(1, d=2)}
    flat = np.c_[np.asarray(g["a"]), np.asarray(g["b"])]
    clipped = flat * np.minimum(1.0, 1.5 / np.linalg.norm(flat, axis=1))[:, None]
    want = clipped.sum(0) / len(flat)
    got = clip_and_noise(jax.random.key(0), g, 1.5, 0.0)
    np.testing.assert_allclose(np.r_[got["a"], got["b"]], want, rtol=1e-12)
    half = clip_and_noise(jax.random.key(0), g, 1.5, 0.0, expected_batch_size=4)
    np.testing.assert_allclose(half["a"], 2 * got["a"], rtol=1e-12)


def test_noise_std_is_multiplier_times_clip_over_batch():
    g = jnp.zeros((4, 50_000))
    out = clip_and_noise(jax.random.key(1), g, 2.0, 3.0)
    assert float(jnp.std(out)) == pytest.approx(3.0 * 2.0 / 4, rel=0.02)


def test_dp_query_combines_per_example_before_clipping():
    den = disk()
    params = jnp.ones(5)
    state = den.update(jnp.zeros(5), den.init(params - 0.5), params - 0.5)[1]
    batch = _per_example(2, n=6)
    grad = lambda p, xi: p * xi  # noqa: E731  per-example gradient at p
    got = dp_query(jax.random.key(0), grad, den, state, params, batch, 1.0, 0.0)
    c = 0.3 / (0.7 * 0.5)
    y1 = params + 0.5 * 0.5  # x + gamma d, d = 0.5
    q = c * np.asarray(y1 * batch) + (1 - c) * np.asarray(params * batch)
    want = (q * np.minimum(1.0, 1.0 / np.linalg.norm(q, axis=1))[:, None]).mean(0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_dp_query_with_one_query_is_clip_and_noise_of_the_per_example_gradients():
    """A one-query denoiser privatizes the raw per-example gradients (dp_query hands them over as flat rows):
    the same numbers, noise included, as clip_and_noise on the pytree of (batch, ...) leaves."""
    from jaxlab.optim import ema

    den = ema(1.0)
    params = {"w": jnp.ones((3, 4)), "b": jnp.arange(2.0)}
    state = den.init(params)
    batch = _per_example(3, n=6, d=4)

    def grad(p, xi):  # an outer product per example, as a dense layer's weight gradient
        return {"w": jnp.outer(jnp.arange(1.0, 4.0), xi), "b": p["b"] * xi[:2]}

    for sigma in (0.0, 1.3):
        got = jax.jit(lambda key, s=sigma: dp_query(key, grad, den, state, params, batch, 2.0, s,
                                                   expected_batch_size=4.0))(jax.random.key(5))
        per_example = jax.vmap(grad, in_axes=(None, 0))(params, batch)
        want = clip_and_noise(jax.random.key(5), per_example, 2.0, sigma, expected_batch_size=4.0)
        for k in ("w", "b"):
            assert got[k].shape == params[k].shape
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-13, atol=1e-15)


def test_noise_multiplier_round_trip():
    pytest.importorskip("dp_accounting")
    import dp_accounting
    from dp_accounting import rdp

    q, steps, delta = 64 / 1437, 100, 1e-5
    sig4 = noise_multiplier_for(4.0, delta, q, steps)

    def eps(sigma):
        acc = rdp.RdpAccountant()
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
        return acc.get_epsilon(delta)

    assert eps(sig4) <= 4.0 < eps(0.98 * sig4)


def test_missing_accountant_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match="pip install dp-accounting"):
        noise_multiplier_for(1.0, 1e-5, 0.01, 10)


def test_bad_inputs():
    g = _per_example()
    with pytest.raises(ValueError, match="l2_clip must be > 0"):
        clip_and_noise(jax.random.key(0), g, 0.0, 1.0)
    with pytest.raises(ValueError, match="noise_multiplier must be >= 0"):
        clip_and_noise(jax.random.key(0), g, 1.0, -1.0)
    with pytest.raises(TypeError, match="per_example_grads must have floating dtypes"):
        clip_and_noise(jax.random.key(0), jnp.ones((3, 2), jnp.int32), 1.0, 1.0)
    with pytest.raises(ValueError, match=r"delta must lie in \(0.0, 1.0\)"):
        noise_multiplier_for(1.0, 1.0, 0.01, 10)
    with pytest.raises(ValueError, match=r"delta must lie in \(0.0, 1.0\)"):
        noise_multiplier_for(1.0, 0.0, 0.01, 10)
    with pytest.raises(ValueError, match="eps must be > 0"):
        noise_multiplier_for(0.0, 1e-5, 0.01, 10)


def test_dp_run_without_noise_or_clipping_is_full_batch_gradient_descent():
    from jaxlab.optim import dp_run, ema

    rng = np.random.default_rng(3)
    A, b = jnp.asarray(rng.standard_normal((8, 3))), jnp.asarray(rng.standard_normal(8))
    loss = lambda w, ex: 0.5 * (ex[0] @ w - ex[1]) ** 2  # noqa: E731
    w0 = jnp.zeros(3)
    w, info = dp_run(jax.random.key(0), loss, w0, (A, b), ema(1.0), optax.sgd(0.1), l2_clip=1e6,
                     noise_multiplier=0.0, sample_rate=1.0, num_steps=5, max_batch=8)
    ref = w0
    for _ in range(5):
        ref = ref - 0.1 * A.T @ (A @ ref - b) / 8
    np.testing.assert_allclose(w, ref, rtol=1e-12)
    assert np.all(np.asarray(info.batch_size) == 8)
    with pytest.raises(ValueError, match="max_batch must be >= 1"):
        dp_run(jax.random.key(0), loss, w0, (A, b), ema(1.0), optax.sgd(0.1), l2_clip=1.0,
               noise_multiplier=0.0, sample_rate=0.5, num_steps=5, max_batch=0)


def test_noise_multiplier_for_old_keyword_warns():
    pytest.importorskip("dp_accounting")
    with pytest.warns(DeprecationWarning, match="'steps' is deprecated"):
        old = noise_multiplier_for(1.0, 1e-5, 0.01, steps=10)
    assert old == noise_multiplier_for(1.0, 1e-5, 0.01, num_steps=10)
