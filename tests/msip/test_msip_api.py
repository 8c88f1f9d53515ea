"""MSIP map, weights and estimators against numpy references; batching; the WFR flow; bad inputs."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core.quadrature import gauss_hermite
from jaxlab.sampling import msip as M
from jaxlab.sampling.msip.estimators import _spherical_radial_rule

RNG = np.random.default_rng(0)
Y = RNG.normal(size=(7, 2))
LOG_V0 = RNG.normal(size=7)
R = 0.3 * RNG.normal(size=(7, 2))
SIGMA = 0.8


def lp(x):
    return -0.5 * jnp.sum(x**2)


FRED = M.fredholm_estimator(lp)


def _numpy_gram(Y, sigma, jitter):
    d2 = ((Y[:, None] - Y[None]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma**2)) + jitter * np.eye(len(Y))


def test_msip_map_matches_explicit_inverse_formula():
    Kinv = np.linalg.inv(_numpy_gram(Y, SIGMA, 1e-7))
    v0 = np.exp(LOG_V0)
    T = (Kinv @ (v0[:, None] * (Y + R))) / (Kinv @ v0)[:, None]
    got = M.msip_map(Y, LOG_V0, R, lengthscale=SIGMA)
    np.testing.assert_allclose(got, T, rtol=1e-10, atol=1e-10)
    # log-space: an additive constant far outside exp's range changes nothing
    np.testing.assert_allclose(M.msip_map(Y, LOG_V0 + 900.0, R, lengthscale=SIGMA), T, rtol=1e-10, atol=1e-10)


def test_optimal_weights_match_numpy_solve():
    K = _numpy_gram(Y, SIGMA, 1e-7)
    w = np.linalg.solve(K, np.exp(LOG_V0))
    np.testing.assert_allclose(M.optimal_weights(Y, LOG_V0, lengthscale=SIGMA, normalize=False), w, rtol=1e-10)
    np.testing.assert_allclose(M.optimal_weights(Y, LOG_V0, lengthscale=SIGMA), w / w.sum(), rtol=1e-10)


def test_duplicate_particles_give_finite_equal_weights_with_jitter():
    Yd = np.concatenate([Y, Y[:1]])
    w = np.asarray(M.optimal_weights(Yd, np.append(LOG_V0, LOG_V0[0]), lengthscale=SIGMA))
    assert np.all(np.isfinite(w))
    assert w[0] == pytest.approx(w[-1], rel=1e-6)


def test_single_particle_map_is_mean_shift():
    got = M.msip_map(Y[:1], LOG_V0[:1], R[:1], lengthscale=SIGMA)
    np.testing.assert_allclose(got, Y[:1] + R[:1], rtol=1e-12)


def test_empirical_estimator_matches_numpy():
    X = RNG.normal(size=(50, 2))
    k = np.exp(-((Y[:, None] - X[None]) ** 2).sum(-1) / (2 * SIGMA**2))
    log_v0, r = jax.jit(M.empirical_estimator(X))(None, jnp.asarray(Y), SIGMA)
    np.testing.assert_allclose(log_v0, np.log(k.mean(1)), rtol=1e-12)
    np.testing.assert_allclose(r, k @ X / k.sum(1, keepdims=True) - Y, rtol=1e-10, atol=1e-12)


def test_gaussian_estimator_matches_closed_form():
    m = np.array([0.3, -0.2])
    S = np.array([[1.2, 0.3], [0.3, 0.6]])
    log_v0, r = jax.jit(M.gaussian_estimator(m, S))(None, jnp.asarray(Y), SIGMA)
    A = S + SIGMA**2 * np.eye(2)
    diff = Y - m
    quad = np.einsum("ni,ij,nj->n", diff, np.linalg.inv(A), diff)
    v0 = np.linalg.det(np.eye(2) + S / SIGMA**2) ** -0.5 * np.exp(-0.5 * quad)
    np.testing.assert_allclose(log_v0, np.log(v0), rtol=1e-12)
    np.testing.assert_allclose(r + Y, m + diff @ np.linalg.solve(A, S).T, rtol=1e-10)


def test_spherical_radial_rule_integrates_radial_moments_exactly():
    d = 3
    z, log_w = _spherical_radial_rule(jax.random.key(0), 4, 3, d, (1,), jnp.float64)
    w = np.exp(np.asarray(log_w))
    r2 = (np.asarray(z[0]) ** 2).sum(-1)
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert w @ r2 == pytest.approx(d, rel=1e-12)
    assert w @ r2**2 == pytest.approx(d * (d + 2), rel=1e-12)
    assert w @ r2**3 == pytest.approx(d * (d + 2) * (d + 4), rel=1e-12)


def test_msip_vmaps_over_keys_and_step_sizes():
    Y0 = jnp.asarray(RNG.normal(size=(6, 2)))
    keys = jax.random.split(jax.random.key(3), 2)
    hs = jnp.array([0.2, 0.6])
    batch = jax.vmap(lambda k, h: M.msip(k, Y0, FRED, num_steps=5, step_size=h, lengthscale=0.7)[0].particles)(keys, hs)
    one = M.msip(keys[1], Y0, FRED, num_steps=5, step_size=hs[1], lengthscale=0.7)[0].particles
    np.testing.assert_allclose(batch[1], one, rtol=1e-12, atol=1e-12)
    assert not np.allclose(batch[0], batch[1])


def test_quantile_bandwidth_rule_and_bounds():
    Y0 = jnp.asarray(RNG.normal(size=(6, 2)))
    # 4 steps: at the 5th, the clamp has put every particle on two corners, the 0.3-quantile bandwidth is 0 and
    # the Gram matrix raises (it used to turn into NaN silently)
    _, trace = M.msip(jax.random.key(0), Y0, FRED, num_steps=4, step_size=0.5, lengthscale_rule=0.3,
                      bounds=(-0.4, 0.4), return_trajectory=True)
    P = np.asarray(trace.states.particles)
    assert P.min() >= -0.4 and P.max() <= 0.4
    for t in range(4):
        iu = np.triu_indices(6, 1)
        dist = np.sqrt(((P[t][:, None] - P[t][None]) ** 2).sum(-1))[iu]
        assert float(trace.infos.lengthscale[t]) == pytest.approx(np.quantile(dist, 0.3), rel=1e-10)


def test_mean_shift_vmaps_over_starting_points_and_finds_modes():
    X = jnp.concatenate([jnp.zeros((20, 1)) - 3.0, jnp.zeros((20, 1)) + 3.0]) + 0.1 * jnp.asarray(
        RNG.normal(size=(40, 1)))
    est = M.empirical_estimator(X)
    starts = jnp.array([[-1.0], [2.0]])
    ys, _ = jax.vmap(lambda y: M.mean_shift(jax.random.key(0), y, est, num_steps=50, lengthscale=0.5))(starts)
    np.testing.assert_allclose(ys[:, 0], [X[:20, 0].mean(), X[20:, 0].mean()], atol=1e-3)


def _wfr_setup():
    X = jnp.asarray(RNG.normal(size=(30, 2)))
    est = M.empirical_estimator(X)
    Y0 = jnp.asarray(RNG.normal(size=(5, 2)))
    w0 = jnp.full(5, 0.2)
    return X, est, Y0, w0


def test_wfr_vector_field_is_the_scaled_mmd_gradient():
    _, est, Y0, w0 = _wfr_setup()
    sigma, alpha = 0.9, 2.5

    def F(Yw):
        Yy, w = Yw
        v0 = jnp.exp(est(None, Yy, sigma)[0])
        K = jnp.exp(-((Yy[:, None] - Yy[None]) ** 2).sum(-1) / (2 * sigma**2))
        return w @ K @ w - 2 * w @ v0

    gY, gw = jax.jit(jax.grad(F))((Y0, w0))
    dY, dw = jax.jit(lambda Yw: M.wfr_vector_field(0.0, Yw, M.WFRArgs(est, sigma, alpha)))((Y0, w0))
    np.testing.assert_allclose(dY, -alpha * gY / (2 * w0[:, None]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, -w0 * gw / 2, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_wfr_ode_decreases_mmd_monotonically():
    X, est, Y0, w0 = _wfr_setup()
    sigma = 0.9
    sol = diffrax.diffeqsolve(diffrax.ODETerm(M.wfr_vector_field), diffrax.Tsit5(), 0.0, 5.0, 0.05, (Y0, w0),
                              args=M.WFRArgs(est, sigma, 1.0), saveat=diffrax.SaveAt(ts=jnp.linspace(0, 5, 11)))

    def mmd2(Yy, w):
        K = lambda A, B: jnp.exp(-((A[:, None] - B[None]) ** 2).sum(-1) / (2 * sigma**2))  # noqa: E731
        return w @ K(Yy, Yy) @ w - 2 * w @ K(Yy, X).mean(1) + K(X, X).mean()

    vals = np.asarray(jax.jit(jax.vmap(mmd2))(*sol.ys))
    assert np.all(np.diff(vals) < 0)
    assert vals[-1] < 0.5 * vals[0]


def test_checks_report_the_failing_particle():
    def lp_cut(x):
        return jnp.where(x[0] < 1.0, -0.5 * (x[0] - 5.0) ** 2, -jnp.inf)

    est = M.fredholm_estimator(lp_cut, gamma=1.0)
    Y0 = jnp.array([[-3.0], [0.5]])
    with pytest.raises(Exception, match="particle 1 after step 1"):
        M.msip(jax.random.key(0), Y0, est, num_steps=2, step_size=1.0, lengthscale=0.5, checks=True)


# ------------------------------------------------------------------------------------------------- bad inputs

GOOD = jnp.asarray(RNG.normal(size=(4, 2)))


@pytest.mark.parametrize(
    ("Y0", "kwargs", "exc", "match"),
    [
        (GOOD[0], {}, ValueError, "Y0 must be 2-dimensional"),
        (np.ones((4, 2), dtype=np.int32), {}, TypeError, "Y0 must have a float dtype"),
        (GOOD.at[1, 0].set(jnp.nan), {}, ValueError, "Y0 must be finite"),
        (jnp.zeros((0, 2)), {}, ValueError, "N >= 1 rows"),
        (GOOD, {"lengthscale": 0.0}, ValueError, "lengthscale must be > 0"),
        (GOOD, {"lengthscale": jnp.inf}, ValueError, "lengthscale must be > 0 and finite"),
        (GOOD, {"lengthscale_rule": 1.5}, ValueError, r"lengthscale_rule must lie in \[0.0, 1.0\]"),
        (GOOD, {"step_size": 0.0}, ValueError, r"step_size must lie in \(0.0, 1.0\]"),
        (GOOD, {"step_size": 1.5}, ValueError, r"step_size must lie in \(0.0, 1.0\]"),
        (GOOD, {"jitter": -1e-3}, ValueError, "jitter must be >= 0"),
        (GOOD, {"num_steps": -1}, ValueError, "num_steps must be >= 0"),
        (GOOD, {"bounds": (1.0, -1.0)}, ValueError, "lo < hi"),
        (GOOD.at[2].set(GOOD[0]), {"jitter": 0.0}, ValueError, "particles 0 and 2 coincide"),
    ],
)
def test_msip_rejects_bad_inputs(Y0, kwargs, exc, match):
    kw = {"num_steps": 3, **kwargs}
    with pytest.raises(exc, match=match):
        M.msip(jax.random.key(0), Y0, FRED, **kw)


def test_estimator_factories_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"gamma must lie in \[0.0, 1.0\]"):
        M.fredholm_estimator(lp, gamma=1.5)
    with pytest.raises(ValueError, match="n_quad must be >= 1"):
        M.gradient_free_estimator(lp, n_quad=0)
    with pytest.raises(ValueError, match="quadrature must be 'mc', 'spherical_radial'"):
        M.gradient_free_estimator(lp, quadrature="sobol")
    z, w = gauss_hermite(3, 2)
    with pytest.raises(ValueError, match="weights must be nonnegative"):
        M.gradient_free_estimator(lp, quadrature=(z, w.at[0].set(-0.1)))
    with pytest.raises(ValueError, match="must sum to 1"):
        M.gradient_free_estimator(lp, quadrature=(z, 2 * w))
    with pytest.raises(ValueError, match=r"quadrature weights must have shape \(9\)"):
        M.gradient_free_estimator(lp, quadrature=(z, w[:4]))


def test_shape_mismatches_raise_at_trace_time():
    est3 = M.gradient_free_estimator(lp, quadrature=gauss_hermite(3, 3))
    with pytest.raises(ValueError, match=r"quadrature nodes must have shape \(Q, 2\)"):
        M.msip(jax.random.key(0), GOOD, est3, num_steps=1)
    with pytest.raises(ValueError, match="log_density must return a scalar per point"):
        M.msip(jax.random.key(0), GOOD, M.fredholm_estimator(lambda x: x), num_steps=1)
    with pytest.raises(ValueError, match="grad_log_density must return shape"):
        M.msip(jax.random.key(0), GOOD, M.fredholm_estimator(lp, grad_log_density=lambda x: x[:1]), num_steps=1)
    with pytest.raises(ValueError, match="particles must have 3 columns like data"):
        M.msip(jax.random.key(0), GOOD, M.empirical_estimator(jnp.ones((5, 3))), num_steps=1)


def test_non_finite_log_density_at_initial_particle_raises():
    def lp_box(x):
        return jnp.where(jnp.all(jnp.abs(x) < 2.0), lp(x), -jnp.inf)

    Y0 = GOOD.at[2].set(jnp.array([3.0, 0.0]))
    with pytest.raises(ValueError, match="not finite around initial particle 2"):
        M.msip_init(Y0, M.fredholm_estimator(lp_box), lengthscale=0.5, key=jax.random.key(0))


def test_msip_map_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"log_v0 must have shape \(7\)"):
        M.msip_map(Y, LOG_V0[:5], R, lengthscale=SIGMA)
    with pytest.raises(ValueError, match=r"r must have shape \(7, 2\)"):
        M.msip_map(Y, LOG_V0, R[:, :1], lengthscale=SIGMA)
