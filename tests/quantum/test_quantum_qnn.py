"""Re-uploading QNN: dense-matrix reference, parameter shift, finite differences, jit/vmap, dtypes, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.quantum import (
    QNNConfig,
    encoding_scales,
    init_qnn_params,
    observable_norm,
    observable_terms,
    param_shift_grad,
    qnn_apply,
    qnn_state,
)
from jaxlab.quantum.reference import dense_qnn, dense_state

CONFIGS = [
    QNNConfig(1, 3),
    QNNConfig(2, 2, "ry", "binary"),
    QNNConfig(3, 2, "rz", "ternary", entangler="cz_ring", observable="mean_z"),
    QNNConfig(4, 1, scales=(1, 2, 0.5, 3), entangler="none", observable="0.5*ZXIY - 0.25*IIZZ"),
    QNNConfig(6, 1, observable="IIZIIZ"),  # two Kronecker groups of 3 qubits
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"n{c.n_qubits}L{c.n_layers}{c.encoding}{c.entangler}")
def test_state_and_value_match_dense_reference(cfg):
    p = init_qnn_params(jax.random.key(cfg.n_qubits), cfg)
    x = 0.37 * cfg.n_qubits
    np.testing.assert_allclose(np.asarray(qnn_state(p, x, cfg)).ravel(), dense_state(p, x, cfg), atol=1e-13)
    assert float(qnn_apply(p, x, cfg)) == pytest.approx(dense_qnn(p, x, cfg), abs=1e-13)


@pytest.mark.slow  # the quick claim simulator_matches_dense_reference checks grad = parameter shift
def test_grad_matches_parameter_shift_and_finite_differences():
    cfg = QNNConfig(2, 2, observable="0.5*ZX - 0.25*YZ")
    p = init_qnn_params(jax.random.key(1), cfg)
    g = jax.grad(qnn_apply)(p, 0.8, cfg)
    np.testing.assert_allclose(np.asarray(g), np.asarray(param_shift_grad(p, 0.8, cfg)), atol=1e-12)
    h = 1e-6
    for idx in [(0, 0, 0), (1, 1, 1), (2, 1, 2)]:
        e = np.zeros(p.shape)
        e[idx] = h
        fd = (dense_qnn(np.asarray(p) + e, 0.8, cfg) - dense_qnn(np.asarray(p) - e, 0.8, cfg)) / (2 * h)
        assert float(g[idx]) == pytest.approx(fd, abs=1e-8)


def test_jit_vmap_over_inputs_and_parameters():
    cfg = QNNConfig(2, 2)
    ps = jax.vmap(lambda k: init_qnn_params(k, cfg))(jax.random.split(jax.random.key(0), 3))
    xs = jnp.linspace(0.0, 3.0, 4)
    f = jax.jit(jax.vmap(jax.vmap(qnn_apply, (None, 0, None)), (0, None, None)), static_argnums=2)
    out = np.asarray(f(ps, xs, cfg))
    ref = np.array([[dense_qnn(p, float(x), cfg) for x in xs] for p in np.asarray(ps)])
    np.testing.assert_allclose(out, ref, atol=1e-13)


def test_float32_gives_complex64_and_agrees():
    cfg = QNNConfig(3, 2)
    p = init_qnn_params(jax.random.key(2), cfg, dtype=jnp.float32)
    psi = qnn_state(p, jnp.float32(0.5), cfg)
    assert psi.dtype == jnp.complex64
    assert float(qnn_apply(p, jnp.float32(0.5), cfg)) == pytest.approx(dense_qnn(p, 0.5, cfg), abs=1e-5)
    assert qnn_state(p.astype(jnp.float64), 0.5, cfg).dtype == jnp.complex128


def test_init_ranges_and_observables():
    cfg = QNNConfig(2, 3)
    p = init_qnn_params(jax.random.key(0), cfg)
    assert p.shape == (4, 2, 3) and float(p.min()) >= 0 and float(p.max()) < 2 * np.pi
    q = init_qnn_params(jax.random.key(0), cfg, scale=0.1)
    assert float(jnp.abs(q).max()) <= 0.1
    assert observable_terms(QNNConfig(3, 1, observable="0.5*ZZI - 0.25*XIX + IIZ")) == (
        (0.5, "ZZI"),
        (-0.25, "XIX"),
        (1.0, "IIZ"),
    )
    assert observable_norm(QNNConfig(3, 1, observable="mean_z")) == pytest.approx(1.0)
    np.testing.assert_array_equal(encoding_scales(QNNConfig(3, 1, scales="ternary")), [1, 3, 9])


def test_bad_inputs_raise():
    good = QNNConfig(2, 2)
    p = init_qnn_params(jax.random.key(0), good)
    with pytest.raises(ValueError, match="n_qubits must be >= 1"):
        qnn_apply(p, 0.1, QNNConfig(0, 2))
    with pytest.raises(ValueError, match="n_layers must be >= 1"):
        qnn_apply(p, 0.1, QNNConfig(2, 0))
    with pytest.raises(ValueError, match=r"params must have shape \(3, 2, 3\)"):
        qnn_apply(p[:2], 0.1, good)
    with pytest.raises(ValueError, match="params must be finite"):
        qnn_apply(p.at[0, 0, 0].set(jnp.nan), 0.1, good)
    with pytest.raises(ValueError, match="x must be finite"):
        qnn_apply(p, jnp.inf, good)
    with pytest.raises(ValueError, match="one letter per qubit"):
        qnn_apply(p, 0.1, good._replace(observable="ZZZ"))
    with pytest.raises(ValueError, match="only the letters"):
        qnn_apply(p, 0.1, good._replace(observable="ZQ"))
    with pytest.raises(ValueError, match="encoding must be one of"):
        qnn_apply(p, 0.1, good._replace(encoding="rq"))
    with pytest.raises(ValueError, match="scales must be one of"):
        qnn_apply(p, 0.1, good._replace(scales=(1.0,)))
    with pytest.raises(ValueError, match="entangler must be one of"):
        qnn_apply(p, 0.1, good._replace(entangler="swap"))
    with pytest.raises(ValueError, match="scale must be > 0"):
        init_qnn_params(jax.random.key(0), good, scale=-1.0)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"n{c.n_qubits}L{c.n_layers}{c.encoding}{c.entangler}")
def test_adjoint_gradient_matches_parameter_shift_and_jvp(cfg):
    """The adjoint rule of qnn_apply (reverse and forward mode, in θ and x) against the parameter-shift rule,
    which only evaluates the circuit, and against central differences in x on the dense reference."""
    p = init_qnn_params(jax.random.key(cfg.n_qubits + 7), cfg)
    x = 0.29 * cfg.n_qubits
    g_p, g_x = jax.jit(jax.grad(qnn_apply, argnums=(0, 1)), static_argnums=2)(p, x, cfg)
    np.testing.assert_allclose(np.asarray(g_p), np.asarray(param_shift_grad(p, x, cfg)), atol=1e-12)
    h = 1e-6
    fd_x = (dense_qnn(p, x + h, cfg) - dense_qnn(p, x - h, cfg)) / (2 * h)
    assert float(g_x) == pytest.approx(fd_x, abs=1e-8)
    t = jax.random.normal(jax.random.key(3), p.shape)
    _, jvp = jax.jvp(lambda q, y: qnn_apply(q, y, cfg), (p, jnp.asarray(x)), (t, jnp.asarray(0.5)))
    assert float(jvp) == pytest.approx(float(jnp.sum(g_p * t) + 0.5 * g_x), abs=1e-12)
