"""The rectified-flow Euler sampler as an Algorithm, its bad inputs (eager and under jit) and renamed keywords."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import run
from jaxlab.generative import rectified_flow as rf
from jaxlab.generative import semantic_flow as sf


def gaussian_rf_velocity(x, sigma, cond=None):
    """Exact RF velocity of N(0, 1) -> N(2, 0.5^2) (t = 1 - sigma, CFM marginal velocity negated)."""
    t = 1.0 - sigma
    a = (t * 0.25 - (1 - t)) / ((1 - t) ** 2 + t**2 * 0.25)
    return -(2.0 + a * (x - t * 2.0))


@pytest.mark.parametrize("guided", [False, True])
def test_euler_algorithm_under_jit_equals_euler_sample(guided):
    sig = rf.make_sigmas(12, shift=3.0)
    x0 = jax.random.normal(jax.random.key(0), (4, 2))
    guide = (lambda x, s, i: x - 0.01 * s * x) if guided else None
    algo = rf.euler_algorithm(gaussian_rf_velocity, sig, guidance_fn=guide)
    final, trace = jax.jit(lambda s, k: run(algo.step, s, k, 12, save_states=True))(algo.init(x0), jax.random.key(1))
    want, traj = rf.euler_sample(gaussian_rf_velocity, x0, sig, guidance_fn=guide, return_traj=True)
    np.testing.assert_array_equal(final.x, want)
    np.testing.assert_array_equal(trace.states.x, traj[1:])
    np.testing.assert_array_equal(trace.infos.s, sig[:-1])
    assert int(final.i) == 12
    # one step by hand: x + (sigma_1 - sigma_0) v(x, sigma_0)
    st, _ = jax.jit(algo.step)(None, algo.init(x0))
    x = x0 if guide is None else guide(x0, sig[0], 0)
    np.testing.assert_allclose(st.x, x + (sig[1] - sig[0]) * gaussian_rf_velocity(x, sig[0]), rtol=1e-15)


def test_euler_sample_rejects_nan_start_and_wrong_velocity_shape():
    sig = rf.make_sigmas(4)
    raises_eager_and_jit(lambda x: rf.euler_sample(gaussian_rf_velocity, x, sig), jnp.array([0.0, jnp.nan]),
                         match="x_init")
    raises_eager_and_jit(lambda x: rf.euler_sample(lambda a, s, c: a[:1], x, sig), jnp.zeros(2),
                         match="velocity_fn")
    raises_eager_and_jit(lambda x: rf.diffrax_sample(gaussian_rf_velocity, x), jnp.array([jnp.inf]),
                         match="x_init")


def test_rf_optimizer_old_keyword_warns():
    with pytest.warns(DeprecationWarning, match="lr"):
        opt = rf.rf_optimizer(lr=1e-2)
    p = jnp.ones(3)
    u1, _ = opt.update(jnp.ones(3), opt.init(p), p)
    ref = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2, weight_decay=1e-4))
    u2, _ = ref.update(jnp.ones(3), ref.init(p), p)
    np.testing.assert_array_equal(u1, u2)


def test_train_tiny_mmdit_old_keywords_warn_and_match():
    kw = dict(width=16, heads=2, depth=1)
    with pytest.warns(DeprecationWarning, match="n_steps"):
        _, old = sf.train_tiny_mmdit(jax.random.key(0), n_steps=2, batch=4, lr=1e-3, return_losses=True, **kw)
    _, new = sf.train_tiny_mmdit(jax.random.key(0), num_steps=2, batch_size=4, learning_rate=1e-3,
                                 return_losses=True, **kw)
    np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("rho", [0.0, 0.3, 1.0])
def test_semanticflow_algorithm_under_jit_equals_semanticflow_sample(rho):
    model = rf.TinyMMDiT(jax.random.key(0), width=16, heads=2, depth=2, zero_init=False)
    data = sf.make_shapes_batch(jax.random.key(1), 1, p_second=1.0)
    tok, ref = data["tokens"][0], data["ref"][0]
    probes = sf.make_probes(model, tok, (0, 1, 3), ref)
    cfg = sf.SemanticFlowConfig(blocks=(0,), rho=rho, n_inner=2)
    sig = rf.make_sigmas(8)
    x0 = jax.random.normal(jax.random.key(2), (16, 16, 3))
    want, info = jax.jit(lambda x: sf.semanticflow_sample(model, x, sig, tok, ref, probes, cfg))(x0)
    algo = sf.semanticflow_algorithm(model, sig, tok, ref, probes, cfg)
    final, trace = jax.jit(lambda s, k: run(algo.step, s, k, 8))(algo.init(x0), jax.random.key(3))
    np.testing.assert_allclose(final.x, want, rtol=1e-12, atol=1e-12)
    assert int(final.n_rectified) == int(info.n_rectified) and bool(final.stopped) == bool(info.stopped)
    n_early = info.energies.shape[0]
    np.testing.assert_allclose(trace.infos.energies[:n_early], info.energies, rtol=1e-12)
    assert bool(jnp.all(jnp.isnan(trace.infos.energies[n_early:])))
    np.testing.assert_array_equal(trace.infos.guided, jnp.arange(8) < n_early)
