"""Dense-matrix NumPy reference of the re-uploading QNN, used by the claims (and tests) to check the
tensor-contraction simulator of :mod:`jaxlab.quantum.qnn` on the same input.

The model is that of Schuld, Sweke, Meyer, "Effect of data encoding on the expressive power of variational
quantum machine learning models" (arXiv:2008.08605), as studied by Xu, Zhang, Yan (arXiv:2409.06682):
``f(x) = ⟨ψ|O|ψ⟩`` with ``ψ = W_L S(x) ⋯ S(x) W_0 |0⟩``. Here every gate is a ``2^n × 2^n`` matrix built with
Kronecker products (``I ⊗ … ⊗ U ⊗ … ⊗ I``, big-endian) and applied by a dense matrix-vector product, in
float64/complex128. Slow by design (O(4^n) per gate): a reference, not a simulator.
"""

from __future__ import annotations

import numpy as np

from jaxlab.quantum.qnn import QNNConfig, _ring, encoding_scales, observable_terms

__all__ = ["dense_1q", "dense_cnot", "dense_observable", "dense_qnn", "dense_state", "np_rot", "np_rotation"]

_P = {"I": np.eye(2), "X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]), "Z": np.diag([1.0, -1.0])}


def np_rotation(axis: str, phi: float) -> np.ndarray:
    """``exp(−i φ P/2) = cos(φ/2) I − i sin(φ/2) P`` for a Pauli P.

    Args:
      axis: ``"X"``, ``"Y"``, ``"Z"`` (or ``"I"``), either case.
      phi: float, the angle φ.

    Returns:
      ``(2, 2)`` complex128 numpy array.
    """
    return np.cos(phi / 2) * np.eye(2) - 1j * np.sin(phi / 2) * _P[axis.upper()]


def np_rot(a: float, b: float, c: float) -> np.ndarray:
    """``Rot(a, b, c) = RZ(c) RY(b) RZ(a)`` as a product of the three rotations.

    Args:
      a: float, the first RZ angle.
      b: float, the RY angle.
      c: float, the last RZ angle.

    Returns:
      ``(2, 2)`` complex128 numpy array.
    """
    return np_rotation("Z", c) @ np_rotation("Y", b) @ np_rotation("Z", a)


def dense_1q(U: np.ndarray, q: int, n: int) -> np.ndarray:
    """``I ⊗ … ⊗ U (qubit q) ⊗ … ⊗ I`` (big-endian: qubit 0 is the leftmost factor).

    Args:
      U: ``(2, 2)`` numpy array.
      q: int in ``[0, n)``, the qubit.
      n: int, the number of qubits.

    Returns:
      ``(2^n, 2^n)`` numpy array.
    """
    M = np.eye(1)
    for k in range(n):
        M = np.kron(M, U if k == q else np.eye(2))
    return M


def dense_cnot(c: int, t: int, n: int) -> np.ndarray:
    """CNOT(control c, target t) as a ``2^n × 2^n`` permutation matrix, from ``|0⟩⟨0|⊗I + |1⟩⟨1|⊗X``.

    Args:
      c: int, the control qubit.
      t: int, the target qubit (different from ``c``).
      n: int, the number of qubits.

    Returns:
      ``(2^n, 2^n)`` float numpy array.
    """
    p0, p1 = np.diag([1.0, 0.0]), np.diag([0.0, 1.0])
    return dense_1q(p0, c, n) + dense_1q(p1, c, n) @ dense_1q(_P["X"], t, n)


def dense_observable(cfg: QNNConfig) -> np.ndarray:
    """The observable as a dense matrix, ``O = Σ_k c_k ⊗_q P_{k,q}`` (terms from ``observable_terms``).

    Args:
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      ``(2^n, 2^n)`` complex numpy array.
    """
    out = 0
    for c, p in observable_terms(cfg):
        M = np.eye(1)
        for ch in p:
            M = np.kron(M, _P[ch])
        out = out + c * M
    return out


def dense_state(params, x: float, cfg: QNNConfig) -> np.ndarray:
    """``U(x, θ)|0⟩`` (flat, big-endian) by multiplying dense matrices gate by gate, in complex128.

    Args:
      params: ``(L + 1, n, 3)`` array θ (converted to float64; not validated).
      x: float, the input.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      ``(2^n,)`` complex128 numpy array, comparable with ``qnn_state(...).reshape(-1)``.
    """
    n, params = cfg.n_qubits, np.asarray(params, dtype=np.float64)
    beta = encoding_scales(cfg)
    psi = np.zeros(2**n, complex)
    psi[0] = 1.0

    def block(theta):
        nonlocal psi
        for q in range(n):
            psi = dense_1q(np_rot(*theta[q]), q, n) @ psi
        for c, t in _ring(n):
            if cfg.entangler == "cnot_ring":
                psi = dense_cnot(c, t, n) @ psi
            elif cfg.entangler == "cz_ring":
                psi = (
                    dense_1q(np.diag([1.0, 0.0]), c, n) + dense_1q(np.diag([0.0, 1.0]), c, n) @ dense_1q(_P["Z"], t, n)
                ) @ psi

    block(params[0])
    axis = cfg.encoding[1].upper()
    for layer in range(1, cfg.n_layers + 1):
        for q in range(n):
            psi = dense_1q(np_rotation(axis, x * beta[q]), q, n) @ psi
        block(params[layer])
    return psi


def dense_qnn(params, x: float, cfg: QNNConfig) -> float:
    """``f_θ(x) = ⟨ψ|O|ψ⟩`` with dense matrices (the reference for ``qnn_apply``).

    Args:
      params: ``(L + 1, n, 3)`` array θ.
      x: float, the input.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      Python float.
    """
    psi = dense_state(params, x, cfg)
    return float(np.real(psi.conj() @ dense_observable(cfg) @ psi))
