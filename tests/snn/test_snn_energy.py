"""Synaptic-operation counts against brute-force loops over synapses, the energy formula, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.snn import DSNParams, dsn_init, dsn_scan, dsn_step, energy_pj, heaviside_sg, sop_conv, sop_dense
from jaxlab.snn.reference import sop_conv_reference, sop_dense_reference


def bern(seed, shape, p):
    return (np.random.default_rng(seed).random(shape) < p).astype(np.float64)


def test_sop_dense_matches_brute_force_and_dormancy_reduces_it():
    s = bern(0, (3, 2, 7), 0.4)
    d = bern(1, (3, 2, 5), 0.7)
    assert float(sop_dense(s, d)) == sop_dense_reference(s, d)
    full = float(sop_dense(s, jnp.ones_like(d)))
    assert full == sop_dense_reference(s, np.ones(d.shape))
    assert float(sop_dense(s, d)) < full


@pytest.mark.parametrize(("stride", "pad"), [(1, 0), (1, 1), (2, 0), (2, 1)])
def test_sop_conv_matches_brute_force(stride, pad):
    t, b, c, h, w, o, k = 2, 2, 3, 7, 6, 4, 3
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    s = bern(2, (t, b, c, h, w), 0.3)
    d = bern(3, (t, b, o, ho, wo), 0.6)
    got = float(sop_conv(s, d, k, stride, pad))
    assert got == sop_conv_reference(s, d, k, stride, pad)
    ones = jnp.ones_like(d)
    full = float(sop_conv(s, ones, k, stride, pad))
    assert full == sop_conv_reference(s, ones, k, stride, pad)
    assert got < full


def test_sop_conv_without_dormancy_is_rate_times_flops_for_interior_spikes():
    # One spike in the interior of a 1x1-channel map: with stride 1 and padding 1 it reaches k*k outputs in each
    # of O output channels, the "firing rate x FLOPs" count.
    s = jnp.zeros((1, 1, 1, 5, 5)).at[0, 0, 0, 2, 2].set(1.0)
    assert float(sop_conv(s, jnp.ones((1, 1, 6, 5, 5)), 3, 1, 1)) == 9 * 6


def test_energy_formula():
    assert float(energy_pj(1000.0, 5000.0)) == pytest.approx(4.6 * 1000 + 0.9 * 5000, rel=1e-15)
    assert float(energy_pj(10, 20, 30, e_mac=2.0, e_ac=0.5)) == pytest.approx(20 + 10 + 15, rel=1e-15)
    assert float(energy_pj(0, 0)) == 0.0
    # jit-compatible on traced counts
    assert float(jax.jit(energy_pj)(jnp.array(3.0), jnp.array(4.0))) == pytest.approx(4.6 * 3 + 0.9 * 4)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tau": 1.0}, "tau must be > 1"),
        ({"tau": 0.5}, "tau must be > 1"),
        ({"tau": float("inf")}, "tau must be > 1"),
        ({"v_dormant": 1.0}, "v_dormant must be < v_th"),
        ({"v_dormant": 2.0, "allow_nonnegative_dormant": True}, "v_dormant must be < v_th"),
        ({"v_dormant": float("nan")}, "v_dormant must be < v_th"),
        ({"v_dormant": 0.0}, "v_dormant must be < v_reset"),
        ({"v_dormant": 0.3}, "allow_nonnegative_dormant"),
        ({"v_th": 0.0}, "v_th must be > v_reset"),
        ({"v_reset": float("nan")}, "v_reset must be finite"),
        ({"alpha": 0.0}, "alpha must be > 0"),
        ({"alpha": -1.0}, "alpha must be > 0"),
    ],
)
def test_bad_neuron_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dsn_scan(DSNParams(**kwargs), jnp.ones((3, 2)))


def test_nonnegative_dormant_threshold_allowed_on_request():
    s, _, aux = dsn_scan(DSNParams(v_dormant=0.2, allow_nonnegative_dormant=True), jnp.full((3, 2), 0.1))
    # rest potential 0 < V_D = 0.2: every neuron falls dormant at t = 1 and never spikes
    assert float(jnp.sum(aux["d_seq"])) == 0.0 and float(jnp.sum(s)) == 0.0


def test_bad_sequences_raise():
    p = DSNParams()
    with pytest.raises(ValueError, match="T >= 1"):
        dsn_scan(p, jnp.ones((0, 3)))
    with pytest.raises(ValueError, match="time axis"):
        dsn_scan(p, jnp.array(1.0))
    with pytest.raises(TypeError, match="x_seq must have a float dtype"):
        dsn_scan(p, jnp.ones((3, 2), jnp.int32))
    with pytest.raises(ValueError, match="state must have the per-step shape"):
        dsn_scan(p, jnp.ones((3, 2)), dsn_init((3,), p))
    with pytest.raises(ValueError, match="state must have the shape of x_t"):
        dsn_step(p, dsn_init((3,), p), jnp.ones(2))
    with pytest.raises(TypeError, match="params must be a DSNParams"):
        dsn_scan({"tau": 2.0}, jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="alpha must be > 0"):
        heaviside_sg(jnp.ones(2), 0.0)
    with pytest.raises(TypeError, match="dtype must be a floating dtype"):
        dsn_init((2,), p, jnp.int32)


def test_bad_sop_and_energy_inputs_raise():
    s, d = bern(0, (3, 2, 4), 0.5), bern(1, (3, 2, 5), 0.5)
    with pytest.raises(ValueError, match="spikes_in must be binary"):
        sop_dense(s * 0.5, d)
    with pytest.raises(ValueError, match="d_out must be binary"):
        sop_dense(s, d * 0.5 + 0.25)
    with pytest.raises(ValueError, match="same T"):
        sop_dense(s, d[:2])
    with pytest.raises(ValueError, match="agree on the time and batch"):
        sop_dense(s, d[:, :1])
    sc = bern(2, (2, 1, 1, 5, 5), 0.5)
    with pytest.raises(ValueError, match=r"d_out must have shape \(T, B, O, 3, 3\)"):
        sop_conv(sc, jnp.ones((2, 1, 2, 5, 5)), 3, 1, 0)
    with pytest.raises(ValueError, match="stride must be >= 1"):
        sop_conv(sc, jnp.ones((2, 1, 2, 5, 5)), 3, 0, 1)
    with pytest.raises(ValueError, match="e_mac must be >= 0"):
        energy_pj(1.0, 1.0, e_mac=-4.6)
    with pytest.raises(ValueError, match="e_ac must be >= 0"):
        energy_pj(1.0, 1.0, e_ac=-0.9)
    with pytest.raises(ValueError, match="sops must be >= 0"):
        energy_pj(1.0, -1.0)
    with pytest.raises(ValueError, match="neuron_updates must be finite"):
        energy_pj(1.0, 1.0, float("nan"))
