"""Exact reward–KL frontier on finite spaces: Jeffreys identity, covariance form, Theorem A1, slope, closed forms
(claims `alignment:jeffreys_identity`, `alignment:tilted_policy_is_optimal_under_a_kl_budget`,
`alignment:frontier_slope_equals_beta`, `alignment:gaussian_frontier_is_sigma_sqrt_2kl`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special

from jaxlab.alignment import (
    bernoulli_frontier,
    beta_for_kl,
    covariance_gain,
    exponential_frontier,
    frontier,
    frontier_from_samples,
    frontier_point,
    gain_at_kl,
    gain_from_samples,
    gaussian_frontier,
    kl_from_samples,
    kl_max,
    max_gain_at_kl,
    tilted_log_policy,
    uniform_frontier,
)
from jaxlab.core.quadrature import gauss_hermite

VMAX = 50


def random_problems(seed, count):
    """``count`` problems with |Y| in [2, 50], padded to 50 outputs of zero base probability (log π₀ = −inf)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, VMAX + 1, size=count)
    log_pi0 = np.full((count, VMAX), -np.inf)
    r = np.zeros((count, VMAX))
    for i, v in enumerate(sizes):
        log_pi0[i, :v] = np.log(rng.dirichlet(np.ones(v)))
        r[i, :v] = rng.standard_normal(v)
        r[i, v:] = 10.0 * rng.standard_normal(VMAX - v)  # rewards off the support must not matter
    beta = np.exp(rng.uniform(np.log(0.05), np.log(20.0), size=count))
    return jnp.asarray(log_pi0), jnp.asarray(r), jnp.asarray(beta), sizes


PROBLEMS = random_problems(0, 200)
point_batch = jax.jit(jax.vmap(frontier_point))


def test_jeffreys_identity_and_covariance_form():
    log_pi0, r, beta, _ = PROBLEMS
    p = point_batch(log_pi0, r, beta)
    np.testing.assert_allclose(p.gain, beta * (p.kl + p.reverse_kl), rtol=1e-10)
    np.testing.assert_allclose(p.gain, beta * p.jeffreys, rtol=1e-10)
    cov = jax.vmap(covariance_gain)(log_pi0, r, beta)
    np.testing.assert_allclose(cov, p.gain, rtol=1e-10)
    assert float(jnp.min(p.gain)) > 0.0
    # the fused grid path (cumulant form) agrees with the direct per-point computation
    grid = jax.jit(jax.vmap(frontier, in_axes=(0, 0, None)))(log_pi0[:50], r[:50], jnp.array([0.1, 1.0, 10.0]))
    direct = jax.vmap(jax.vmap(frontier_point, in_axes=(None, None, 0)), in_axes=(0, 0, None))(
        log_pi0[:50], r[:50], jnp.array([0.1, 1.0, 10.0]))
    for a, b in zip(grid, direct, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-14)


def test_grid_gradients_match_the_direct_point_with_ties():
    """The grid's one-pass sums (shifted logs, a stop-gradient offset) must not change derivatives, in the
    rewards and in the base logits (log π₀ = log_softmax(θ), so that both stay on the simplex), with ties at
    the lowest and highest reward and an output off the support."""
    rng = np.random.default_rng(3)
    theta = jnp.asarray(rng.standard_normal(11))
    r = jnp.asarray(np.round(rng.standard_normal(12), 0))  # few reward levels: ties at both ends
    betas = jnp.array([0.2, 1.0, 5.0])
    log_pi0 = lambda t: jnp.append(jax.nn.log_softmax(t), -jnp.inf)  # noqa: E731
    for field in ("kl", "reverse_kl", "gain"):
        grid = jax.grad(lambda t, rr, f=field: getattr(frontier(log_pi0(t), rr, betas), f).sum(), argnums=(0, 1))
        point = jax.grad(lambda t, rr, f=field: sum(getattr(frontier_point(log_pi0(t), rr, b), f) for b in betas),
                         argnums=(0, 1))
        (g_t, g_r), (p_t, p_r) = grid(theta, r), point(theta, r)
        np.testing.assert_allclose(g_t, p_t, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(g_r[:11], p_r[:11], rtol=1e-9, atol=1e-12)
        assert float(g_r[11]) == 0.0


def test_frontier_matches_scipy_reference():
    log_pi0, r, beta, sizes = PROBLEMS
    p = point_batch(log_pi0, r, beta)
    for i in range(10):
        v = sizes[i]
        lp0, rr, b = np.asarray(log_pi0[i, :v]), np.asarray(r[i, :v]), float(beta[i])
        pi0 = np.exp(lp0)
        pib = special.softmax(lp0 + rr / b)
        assert abs(float(p.kl[i]) - special.rel_entr(pib, pi0).sum()) < 1e-12
        assert abs(float(p.reverse_kl[i]) - special.rel_entr(pi0, pib).sum()) < 1e-12
        assert abs(float(p.gain[i]) - (pib @ rr - pi0 @ rr)) < 1e-12
        # the cumulant form (`jaxlab.alignment.kl_limits`): KL = λΛ'(λ) − Λ(λ)
        lam = 1.0 / b
        cgf = special.logsumexp(lp0 + lam * rr)
        assert abs(float(p.kl[i]) - (lam * (pib @ rr) - cgf)) < 1e-11


def test_bernoulli_closed_form_is_the_two_point_frontier():
    for p in (0.05, 0.3, 0.8):
        log_pi0 = jnp.log(jnp.array([1 - p, p]))
        betas = jnp.array([0.1, 0.7, 5.0])
        exact = frontier(log_pi0, jnp.array([0.0, 1.0]), betas)
        closed = bernoulli_frontier(p, betas)
        for a, b in zip(exact, closed, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_theorem_a1_no_policy_beats_the_tilt():
    log_pi0, r, _, sizes = PROBLEMS
    rng = np.random.default_rng(1)
    worst = -np.inf
    n_feasible = 0
    for i in range(8):
        v = sizes[i]
        best = max_gain_at_kl(log_pi0[i], r[i], eps := 0.5 * float(kl_max(log_pi0[i], r[i])))
        assert abs(float(best.kl) - eps) < 1e-10
        lp0, rr = log_pi0[i, :v], r[i, :v]  # the support, for the numpy side
        pi0 = np.exp(np.asarray(lp0))
        conc = rng.choice([2.0, 20.0, 200.0], size=(10_000, 1))
        g = rng.gamma(conc * pi0 + 1e-3)  # Dirichlet(c π₀ + 1e-3) draws, vectorised
        pis = g / g.sum(1, keepdims=True)
        # mixtures with the optimum probe the boundary of the feasible set
        t = rng.uniform(0, 1, size=(10_000, 1))
        pis = np.concatenate([pis, t * np.exp(np.asarray(tilted_log_policy(lp0, rr, best.beta))) + (1 - t) * pis])
        kls = special.rel_entr(pis, pi0).sum(1)
        gains = pis @ np.asarray(rr) - pi0 @ np.asarray(rr)
        ok = kls <= eps
        n_feasible += ok.sum()
        worst = max(worst, float(np.max(gains[ok] - float(best.gain))))
    assert n_feasible > 10_000
    assert worst <= 1e-12
    assert worst > -1e-2  # the mixtures come close to the optimum: the bound is tight


def test_beta_for_kl_inverts_the_kl_curve():
    log_pi0, r, _, _ = PROBLEMS
    for i in range(5):
        lp0, rr = log_pi0[i], r[i]
        for frac in (0.01, 0.3, 0.9):
            eps = frac * float(kl_max(lp0, rr))
            b = beta_for_kl(lp0, rr, eps)
            assert abs(float(frontier_point(lp0, rr, b).kl) - eps) < 1e-10 * max(1.0, eps)


def test_frontier_slope_is_beta():
    log_pi0, r, beta, _ = PROBLEMS
    h = 1e-4 * beta
    up, dn = point_batch(log_pi0, r, beta + h), point_batch(log_pi0, r, beta - h)
    slope = (up.gain - dn.gain) / (up.kl - dn.kl)
    # where π_β has collapsed onto argmax r, KL(β ± h) differ by less than rounding: skip those few points
    resolved = np.abs(np.asarray(up.kl - dn.kl)) > 1e-7
    assert resolved.sum() > 180
    np.testing.assert_allclose(slope[resolved], beta[resolved], rtol=1e-6)
    # the same by automatic differentiation (dgain/dβ ÷ dKL/dβ)
    dgain = jax.vmap(jax.grad(lambda lp, rr, b: frontier_point(lp, rr, b).gain, argnums=2))(log_pi0, r, beta)
    dkl = jax.vmap(jax.grad(lambda lp, rr, b: frontier_point(lp, rr, b).kl, argnums=2))(log_pi0, r, beta)
    np.testing.assert_allclose((dgain / dkl)[resolved], beta[resolved], rtol=1e-8)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_gaussian_tightness_closed_form_and_quadrature(sigma):
    betas = jnp.array([0.25, 1.0, 4.0])
    closed = gaussian_frontier(sigma, betas)
    np.testing.assert_allclose(closed.gain, sigma * jnp.sqrt(2 * closed.kl), rtol=1e-14)
    # the finite space of a 120-node Gauss-Hermite rule integrates e^{λr} to high accuracy
    z, w = gauss_hermite(120)
    quad = frontier(jnp.log(w), sigma * z[:, 0], betas)
    tol = 1e-8 if sigma < 2 else 1e-5  # β = 0.25, σ = 2: the tilt moves the mass 16σ... to the rule's edge
    np.testing.assert_allclose(quad.gain[1:], closed.gain[1:], rtol=1e-8)
    np.testing.assert_allclose(quad.kl[1:], closed.kl[1:], rtol=1e-8)
    np.testing.assert_allclose(quad.reverse_kl[1:], closed.reverse_kl[1:], rtol=1e-8)
    if sigma < 2:
        np.testing.assert_allclose(quad.gain[0], closed.gain[0], rtol=tol)


def test_gaussian_sample_estimator_at_beta_equal_sigma():
    z = jax.random.normal(jax.random.key(0), (1_000_000,))
    for sigma in (0.5, 1.0, 2.0):
        x = sigma * z
        closed = gaussian_frontier(sigma, sigma)
        assert abs(float(gain_from_samples(x, sigma)) / float(closed.gain) - 1) < 0.03
        assert abs(float(kl_from_samples(x, sigma)) / float(closed.kl) - 1) < 0.03


def test_uniform_and_exponential_closed_forms_match_quad():
    for beta in (0.05, 0.5, 3.0, 2000.0):
        lam = 1 / beta
        z = integrate.quad(lambda x, lam=lam: np.exp(lam * (x - 1)), 0, 1)[0]
        m = integrate.quad(lambda x, lam=lam: x * np.exp(lam * (x - 1)), 0, 1)[0] / z
        cgf = np.log(z) + lam
        p = uniform_frontier(beta)
        np.testing.assert_allclose([p.expected_reward, p.gain, p.kl, p.reverse_kl],
                                   [m, m - 0.5, lam * m - cgf, cgf - lam / 2], rtol=1e-8, atol=1e-14)
    for beta in (1.2, 2.0, 10.0):
        lam = 1 / beta
        z = integrate.quad(lambda x, lam=lam: np.exp((lam - 1) * x), 0, np.inf)[0]
        m = integrate.quad(lambda x, lam=lam: x * np.exp((lam - 1) * x), 0, np.inf)[0] / z
        p = exponential_frontier(beta)
        np.testing.assert_allclose([p.expected_reward, p.kl, p.reverse_kl],
                                   [m, lam * m - np.log(z), np.log(z) - lam], rtol=1e-8)
        t = 1 / (1 - lam)
        np.testing.assert_allclose([p.kl, p.gain], [t - 1 - np.log(t), t - 1], rtol=1e-12)


def test_invariances():
    log_pi0, r, beta, _ = PROBLEMS
    lp0, rr, b = log_pi0[3], r[3], beta[3]
    base = frontier_point(lp0, rr, b)
    shifted = frontier_point(lp0, rr + 7.5, b)
    perm = np.random.default_rng(2).permutation(VMAX)
    permuted = frontier_point(lp0[perm], rr[perm], b)
    scaled = frontier_point(lp0, 3.0 * rr, 3.0 * b)  # (r, β) → (c r, c β): same policy, gain × c
    for other in (shifted, permuted):
        np.testing.assert_allclose([other.kl, other.reverse_kl, other.gain], [base.kl, base.reverse_kl, base.gain],
                                   rtol=1e-11)
    np.testing.assert_allclose([scaled.kl, scaled.gain], [base.kl, 3 * base.gain], rtol=1e-11)


def test_sample_frontier_converges_to_the_exact_one():
    log_pi0, r, _, sizes = PROBLEMS
    v = sizes[5]
    betas = jnp.array([0.3, 1.0, 3.0])
    exact = frontier(log_pi0[5], r[5], betas)
    rng = np.random.default_rng(3)
    pi0, rr = np.exp(np.asarray(log_pi0[5, :v])), np.asarray(r[5, :v])
    errs = []
    for n in (1_000, 10_000, 100_000):
        y = rng.choice(v, size=(10, n), p=pi0 / pi0.sum())  # 10 replicates
        est = frontier_from_samples(rr[y], betas)
        errs.append(float(jnp.sqrt(jnp.mean((est.gain - exact.gain) ** 2 + (est.kl - exact.kl) ** 2))))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.01


def test_gain_at_kl_interpolates_the_frontier():
    sigma = 1.3
    pts = gaussian_frontier(sigma, jnp.logspace(-2, 2, 2000))
    kl = jnp.array([0.01, 0.5, 3.0])
    np.testing.assert_allclose(gain_at_kl(pts, kl), sigma * jnp.sqrt(2 * kl), rtol=1e-5)


def test_under_jit_and_vmap_over_prompts_and_betas():
    log_pi0, r, _, _ = PROBLEMS
    betas = jnp.array([0.2, 1.0, 5.0])
    grid = jax.jit(jax.vmap(frontier, in_axes=(0, 0, None)))(log_pi0[:4], r[:4], betas)
    assert grid.kl.shape == (4, 3)
    np.testing.assert_allclose(grid.gain[2, 1], frontier_point(log_pi0[2], r[2], 1.0).gain, rtol=1e-12)
    b = jax.jit(beta_for_kl)(log_pi0[0], r[0], 0.2)
    np.testing.assert_allclose(frontier_point(log_pi0[0], r[0], b).kl, 0.2, rtol=1e-10)
