import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.multiscale import (
    MSIMConfig,
    lr_schedule,
    msim_forward,
    run_online_sgd,
    sample_features,
    sgd_init,
    spherical_step,
    strong_recovery,
    weak_recovery_time,
)

D = 32
CFG = MSIMConfig(D, 2, ("tanh", "tanh"))
T_W = int(10 * D * math.log(D) ** 2)  # 3843 steps
T_W -= T_W % 8
T_S = 100 * D


def test_gradient_matches_autodiff_and_step_stays_on_the_sphere():
    d = 5
    cfg = MSIMConfig(d, 2, ("tanh", "he12"))
    ws = sample_features(jax.random.key(0), d, 2)
    st = sgd_init(jax.random.key(1), d)
    x = jax.random.normal(jax.random.key(2), (d * d,))
    y = msim_forward(ws, x, cfg)
    loss = lambda u: 0.5 * (msim_forward(u, x, cfg) - y) ** 2  # noqa: E731
    g = jax.grad(loss)(st.u)
    g = g - jnp.sum(g * st.u, 1, keepdims=True) * st.u
    eta = 1e-3
    new, info = spherical_step(st, x, y, eta, cfg)
    expected = (st.u - eta * g) / jnp.linalg.norm(st.u - eta * g, axis=1, keepdims=True)
    np.testing.assert_allclose(new.u, expected, atol=1e-13)
    np.testing.assert_allclose(jnp.linalg.norm(new.u, axis=1), 1.0, atol=1e-14)
    assert int(new.step) == 1 and float(info.loss) == pytest.approx(float(loss(st.u)), rel=1e-12)


def test_lr_schedule_two_phases():
    s = lr_schedule(D, 0.3, 100, 0.2)
    assert float(s(0)) == pytest.approx(0.3 / (D * math.log(D)))
    assert float(s(99)) == pytest.approx(0.3 / (D * math.log(D)))
    assert float(s(100)) == pytest.approx(0.2 / D)


@pytest.fixture(scope="module")
def tanh_runs():
    ws = sample_features(jax.random.key(42), D, 2)
    sched = lr_schedule(D, 0.3, T_W, 0.2)
    runner = jax.jit(jax.vmap(lambda k: run_online_sgd(k, ws, CFG, T_W + T_S, sched, record_every=8)))
    return runner(jax.random.split(jax.random.key(7), 3))


def test_sgd_weak_then_strong_recovery_with_tanh_links(tanh_runs):
    _, traj = tanh_runs
    t_w = jax.vmap(lambda tr: weak_recovery_time(tr, 0.25, 8))(traj)
    assert bool(jnp.all((t_w > 0) & (t_w <= T_W))), t_w
    assert bool(jnp.all(jax.vmap(lambda tr: strong_recovery(tr, 1e-3))(traj)))
    # start near d^{-1/2}
    assert float(jnp.max(jnp.abs(traj[:, 0]))) < 0.5


def test_run_is_deterministic_and_records_every_k_steps():
    ws = sample_features(jax.random.key(0), 4, 2)
    cfg = MSIMConfig(4, 2, ("linear", "linear"))
    a = run_online_sgd(jax.random.key(3), ws, cfg, 40, 0.05, record_every=10)
    b = run_online_sgd(jax.random.key(3), ws, cfg, 40, 0.05, record_every=10)
    assert a[1].shape == (4, 2)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(a[1][-1], jnp.sum(a[0].u * ws, 1), rtol=1e-14)


def test_bad_inputs():
    ws = sample_features(jax.random.key(0), 4, 3)
    with pytest.raises(ValueError, match="two-layer model"):
        run_online_sgd(jax.random.key(0), ws, MSIMConfig(4, 3, ("linear",) * 3), 10, 0.1)
    ws2 = ws[:2]
    cfg = MSIMConfig(4, 2, ("linear", "linear"))
    with pytest.raises(ValueError, match="schedule must be > 0"):
        run_online_sgd(jax.random.key(0), ws2, cfg, 10, -0.1)
    with pytest.raises(ValueError, match="schedule must return finite step sizes"):
        run_online_sgd(jax.random.key(0), ws2, cfg, 10, lambda t: jnp.nan * t)
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        spherical_step(sgd_init(jax.random.key(0), 4), jnp.ones(16), 0.0, 0.0, cfg)
    with pytest.raises(ValueError, match="multiple of record_every"):
        run_online_sgd(jax.random.key(0), ws2, cfg, 10, 0.1, record_every=3)


def test_kronecker_direction_is_the_linear_model():
    """For linear links y = <w_K ⊗ ... ⊗ w_1, x> exactly (w_1 on the fastest index)."""
    from jaxlab.multiscale import kronecker_direction

    for d, K in ((4, 2), (3, 3)):
        ws = sample_features(jax.random.key(K), d, K)
        x = jax.random.normal(jax.random.key(7), (d**K,))
        y = msim_forward(ws, x, MSIMConfig(d, K, ("linear",) * K))
        np.testing.assert_allclose(y, kronecker_direction(ws) @ x, rtol=1e-12)
        assert abs(float(jnp.linalg.norm(kronecker_direction(ws))) - 1.0) < 1e-12


def test_shallow_sgd_needs_of_order_d_to_the_k_samples():
    """Linear links, K = 2, d = 8 (64 unknowns): well aligned after 40 d^2 steps, still far at d^2 / 4."""
    from jaxlab.multiscale import run_shallow_sgd

    cfg = MSIMConfig(8, 2, ("linear", "linear"))
    ws = sample_features(jax.random.key(3), 8, 2)
    run = jax.jit(jax.vmap(lambda k: run_shallow_sgd(k, ws, cfg, 40 * 64, 1.0 / 64, 16)[1]))
    traj = run(jax.random.split(jax.random.key(4), 3))
    assert traj.shape == (3, 40 * 64 // 16)
    assert float(jnp.min(traj[:, -1])) > 0.95
    assert float(jnp.max(traj[:, 64 // 4 // 16 - 1])) < 0.6
    with pytest.raises(ValueError, match="multiple of record_every"):
        run_shallow_sgd(jax.random.key(0), ws, cfg, 10, 0.1, record_every=3)


def _synthetic_steps(law, seed=0, num_seeds=16):
    """Weak-recovery times following ``law(d)`` with a 10 % log-normal seed scatter, at the claim's block sizes."""
    from jaxlab.multiscale.claims import _SCALING_DS

    rng = np.random.default_rng(seed)
    ds = np.array(_SCALING_DS, dtype=float)
    return _SCALING_DS, law(ds)[:, None] * np.exp(0.1 * rng.standard_normal((len(ds), num_seeds)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scaling_verdict_accepts_d_log2_d_with_its_correction(seed):
    from jaxlab.multiscale.claims import _C_W, _scaling_verdict, _weak_recovery_scaling

    # T = d log d (½ log d - ½ log 3) / c_w: the linearised dynamics' law, α = ½ exactly
    ds, steps = _synthetic_steps(lambda d: d * np.log(d) * (0.5 * np.log(d) - 0.5 * np.log(3)) / _C_W, seed)
    fit = _weak_recovery_scaling(ds, steps)
    assert _scaling_verdict(fit)


@pytest.mark.parametrize("name, law", [
    ("d log d", lambda d: 40.0 * d * np.log(d)),
    ("d^2", lambda d: 0.5 * d**2),
    ("d", lambda d: 200.0 * d),
    ("d log^2 d at twice the rate", lambda d: d * np.log(d) * (np.log(d) - np.log(3)) / 0.3),
])
def test_scaling_verdict_rejects_other_laws(name, law):
    from jaxlab.multiscale.claims import _scaling_verdict, _weak_recovery_scaling

    ds, steps = _synthetic_steps(law)
    assert not _scaling_verdict(_weak_recovery_scaling(ds, steps)), name


def test_slope_standard_error_matches_the_seed_scatter():
    from jaxlab.multiscale.claims import _slope_and_se

    # the slope is linear in the per-x means, so its SE over 2000 independent replicates matches the formula
    rng = np.random.default_rng(3)
    x = np.log([16.0, 32.0, 64.0, 128.0])
    sd = np.array([0.3, 0.2, 0.2, 0.25])
    fits = [_slope_and_se(x, 0.5 * x[:, None] + sd[:, None] * rng.standard_normal((4, 16))) for _ in range(2000)]
    slopes, ses = np.array(fits).T
    assert abs(slopes.mean() - 0.5) < 4 * slopes.std() / np.sqrt(2000)
    assert abs(np.sqrt(np.mean(ses**2)) / slopes.std() - 1) < 0.1
