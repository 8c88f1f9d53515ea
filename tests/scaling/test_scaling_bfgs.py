"""BFGS fits (optimistix.BFGS inside ``fit_bfgs`` and ``fit_multistart(method="bfgs")``): the least-squares
optimum of a noise-free problem (the generating parameters, F = 0), the Huber optimum of the Epoch Chinchilla
data against L-BFGS, float32, compacted against plain vmapped multistart, bad inputs."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.scaling import fit as F
from jaxlab.scaling.datasets import load_chinchilla
from jaxlab.scaling.designs import factorial_design
from jaxlab.scaling.laws import HOFFMANN_2022, ChinchillaParams, chinchilla_log_loss, covariates

# the Huber optimum of the Epoch data (Besiroglu et al.), F = 1.0182740178e-3 there, rounded to 3 decimals
_EPOCH_OPTIMUM = (6.169, 7.670, 0.597, 0.347, 0.367)


@functools.cache
def _chinchilla():
    d = load_chinchilla()
    return covariates(d.N, d.D), jnp.log(d.L)


def _noise_free(dtype=jnp.float64):
    N, D = factorial_design(jnp.logspace(8, 10, 4), jnp.array([5.0, 20.0, 80.0]))
    X = covariates(N.astype(dtype), D.astype(dtype))
    truth = jax.tree.map(lambda a: jnp.asarray(a, dtype), HOFFMANN_2022)
    start = ChinchillaParams(*(jnp.asarray(v, dtype) for v in (5.0, 5.0, 0.3, 0.3, 0.3)))
    return X, chinchilla_log_loss(truth, X), start


def test_noise_free_least_squares_reaches_the_generating_parameters():
    # noise-free data: the least-squares optimum is the truth itself, F = 0
    X, log_L, start = _noise_free()
    fit = jax.jit(lambda th: F.fit_bfgs("chinchilla", th, X, log_L, delta=None))(start)
    assert bool(fit.converged)
    assert 0 < int(fit.steps) < 1000
    np.testing.assert_allclose(np.array(fit.theta), np.array(HOFFMANN_2022), rtol=1e-8)
    assert float(fit.value) <= 1e-18
    assert float(fit.grad_norm) == pytest.approx(
        float(jnp.linalg.norm(jnp.stack(jax.grad(lambda th: F.objective("chinchilla", th, X, log_L, None))(
            fit.theta)))), rel=1e-6, abs=1e-14)


def test_float32_follows_the_inputs_and_converges():
    # optimistix's own curvature test (u^T s > eps, absolute) freezes the inverse-Hessian estimate here in
    # float32 (u^T s < 1.2e-7 once F ~ 1e-5) and the fit stalls at F ~ 2e-5 after 1000 steps; fit_bfgs's
    # scale-free test keeps updating it
    X, log_L, start = _noise_free(jnp.float32)
    fit = F.fit_bfgs("chinchilla", start, X, log_L, delta=None)
    assert fit.value.dtype == jnp.float32 and fit.theta.alpha.dtype == jnp.float32
    assert bool(fit.converged) and int(fit.steps) < 300
    np.testing.assert_allclose(np.array(fit.theta), np.array(HOFFMANN_2022), rtol=1e-4)
    X64, log_L64, start64 = _noise_free()
    fit64 = F.fit_bfgs("chinchilla", start64, X64, log_L64, delta=None)
    np.testing.assert_allclose(np.array(fit.theta), np.array(fit64.theta), rtol=1e-4)


def test_epoch_huber_optimum_matches_lbfgs():
    X, log_L = _chinchilla()
    offsets = np.array([[0.3, -0.3, 0.05, 0.02, -0.02], [-0.2, 0.2, -0.05, -0.01, 0.01], [0.0, 0.0, 0.0, 0.0, 0.0]])
    starts = ChinchillaParams(*jnp.asarray(np.array(_EPOCH_OPTIMUM) + offsets).T)
    ours = jax.jit(jax.vmap(lambda th: F.fit_bfgs("chinchilla", th, X, log_L)))(starts)
    ref = jax.jit(jax.vmap(lambda th: F.fit_lbfgs("chinchilla", th, X, log_L)))(starts)
    assert np.all(np.asarray(ours.converged)) and np.all(np.asarray(ref.converged))
    # start by start the same point (the third, at the rounded optimum, ends at a neighbouring point of the
    # piecewise-quadratic Huber surface, F = 1.01827403e-3, for both)
    np.testing.assert_allclose(np.asarray(ours.value), np.asarray(ref.value), rtol=1e-9)
    assert float(jnp.min(ours.value)) == pytest.approx(1.0182740178e-3, rel=1e-9)


def test_compacted_multistart_equals_the_plain_vmapped_one():
    # 12 starts of the reduced grid, spread over several basins: buckets of 12 and 3 starts when compacted
    X, log_L = _chinchilla()
    starts = jax.tree.map(lambda a: a[::20][:12], F.hoffmann_init_grid(reduced=True))
    best, everything = F.fit_multistart("chinchilla", starts, X, log_L, method="bfgs", max_steps=400)
    plain_best, ref = jax.jit(lambda th: F.fit_multistart("chinchilla", th, X, log_L, method="bfgs",
                                                          max_steps=400))(starts)
    steps = np.asarray(everything.steps)
    assert steps.max() > 2 * steps.min()
    # the same iterations up to rounding (the step is compiled into another program; on a flat stretch rounding
    # can move a start's last steps); a start given another start's result would differ by far more
    assert np.mean(steps == np.asarray(ref.steps)) >= 0.75
    np.testing.assert_allclose(np.asarray(everything.value), np.asarray(ref.value), rtol=1e-8)
    assert float(best.value) == pytest.approx(float(plain_best.value), rel=1e-12)
    assert float(best.value) == pytest.approx(float(jnp.min(everything.value)), rel=0)
    # the reduced grid's best start reaches the Huber optimum of the replication
    assert float(best.value) == pytest.approx(1.0182740178e-3, rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(delta=0.0), "delta"),
        (dict(max_steps=0), "max_steps"),
        (dict(tol=-1.0), "tol"),
        (dict(tol=jnp.asarray(1e-10)), "tol"),
        (dict(weights=jnp.ones(3)), "weights"),
    ],
)
def test_bad_arguments_raise_eagerly_and_under_jit(kwargs, match):
    X, log_L, start = _noise_free()
    raises_eager_and_jit(lambda y, **kw: F.fit_bfgs("chinchilla", start, X, y, **kw), log_L, match=match, **kwargs)


def test_bad_data_raise_eagerly_and_under_jit():
    X, log_L, start = _noise_free()
    raises_eager_and_jit(lambda y: F.fit_bfgs("chinchilla", start, X, y), log_L.at[3].set(jnp.nan),
                         match="log_L must be finite")
    raises_eager_and_jit(lambda y: F.fit_bfgs("chinchilla", start, X, y), log_L[:5], match="log_L must have shape")


def test_multistart_validates_bfgs_keywords():
    X, log_L = _chinchilla()
    starts = jax.tree.map(lambda a: a[:2], F.hoffmann_init_grid(reduced=True))
    with pytest.raises(TypeError, match="unexpected keyword"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="bfgs", huber_delta=1e-3)
    with pytest.raises(ValueError, match="tol"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="bfgs", tol=0.0)
    with pytest.raises(ValueError, match="max_steps"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="bfgs", max_steps=0)
    with pytest.raises(ValueError, match="method must be"):
        F.fit_multistart("chinchilla", starts, X, log_L, method="newton")
