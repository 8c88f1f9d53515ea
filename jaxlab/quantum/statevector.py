r"""Statevectors of shape ``(2,)*n`` and expectation values.

* ``zero_state(n)``: ψ[0, …, 0] = 1 (the state |0…0⟩).
* ``expval_z(ψ, q) = Σ |ψ|² s_q`` with ``s_q = (+1, -1)`` broadcast along axis ``q`` (no contraction).
* ``expval_pauli(ψ, "ZIXI") = ⟨ψ, P ψ⟩``: a string of I/Z only is diagonal, ``Σ |ψ|² Π_q s_q``; otherwise the
  X/Y/Z factors are applied with :func:`jaxlab.quantum.gates.apply_1q` and the result is ``Re vdot(ψ, Pψ)``.
* ``expval_op(ψ, O, wires) = ⟨ψ, O ψ⟩`` for a Hermitian ``O`` of shape ``(2^k, 2^k)`` on ``k`` wires, by the
  same tensordot as a ``k``-qubit gate.

Batch over states with ``jax.vmap``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Complex, Float

from jaxlab.core.validation import as_array, check_int, value_check
from jaxlab.quantum.gates import PAULI_X, PAULI_Y, PAULI_Z, _state, _wire, apply_1q

__all__ = [
    "check_pauli",
    "expval_op",
    "expval_pauli",
    "expval_z",
    "normalize",
    "pauli_diagonal",
    "probabilities",
    "zero_state",
]

_PAULIS = {"X": PAULI_X, "Y": PAULI_Y, "Z": PAULI_Z}


def zero_state(n: int, dtype=jnp.complex64) -> Complex[Array, "..."]:
    """The computational basis state |0…0⟩ on ``n`` qubits: ψ[0, …, 0] = 1, every other amplitude 0.

    Args:
      n: int >= 1, the number of qubits.
      dtype: the complex dtype of the state.

    Returns:
      Array of shape ``(2,)*n`` and ``dtype``.

    Raises:
      TypeError: ``n`` not an int.
      ValueError: ``n < 1``.
    """
    n = check_int(n, "n", min_value=1)
    return jnp.zeros((2,) * n, dtype=dtype).at[(0,) * n].set(1)


def normalize(psi: Complex[Array, "..."]) -> Complex[Array, "..."]:
    """ψ / ‖ψ‖₂ (NaN for the zero vector).

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.

    Returns:
      Array of the shape and dtype of ``psi``, of unit norm.

    Raises:
      TypeError: ``psi`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``.
    """
    psi = _state(psi)
    return psi / jnp.sqrt(jnp.sum(jnp.abs(psi) ** 2))


def probabilities(psi: Complex[Array, "..."]) -> Float[Array, "..."]:
    """Born probabilities |ψ|² of the basis states.

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.

    Returns:
      Real float array of the shape of ``psi`` (index ``(b_0, …, b_{n-1})`` is the probability of |b_0…b_{n-1}⟩).

    Raises:
      TypeError: ``psi`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``.
    """
    return jnp.abs(_state(psi)) ** 2


def expval_z(psi: Complex[Array, "..."], q: int) -> Float[Array, ""]:
    """⟨Z_q⟩ = Σ_b |ψ_b|² s_q(b), s_q(b) = +1 if bit q of b is 0, else -1 (no contraction).

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      q: int in ``[0, n)``, the qubit.

    Returns:
      Real float scalar in [-1, 1] for a normalized state.

    Raises:
      TypeError: ``q`` not an int; ``psi`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; ``q`` out of range.
    """
    psi = _state(psi)
    q = _wire(q, psi.ndim, "q")
    p = jnp.abs(psi) ** 2
    return jnp.sum(jnp.moveaxis(p, q, 0) * jnp.array([1.0, -1.0], p.dtype).reshape((2,) + (1,) * (psi.ndim - 1)))


def check_pauli(pauli: str, n: int, name: str = "pauli") -> str:
    """Validate a Pauli string: ``n`` letters from ``IXYZ`` (either case), letter q acting on qubit q.

    Args:
      pauli: the string, e.g. ``"ZIXI"``.
      n: int, the number of qubits (required length).
      name: argument name used in error messages.

    Returns:
      ``pauli`` upper-cased.

    Raises:
      TypeError: ``pauli`` is not a string.
      ValueError: a length other than ``n``, or a letter outside I, X, Y, Z.
    """
    if not isinstance(pauli, str):
        raise TypeError(f"{name} must be a string of I/X/Y/Z letters, got {type(pauli).__name__} {pauli!r}")
    p = pauli.upper()
    if len(p) != n:
        raise ValueError(f"{name} must have one letter per qubit ({n}), got {len(p)} letters in {pauli!r}")
    bad = sorted(set(p) - set("IXYZ"))
    if bad:
        raise ValueError(f"{name} must contain only the letters I, X, Y, Z, got {bad} in {pauli!r}")
    return p


def pauli_diagonal(pauli: str) -> np.ndarray:
    """The diagonal of a Pauli string of I/Z letters: ⊗_q d_q with d = (1, -1) for Z and (1, 1) for I.

    Args:
      pauli: a string of ``n >= 1`` letters from ``IZ`` (either case); X and Y are not diagonal.

    Returns:
      ``(2^n,)`` float64 numpy array of ±1, flattened big-endian (qubit 0 is the most significant bit).

    Raises:
      TypeError: ``pauli`` is not a string.
      ValueError: ``pauli`` is empty or has a letter other than I and Z (use :func:`expval_pauli` for X/Y).
    """
    if not isinstance(pauli, str):
        raise TypeError(f"pauli must be a string of I/Z letters, got {type(pauli).__name__} {pauli!r}")
    p = pauli.upper()
    if not p or set(p) - {"I", "Z"}:
        raise ValueError(f"pauli must be a non-empty string of the diagonal letters I and Z, got {pauli!r} "
                         "(X and Y are not diagonal: use expval_pauli)")
    d = np.ones(1)
    for c in p:
        d = np.kron(d, [1.0, -1.0] if c == "Z" else [1.0, 1.0])
    return d


def expval_pauli(psi: Complex[Array, "..."], pauli: str) -> Float[Array, ""]:
    """⟨ψ, P ψ⟩ for a Pauli string P = P_0 ⊗ … ⊗ P_{n-1} (one letter per qubit, e.g. ``"ZIXI"``).

    An I/Z string is diagonal, Σ_b |ψ_b|² Π_q s_q(b); otherwise the X/Y/Z factors are applied with
    :func:`~jaxlab.quantum.gates.apply_1q` and the result is Re vdot(ψ, Pψ).

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      pauli: a string of ``n`` letters from ``IXYZ`` (either case).

    Returns:
      Real float scalar.

    Raises:
      TypeError: ``pauli`` not a string; ``psi`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; ``pauli`` of the wrong length or with other letters.
    """
    psi = _state(psi)
    p = check_pauli(pauli, psi.ndim)
    if set(p) <= {"I", "Z"}:
        d = jnp.asarray(pauli_diagonal(p), dtype=jnp.real(psi).dtype)
        return jnp.sum(jnp.abs(psi.reshape(-1)) ** 2 * d)
    phi = psi
    for q, c in enumerate(p):
        if c != "I":
            phi = apply_1q(phi, jnp.asarray(_PAULIS[c], psi.dtype), q)
    return jnp.real(jnp.vdot(psi, phi))


def expval_op(psi: Complex[Array, "..."], O: Complex[Array, "d d"], wires) -> Float[Array, ""]:
    """⟨ψ, O ψ⟩ for a Hermitian ``O`` acting on the ``k`` distinct ``wires`` (identity elsewhere).

    ``O``'s index order follows ``wires`` (big-endian: ``wires[0]`` is the high bit); it is applied with the
    same tensordot as a ``k``-qubit gate, and the real part of vdot(ψ, Oψ) is returned.

    Args:
      psi: complex (or real float) array of shape ``(2,)*n``, the statevector.
      O: ``(2^k, 2^k)`` complex (or real float) array, Hermitian within 1e-6 max(1, max |O|).
      wires: an int or a tuple/list of ``k`` distinct ints in ``[0, n)``.

    Returns:
      Real float scalar.

    Raises:
      TypeError: a wire not an int; ``psi`` or ``O`` of an integer dtype.
      ValueError: ``psi`` not of shape ``(2,)*n``; a wire out of range or repeated; ``O`` of the wrong
        shape or not Hermitian (under ``jit``: at run time).
    """
    psi = _state(psi)
    n = psi.ndim
    wires = tuple(_wire(w, n, "wires") for w in (wires if isinstance(wires, (tuple, list)) else (wires,)))
    if len(set(wires)) != len(wires):
        raise ValueError(f"wires must be distinct, got {wires}")
    k = len(wires)
    O = as_array(O, "O", kind="complex", shape=(2**k, 2**k))
    O = value_check(O, lambda o: jnp.max(jnp.abs(o - o.conj().T)) > 1e-6 * jnp.maximum(1.0, jnp.max(jnp.abs(o))),
                    "O must be Hermitian (max |O - O^dagger| <= 1e-6 max(1, max |O|))")
    O = O.astype(jnp.result_type(psi.dtype, O.dtype))
    out = jnp.tensordot(O.reshape((2,) * (2 * k)), psi, axes=(tuple(range(k, 2 * k)), wires))
    out = jnp.moveaxis(out, tuple(range(k)), wires)
    return jnp.real(jnp.vdot(psi, out))
