r"""Data re-uploading quantum neural networks on the pure-JAX statevector simulator.

Papers: Xu, Zhang, Yan, "The Spectral Amplitude Principle for Dynamics of Quantum Neural Networks"
(arXiv:2409.06682); the model class is that of Schuld, Sweke, Meyer, "Effect of data encoding on the expressive
power of variational quantum machine learning models" (arXiv:2008.08605). The ansatz details below are
**reconstructed** (the paper's exact circuits are not available).

Model, for ``x ∈ ℝ``:

    f_θ(x) = ⟨0| U(x, θ)† O U(x, θ) |0⟩,   U(x, θ) = W_L(θ_L) S(x) W_{L-1}(θ_{L-1}) ⋯ W_1(θ_1) S(x) W_0(θ_0)

* encoding ``S(x) = ⊗_q exp(-i x β_q P_q / 2)`` with ``P = X`` (``encoding="rx"``), ``Y`` or ``Z``;
  scales ``β_q = 1`` (``"unary"``), ``2^q`` (``"binary"``), ``3^q`` (``"ternary"``) or a tuple of numbers;
* trainable block ``W(θ_l)``: ``Rot(θ_{l,q,0}, θ_{l,q,1}, θ_{l,q,2})`` on every qubit, then the entangler:
  a CNOT ring ``q → q+1 mod n`` (one CNOT for n = 2, none for n = 1), a CZ ring, or nothing;
* observable ``O``: ``"z0"`` (Z on qubit 0), ``"mean_z"`` ((1/n) Σ_q Z_q), a Pauli string such as ``"ZIXI"``,
  a Pauli sum such as ``"0.5*ZZI + 0.5*IZZ"``, or a tuple of ``(coefficient, string)`` pairs.

Parameters ``θ ∈ ℝ^{(L+1)×n×3}``. Simulation: the encoding gate of a layer is multiplied into the next block's
``Rot`` (one 2×2 matrix V_{l,q} per qubit and layer), the gates of a block are applied one pair of neighbouring
qubits at a time (their 4×4 Kronecker product as four scaled sums of slices of the state: one pass, 2 complex
multiply-adds per amplitude and qubit), the CNOT ring is one fixed permutation of the 2^n amplitudes (a
gather), a CZ ring one sign vector, and the L + 1 blocks run under ``lax.scan`` so compile time does not grow
with L. A Z-diagonal observable is one weighted sum of |ψ|². The complex dtype follows ``params`` (float32 ->
complex64, float64 -> complex128).

Gradient: the adjoint method (Jones, Gacon, "Efficient calculation of gradients in classical simulations of
variational quantum algorithms", arXiv:2009.02823), as the derivative rule of f as a function of the gates V.
With φ = Oψ, ḟ = 2 Re ⟨φ|ψ̇⟩. Let k_l be the state right after block l's gates and φ_l = (E V_L ⋯ E)† φ the
bra at the same point (E the entangler). The gates of a block act on distinct qubits and commute, so
[derived] ḟ = 2 Re Σ_{l,q} Σ_{ij} A_{l,q}[i, j] V̇_{l,q}[i, j] with A_{l,q} = H_{l,q} conj(V_{l,q}) and
H_{l,q}[i, j] = Σ_rest conj(φ_l)[.., i, ..] k_l[.., j, ..], the one-qubit cross density of (φ_l, k_l). One
forward pass (keeping the L + 1 states k_l), one backward pass over φ and one reduction per block give the
whole gradient; forward mode (``jax.jvp``) uses the same rule.

:func:`param_shift_grad` is the parameter-shift reference ``∂_j f = ½[f(θ + π/2 e_j) − f(θ − π/2 e_j)]``, exact
here because every parameter enters one gate ``exp(-i θ_j P / 2)``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Complex, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_finite, check_int, check_positive, is_concrete
from jaxlab.quantum.gates import PAULI_X, PAULI_Y, PAULI_Z, apply_1q, rot, rx, ry, rz
from jaxlab.quantum.papers import ADJOINT, SAP, SCHULD
from jaxlab.quantum.statevector import check_pauli, expval_pauli, pauli_diagonal

__all__ = [
    "ENCODINGS",
    "ENTANGLERS",
    "SCALES",
    "QNNConfig",
    "encoding_scales",
    "init_qnn_params",
    "observable_norm",
    "observable_terms",
    "param_shift_grad",
    "qnn_apply",
    "qnn_fn",
    "qnn_state",
]

ENCODINGS = ("rx", "ry", "rz")
SCALES = ("unary", "binary", "ternary")
ENTANGLERS = ("cnot_ring", "cz_ring", "none")
BLOCKS = ("rot",)
_PAULIS = {"X": PAULI_X, "Y": PAULI_Y, "Z": PAULI_Z}


class QNNConfig(NamedTuple):
    """Static structure of a data re-uploading QNN (hashable: pass it as a static argument of ``jit``).

    The model is f_θ(x) = ⟨0| U† O U |0⟩, U = W_L S(x) ⋯ W_1 S(x) W_0 (see the module docstring; the
    ansatz is reconstructed, the paper's exact circuits were not available).

    Attributes:
      n_qubits: int >= 1, the number of qubits n.
      n_layers: int >= 1, the number L of encoding layers S(x) (there are L + 1 trainable blocks).
      encoding: ``"rx"``, ``"ry"`` or ``"rz"``: the Pauli P_q of S(x) = ⊗_q exp(-i x β_q P_q / 2).
      scales: β_q, ``"unary"`` (1), ``"binary"`` (2^q), ``"ternary"`` (3^q), or a tuple of ``n`` numbers.
      block: the trainable block, ``"rot"`` (Rot on every qubit; the only one implemented).
      entangler: ``"cnot_ring"`` (CNOT q → q+1 mod n), ``"cz_ring"`` or ``"none"``, after every block.
      observable: ``"z0"``, ``"mean_z"``, a Pauli string (``"ZIXI"``), a Pauli sum (``"0.5*ZZI + 0.5*IZZ"``),
        or a tuple of ``(coefficient, string)`` pairs.
    """

    n_qubits: int
    n_layers: int
    encoding: str = "rx"
    scales: str | tuple = "unary"
    block: str = "rot"
    entangler: str = "cnot_ring"
    observable: str | tuple = "z0"


def _check_config(cfg: QNNConfig) -> QNNConfig:
    if not isinstance(cfg, QNNConfig):
        raise TypeError(f"cfg must be a QNNConfig, got {type(cfg).__name__}")
    check_int(cfg.n_qubits, "n_qubits", min_value=1)
    check_int(cfg.n_layers, "n_layers", min_value=1)
    for field, allowed in (("encoding", ENCODINGS), ("block", BLOCKS), ("entangler", ENTANGLERS)):
        if getattr(cfg, field) not in allowed:
            raise ValueError(f"{field} must be one of {allowed}, got {getattr(cfg, field)!r}")
    return cfg


def encoding_scales(cfg: QNNConfig) -> np.ndarray:
    """The encoding scales β_q, q = 0..n-1: 1 (unary), 2^q (binary), 3^q (ternary) or the given tuple.

    With integer scales the model's spectrum is integer, Ω ⊆ {-W..W} with W = L Σ_q β_q
    (:func:`~jaxlab.quantum.fourier.max_frequency`).

    Args:
      cfg: the :class:`QNNConfig`.

    Returns:
      ``(n,)`` float64 numpy array.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: ``n_qubits`` or ``n_layers`` < 1; an unknown encoding, block, entangler or scales name; a
        tuple of scales of the wrong length or with non-finite entries.
    """
    n = _check_config(cfg).n_qubits
    s = cfg.scales
    if isinstance(s, str):
        if s not in SCALES:
            raise ValueError(f"scales must be one of {SCALES} or a tuple of {n} numbers, got {s!r}")
        base = {"unary": 1.0, "binary": 2.0, "ternary": 3.0}[s]
        return base ** np.arange(n, dtype=np.float64) if s != "unary" else np.ones(n)
    beta = np.asarray(s, dtype=np.float64)
    if beta.shape != (n,) or not np.all(np.isfinite(beta)):
        raise ValueError(f"scales must be one of {SCALES} or a tuple of {n} finite numbers, got {s!r}")
    return beta


_NUM = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_TERM = rf"([+-]?)\s*(?:({_NUM})\s*\*\s*)?([A-Za-z]+)"
_SUM = re.compile(rf"\s*{_TERM}(?:\s*[+-]\s*(?:{_NUM}\s*\*\s*)?[A-Za-z]+)*\s*")


def _parse_pauli_sum(obs: str) -> list[tuple[float, str]]:
    """``"0.5*ZZI - 0.25*XIX + IIZ"`` -> ``[(0.5, "ZZI"), (-0.25, "XIX"), (1.0, "IIZ")]``."""
    if not _SUM.fullmatch(obs):
        raise ValueError(f"observable must be a Pauli string or a sum of 'c*PAULI' terms, got {obs!r}")
    return [(float(f"{sign}{c or 1}"), p) for sign, c, p in re.findall(_TERM, obs)]


@functools.lru_cache(maxsize=256)
def observable_terms(cfg: QNNConfig) -> tuple[tuple[float, str], ...]:
    """The observable of ``cfg`` as a Pauli sum O = Σ_k c_k P_k, ``((c_1, P_1), ...)``.

    ``"z0"`` is ``((1.0, "ZI…I"),)``, ``"mean_z"`` the n terms ``(1/n, "I…Z…I")``; a string such as
    ``"0.5*ZZI - 0.25*XIX + IIZ"`` is parsed term by term. Cached per config.

    Args:
      cfg: the :class:`QNNConfig`.

    Returns:
      Tuple of ``(float, str)`` pairs, every string of ``n`` upper-case letters from ``IXYZ``.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: ``n_qubits`` or ``n_layers`` < 1; an unknown encoding, block or entangler; an observable
        that does not parse, or a Pauli string of the wrong length or with other letters.
    """
    n = _check_config(cfg).n_qubits
    obs = cfg.observable
    if obs == "z0":
        return ((1.0, "Z" + "I" * (n - 1)),)
    if obs == "mean_z":
        return tuple((1.0 / n, "I" * q + "Z" + "I" * (n - q - 1)) for q in range(n))
    if isinstance(obs, str):
        pairs = _parse_pauli_sum(obs)
    elif isinstance(obs, tuple) and obs and all(isinstance(t, tuple) and len(t) == 2 for t in obs):
        pairs = [(float(c), p) for c, p in obs]
    else:
        raise ValueError(f"observable must be 'z0', 'mean_z', a Pauli string/sum or ((c, str), ...), got {obs!r}")
    return tuple((c, check_pauli(p, n, "observable")) for c, p in pairs)


def observable_norm(cfg: QNNConfig) -> float:
    """An upper bound on the operator norm ‖O‖_op of the observable: Σ_k |c_k| (exact for ``"z0"`` and
    ``"mean_z"``). It bounds |f_θ(x)| and, by the parameter-shift rule, every |∂_j f_θ(x)|.

    Args:
      cfg: the :class:`QNNConfig`.

    Returns:
      Python float.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: an invalid ``cfg`` (see :func:`observable_terms`).
    """
    return float(sum(abs(c) for c, _ in observable_terms(cfg)))


class _Structure(NamedTuple):
    beta: np.ndarray
    perm: np.ndarray | None  # CNOT ring as a gather index on the flat state
    inv_perm: np.ndarray | None  # its inverse
    cz_signs: np.ndarray | None  # CZ ring as a ±1 vector
    obs_diag: np.ndarray | None  # observable diagonal when it has only I/Z letters
    terms: tuple


def _bits(n: int) -> np.ndarray:
    """(2^n, n) bits of each flat index, big-endian."""
    idx = np.arange(2**n)
    return (idx[:, None] >> (n - 1 - np.arange(n))[None, :]) & 1


def _ring(n: int) -> list[tuple[int, int]]:
    return [] if n == 1 else [(0, 1)] if n == 2 else [(q, (q + 1) % n) for q in range(n)]


@functools.lru_cache(maxsize=256)
def _structure(cfg: QNNConfig) -> _Structure:
    n = cfg.n_qubits
    beta = encoding_scales(cfg)
    perm = inv_perm = signs = None
    bits = _bits(n)
    if cfg.entangler == "cnot_ring" and n > 1:
        # Track where each basis state goes: |b> -> |F(b)>; then psi'[F(b)] = psi[b], i.e. psi' = psi[F^{-1}].
        b = bits.copy()
        for c, t in _ring(n):
            b[:, t] ^= b[:, c]
        image = b @ (1 << (n - 1 - np.arange(n)))
        perm = np.argsort(image).astype(np.int32)  # psi' = psi[perm]
        inv_perm = np.argsort(perm).astype(np.int32)
    elif cfg.entangler == "cz_ring" and n > 1:
        signs = np.ones(2**n)
        for c, t in _ring(n):
            signs *= np.where(bits[:, c] & bits[:, t], -1.0, 1.0)
    terms = observable_terms(cfg)
    diag = None
    if all(set(p) <= {"I", "Z"} for _, p in terms):
        diag = sum(c * pauli_diagonal(p) for c, p in terms)
    return _Structure(beta, perm, inv_perm, signs, diag, terms)


def _permute(v: jax.Array, perm: np.ndarray) -> jax.Array:
    """``v[..., perm]`` for a permutation ``perm`` (unique indices: a plain gather, and a reverse-mode scatter
    without accumulation)."""
    return v.at[..., perm].get(unique_indices=True, mode="promise_in_bounds")


def _entangle(psi: jax.Array, st: _Structure, inverse: bool = False) -> jax.Array:
    """The entangler on flat states ``(..., 2^n)`` (its inverse with ``inverse``): the CNOT ring's permutation,
    the CZ ring's signs (self-inverse) or nothing."""
    if st.perm is not None:
        return _permute(psi, st.inv_perm if inverse else st.perm)
    if st.cz_signs is not None:
        return psi * jnp.asarray(st.cz_signs, jnp.real(psi).dtype)
    return psi


def _groups(n: int, max_size: int = 2) -> list[tuple[int, int]]:
    """Split qubits 0..n-1 into ``ceil(n / max_size)`` contiguous groups of near-equal size ``(start, size)``."""
    g = -(-n // max_size)
    sizes = [n // g + (i < n % g) for i in range(g)]
    starts = np.cumsum([0, *sizes[:-1]])
    return [(int(a), int(k)) for a, k in zip(starts, sizes, strict=True)]


def _kron(U: jax.Array) -> jax.Array:
    """⊗_q U[q] for ``U`` of shape ``(k, 2, 2)`` (big-endian: ``U[0]`` acts on the most significant bit)."""
    M = U[0]
    for u in U[1:]:
        M = jnp.einsum("ab,cd->acbd", M, u).reshape(2 * M.shape[0], 2 * M.shape[1])
    return M


def _apply_group(psi: jax.Array, M: jax.Array, a: int, k: int, n: int) -> jax.Array:
    """``M`` (``2^k × 2^k``) on qubits a..a+k-1 of flat states ``(..., 2^n)``: ψ'[.., i, ..] = Σ_j M[i, j] ψ[.., j, ..]
    on the free reshape ``(..., 2^a, 2^k, 2^{n-a-k})``.

    Written as 2^k scaled sums of slices, which XLA fuses into one pass over the state without the transposes
    of a matmul; with k <= 2 that is 2 complex multiply-adds per amplitude and qubit, half of what a ``16 × 16``
    matmul over 4 qubits costs.
    """
    d = 2**k
    s = psi.reshape(*psi.shape[:-1], 2**a, d, 2 ** (n - a - k))
    cols = [s[..., j, :] for j in range(d)]
    rows = []
    for i in range(d):
        r = M[i, 0] * cols[0]
        for j in range(1, d):
            r = r + M[i, j] * cols[j]
        rows.append(r)
    return jnp.stack(rows, axis=-2).reshape(psi.shape)


def _gates(psi: jax.Array, V_l: jax.Array, n: int) -> jax.Array:
    """⊗_q V_l[q] (``V_l`` of shape ``(n, 2, 2)``) on flat states, one pass per pair of neighbouring qubits."""
    for a, k in _groups(n):
        psi = _apply_group(psi, _kron(V_l[a : a + k]), a, k, n)
    return psi


def _reduced_cross(H: jax.Array, k: int) -> list[jax.Array]:
    """The one-qubit cross densities inside a group of k qubits: from H[I, J] = Σ_rest conj(φ)[.., I, ..] k[.., J, ..]
    (I, J multi-indices of the group), H_q[i, j] = Σ_r H[(r with i at q), (r with j at q)] for each qubit q."""
    T = H.reshape((2,) * (2 * k))
    letters = "abcdefgh"[:k]
    out = []
    for q in range(k):
        rows = "".join("I" if p == q else c for p, c in enumerate(letters))
        cols = "".join("J" if p == q else c for p, c in enumerate(letters))
        out.append(jnp.einsum(f"{rows}{cols}->IJ", T))
    return out


def _check_params(params, cfg: QNNConfig, finite: bool = True) -> jax.Array:
    shape = (cfg.n_layers + 1, cfg.n_qubits, 3)
    return as_array(params, "params", ndim=3, shape=shape, finite=finite)


def _check_x(x) -> jax.Array:
    return as_array(x, "x", ndim=0, finite=True)


def _checked_call(impl: Callable, params, x, cfg: QNNConfig) -> jax.Array:
    """``impl(params, x, cfg)`` behind the input checks, with the value checks of traced inputs compiled into
    ``impl``'s program: under an eager ``vmap`` over x a check of its own would be one more dispatch per call."""
    _check_config(cfg)
    params = _check_params(params, cfg, finite=is_concrete(params))
    x = as_array(x, "x", ndim=0, finite=is_concrete(x))
    return _with_value_checks(impl, params, x, cfg)


@functools.partial(jax.jit, static_argnums=(0, 3))
def _with_value_checks(impl: Callable, params: jax.Array, x: jax.Array, cfg: QNNConfig) -> jax.Array:
    return impl(check_finite(params, "params"), check_finite(x, "x"), cfg)


def _matrices(params: jax.Array, x: jax.Array, cfg: QNNConfig) -> jax.Array:
    """The one ``2 × 2`` gate per block and qubit, ``(L + 1, n, 2, 2)``: V_0 = Rot(θ_0), V_l = Rot(θ_l) S(x)."""
    st = _structure(cfg)
    dt = jnp.result_type(params.dtype, x.dtype)
    params, x = params.astype(dt), x.astype(dt)
    W = rot(params[..., 0], params[..., 1], params[..., 2])
    enc = {"rx": rx, "ry": ry, "rz": rz}[cfg.encoding](x * jnp.asarray(st.beta, dt))  # S(x), (n, 2, 2)
    return jnp.concatenate([W[:1], W[1:] @ enc])


def _run(V: jax.Array, cfg: QNNConfig, keep: bool = False) -> jax.Array | tuple[jax.Array, jax.Array]:
    """ψ = E V_L ⋯ E V_0 |0…0⟩ as a flat ``(2^n,)`` state (E the entangler), the L + 1 blocks under ``lax.scan``;
    with ``keep``, also the ``(L + 1, 2^n)`` states right after each block's gates (before its entangler)."""
    st, n = _structure(cfg), cfg.n_qubits
    psi = jnp.zeros(2**n, V.dtype).at[0].set(1)

    def body(psi, V_l):
        psi = _gates(psi, V_l, n)
        return _entangle(psi, st), psi if keep else None

    psi, kets = jax.lax.scan(body, psi, V)
    return (psi, kets) if keep else psi


def _observe(psi: jax.Array, cfg: QNNConfig) -> jax.Array:
    """⟨ψ|O|ψ⟩ for a flat state: a Z-diagonal O is one weighted sum of |ψ|²."""
    st = _structure(cfg)
    if st.obs_diag is not None:
        p = jnp.abs(psi) ** 2
        return jnp.sum(p * jnp.asarray(st.obs_diag, p.dtype))
    return sum(c * expval_pauli(psi.reshape((2,) * cfg.n_qubits), p) for c, p in st.terms)


def _apply_observable(psi: jax.Array, cfg: QNNConfig) -> jax.Array:
    """O ψ for a flat state, O = Σ_k c_k P_k."""
    st, n = _structure(cfg), cfg.n_qubits
    if st.obs_diag is not None:
        return psi * jnp.asarray(st.obs_diag, jnp.real(psi).dtype)
    out = jnp.zeros_like(psi)
    for c, pauli in st.terms:
        phi = psi.reshape((2,) * n)
        for q, letter in enumerate(pauli):
            if letter != "I":
                phi = apply_1q(phi, jnp.asarray(_PAULIS[letter], psi.dtype), q)
        out = out + c * phi.reshape(-1)
    return out


def _value_and_adjoint(V: jax.Array, cfg: QNNConfig) -> tuple[jax.Array, jax.Array]:
    """f = ⟨ψ|O|ψ⟩ and the coefficients A of its differential, ḟ = 2 Re Σ A ⊙ V̇, by the adjoint method.

    With ψ = U|0⟩ and φ = Oψ, ḟ = 2 Re ⟨φ|ψ̇⟩. Let k_l be the state right after block l's gates (kept from the
    forward pass) and φ_l the bra there, φ_l = (everything after)† O ψ, obtained by un-applying the gates from
    φ = Oψ backwards. The gates of one block act on distinct qubits and commute, so V̇_{l,q} contributes
    ⟨φ_l| (V̇ V†)_q |k_l⟩ and A_{l,q} = H_{l,q} conj(V_{l,q}), with H_{l,q}[i, j] = Σ_rest conj(φ_l)[.., i, ..]
    k_l[.., j, ..] the one-qubit cross density of the pair. Cost: one forward pass, one backward pass over φ
    and one reduction per group of qubits and block.
    """
    st, n = _structure(cfg), cfg.n_qubits
    psi, kets = _run(V, cfg, keep=True)

    def coefficients(bra: jax.Array, k_l: jax.Array, V_l: jax.Array) -> jax.Array:  # bra = conj(φ_l)
        A = []
        for a, k in _groups(n, 4):
            H = jnp.einsum("xiy,xjy->ij", bra.reshape(2**a, 2**k, -1), k_l.reshape(2**a, 2**k, -1))
            A += [h @ jnp.conj(u) for h, u in zip(_reduced_cross(H, k), V_l[a : a + k], strict=True)]
        return jnp.stack(A)

    def body(phi, layer):  # phi: the bra after block l and its entangler
        V_l, k_l = layer
        phi = _entangle(phi, st, inverse=True)
        A_l = coefficients(jnp.conj(phi), k_l, V_l)
        for a, k in _groups(n):
            phi = _apply_group(phi, jnp.conj(_kron(V_l[a : a + k])).T, a, k, n)
        return phi, A_l

    _, A = jax.lax.scan(body, _apply_observable(psi, cfg), (V, kets), reverse=True)
    return _observe(psi, cfg), A


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _expval(V: jax.Array, cfg: QNNConfig) -> jax.Array:
    """f = ⟨ψ|O|ψ⟩ as a function of the gates ``V``. Its derivative rule is :func:`_value_and_adjoint`: reverse mode
    costs about three forward passes and keeps L + 1 states (autodiff through the passes would keep one per pair
    of qubits and transpose every slice), and forward mode (``jvp``, nested too) runs through the same rule."""
    return _observe(_run(V, cfg), cfg)


@_expval.defjvp
def _expval_jvp(cfg: QNNConfig, primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
    f, A = _value_and_adjoint(primals[0], cfg)
    return f, 2 * jnp.real(jnp.sum(A * tangents[0]))


@functools.partial(jax.jit, static_argnums=2)
def _state_impl(params: jax.Array, x: jax.Array, cfg: QNNConfig) -> jax.Array:
    return _run(_matrices(params, x, cfg), cfg).reshape((2,) * cfg.n_qubits)


@functools.partial(jax.jit, static_argnums=2)
def _apply_impl(params: jax.Array, x: jax.Array, cfg: QNNConfig) -> jax.Array:
    return _expval(_matrices(params, x, cfg), cfg)


@functools.lru_cache(maxsize=256)
def qnn_fn(cfg: QNNConfig) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """The model of ``cfg`` as a plain function ``(params, x) -> f_θ(x)``, without input checks.

    One function object per config (cached), so it is a stable static argument of ``jit`` and the
    ``apply_fn`` of :func:`jaxlab.quantum.qntk.empirical_ntk` and
    :func:`jaxlab.quantum.fourier.coefficient_jacobian_of`.

    Args:
      cfg: the circuit structure.

    Returns:
      ``f(params, x)`` with ``params`` of shape ``(L + 1, n, 3)`` and a scalar ``x``; a real scalar.
    """
    return lambda params, x: _apply_impl(params, x, cfg)


@cites(SAP, SCHULD)
def qnn_state(params: Float[Array, "Lp1 n 3"], x: Float[Array, ""], cfg: QNNConfig) -> Complex[Array, "..."]:
    """The QNN's state ψ(x, θ) = U(x, θ)|0…0⟩, U = W_L(θ_L) S(x) ⋯ W_1(θ_1) S(x) W_0(θ_0).

    ``jax.vmap`` over inputs or parameters; the circuit is jit-compiled once per ``cfg``.

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite (``θ[l, q]`` are the Rot angles of block l on qubit q).
      x: float scalar (0-d), the input.
      cfg: the :class:`QNNConfig` (static: one compilation per config).

    Returns:
      Complex array of shape ``(2,)*n``: complex128 when ``params`` or ``x`` is float64, else complex64.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: an invalid field of ``cfg`` (encoding, block, entangler, scales, observable); ``params``
        not of shape ``(L + 1, n, 3)``; ``x`` not a scalar; non-finite entries (under ``jit``: at run time).
    """
    return _checked_call(_state_impl, params, x, cfg)


@cites(SAP, SCHULD, ADJOINT)
def qnn_apply(params: Float[Array, "Lp1 n 3"], x: Float[Array, ""], cfg: QNNConfig) -> Float[Array, ""]:
    """The QNN's output f_θ(x) = ⟨ψ(x, θ)| O |ψ(x, θ)⟩, a finite Fourier series in x.

    The data re-uploading model of Schuld, Sweke, Meyer, "Effect of data encoding on the expressive power of
    variational quantum machine learning models" (arXiv:2008.08605), as studied by Xu, Zhang, Yan, "The
    Spectral Amplitude Principle for Dynamics of Quantum Neural Networks" (arXiv:2409.06682); the ansatz
    (Rot blocks, entangling ring, encoding scales) is reconstructed, since the paper's exact circuits were
    not available. The input checks run at trace time; the circuit is jit-compiled once per ``cfg``.
    Batch with ``jax.vmap``.

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite (``θ[l, q]`` are the Rot angles of block l on qubit q).
      x: float scalar (0-d), the input.
      cfg: the :class:`QNNConfig` (static: one compilation per config).

    Returns:
      Real float scalar, |f| <= :func:`observable_norm` (cfg).

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: an invalid field of ``cfg`` (encoding, block, entangler, scales, observable); ``params``
        not of shape ``(L + 1, n, 3)``; ``x`` not a scalar; non-finite entries (under ``jit``: at run time).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.quantum import QNNConfig, init_qnn_params, qnn_apply
      >>> cfg = QNNConfig(n_qubits=2, n_layers=2, scales="binary")  # spectrum {-6..6}
      >>> params = init_qnn_params(jax.random.key(0), cfg)  # shape (3, 2, 3)
      >>> f = jax.vmap(qnn_apply, (None, 0, None))(params, jnp.linspace(0.0, 6.0, 5), cfg)
      >>> f.shape
      (5,)
    """
    return _checked_call(_apply_impl, params, x, cfg)


def init_qnn_params(key, cfg: QNNConfig, scale: float | None = None, dtype=None) -> Float[Array, "Lp1 n 3"]:
    """Random QNN parameters: θ ~ U[0, 2π) (``scale=None``) or θ ~ U[-scale, scale], i.i.d.

    Args:
      key: a PRNG key.
      cfg: the :class:`QNNConfig`.
      scale: ``None`` (uniform angles) or a positive float, the half-width of a symmetric interval.
      dtype: float dtype of the result (default: the default float dtype).

    Returns:
      ``(L + 1, n, 3)`` float array.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: ``n_qubits`` or ``n_layers`` < 1; an unknown encoding, block or entangler; ``scale`` not a
        positive finite scalar.
    """
    _check_config(cfg)
    shape = (cfg.n_layers + 1, cfg.n_qubits, 3)
    dtype = dtype or jnp.result_type(float)
    if scale is None:
        return jax.random.uniform(key, shape, dtype, 0.0, 2 * jnp.pi)
    scale = check_positive(scale, "scale")
    return jax.random.uniform(key, shape, dtype, -scale, scale)


@cites(SAP)
def param_shift_grad(params: Float[Array, "Lp1 n 3"], x: Float[Array, ""], cfg: QNNConfig) -> Float[Array, "Lp1 n 3"]:
    """The gradient by the parameter-shift rule: ∂f/∂θ_j = ½[f(θ + π/2 e_j) − f(θ − π/2 e_j)].

    Exact here because every parameter enters one gate exp(-i θ_j P / 2); 2P circuit evaluations, vmapped.
    A reference for ``jax.grad(qnn_apply)`` and the rule that hardware would use.

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite (``θ[l, q]`` are the Rot angles of block l on qubit q).
      x: float scalar (0-d), the input.
      cfg: the :class:`QNNConfig` (static: one compilation per config).

    Returns:
      ``(L + 1, n, 3)`` float array, ∂f_θ(x)/∂θ.

    Raises:
      TypeError: ``cfg`` not a :class:`QNNConfig`, or ``n_qubits``/``n_layers`` not ints.
      ValueError: an invalid field of ``cfg`` (encoding, block, entangler, scales, observable); ``params``
        not of shape ``(L + 1, n, 3)``; ``x`` not a scalar; non-finite entries.
    """
    _check_config(cfg)
    params, x = _check_params(params, cfg), _check_x(x)
    P = params.size
    shifts = (jnp.pi / 2) * jnp.eye(P, dtype=params.dtype).reshape((P, *params.shape))
    f = jax.vmap(lambda p: qnn_apply(p, x, cfg))
    return (0.5 * (f(params + shifts) - f(params - shifts))).reshape(params.shape)
