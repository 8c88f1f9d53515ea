"""Claims `scaling:collinear_design_inflates_standard_error_of_B` and
`scaling:chinchilla_refit_reproduces_replication_reduced_grid` (and its full grid): the Huber multistart refit of
the Chinchilla data, optimizers against scipy, the asymptotic covariance against curve_fit, CI inflation of
collinear designs, bad inputs."""

import functools
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize

from jaxlab.scaling import fit as F
from jaxlab.scaling.datasets import load_chinchilla
from jaxlab.scaling.designs import collinear_design, factorial_design
from jaxlab.scaling.laws import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates, loss


@functools.cache
def _chinchilla():
    d = load_chinchilla()
    return covariates(d.N, d.D), jnp.log(d.L)


_lm = jax.jit(lambda th, X, y: F.lm_solve("chinchilla", th, X, y))


@functools.cache
def _refit():
    X, log_L = _chinchilla()
    best, everything = F.fit_multistart("chinchilla", F.hoffmann_init_grid(reduced=True), X, log_L, method="lm",
                                        huber_delta=1e-3)
    return best, everything


def test_data_conventions():
    d = load_chinchilla()
    assert d.N.shape == (240,)
    assert load_chinchilla(drop_outliers=False).N.shape == (245,)
    assert F.hoffmann_init_grid().a.shape == (4500,)
    assert F.hoffmann_init_grid(reduced=True).alpha.shape == (243,)


def test_multistart_refit_reproduces_the_replication():
    best, everything = _refit()
    A, B, E, alpha, beta = (float(v) for v in best.theta.to_natural())
    assert float(best.value) == pytest.approx(1.01827e-3, rel=1e-5)
    assert alpha == pytest.approx(0.3473, abs=0.005)
    assert beta == pytest.approx(0.3672, abs=0.006)
    assert E == pytest.approx(1.8172, abs=0.01)
    assert A == pytest.approx(477.8, rel=0.25)
    assert B == pytest.approx(2143, rel=0.25)
    assert float(loss("chinchilla", best.theta, 7e10, 1.4e12)) == pytest.approx(1.9734, abs=0.003)
    # several starts reach the same optimum; the minimum is a real local minimum (gradient ~ 0)
    assert int(jnp.sum(jnp.abs(everything.value - best.value) <= 1e-9 * best.value)) >= 10
    assert float(best.grad_norm) <= 1e-5


def test_compacted_multistart_equals_the_plain_vmapped_one():
    # compaction only changes which starts are computed together: every start's iterates are the same
    X, log_L = _chinchilla()
    _, everything = _refit()  # compact (eager call)
    starts = F.hoffmann_init_grid(reduced=True)
    plain = jax.jit(lambda th: F.fit_multistart("chinchilla", th, X, log_L, method="lm", huber_delta=1e-3)[1])
    ref = plain(starts)  # under jit: the vmapped while_loop
    np.testing.assert_array_equal(np.asarray(everything.steps), np.asarray(ref.steps))
    np.testing.assert_allclose(np.asarray(everything.value), np.asarray(ref.value), rtol=1e-12)
    with pytest.raises(ValueError, match="outside jit"):
        jax.jit(lambda th: F.fit_multistart("chinchilla", th, X, log_L, method="lm", compact=True)[0].value)(starts)
    with pytest.raises(TypeError, match="unexpected keyword"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="lm", delta=1e-3)
    with pytest.raises(ValueError, match="max_steps"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="lm", max_steps=0)
    with pytest.raises(ValueError, match="lam0"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="lm", lam0=-1.0)


def test_multistart_groups_on_threads_follow_the_same_iterations():
    # the starts split into contiguous groups, each run in its own pool by its own host thread: every start's
    # iterations are those of the single pool (and of the plain vmapped loop), in the order of the starts
    X, log_L = _chinchilla()
    starts = F.hoffmann_init_grid(reduced=True)
    opts = F._multistart_options("lm", dict(huber_delta=1e-3))
    fn = F.resolve_law("chinchilla")
    one = F._compact_multistart(fn, "lm", opts, starts, X, log_L, groups=1)
    three = F._compact_multistart(fn, "lm", opts, starts, X, log_L, groups=3)
    np.testing.assert_array_equal(np.asarray(three.steps), np.asarray(one.steps))
    np.testing.assert_allclose(np.asarray(three.value), np.asarray(one.value), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(three.converged), np.asarray(one.converged))
    for a, b in zip(three.theta, one.theta, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9)


def test_compacted_lbfgs_multistart_equals_the_plain_vmapped_one():
    # L-BFGS compacts too (the default outside jit); 12 starts: buckets of 12 and 3 starts
    X, log_L = _chinchilla()
    starts = jax.tree.map(lambda a: a[::20][:12], F.hoffmann_init_grid(reduced=True))
    _, everything = F.fit_multistart("chinchilla", starts, X, log_L, max_steps=300)
    ref = jax.jit(lambda th: F.fit_multistart("chinchilla", th, X, log_L, max_steps=300)[1])(starts)
    assert int(np.max(np.asarray(everything.steps))) > 2 * int(np.min(np.asarray(everything.steps)))
    # the same iterations up to rounding (the step is compiled into another program); a start given another
    # start's result would differ by far more
    np.testing.assert_allclose(np.asarray(everything.value), np.asarray(ref.value), rtol=1e-10)
    for a, b in zip(everything.theta, ref.theta, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    with pytest.raises(TypeError, match="unexpected keyword"):
        F.fit_multistart("chinchilla", starts, X, log_L, huber_delta=1e-3)


def test_lbfgs_and_scipy_reach_the_same_huber_optimum():
    X, log_L = _chinchilla()
    best, _ = _refit()
    # a start in the basin of the global optimum (the Huber surface has other local minima, e.g. ~1.0208e-3)
    theta0 = ChinchillaParams(*(v + d for v, d in zip(best.theta, (0.3, -0.3, 0.05, 0.02, -0.02), strict=True)))
    ours = jax.jit(lambda th: F.fit_lbfgs("chinchilla", th, X, log_L))(theta0)
    f = jax.jit(jax.value_and_grad(lambda v: F.objective("chinchilla", ChinchillaParams(*v), X, log_L)))
    res = optimize.minimize(lambda v: tuple(np.asarray(t) for t in f(jnp.asarray(v))), np.array(theta0),
                            jac=True, method="L-BFGS-B", options=dict(maxiter=2000, ftol=1e-15, gtol=1e-12))
    assert bool(ours.converged)
    assert float(ours.value) == pytest.approx(res.fun, rel=1e-7)
    assert float(ours.value) == pytest.approx(float(best.value), rel=1e-7)


def test_huber_matches_scipy_rho():
    r = np.linspace(-0.01, 0.01, 41)
    delta = 1e-3
    # scipy's least_squares(loss="huber", f_scale=delta) rho(z), z = (r / f_scale)^2, cost = f_scale^2 rho / 2
    rho = importlib.import_module("scipy.optimize._lsq.least_squares").huber
    z = (r / delta) ** 2
    rho_z = np.empty((3, r.size))
    rho(z, rho_z, cost_only=False)
    np.testing.assert_allclose(np.asarray(F.huber(r, delta)), 0.5 * delta**2 * rho_z[0], rtol=1e-13, atol=1e-20)


def _synthetic(N, D, noise, seed=0):
    X = covariates(N, D)
    clean = chinchilla_log_loss(HOFFMANN_2022, X)
    return X, clean + noise * jax.random.normal(jax.random.key(seed), clean.shape)


def test_asymptotic_covariance_matches_curve_fit():
    N, D = factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0]))
    X, log_L = _synthetic(N, D, 0.01)
    fitted = _lm(HOFFMANN_2022, X, log_L)
    v0 = np.array(fitted.theta)
    model_j = jax.jit(lambda v: chinchilla_log_loss(ChinchillaParams(*v), X))
    jac_j = jax.jit(lambda v: F.jacobian("chinchilla", ChinchillaParams(*v), X))
    model = lambda _, *v: np.asarray(model_j(jnp.asarray(v)))  # noqa: E731
    jac = lambda _, *v: np.asarray(jac_j(jnp.asarray(v)))  # noqa: E731
    popt, pcov = optimize.curve_fit(model, None, np.asarray(log_L), p0=v0, jac=jac, method="lm")
    np.testing.assert_allclose(popt, v0, rtol=1e-6)
    ours = np.asarray(F.asymptotic_covariance("chinchilla", ChinchillaParams(*popt), X, log_L))
    np.testing.assert_allclose(ours, pcov, rtol=1e-6)


def test_collinear_design_inflates_standard_errors():
    n9 = jnp.logspace(8, 10, 9)
    designs = {"collinear": collinear_design(jnp.tile(n9, 3), 20.0),
               "diverse": factorial_design(n9, jnp.array([5.0, 20.0, 80.0]))}
    se = {}
    for name, (N, D) in designs.items():
        X = covariates(N, D)
        L_true = jnp.exp(chinchilla_log_loss(HOFFMANN_2022, X))
        L_obs = L_true + 0.01 * jax.random.normal(jax.random.key(3), L_true.shape)
        cov = F.asymptotic_covariance("chinchilla", HOFFMANN_2022, X, jnp.log(L_obs))
        se[name] = np.sqrt(np.diag(np.asarray(cov)))  # order a, b, e, alpha, beta; SE(ln B) = SE(B)/B
    ratio = se["collinear"] / se["diverse"]
    assert ratio[1] >= 100, ratio  # B
    assert ratio[0] >= 100, ratio  # A


def test_lm_trace_is_monotone_and_recovers_noise_free_truth():
    N, D = factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0]))
    X, log_L = _synthetic(N, D, 0.0)
    start = ChinchillaParams(*(jnp.asarray(v) for v in (5.0, 5.0, 0.3, 0.3, 0.3)))
    res, trace = F.lm_run("chinchilla", start, X, log_L, 60)
    vals = np.asarray(trace.infos)
    assert np.all(np.diff(vals) <= 0)
    np.testing.assert_allclose(np.array(res.theta), np.array(HOFFMANN_2022), rtol=1e-6)


@pytest.mark.slow
def test_lbfgs_run_trace_decreases():
    N, D = factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0]))
    X, log_L = _synthetic(N, D, 0.0)
    start = ChinchillaParams(*(jnp.asarray(v) for v in (5.0, 5.0, 0.3, 0.3, 0.3)))
    res, trace = F.lbfgs_run("chinchilla", start, X, log_L, 20)
    assert np.all(np.diff(np.asarray(trace.infos)) <= 0)
    assert float(res.value) < 1e-3 * float(F.objective("chinchilla", start, X, log_L))


@pytest.mark.slow
def test_bootstrap_spread_matches_asymptotic_errors():
    N, D = factorial_design(jnp.logspace(8, 10, 9), jnp.array([5.0, 20.0, 80.0]))
    X, log_L = _synthetic(N, D, 0.01, seed=5)
    theta = _lm(HOFFMANN_2022, X, log_L).theta
    boot = F.bootstrap(jax.random.key(0), "chinchilla", theta, X, log_L, num=64, delta=None)
    sd = np.std(np.stack([np.asarray(v) for v in boot], axis=1), axis=0)
    se = np.sqrt(np.diag(np.asarray(F.asymptotic_covariance("chinchilla", theta, X, log_L))))
    assert np.all((sd / se > 0.5) & (sd / se < 2.0)), sd / se


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda X, y: F.objective("chinchilla", HOFFMANN_2022, X, y, delta=0.0), "delta must be > 0"),
        (lambda X, y: F.huber(jnp.ones(3), -1.0), "delta must be > 0"),
        (lambda X, y: F.objective("chinchilla", HOFFMANN_2022, X, y[:5]), "log_L must have shape"),
        (lambda X, y: F.objective("chinchilla", HOFFMANN_2022, X, y.at[2].set(jnp.nan)), "log_L must be finite"),
        (lambda X, y: F.fit_lbfgs("chinchilla", HOFFMANN_2022, covariates(X[0][:4] * 0 + 1e9, X[1][:4] * 0 + 1e10),
                                  y[:4]), "at least as many data points as parameters"),
        (lambda X, y: F.asymptotic_covariance("chinchilla", HOFFMANN_2022, X._replace(log_N=X[0][:5], log_D=X[1][:5]),
                                              y[:5]), "more data points than parameters"),
        (lambda X, y: F.fit_multistart("chinchilla", F.hoffmann_init_grid(reduced=True), X, y, method="newton"),
         "method must be"),
        (lambda X, y: F.fit_multistart("gpt", F.hoffmann_init_grid(reduced=True), X, y), "law must be one of"),
        (lambda X, y: F.hoffmann_init_grid("kaplan"), "chinchilla"),
    ],
)
def test_bad_inputs_raise(call, match):
    X, log_L = _synthetic(*factorial_design(jnp.logspace(8, 10, 3), jnp.array([5.0, 20.0])), 0.0)
    with pytest.raises((ValueError, TypeError), match=match):
        call(X, log_L)


def test_loader_rejects_malformed_rows(tmp_path):
    good = "Model Size,Training FLOP,loss\n" + "\n".join(f"{1e8 * (i + 1)},{1e19 * (i + 1)},{3 - 0.1 * i}"
                                                         for i in range(8))
    (tmp_path / "ok.csv").write_text(good)
    assert load_chinchilla(tmp_path / "ok.csv").N.shape == (3,)
    for bad, match in [("1e8,abc,2.5", "line 10: column 'Training FLOP' must be a number"),
                       ("1e8,1e19,nan", "line 10: column 'loss' must be finite and > 0"),
                       ("-1e8,1e19,2.5", "line 10: column 'Model Size' must be finite and > 0"),
                       ("1e8,1e19", "line 10: column 'loss' must be a number")]:
        (tmp_path / "bad.csv").write_text(good + "\n" + bad)
        with pytest.raises(ValueError, match=match):
            load_chinchilla(tmp_path / "bad.csv")
    (tmp_path / "cols.csv").write_text("N,C,loss\n1,2,3\n")
    with pytest.raises(ValueError, match="missing column"):
        load_chinchilla(tmp_path / "cols.csv")
