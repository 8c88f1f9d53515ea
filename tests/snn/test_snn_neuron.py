"""DSN/LIF neuron: forward traces against a NumPy loop, the absorbing gate, DSN = LIF at V_D = -inf, the
surrogate derivative and 2-step BPTT gradients in closed form, jit/vmap/checkpoint."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.snn import DSNParams, dsn_init, dsn_scan, dsn_step, heaviside_sg, lif_scan, lif_step
from jaxlab.snn.reference import dsn_reference

P = DSNParams()


def sg(x, alpha=4.0):
    s = 1 / (1 + np.exp(-alpha * x))
    return alpha * s * (1 - s)


def random_input(seed=0, shape=(12, 5, 7)):
    return jax.random.normal(jax.random.key(seed), shape) * 0.8 + 0.3


def test_forward_trace_matches_numpy_loop():
    x = random_input()
    for params in (P, P._replace(v_dormant=-0.3, tau=3.0, v_th=0.7, v_reset=-0.1)):
        s, final, aux = dsn_scan(params, x)
        rs, rd, rv = dsn_reference(x, params.tau, params.v_th, params.v_reset, params.v_dormant)
        np.testing.assert_array_equal(s, rs)
        np.testing.assert_array_equal(aux["d_seq"], rd)
        np.testing.assert_allclose(aux["v_seq"], rv, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(final.v, aux["v_seq"][-1])
        assert 0 < float(jnp.mean(aux["d_seq"])) < 1  # both awake and dormant neurons occur


def test_gate_is_absorbing_and_dormant_neurons_never_spike():
    x = random_input(1, (30, 200))
    s, _, aux = dsn_scan(P, x)
    d = np.asarray(aux["d_seq"])
    assert np.all(np.diff(d, axis=0) <= 0)  # once 0, always 0
    assert np.all(np.asarray(s)[d == 0] == 0)
    assert (d[-1] == 0).mean() > 0.2


def test_dsn_and_lif_differ_only_after_dormancy():
    x = random_input(2, (20, 300))
    s_d, _, aux = dsn_scan(P, x)
    s_l, _, aux_l = lif_scan(P, x)
    awake = np.asarray(aux["d_seq"]) == 1
    np.testing.assert_array_equal(np.asarray(s_d)[awake], np.asarray(s_l)[awake])
    np.testing.assert_array_equal(np.asarray(aux["v_seq"])[awake], np.asarray(aux_l["v_seq"])[awake])
    assert np.any(np.asarray(s_d) != np.asarray(s_l))


def test_minus_inf_dormant_threshold_is_lif_exactly_with_gradients():
    x = random_input(3)
    p_inf = P._replace(v_dormant=-jnp.inf)

    def loss(scan, x):
        s, _, aux = scan(p_inf, x)
        return jnp.sum(s * jnp.arange(1, 13.0)[:, None, None]) + jnp.sum(aux["v_seq"] ** 2)

    s1, _, a1 = dsn_scan(p_inf, x)
    s2, _, a2 = lif_scan(p_inf, x)
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(a1["v_seq"], a2["v_seq"])
    np.testing.assert_array_equal(a1["d_seq"], np.ones(x.shape))
    np.testing.assert_array_equal(
        jax.jit(jax.grad(lambda x: loss(dsn_scan, x)))(x), jax.jit(jax.grad(lambda x: loss(lif_scan, x)))(x)
    )


@pytest.mark.parametrize("alpha", [1.0, 4.0, 10.0])
def test_surrogate_derivative_is_derivative_of_smoothed_step(alpha):
    x = jnp.linspace(-2, 2, 41)
    g = jax.vmap(jax.grad(lambda u: heaviside_sg(u, alpha)))(x)
    h = 1e-6
    smooth = lambda u: 1 / (1 + np.exp(-alpha * u))  # noqa: E731
    fd = (smooth(np.asarray(x) + h) - smooth(np.asarray(x) - h)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(heaviside_sg(x, alpha), (np.asarray(x) >= 0).astype(float))
    # forward- and reverse-mode agree
    _, jvp = jax.jvp(lambda u: heaviside_sg(u, alpha), (x,), (jnp.ones_like(x),))
    np.testing.assert_allclose(jvp, g, rtol=1e-14)


def test_surrogate_slope_at_zero_is_one_for_alpha_four():
    assert float(jax.grad(heaviside_sg)(0.0)) == pytest.approx(1.0, abs=1e-15)


def test_two_step_bptt_through_gate_closed_form():
    # x1 below threshold and close to V_D: V1 = x1, D2 = 1, the gate's surrogate slope enters dS2/dx1.
    x1, x2 = -0.03, 1.2
    beta = P.beta

    def s2(x):
        s, _, _ = dsn_scan(P, x)
        return s[1]

    g = jax.grad(s2)(jnp.array([x1, x2]))
    h2 = beta * x1 + x2
    d_gate = sg(x1 - P.v_dormant)  # dD2/dV1, Theta(h2 - v_th) = 1
    expected = np.array([d_gate * 1.0 + beta * sg(h2 - P.v_th), sg(h2 - P.v_th)])
    np.testing.assert_allclose(g, expected, rtol=1e-13)
    assert float(s2(jnp.array([x1, x2]))) == 1.0


@pytest.mark.parametrize("detach", [True, False])
def test_two_step_bptt_with_spike_and_reset(detach):
    # x1 spikes at t = 1: V1 = v_reset (1 - S1) ... with or without the gradient through the reset.
    p = P._replace(detach_reset=detach, v_reset=-0.02)
    x1, x2 = 1.1, 0.99

    def loss(x):
        _, _, aux = dsn_scan(p, x)
        return aux["v_seq"][1]

    g = jax.grad(loss)(jnp.array([x1, x2]))
    # V1 = H1 (1 - S1) + v_r S1 with S1 = 1: dV1/dx1 = (1 - S1) + [not detached] (v_r - H1) sg(H1 - v_th) = ...
    h1 = p.beta * p.v_reset + x1  # V_0 = v_reset
    dv1 = 0.0 if detach else (p.v_reset - h1) * sg(h1 - p.v_th)
    v1 = p.v_reset
    h2 = p.beta * v1 + x2  # < v_th: no spike at t = 2, D2 = Theta(v1 - V_D) = 1
    assert h2 < p.v_th
    # V2 = H2 (S2 = 0; the reset's gradient term (v_r - H2) dS2 appears when not detached)
    ds2_dh2 = sg(h2 - p.v_th)
    ds2_dv1 = sg(v1 - p.v_dormant) * 0.0 + 1.0 * ds2_dh2 * p.beta  # Theta(h2 - v_th) = 0 kills the gate term
    dv2_dv1 = p.beta + (0.0 if detach else (p.v_reset - h2) * ds2_dv1)
    dv2_dx2 = 1.0 + (0.0 if detach else (p.v_reset - h2) * ds2_dh2)
    np.testing.assert_allclose(g, [dv2_dv1 * dv1, dv2_dx2], rtol=1e-12, atol=1e-15)


def test_step_matches_scan_and_lif_step_keeps_gate():
    x = random_input(4, (6, 3))
    st = dsn_init((3,), P, jnp.float64)
    st_l = st
    for t in range(6):
        st, s = dsn_step(P, st, x[t])
        st_l, _ = lif_step(P, st_l, x[t])
    s_seq, final, _ = dsn_scan(P, x)
    np.testing.assert_array_equal(final.v, st.v)
    np.testing.assert_array_equal(s_seq[-1], s)
    np.testing.assert_array_equal(st_l.d, np.ones(3))
    np.testing.assert_array_equal(lif_scan(P, x)[1].v, st_l.v)


def test_jit_vmap_and_checkpoint_agree():
    x = random_input(5, (8, 4, 6))

    def loss(x):
        s, _, aux = dsn_scan(P, x)
        return jnp.sum(s) + jnp.sum(jnp.tanh(aux["v_seq"]))

    ref_s = dsn_scan(P, x)[0]
    np.testing.assert_array_equal(jax.jit(lambda x: dsn_scan(P, x)[0])(x), ref_s)
    vm = jax.jit(jax.vmap(lambda xb: dsn_scan(P, xb)[0], in_axes=1, out_axes=1))(x)
    np.testing.assert_array_equal(vm, ref_s)
    g = jax.jit(jax.grad(loss))(x)
    g_ckpt = jax.jit(jax.grad(jax.checkpoint(loss)))(x)
    np.testing.assert_allclose(g_ckpt, g, rtol=1e-12, atol=1e-14)
    assert float(jnp.abs(g).sum()) > 0


def test_state_carries_across_calls():
    x = random_input(6, (10, 5))
    s_all, fin, _ = dsn_scan(P, x)
    s_a, mid, _ = dsn_scan(P, x[:4])
    s_b, fin2, _ = dsn_scan(P, x[4:], mid)
    np.testing.assert_array_equal(jnp.concatenate([s_a, s_b]), s_all)
    np.testing.assert_array_equal(fin2.d, fin.d)


def test_float32_stays_float32():
    x = random_input(7, (4, 3)).astype(jnp.float32)
    s, st, aux = dsn_scan(P, x)
    assert s.dtype == st.v.dtype == aux["d_seq"].dtype == jnp.float32


@pytest.mark.parametrize(
    ("gated", "detach"),
    [
        (True, True),
        pytest.param(True, False, marks=pytest.mark.slow),
        pytest.param(False, True, marks=pytest.mark.slow),
        pytest.param(False, False, marks=pytest.mark.slow),
    ],
)
def test_hand_written_bptt_equals_autodiff_of_the_steps(gated, detach):
    from jaxlab.snn.neuron import DSNState, _dsn_step, _lif_step
    from jaxlab.snn.scan import _scan_autodiff

    p = P._replace(detach_reset=detach, v_dormant=-0.2, v_reset=-0.05)
    rng = np.random.default_rng(8)
    x = jnp.asarray(rng.normal(0.4, 0.9, (9, 4, 3)))
    v0, d0 = jnp.asarray(rng.normal(0, 0.3, (4, 3))), jnp.ones((4, 3))
    w = [jnp.asarray(rng.normal(size=(9, 4, 3))) for _ in range(3)]
    step = _dsn_step if gated else _lif_step
    scan = dsn_scan if gated else lif_scan

    def loss_fast(x, v0, d0, vd):
        s, _, aux = scan(p._replace(v_dormant=vd), x, DSNState(v0, d0))
        return jnp.sum(w[0] * s) + jnp.sum(w[1] * aux["d_seq"]) + jnp.sum(w[2] * jnp.sin(aux["v_seq"]))

    def loss_ref(x, v0, d0, vd):
        s, d, v = _scan_autodiff(step, p._replace(v_dormant=vd), x, DSNState(v0, d0))
        return jnp.sum(w[0] * s) + jnp.sum(w[1] * d) + jnp.sum(w[2] * jnp.sin(v))

    args = (x, v0, d0, jnp.asarray(-0.2))
    g_fast = jax.jit(jax.grad(loss_fast, argnums=(0, 1, 2, 3)))(*args)
    g_ref = jax.jit(jax.grad(loss_ref, argnums=(0, 1, 2, 3)))(*args)
    for a, b in zip(g_fast, g_ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert float(jnp.abs(g_fast[0]).sum()) > 0 and (not gated or float(jnp.abs(g_fast[3])) > 0)
    # forward mode too
    t = jnp.asarray(rng.normal(size=x.shape))
    jf = jax.jvp(lambda x: loss_fast(x, v0, d0, args[3]), (x,), (t,))[1]
    jr = jax.jvp(lambda x: loss_ref(x, v0, d0, args[3]), (x,), (t,))[1]
    np.testing.assert_allclose(jf, jr, rtol=1e-12)


def test_bptt_primitive_composes_with_vmap_and_second_order():
    """The hand-written BPTT is a primitive pair: eager and jitted grads, vmap of grad and grad of vmap must
    equal autodiff of the steps, and second derivatives must exist (both orders of the two modes agree)."""
    from jaxlab.snn.neuron import DSNState, _dsn_step
    from jaxlab.snn.scan import _scan_autodiff

    p = P._replace(v_dormant=-0.2, detach_reset=False)
    x = jnp.asarray(np.random.default_rng(9).normal(0.4, 0.9, (3, 7, 2)))
    init = DSNState(jnp.zeros(2), jnp.ones(2))

    def fast(xb):
        s, _, aux = dsn_scan(p, xb)
        return jnp.sum(jnp.sin(s * xb)) + jnp.sum(jnp.cos(aux["v_seq"]))

    def ref(xb):
        s, _, v = _scan_autodiff(_dsn_step, p, xb, init)
        return jnp.sum(jnp.sin(s * xb)) + jnp.sum(jnp.cos(v))

    np.testing.assert_allclose(jax.grad(fast)(x[0]), jax.grad(ref)(x[0]), rtol=1e-12, atol=1e-12)  # eager
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(fast)))(x), jax.vmap(jax.grad(ref))(x), rtol=1e-12,
                               atol=1e-12)
    batch = lambda f: lambda xs: jnp.sum(jax.vmap(f)(xs))  # noqa: E731
    np.testing.assert_allclose(jax.grad(batch(fast))(x), jax.grad(batch(ref))(x), rtol=1e-12, atol=1e-12)
    # second order: the tangent coefficients' own Heavisides carry no surrogate derivative (unlike autodiff of
    # the steps), so compare forward-over-reverse with reverse-over-reverse rather than with `ref`
    fwd_rev, rev_rev = jax.jacfwd(jax.grad(fast))(x[0]), jax.jacrev(jax.grad(fast))(x[0])
    assert bool(jnp.all(jnp.isfinite(fwd_rev))) and float(jnp.abs(fwd_rev).sum()) > 0
    np.testing.assert_allclose(fwd_rev, rev_rev, rtol=1e-10, atol=1e-12)
