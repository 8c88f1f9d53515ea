"""Gates and statevector primitives against dense NumPy references (Kronecker products) on the same input."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.quantum import (
    apply_1q,
    apply_2q,
    apply_diag_1q,
    cnot,
    cz,
    expval_op,
    expval_pauli,
    expval_z,
    hadamard,
    normalize,
    probabilities,
    rot,
    rx,
    ry,
    rz,
    zero_state,
)
from jaxlab.quantum.reference import dense_1q, dense_cnot, np_rot, np_rotation

RNG = np.random.default_rng(0)


def _random_state(n):
    v = RNG.standard_normal(2**n) + 1j * RNG.standard_normal(2**n)
    return v / np.linalg.norm(v)


def _pauli_dense(p):
    m = np.eye(1)
    for c in p:
        m = np.kron(m, {"I": np.eye(2), "X": [[0, 1], [1, 0]], "Y": [[0, -1j], [1j, 0]], "Z": np.diag([1, -1])}[c])
    return m


@pytest.mark.parametrize("phi", [0.0, 0.3, -2.1, 7.5])
def test_rotations_match_exponentials(phi):
    for f, axis in ((rx, "X"), (ry, "Y"), (rz, "Z")):
        np.testing.assert_allclose(np.asarray(f(phi)), np_rotation(axis, phi), atol=1e-14)
    a, b, c = phi, 0.7 * phi + 1, -phi / 3
    np.testing.assert_allclose(np.asarray(rot(a, b, c)), np_rot(a, b, c), atol=1e-14)


def test_rotation_dtype_and_broadcast():
    assert rx(jnp.float32(0.1)).dtype == jnp.complex64
    assert rz(jnp.float64(0.1)).dtype == jnp.complex128
    phis = jnp.array([0.1, 0.2, 0.3])
    batch = ry(phis)
    assert batch.shape == (3, 2, 2)
    np.testing.assert_allclose(np.asarray(batch[2]), np_rotation("Y", 0.3), atol=1e-14)


def test_fixed_gates_are_unitary():
    for U in (hadamard(jnp.complex128), cnot(jnp.complex128), cz(jnp.complex128)):
        u = np.asarray(U)
        np.testing.assert_allclose(u.conj().T @ u, np.eye(u.shape[0]), atol=1e-14)


@pytest.mark.parametrize("q", [0, 1, 3])
def test_apply_1q_matches_dense(q):
    n = 4
    psi = _random_state(n)
    U = np_rot(0.3, 1.1, -0.4)
    out = apply_1q(jnp.asarray(psi.reshape((2,) * n)), jnp.asarray(U), q)
    np.testing.assert_allclose(np.asarray(out).ravel(), dense_1q(U, q, n) @ psi, atol=1e-14)


@pytest.mark.parametrize(("q1", "q2"), [(0, 1), (2, 0), (1, 3)])
def test_apply_2q_matches_dense(q1, q2):
    n = 4
    psi = _random_state(n)
    out = apply_2q(jnp.asarray(psi.reshape((2,) * n)), cnot(jnp.complex128), q1, q2)
    np.testing.assert_allclose(np.asarray(out).ravel(), dense_cnot(q1, q2, n) @ psi, atol=1e-14)
    # a generic (non-permutation) 4x4 unitary: order of (q1, q2) matters
    A = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    U, _ = np.linalg.qr(A)
    out = apply_2q(jnp.asarray(psi.reshape((2,) * n)), jnp.asarray(U), q1, q2, check=True)
    perm = [q1, q2] + [k for k in range(n) if k not in (q1, q2)]
    ref = np.moveaxis(
        (U @ np.moveaxis(psi.reshape((2,) * n), perm, range(n)).reshape(4, -1)).reshape((2,) * n), range(n), perm
    )
    np.testing.assert_allclose(np.asarray(out), ref, atol=1e-13)


def test_apply_diag_matches_dense():
    n = 3
    psi = _random_state(n)
    d = np.exp(1j * np.array([0.4, -1.3]))
    out = apply_diag_1q(jnp.asarray(psi.reshape((2,) * n)), jnp.asarray(d), 1)
    np.testing.assert_allclose(np.asarray(out).ravel(), dense_1q(np.diag(d), 1, n) @ psi, atol=1e-14)


def test_expectations_match_dense():
    n = 3
    psi = _random_state(n)
    t = jnp.asarray(psi.reshape((2,) * n))
    for q in range(n):
        z = dense_1q(np.diag([1.0, -1.0]), q, n)
        assert float(expval_z(t, q)) == pytest.approx(np.real(psi.conj() @ z @ psi), abs=1e-14)
    for p in ("ZIZ", "XYZ", "IYI", "III"):
        want = np.real(psi.conj() @ _pauli_dense(p) @ psi)
        assert float(expval_pauli(t, p)) == pytest.approx(want, abs=1e-14)
    H = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    H = H + H.conj().T
    got = float(expval_op(t, jnp.asarray(H), (2, 0)))
    perm = [2, 0, 1]
    phi = np.moveaxis(psi.reshape(2, 2, 2), perm, range(3)).reshape(-1)
    assert got == pytest.approx(np.real(phi.conj() @ np.kron(H, np.eye(2)) @ phi), abs=1e-13)


def test_state_helpers():
    s = zero_state(3, jnp.complex128)
    assert s.shape == (2, 2, 2) and float(s[0, 0, 0].real) == 1.0 and float(jnp.sum(jnp.abs(s))) == 1.0
    v = normalize(3.0 * jnp.asarray(_random_state(2).reshape(2, 2)))
    assert float(jnp.sum(probabilities(v))) == pytest.approx(1.0, abs=1e-14)


def test_bad_inputs_raise():
    psi = zero_state(3, jnp.complex128)
    with pytest.raises(ValueError, match="qubit index"):
        apply_1q(psi, rx(0.1), 3)
    with pytest.raises(ValueError, match="qubit index"):
        apply_1q(psi, rx(0.1), -1)
    with pytest.raises(ValueError, match="different wires"):
        apply_2q(psi, cnot(), 1, 1)
    with pytest.raises(ValueError, match=r"U must have shape \(2, 2\)"):
        apply_1q(psi, cnot(), 0)
    with pytest.raises(ValueError, match="unitary"):
        apply_1q(psi, jnp.array([[1.0, 1.0], [0.0, 1.0]]), 0, check=True)
    apply_1q(psi, jnp.array([[1.0, 1.0], [0.0, 1.0]]), 0)  # unchecked by default (jit path)
    with pytest.raises(ValueError, match="one letter per qubit"):
        expval_pauli(psi, "ZZ")
    with pytest.raises(ValueError, match="only the letters"):
        expval_pauli(psi, "ZAZ")
    with pytest.raises(ValueError, match="Hermitian"):
        expval_op(psi, jnp.array([[0.0, 1.0], [0.0, 0.0]]), 0)
    with pytest.raises(ValueError, match="shape"):
        expval_z(jnp.zeros((2, 3), jnp.complex64), 0)
