"""ULA and annealed Langevin samplers (the Monte Carlo part of `langevin:ula_stationary_variance_is_inflated`,
and `langevin:monte_carlo_ald_matches_exact_propagation`) and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.sampling import annealed_langevin as al


def test_ula_stationary_variance_monte_carlo():
    """1-d ULA on N(0, 1/p): stationary variance 1/(p(1 - hp/2)), not 1/p."""
    p, h = 2.0, 0.4
    final, _ = jax.jit(lambda key, x0: al.ula_run(key, x0, lambda th: -p * th, h, 200))(
        jax.random.key(0), jnp.zeros((40000, 1))
    )
    var = float(jnp.var(final.position))
    want = 1.0 / (p * (1 - h * p / 2))
    se = want * np.sqrt(2.0 / 40000)
    assert abs(var - want) < 4 * se and abs(var - 1.0 / p) > 10 * se


@pytest.mark.parametrize("kind", [pytest.param("geffner", marks=pytest.mark.slow), "linhart"])
def test_annealed_langevin_monte_carlo_matches_exact_propagation(toy, kind):
    """Claim `langevin:monte_carlo_ald_matches_exact_propagation`: 1e5 particles; means within 4 standard errors,
    W2 to the target within 5 %.

    The score is that of the closed-form bridging density at each level (the composite scores equal it: see
    test_langevin_scores), which keeps 10^7 score evaluations cheap."""
    ts, hs, ks = al.ald_default_schedule(20, 5, 0.5)
    bridge = {"geffner": al.geffner_bridging_gaussian, "linhart": al.linhart_bridging_gaussian}[kind]

    def score(theta, t):
        mean, prec = bridge(al.vp_alpha(t), toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
        return -prec @ (theta - mean)

    P = 100_000

    @jax.jit
    def sample_and_exact(key):
        x0 = jax.random.normal(jax.random.fold_in(key, 1), (P, 2))
        out = al.annealed_langevin(key, x0, score, ts, hs, ks)
        means, precs = al.bridging_gaussians(kind, ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
        ms, Cs = al.ald_gaussian_moments((means, precs), hs, ks, jnp.zeros(2), jnp.eye(2))
        m_mc, C_mc = jnp.mean(out, 0), jnp.cov(out.T)
        target_cov = jnp.linalg.inv(precs[-1])
        w_exact = al.w2_gaussian(ms[-1], Cs[-1], means[-1], target_cov)
        w_mc = al.w2_gaussian(m_mc, C_mc, means[-1], target_cov)
        return m_mc, ms[-1], jnp.sqrt(jnp.diag(Cs[-1]) / P), w_mc, w_exact

    m_mc, m_exact, se, w_mc, w_exact = sample_and_exact(jax.random.key(2))
    assert bool(jnp.all(jnp.abs(m_mc - m_exact) < 4 * se))
    assert abs(float(w_mc / w_exact) - 1) < 0.05


@pytest.mark.slow
def test_masked_static_inner_loop_equals_dynamic_loop_and_is_differentiable():
    ts = jnp.array([0.8, 0.4, 0.01])
    hs = jnp.array([0.05, 0.02, 0.01])
    ks = jnp.array([3, 1, 2], dtype=jnp.int32)
    score = lambda th, t: -(th - 1.0) / (1.0 + t)  # noqa: E731
    x0 = jnp.zeros((4, 2))
    key = jax.random.key(3)
    dyn = al.annealed_langevin(key, x0, score, ts, hs, ks)
    static = al.annealed_langevin(key, x0, score, ts, hs, ks, max_k=5)
    np.testing.assert_allclose(dyn, static, rtol=1e-12)
    g = jax.grad(lambda h: al.annealed_langevin(key, x0, score, ts, h, ks, max_k=3).mean())(hs)
    assert g.shape == (3,) and bool(jnp.all(jnp.isfinite(g))) and float(jnp.abs(g).max()) > 0


def test_default_schedule_matches_the_practical_rule():
    _, hs, ks = al.ald_default_schedule(4, 5, 0.3, alpha_fn=al.linhart_alpha, t_min=0.01)
    a = np.exp(-16 * np.linspace(1.0, 0.01, 4) ** 2)
    gamma = np.append(a[:-1] / a[1:], a[-1])
    np.testing.assert_allclose(hs, 0.3 * (1 - gamma) / np.sqrt(gamma), rtol=1e-12)
    assert ks.dtype == jnp.int32 and int(ks.sum()) == 20


# ------------------------------------------------------------------------------------------------ bad inputs
def test_sampler_bad_inputs():
    score = lambda th, t: -th  # noqa: E731
    x0 = jnp.zeros((3, 2))
    key = jax.random.key(0)
    ks = jnp.ones(2, dtype=jnp.int32)
    with pytest.raises(ValueError, match="ts must be strictly decreasing"):
        al.annealed_langevin(key, x0, score, jnp.array([0.1, 0.5]), jnp.ones(2) * 0.1, ks)
    with pytest.raises(ValueError, match=r"hs must lie in \(0.0, inf\]"):
        al.annealed_langevin(key, x0, score, jnp.array([0.5, 0.1]), jnp.array([0.1, 0.0]), ks)
    with pytest.raises(TypeError, match="ks must have an integer dtype"):
        al.annealed_langevin(key, x0, score, jnp.array([0.5, 0.1]), jnp.ones(2) * 0.1, jnp.ones(2))
    with pytest.raises(ValueError, match=r"ks must lie in \[1"):
        al.annealed_langevin(key, x0, score, jnp.array([0.5, 0.1]), jnp.ones(2) * 0.1, ks * 0)
    with pytest.raises(ValueError, match="must have the same length, got 2, 3 and 2"):
        al.annealed_langevin(key, x0, score, jnp.array([0.5, 0.1]), jnp.ones(3) * 0.1, ks)
    with pytest.raises(ValueError, match="h must be > 0"):
        al.ula_kernel(lambda th: -th, -0.1)
    with pytest.raises(ValueError, match="theta0 must be 2-dimensional"):
        al.annealed_langevin(key, jnp.zeros(2), score, jnp.array([0.5, 0.1]), jnp.ones(2) * 0.1, ks)
