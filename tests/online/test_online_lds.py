"""LDS generator and simulation, and the residual decay rate of USP (claims
`online:real_spectrum_residual_decays_like_two_to_minus_n`, `online:arc_spectrum_decay_within_bernstein_bound`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.online import lds, usp

NS = np.arange(4, 17)


@jax.jit
def log_residual_norms(A, C):
    """log ||C M_n(A)|| for n = 0..16."""
    M = usp.monic_chebyshev_matrices(A, 16)
    return jnp.log(jnp.linalg.norm(jnp.einsum("ij,njk->nik", C, M), axis=(1, 2)))


def decay_slope(params):
    return np.polyfit(NS, np.asarray(log_residual_norms(params.A, params.C))[NS], 1)[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_real_spectrum_decays_at_rate_ln2(seed):
    p = lds.random_lds(jax.random.key(seed), 40)
    assert -0.75 <= decay_slope(p) <= -0.6
    np.testing.assert_allclose(decay_slope(p), -np.log(2), atol=0.02)


@pytest.mark.parametrize("seed", [0, 1])
def test_arc_spectrum_decay_follows_bernstein_bound(seed):
    bound = float(np.log(usp.bernstein_rho(np.exp(0.2j)) / 2))
    np.testing.assert_allclose(bound, -0.2610, atol=1e-4)
    p = lds.random_lds(jax.random.key(seed), 40, eigs="arc", max_arg=0.2, extra_eigs=())
    slope = decay_slope(p)
    assert slope <= bound + 0.05
    assert slope >= bound - 0.1  # the bound is tight up to the polynomial factor
    wide = lds.random_lds(jax.random.key(seed), 40, eigs="arc", max_arg=0.7, extra_eigs=())
    assert -0.01 <= decay_slope(wide) <= 0.03  # phi = 0.7 > phi*: no decay


def test_generator_spectrum_and_asymmetry():
    p = lds.random_lds(jax.random.key(2), 20, d_in=2, d_out=2)  # the shapes of test_online_usp (compiled once)
    ev = np.asarray(lds.spectrum(p))
    assert np.max(np.abs(ev.imag)) < 1e-8 and np.max(np.abs(ev)) <= 1 + 1e-9
    for e in (1.0, 0.999, -0.999):
        assert np.min(np.abs(ev - e)) < 1e-8
    A = np.asarray(p.A)
    assert np.abs(A - A.T).max() > 0.1  # asymmetric (P not orthogonal)
    assert p.B.shape == (20, 2) and p.C.shape == (2, 20) and p.D.shape == (2, 2)
    q = lds.random_lds(jax.random.key(2), 40, max_arg=0.3)
    evq = np.asarray(lds.spectrum(q))
    assert np.max(np.abs(evq)) <= 1 + 1e-9
    cplx = evq[np.abs(evq.imag) > 1e-9]
    assert cplx.size > 0 and np.all(np.minimum(np.abs(np.angle(cplx)), np.pi - np.abs(np.angle(cplx))) <= 0.3 + 1e-9)
    arc = np.asarray(lds.spectrum(lds.random_lds(jax.random.key(2), 40, eigs="arc", max_arg=0.3, extra_eigs=())))
    np.testing.assert_allclose(np.abs(arc), 1.0, atol=1e-8)
    np.testing.assert_allclose(np.max(np.abs(np.angle(arc))), 0.3, atol=1e-8)


def test_simulate_matches_numpy_loop():
    p = lds.random_lds(jax.random.key(4), 20, d_in=2, d_out=2)
    p = p._replace(D=jnp.ones((2, 2)))
    u = jax.random.normal(jax.random.key(5), (120, 2))
    x0 = jnp.linspace(-1, 1, 20)
    y, x = lds.simulate(jax.random.key(6), p, u, x0=x0)
    A, B, C, D = (np.asarray(m) for m in p)
    xs, xt = [], np.asarray(x0)
    for t in range(120):
        xt = A @ xt + B @ np.asarray(u[t])
        xs.append(xt)
    xs = np.array(xs)
    np.testing.assert_allclose(x, xs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y, xs @ C.T + np.asarray(u) @ D.T, rtol=1e-10, atol=1e-12)
    yn, _ = lds.simulate(jax.random.key(6), p, u, x0=x0, obs_noise=0.5)
    np.testing.assert_allclose(np.std(np.asarray(yn - y)), 0.5, rtol=0.2)


def test_bad_inputs():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="d_hidden must be >= 1"):
        lds.random_lds(key, 0)
    with pytest.raises(ValueError, match=r"max_arg must lie in \[0.0, 3.14"):
        lds.random_lds(key, 10, max_arg=4.0)
    with pytest.raises(ValueError, match="extra_eigs must have magnitude <= 1"):
        lds.random_lds(key, 10, extra_eigs=(1.2,))
    with pytest.raises(ValueError, match="eigs must be one of"):
        lds.random_lds(key, 10, eigs="complex")
    p = lds.random_lds(key, 5)
    with pytest.raises(ValueError, match=r"params\.A must be square"):
        lds.simulate(key, p._replace(A=jnp.ones((5, 4))), jnp.ones((3, 1)))
    with pytest.raises(ValueError, match=r"params\.C must have shape"):
        lds.simulate(key, p._replace(C=jnp.ones((1, 4))), jnp.ones((3, 1)))
    with pytest.raises(ValueError, match="u must have 1 columns"):
        lds.simulate(key, p, jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="obs_noise must be >= 0"):
        lds.simulate(key, p, jnp.ones((3, 1)), obs_noise=-0.1)
