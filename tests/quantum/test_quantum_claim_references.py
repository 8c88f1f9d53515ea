"""The independent references of the quantum claims: the dense NumPy single-qubit QNTK diagonal against the
JAX pipeline, and the frozen Fourier-feature matrix of the FF-MLP baseline."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.quantum import QNNConfig, coefficient_jacobian_of, init_qnn_params, qnn_apply
from jaxlab.quantum.claims import _dense_single_qubit_diag, ff_apply, ff_init


def test_dense_reference_matches_coefficient_jacobian():
    cfg = QNNConfig(1, 3)
    ps = jax.vmap(lambda k: init_qnn_params(k, cfg))(jax.random.split(jax.random.key(4), 3))
    J = jax.vmap(lambda p: coefficient_jacobian_of(lambda q, x: qnn_apply(q, x, cfg), p, 3))(ps)
    got = np.asarray(jnp.sum(jnp.abs(J) ** 2, -1))[:, 3:]
    want = _dense_single_qubit_diag(np.asarray(ps, np.float64)[:, :, 0, :], 3)
    assert want.shape == (3, 4)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # a wrong reference (a 3 % error) is caught at this tolerance
    assert np.max(np.abs(1.03 * want - got)) > 1e-3


def test_ff_mlp_frequencies_are_frozen():
    p = ff_init(jax.random.key(0), 1.0)
    g = jax.grad(lambda p: ff_apply(p, jnp.asarray(0.7)))(p)
    assert np.all(np.asarray(g["B"]) == 0)
    assert np.any(np.asarray(g["mlp"][0][0]) != 0)
