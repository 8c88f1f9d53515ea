"""Conditional flow matching: Gaussian closed forms, Euler on straight flows, Sinkhorn marginals and its
convergence to the exact assignment, OT vs independent couplings, the time-convention wrappers, bad inputs."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

from jaxlab.generative import flow_matching as FM


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
def test_min_loss_closed_form_and_monte_carlo(s):
    quad, _ = scipy.integrate.quad(lambda t: s**2 / ((1 - t) ** 2 + t**2 * s**2), 0, 1)
    np.testing.assert_allclose(quad, FM.gaussian_min_loss(s), rtol=1e-10)
    m, n = 1.5, 200_000
    k0, k1, k2 = jax.random.split(jax.random.key(0), 3)
    x0 = jax.random.normal(k0, (n, 1))
    x1 = m + s * jax.random.normal(k1, (n, 1))
    loss = FM.cfm_loss(lambda x, t, c: FM.gaussian_optimal_velocity(x, t, m, s), k2, x0, x1)
    np.testing.assert_allclose(float(loss), s * np.pi / 2, rtol=0.02)


def test_euler_gaussian_velocity_values_and_diffrax():
    u = lambda x, t, c: FM.gaussian_optimal_velocity(x, t, 2.0, 0.5)  # noqa: E731
    z = jnp.array([1.0])
    assert float(FM.ode_sample(u, z, num_steps=1)[0]) == pytest.approx(2.0, abs=1e-12)
    assert float(FM.ode_sample(u, z, num_steps=4)[0]) == pytest.approx(2.34054, abs=1e-5)
    assert float(FM.ode_sample(u, z, num_steps=100)[0]) == pytest.approx(2.49265, abs=1e-5)
    assert float(FM.ode_sample(u, z, num_steps=100, method="midpoint")[0]) == pytest.approx(2.5, abs=1e-3)
    assert float(FM.ode_sample(u, z, method="diffrax", rtol=1e-8, atol=1e-8)[0]) == pytest.approx(2.5, abs=1e-6)


@pytest.mark.parametrize("n_steps", [1, 3, 10])
def test_euler_exact_on_the_straight_ot_flow(n_steps):
    # Monotone (OT) coupling z -> m + s z: x_t = t m + (1 - t + t s) z, u = m + (s - 1)(x - t m)/(1 - t + t s).
    m, s = 2.0, 0.5
    u = lambda x, t, c: m + (s - 1) * (x - t * m) / (1 - t + t * s)  # noqa: E731
    z = jnp.linspace(-2.0, 2.0, 5)
    x1, traj = jax.vmap(lambda zi: FM.ode_sample(u, zi, num_steps=n_steps, return_traj=True))(z)
    np.testing.assert_allclose(x1, m + s * z, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(FM.path_length_ratio)(traj[:, :, None]), 1.0, atol=1e-12)


def test_cfm_path_kinds():
    k0, k1, k2 = jax.random.split(jax.random.key(1), 3)
    x0, x1 = jax.random.normal(k0, (4, 3)), jax.random.normal(k1, (4, 3))
    t = jnp.array([0.0, 0.25, 0.5, 1.0])
    xt, ut = FM.cfm_path(x0, x1, t)
    np.testing.assert_allclose(xt, t[:, None] * x1 + (1 - t[:, None]) * x0)
    np.testing.assert_allclose(ut, x1 - x0)
    xl, ul = FM.cfm_path(x0, x1, t, kind="lipman_ot")
    np.testing.assert_allclose(xl, xt)
    xl, ul = FM.cfm_path(x0, x1, t, sigma=0.1, kind="lipman_ot")
    np.testing.assert_allclose(xl, (1 - 0.9 * t[:, None]) * x0 + t[:, None] * x1)
    np.testing.assert_allclose(ul, x1 - 0.9 * x0)
    xi = jax.random.normal(k2, (4, 3))
    xs, _ = FM.cfm_path(x0, x1, 0.5, sigma=0.2, noise=xi)
    np.testing.assert_allclose(xs, 0.5 * (x0 + x1) + 0.2 * xi)


def _cost_problem(B=64, seed=0):
    r = np.random.default_rng(seed)
    x0, x1 = r.normal(size=(B, 1)), 3 + r.normal(size=(B, 1))
    C = (x0 - x1.T) ** 2
    rows, cols = scipy.optimize.linear_sum_assignment(C)
    return jnp.asarray(x0), jnp.asarray(x1), C, C[rows, cols].sum() / B, cols


def test_exact_1d_and_scipy_pairings_match_hungarian():
    x0, x1, _, _, cols = _cost_problem()
    p1 = FM.ot_pairing(None, x0, x1, method="exact_1d")
    np.testing.assert_array_equal(p1, cols)
    p2 = jax.jit(lambda a, b: FM.ot_pairing(None, a, b, method="exact_scipy"))(x0, x1)
    np.testing.assert_array_equal(p2, cols)
    assert sorted(np.asarray(p1).tolist()) == list(range(64))


def test_sinkhorn_marginals_and_convergence_to_exact_cost():
    _, _, C, exact, _ = _cost_problem()
    C = jnp.asarray(C)
    excess = []
    for rel, iters in ((0.2, 200), (0.05, 500), (0.01, 2000)):
        P, _, _ = FM.sinkhorn_log(C, rel * float(jnp.mean(C)), iters)
        np.testing.assert_allclose(P.sum(0), 1 / 64, rtol=1e-8)  # the last update fits the column marginal
        np.testing.assert_allclose(P.sum(1), 1 / 64, rtol=1e-3)
        excess.append(float(jnp.sum(P * C)) / exact - 1)
    assert excess[0] > excess[1] > excess[2] >= -1e-9
    assert excess[2] < 0.01
    # Rectangular marginals a = 1/n, b = 1/m.
    P, _, _ = FM.sinkhorn_log(C[:16], 1.0, 300)
    np.testing.assert_allclose(P.sum(1), 1 / 16, rtol=1e-6)
    np.testing.assert_allclose(P.sum(0), 1 / 64, rtol=1e-6)


def test_sinkhorn_pairing_close_to_exact_cost():
    x0, x1, _, exact, _ = _cost_problem()
    perm = FM.ot_pairing(jax.random.key(0), x0, x1, method="sinkhorn", epsilon=0.01, n_iters=1000)
    cost = float(jnp.mean(jnp.sum((x0 - x1[perm]) ** 2, axis=1)))
    # Sampled partners may repeat (not a permutation), so the cost can fall on either side of the exact one.
    assert abs(cost / exact - 1) < 0.1
    ind = float(jnp.mean(jnp.sum((x0 - x1) ** 2, axis=1)))
    assert ind > 1.1 * exact


def test_ot_coupling_removes_the_conditional_variance():
    # With the monotone pairing the straight OT velocity fits exactly (loss -> 0); with the independent coupling
    # the optimum is s pi / 2.
    m, s, n = 3.0, 0.5, 4096
    k0, k1, k2 = jax.random.split(jax.random.key(2), 3)
    x0, x1 = jax.random.normal(k0, (n, 1)), m + s * jax.random.normal(k1, (n, 1))
    u_ot = lambda x, t, c: m + (s - 1) * (x - t * m) / (1 - t + t * s)  # noqa: E731
    ot = float(FM.cfm_loss(u_ot, k2, x0, x1, coupling="ot_exact"))
    ind = float(FM.cfm_loss(lambda x, t, c: FM.gaussian_optimal_velocity(x, t, m, s), k2, x0, x1))
    assert ot < 0.01 and abs(ind / (s * np.pi / 2) - 1) < 0.06


def test_ot_pairs_stay_within_condition_groups():
    seen = []

    def model(x, t, c):
        seen.append(c)
        return jnp.zeros_like(x)

    r = np.random.default_rng(3)
    x0 = jnp.asarray(r.normal(size=(8, 2)))
    cond = jnp.asarray(np.repeat([[0.0], [1.0]], 4, axis=0))
    x1 = jnp.asarray(r.normal(size=(8, 2))) + 10 * cond  # group 1 far away: plain OT would not care
    for coupling in ("ot_exact", "ot_sinkhorn"):
        loss = FM.cfm_loss(model, jax.random.key(0), x0, x1, cond, coupling=coupling)
        assert np.isfinite(float(loss))
    # Direct check of the cost the loss builds: the within-group optimum never crosses groups.
    cost = np.asarray(FM._sq_cost(x0, x1)) + 1e6 * (np.asarray(FM._sq_cost(cond, cond)) > 0)
    _, cols = scipy.optimize.linear_sum_assignment(cost)
    assert np.all(np.asarray(cond)[cols, 0] == np.asarray(cond)[:, 0])


def test_conversion_wrappers_give_identical_samplers():
    u = lambda x, t, c: FM.gaussian_optimal_velocity(x, t, 2.0, 0.5)  # noqa: E731
    v = FM.cfm_to_rf_velocity(u)
    x = jnp.linspace(-1, 1, 7)
    np.testing.assert_allclose(v(x, 0.3, None), -u(x, 0.7, None))
    np.testing.assert_allclose(FM.rf_to_cfm_velocity(v)(x, 0.3, None), u(x, 0.3, None))
    # RF Euler written out: sigma_i = 1 - i/N, x <- x + (sigma_{i+1} - sigma_i) v(x, sigma_i).
    sig = np.linspace(1.0, 0.0, 21)
    xr = x
    for a, b in itertools.pairwise(sig):
        xr = xr + (b - a) * v(xr, a, None)
    np.testing.assert_allclose(xr, FM.ode_sample(u, x, num_steps=20), atol=1e-12)


def test_cfm_fit_learns_the_gaussian_shift():
    model = FM.VelocityMLP((1,), width=32, key=jax.random.key(0))

    def sample(k):
        ka, kb = jax.random.split(k)
        return jax.random.normal(ka, (256, 1)), 3 + jax.random.normal(kb, (256, 1)), None

    model, info = FM.cfm_fit(jax.random.key(1), model, sample, num_steps=400)
    assert info.loss.shape == (400,)
    assert float(jnp.mean(info.loss[-50:])) < 0.6 * float(jnp.mean(info.loss[:10]))
    x1 = jax.vmap(lambda z: FM.ode_sample(model, z, num_steps=20))(jax.random.normal(jax.random.key(2), (2000, 1)))
    assert abs(float(jnp.mean(x1)) - 3) < 0.2 and abs(float(jnp.std(x1)) - 1) < 0.2


def test_cfm_fit_takes_an_optax_schedule():
    """A constant schedule gives exactly the constant-rate run; a zero schedule leaves the weights untouched
    (AdamW's decoupled decay is scaled by the rate too)."""
    import optax

    model = FM.VelocityMLP((1,), width=8, depth=1, key=jax.random.key(0))

    def sample(k):
        ka, kb = jax.random.split(k)
        return jax.random.normal(ka, (16, 1)), 3 + jax.random.normal(kb, (16, 1)), None

    def fit(lr):
        return FM.cfm_fit(jax.random.key(1), model, sample, num_steps=5, learning_rate=lr)[0]

    for a, b in zip(jax.tree.leaves(fit(1e-2)), jax.tree.leaves(fit(optax.constant_schedule(1e-2))), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(jax.tree.leaves(fit(optax.constant_schedule(0.0))), jax.tree.leaves(model), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="learning_rate"):
        fit(-1.0)


def test_bad_inputs():
    x = jnp.zeros((4, 2))
    with pytest.raises(ValueError, match="x0 and x1 must have the same shape"):
        FM.cfm_path(x, jnp.zeros((4, 3)), 0.5)
    with pytest.raises(ValueError, match="t must lie in"):
        FM.cfm_path(x, x, 1.5)
    with pytest.raises(ValueError, match="t must be a scalar or have shape"):
        FM.cfm_path(x, x, jnp.zeros(3))
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        FM.cfm_path(x, x, 0.5, sigma=-0.1)
    with pytest.raises(ValueError, match="noise must be given"):
        FM.cfm_path(x, x, 0.5, sigma=0.1)
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        FM.cfm_loss(lambda a, b, c: a, jax.random.key(0), x, x, sigma=-1.0)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        FM.sinkhorn_log(jnp.ones((3, 3)), 0.0, 10)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        FM.ot_pairing(jax.random.key(0), x, x, method="sinkhorn", epsilon=-1.0)
    with pytest.raises(ValueError, match="exact_1d' needs one feature"):
        FM.ot_pairing(None, x, x, method="exact_1d")
    with pytest.raises(ValueError, match="coupling must be one of"):
        FM.cfm_loss(lambda a, b, c: a, jax.random.key(0), x, x, coupling="ot")
    with pytest.raises(ValueError, match="method must be one of"):
        FM.ode_sample(lambda a, b, c: a, x, method="rk4")
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        FM.ode_sample(lambda a, b, c: a, x, num_steps=0)
    with pytest.raises(TypeError, match="x0 must have a float dtype"):
        FM.cfm_path(jnp.zeros((4, 2), int), x, 0.5)


@pytest.mark.parametrize("n_steps", [1, 4, 28])
def test_rf_sampler_on_converted_velocity_equals_cfm_sampler(n_steps):
    # Claim `semantic_flow:rf_and_cfm_conventions_agree`: the RF Euler sampler (sigma 1 -> 0) on
    # cfm_to_rf_velocity(u*) equals the CFM sampler (t 0 -> 1) on u*, and the RF sampler on v equals the CFM
    # sampler on rf_to_cfm_velocity(v).
    from jaxlab.generative import rectified_flow as RF

    u = lambda x, t, c: FM.gaussian_optimal_velocity(x, t, 2.0, 0.5)  # noqa: E731
    z = jnp.linspace(-2.0, 2.0, 9)
    sig = RF.make_sigmas(n_steps)
    rf = RF.euler_sample(FM.cfm_to_rf_velocity(u), z, sig)
    cfm = FM.ode_sample(u, z, num_steps=n_steps)
    np.testing.assert_allclose(rf, cfm, atol=1e-6)
    v = FM.cfm_to_rf_velocity(u)
    np.testing.assert_allclose(RF.euler_sample(v, z, sig), FM.ode_sample(FM.rf_to_cfm_velocity(v), z,
                                                                        num_steps=n_steps), atol=1e-6)
    if n_steps == 1:
        # one Euler step lands on m (claim `semantic_flow:euler_gaussian_closed_form`)
        np.testing.assert_allclose(rf, 2.0 + 0 * z, atol=1e-12)
