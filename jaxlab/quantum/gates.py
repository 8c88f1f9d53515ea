r"""Quantum gates and their application to a statevector of shape ``(2,)*n``.

Conventions (the same as PennyLane's): axis ``q`` of the state is qubit ``q``, the
flattened index is big-endian (qubit 0 is the most significant bit), and rotations are
``exp(-i φ P / 2)``:

    RX(φ) = [[cos φ/2, -i sin φ/2], [-i sin φ/2, cos φ/2]]
    RY(φ) = [[cos φ/2, -sin φ/2], [sin φ/2, cos φ/2]]
    RZ(φ) = diag(e^{-iφ/2}, e^{iφ/2})
    Rot(a, b, c) = RZ(c) RY(b) RZ(a)      (RZ(a) acts first)

Rotation constructors broadcast over the shape of their angle: ``rx(phi)`` with ``phi`` of shape ``(k,)``
returns ``(k, 2, 2)``. The complex dtype follows the angle: float32 -> complex64, float64 -> complex128.

Applying a single-qubit gate ``U`` to qubit ``q`` is the contraction
``ψ'[.., a, ..] = Σ_b U[a, b] ψ[.., b, ..]`` (axis ``q``). :func:`apply_1q` evaluates it on the free
reshape ``(2^q, 2, 2^{n-q-1})`` of the state as two scaled sums of the halves ``ψ[:, 0, :]`` and
``ψ[:, 1, :]``: the same numbers as ``moveaxis(tensordot(U, ψ, ([1], [q])), 0, q)``, but XLA fuses it
into one elementwise pass without transposes. Two-qubit gates use the tensordot form; diagonal gates
(RZ, CZ, phases) are elementwise products with a broadcast phase tensor.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Complex

from jaxlab.core.validation import as_array, check_int, value_check

__all__ = [
    "PAULI_I",
    "PAULI_X",
    "PAULI_Y",
    "PAULI_Z",
    "apply_1q",
    "apply_2q",
    "apply_diag_1q",
    "check_unitary",
    "cnot",
    "cz",
    "hadamard",
    "rot",
    "rx",
    "ry",
    "rz",
]

PAULI_I = np.eye(2, dtype=np.complex128)
PAULI_X = np.array([[0, 1], [1, 0]], dtype=np.complex128)
PAULI_Y = np.array([[0, -1j], [1j, 0]], dtype=np.complex128)
PAULI_Z = np.array([[1, 0], [0, -1]], dtype=np.complex128)


def _angle(phi, name: str) -> tuple[jax.Array, jnp.dtype]:
    phi = as_array(phi, name)
    return phi, jnp.result_type(phi.dtype, jnp.complex64)


def _mat(a, b, c, d) -> jax.Array:
    """Stack four broadcast entries into ``(..., 2, 2)``."""
    return jnp.stack([jnp.stack([a, b], -1), jnp.stack([c, d], -1)], -2)


def rx(phi) -> Complex[Array, "... 2 2"]:
    """RX(φ) = exp(-i φ X / 2) = [[cos φ/2, -i sin φ/2], [-i sin φ/2, cos φ/2]].

    Args:
      phi: float array (any shape) of rotation angles φ.

    Returns:
      Complex array of shape ``phi.shape + (2, 2)``: complex64 for a float32 angle, complex128 for float64.

    Raises:
      TypeError: a non-float angle (Python numbers are promoted).
    """
    phi, dt = _angle(phi, "phi")
    c, s = jnp.cos(phi / 2).astype(dt), (-1j * jnp.sin(phi / 2)).astype(dt)
    return _mat(c, s, s, c)


def ry(phi) -> Complex[Array, "... 2 2"]:
    """RY(φ) = exp(-i φ Y / 2) = [[cos φ/2, -sin φ/2], [sin φ/2, cos φ/2]].

    Args:
      phi: float array (any shape) of rotation angles φ.

    Returns:
      Complex array of shape ``phi.shape + (2, 2)``: complex64 for a float32 angle, complex128 for float64.

    Raises:
      TypeError: a non-float angle (Python numbers are promoted).
    """
    phi, dt = _angle(phi, "phi")
    c, s = jnp.cos(phi / 2).astype(dt), jnp.sin(phi / 2).astype(dt)
    return _mat(c, -s, s, c)


def rz(phi) -> Complex[Array, "... 2 2"]:
    """RZ(φ) = exp(-i φ Z / 2) = diag(e^{-iφ/2}, e^{iφ/2}).

    Args:
      phi: float array (any shape) of rotation angles φ.

    Returns:
      Complex array of shape ``phi.shape + (2, 2)``: complex64 for a float32 angle, complex128 for float64.

    Raises:
      TypeError: a non-float angle (Python numbers are promoted).
    """
    phi, dt = _angle(phi, "phi")
    e = jnp.exp(-0.5j * phi).astype(dt)
    z = jnp.zeros_like(e)
    return _mat(e, z, z, jnp.conj(e))


def rot(a, b, c) -> Complex[Array, "... 2 2"]:
    """Rot(a, b, c) = RZ(c) RY(b) RZ(a) (RZ(a) acts first), in closed form:

    [[e^{-i(a+c)/2} cos b/2, -e^{i(a-c)/2} sin b/2], [e^{-i(a-c)/2} sin b/2, e^{i(a+c)/2} cos b/2]].

    Args:
      a: float array of first RZ angles.
      b: float array of RY angles, broadcastable with ``a``.
      c: float array of last RZ angles, broadcastable with ``a``.

    Returns:
      Complex array of shape ``broadcast(a, b, c).shape + (2, 2)``: complex64 for float32 angles,
      complex128 when ``a`` or ``b`` is float64.

    Raises:
      TypeError: a non-float angle (Python numbers are promoted).
    """
    a, dt = _angle(a, "a")
    b, _ = _angle(b, "b")
    c, _ = _angle(c, "c")
    cb, sb = jnp.cos(b / 2), jnp.sin(b / 2)
    p, m = jnp.exp(-0.5j * (a + c)).astype(dt), jnp.exp(0.5j * (a - c)).astype(dt)
    return _mat(p * cb, -m * sb, jnp.conj(m) * sb, jnp.conj(p) * cb)


def hadamard(dtype=jnp.complex64) -> Complex[Array, "2 2"]:
    """The Hadamard gate H = (X + Z)/√2.

    Args:
      dtype: the complex dtype of the result.

    Returns:
      ``(2, 2)`` array of ``dtype``.
    """
    return jnp.asarray((PAULI_X + PAULI_Z) / np.sqrt(2), dtype=dtype)


def cnot(dtype=jnp.complex64) -> Complex[Array, "4 4"]:
    """CNOT = |0⟩⟨0| ⊗ I + |1⟩⟨1| ⊗ X, the control on the first wire (index order ``(control, target)``).

    Args:
      dtype: the complex dtype of the result.

    Returns:
      ``(4, 4)`` array of ``dtype`` (the permutation of basis states 0, 1, 3, 2); apply with :func:`apply_2q`.
    """
    return jnp.asarray(np.eye(4)[[0, 1, 3, 2]], dtype=dtype)


def cz(dtype=jnp.complex64) -> Complex[Array, "4 4"]:
    """CZ = diag(1, 1, 1, -1) (symmetric in its two wires).

    Args:
      dtype: the complex dtype of the result.

    Returns:
      ``(4, 4)`` array of ``dtype``.
    """
    return jnp.asarray(np.diag([1.0, 1.0, 1.0, -1.0]), dtype=dtype)


def check_unitary(U, name: str = "U", *, atol: float = 1e-6) -> jax.Array:
    """Return the square matrix ``U``; raise unless ``max |U†U - I| <= atol``.

    Args:
      U: a square (complex) matrix.
      name: argument name used in the error message.
      atol: absolute tolerance on the entries of ``U†U - I``.

    Returns:
      ``U`` (under ``jit``, wrapped in a run-time check: use the returned value).

    Raises:
      ValueError: ``U`` is not unitary within ``atol`` (eagerly; under ``jit`` the same message at run time).
    """

    def bad(u):
        u = jnp.asarray(u)
        return ~(jnp.max(jnp.abs(u.conj().T @ u - jnp.eye(u.shape[0], dtype=u.dtype))) <= atol)

    return value_check(U, bad, f"{name} must be unitary, max |U^dagger U - I| <= {atol:g}")


def _wire(q, n: int, name: str) -> int:
    return check_int(q, f"{name} (qubit index for a {n}-qubit state)", min_value=0, max_value=n - 1)


def _gate(U, name: str, dim: int, check: bool) -> jax.Array:
    U = as_array(U, name, kind="complex", shape=(dim, dim))
    if check:
        U = check_unitary(U, name)
    return U


def _state(psi) -> jax.Array:
    psi = as_array(psi, "psi", kind="complex")
    if psi.ndim < 1 or any(s != 2 for s in psi.shape):
        raise ValueError(f"psi must have shape (2,)*n, got shape {tuple(psi.shape)}")
    return psi


def apply_1q(psi: Complex[Array, "..."], U: Complex[Array, "2 2"], q: int, *, check: bool = False) -> jax.Array:
    """ψ' = U acting on qubit ``q``: ψ'[.., a, ..] = Σ_b U[a, b] ψ[.., b, ..] (axis ``q``).

    Evaluated on the free reshape ``(2^q, 2, 2^{n-q-1})`` of the state as two scaled sums of its halves, which
    XLA fuses into one pass without transposes.

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      U: ``(2, 2)`` complex (or real float) array, the gate.
      q: int in ``[0, n)``, the qubit.
      check: also check that ``U`` is unitary (``max |U†U - I| <= 1e-6``).

    Returns:
      Array of shape ``(2,)*n`` and dtype ``result_type(psi, U)``.

    Raises:
      TypeError: ``q`` not an int; ``psi`` or ``U`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; ``U`` not ``(2, 2)``; ``q`` out of range; with ``check``,
        ``U`` not unitary (under ``jit``: at run time).
    """
    psi = _state(psi)
    n = psi.ndim
    q = _wire(q, n, "q")
    U = _gate(U, "U", 2, check)
    U = U.astype(jnp.result_type(psi.dtype, U.dtype))
    s = psi.reshape(2**q, 2, 2 ** (n - q - 1))
    a, b = s[:, 0], s[:, 1]
    out = jnp.stack([U[0, 0] * a + U[0, 1] * b, U[1, 0] * a + U[1, 1] * b], axis=1)
    return out.reshape(psi.shape)


def apply_2q(psi: Complex[Array, "..."], U: Complex[Array, "4 4"], q1: int, q2: int, *, check: bool = False):
    """ψ' = U acting on qubits ``(q1, q2)``, ``U``'s index order ``(q1, q2)`` (big-endian: q1 is the high bit).

    ψ'[.., a, .., b, ..] = Σ_{c,d} U[(a, b), (c, d)] ψ[.., c, .., d, ..], as
    ``tensordot(U.reshape(2, 2, 2, 2), ψ, ([2, 3], [q1, q2]))`` with the new axes moved back.

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      U: ``(4, 4)`` complex (or real float) array, the gate (e.g. :func:`cnot` with control ``q1``).
      q1: int in ``[0, n)``, the first wire of ``U``.
      q2: int in ``[0, n)``, the second wire, different from ``q1``.
      check: also check that ``U`` is unitary (``max |U†U - I| <= 1e-6``).

    Returns:
      Array of shape ``(2,)*n`` and dtype ``result_type(psi, U)``.

    Raises:
      TypeError: ``q1`` or ``q2`` not an int; ``psi`` or ``U`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; ``U`` not ``(4, 4)``; a wire out of range; ``q1 == q2``;
        with ``check``, ``U`` not unitary (under ``jit``: at run time).
    """
    psi = _state(psi)
    n = psi.ndim
    q1, q2 = _wire(q1, n, "q1"), _wire(q2, n, "q2")
    if q1 == q2:
        raise ValueError(f"q1 and q2 must be different wires, got q1 = q2 = {q1}")
    U = _gate(U, "U", 4, check).astype(jnp.result_type(psi.dtype, U.dtype))
    out = jnp.tensordot(U.reshape(2, 2, 2, 2), psi, axes=([2, 3], [q1, q2]))
    return jnp.moveaxis(out, (0, 1), (q1, q2))


def apply_diag_1q(psi: Complex[Array, "..."], diag: Complex[Array, "2"], q: int) -> jax.Array:
    """ψ' = diag(d0, d1) on qubit ``q``: ψ'[.., a, ..] = d_a ψ[.., a, ..] (axis ``q``), elementwise.

    Cheaper than :func:`apply_1q` for diagonal gates (RZ, phases).

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      diag: ``(2,)`` complex (or real float) array ``(d0, d1)``.
      q: int in ``[0, n)``, the qubit.

    Returns:
      Array of shape ``(2,)*n`` and dtype ``result_type(psi, diag)``.

    Raises:
      TypeError: ``q`` not an int; ``psi`` or ``diag`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; ``diag`` not ``(2,)``; ``q`` out of range.
    """
    psi = _state(psi)
    n = psi.ndim
    q = _wire(q, n, "q")
    diag = as_array(diag, "diag", kind="complex", shape=(2,))
    return psi * diag.reshape((2,) + (1,) * (n - q - 1)).astype(jnp.result_type(psi.dtype, diag.dtype))
