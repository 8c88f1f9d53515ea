r"""Fourier structure of re-uploading QNNs: spectrum, redundancies, exact coefficients, coefficient Jacobian.

Papers: Schuld, Sweke, Meyer, "Effect of data encoding on the expressive power of variational quantum machine
learning models" (arXiv:2008.08605); Xu, Zhang, Yan, "The Spectral Amplitude Principle for Dynamics of Quantum
Neural Networks" (arXiv:2409.06682).

* A QNN is a finite Fourier series ``f_θ(x) = Σ_{ω∈Ω} c_ω(θ) e^{iωx}`` with ``c_{-ω} = conj(c_ω)``.
* Spectrum: ``Ω = {Λ_k − Λ_j}`` where each ``Λ`` sums one eigenvalue of every encoding generator; the
  redundancy ``R(ω) = #{(j, k): Λ_k − Λ_j = ω}`` counts index pairs of the multisets (``Σ_ω R(ω) = Π_g dim_g²``).
  For N unary Pauli gates (eigenvalues ±1/2), ``Ω = {−N..N}`` and ``R(ω) = C(2N, N + ω)``.
* Coefficients, for an integer spectrum of maximum frequency W, from ``M ≥ 2W + 1`` equispaced samples
  ``x_m = x_0 + 2πm/M``: ``c_ω = (1/M) Σ_m f(x_m) e^{−iωx_m} = e^{−iωx_0} fft(f)_ω / M``, exact (no aliasing),
  returned in the order ω = −W..W.
* Coefficient Jacobian ``J_{ωj} = ∂c_ω/∂θ_j``: the same transform of the Jacobian of f on the grid. The
  parameter-shift rule bounds ``|J_{ωj}| ≤ ‖O‖`` and ``Σ_ω |J_{ωj}|² = mean_x (∂_j f)² ≤ ‖O‖²``.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, Complex, Float

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int, value_check
from jaxlab.quantum.papers import SAP, SCHULD
from jaxlab.quantum.qnn import QNNConfig, _check_config, _check_params, encoding_scales, qnn_fn

__all__ = [
    "coefficient_jacobian",
    "coefficient_jacobian_of",
    "encoding_spectrum",
    "eval_fourier",
    "fourier_coefficients",
    "fourier_coeffs_of",
    "grid",
    "grid_coefficients",
    "max_frequency",
    "spectrum_from_eigenvalues",
]

_ROUND = 9  # decimals used to identify equal frequencies (eigenvalue sums are exact in binary for our scales)


@cites(SCHULD)
def spectrum_from_eigenvalues(eigs_per_gate: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """The frequency spectrum Ω = {Λ_k − Λ_j} and its redundancies for encoding gates with given eigenvalues.

    Schuld, Sweke, Meyer, "Effect of data encoding on the expressive power of variational quantum machine
    learning models" (arXiv:2008.08605): a model whose data enter through gates exp(−i x H_g) is a Fourier
    series whose frequencies are the differences of the sums Λ = Σ_g λ_g (one eigenvalue λ_g of each H_g,
    with multiplicity). The redundancy R(ω) = #{(j, k): Λ_k − Λ_j = ω} counts ordered pairs, so
    Σ_ω R(ω) = Π_g dim_g². Frequencies are identified after rounding to 9 decimals.

    Args:
      eigs_per_gate: a non-empty sequence with one entry per gate, each a non-empty sequence of finite
        eigenvalues (e.g. ``(-0.5, 0.5)`` for exp(−i x P/2)).

    Returns:
      ``(freqs, redundancy)``: numpy arrays of equal length, ``freqs`` sorted ascending and symmetric about 0
      (int64 when all integers, else float64), ``redundancy`` int64.

    Raises:
      ValueError: no gates, or a gate with no or non-finite eigenvalues.

    Example:
      >>> from jaxlab.quantum import spectrum_from_eigenvalues
      >>> freqs, red = spectrum_from_eigenvalues([(-0.5, 0.5), (-0.5, 0.5)])  # two unary Pauli encodings
      >>> freqs.tolist(), red.tolist()  # R(ω) = C(4, 2 + ω)
      ([-2, -1, 0, 1, 2], [1, 4, 6, 4, 1])
    """
    if len(eigs_per_gate) == 0:
        raise ValueError("eigs_per_gate must list at least one gate's eigenvalues, got none")
    sums: Counter = Counter({0.0: 1})
    for g, eigs in enumerate(eigs_per_gate):
        e = np.asarray(eigs, dtype=np.float64).ravel()
        if e.size == 0 or not np.all(np.isfinite(e)):
            raise ValueError(f"eigs_per_gate[{g}] must be a non-empty list of finite eigenvalues, got {eigs!r}")
        new: Counter = Counter()
        for s, cnt in sums.items():
            for lam in e:
                new[round(s + float(lam), _ROUND)] += cnt
        sums = new
    diffs: Counter = Counter()
    for a, ca in sums.items():
        for b, cb in sums.items():
            diffs[round(b - a, _ROUND)] += ca * cb
    freqs = np.array(sorted(diffs))
    red = np.array([diffs[w] for w in freqs], dtype=np.int64)
    if np.allclose(freqs, np.round(freqs), atol=10.0 ** -(_ROUND - 1)):
        freqs = np.round(freqs).astype(np.int64)
    return freqs, red


@cites(SCHULD)
def encoding_spectrum(cfg: QNNConfig) -> tuple[np.ndarray, np.ndarray]:
    """Spectrum and redundancies of a QNN: its ``n L`` encoding gates exp(−i x β_q P/2) have eigenvalues ±β_q/2.

    :func:`spectrum_from_eigenvalues` of those gates (Schuld, Sweke, Meyer, arXiv:2008.08605). For unary
    scales Ω = {−nL..nL} with R(ω) = C(2nL, nL + ω); binary and ternary scales spread the same number of
    gates over more frequencies.

    Args:
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      ``(freqs, redundancy)`` numpy arrays (see :func:`spectrum_from_eigenvalues`).

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg`` (see :func:`~jaxlab.quantum.qnn.encoding_scales`).

    Example:
      >>> from jaxlab.quantum import QNNConfig, encoding_spectrum
      >>> freqs, red = encoding_spectrum(QNNConfig(n_qubits=2, n_layers=1, scales="binary"))
      >>> freqs.tolist(), red.tolist()  # β = (1, 2): Λ ∈ {±1/2, ±3/2}, R(ω) = 4 − |ω|
      ([-3, -2, -1, 0, 1, 2, 3], [1, 2, 3, 4, 3, 2, 1])
    """
    beta = encoding_scales(_check_config(cfg))
    return spectrum_from_eigenvalues([(-b / 2, b / 2) for _ in range(cfg.n_layers) for b in beta])


def max_frequency(cfg: QNNConfig) -> int:
    """W = L Σ_q |β_q|, the largest frequency of the QNN's spectrum (integer scales only).

    ``2W + 1`` equispaced samples determine the model exactly (no aliasing), which is what the FFT-based
    functions of this module rely on.

    Args:
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      Python int W.

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg``; non-integer scales (the spectrum is then not integer).
    """
    beta = encoding_scales(_check_config(cfg))
    if not np.allclose(beta, np.round(beta)):
        raise ValueError(f"scales must be integers for the FFT path (integer frequencies), got {tuple(beta)}")
    return round(cfg.n_layers * float(np.sum(np.abs(beta))))


def _degree_for(cfg: QNNConfig, degree: int | None) -> int:
    need = max_frequency(cfg)
    if degree is None:
        return need
    degree = check_int(degree, "degree", min_value=0)
    if degree < need:
        raise ValueError(
            f"degree must be >= {need} (the largest frequency of the model's spectrum, "
            f"n_layers * sum(scales)), got {degree}"
        )
    return degree


def grid(n_points: int, dtype=None) -> Float[Array, " M"]:
    """The equispaced grid x_m = 2πm/M, m = 0..M−1, on which Fourier coefficients are exact.

    Args:
      n_points: int M >= 1.
      dtype: float dtype (default: the default float dtype).

    Returns:
      ``(M,)`` float array.

    Raises:
      TypeError: ``n_points`` not an int.
      ValueError: ``n_points < 1``.
    """
    M = check_int(n_points, "n_points", min_value=1)
    return 2 * jnp.pi * jnp.arange(M, dtype=dtype or jnp.result_type(float)) / M


def _check_grid(x_grid) -> jax.Array:
    """Return ``x_grid`` after checking that it is ``x_0 + 2πm/M`` (eagerly, or at run time under ``jit``)."""
    x = as_array(x_grid, "x_grid", ndim=1, finite=True)
    M = x.shape[0]
    tol = 1e-5 if x.dtype == jnp.float32 else 1e-9

    def bad(xs):
        # measured in the grid's own dtype (the tolerance follows it)
        want = xs[0] + 2 * jnp.pi * jnp.arange(M, dtype=xs.dtype) / M
        return jnp.max(jnp.abs(xs - want)) > tol * jnp.maximum(1.0, jnp.abs(xs[0]) + 2 * jnp.pi)

    return value_check(x, bad, f"x_grid must be equispaced, x_m = x_0 + 2*pi*m/M with M = {M}")


def fourier_coefficients(
    f_vals_on_grid, degree: int | None = None, *, axis: int = 0, x0: float = 0.0
) -> Complex[Array, "..."]:
    """Fourier coefficients c_ω = (1/M) Σ_m f(x_m) e^{−iωx_m}, ω = −W..W, from samples on x_m = x0 + 2πm/M.

    Computed as c_ω = e^{−iωx0} fft(f)_ω / M along ``axis``. Exact for a trigonometric polynomial of degree
    ≤ W when M ≥ 2W + 1; a smaller grid raises (it would alias).

    Args:
      f_vals_on_grid: float or complex array with the M samples along ``axis`` (other axes are batch axes).
      degree: int W >= 0, or ``None`` for (M − 1) // 2.
      axis: int, the grid axis.
      x0: float, the first grid point.

    Returns:
      Complex array with ``axis`` replaced by one of length 2W + 1, ordered ω = −W..W.

    Raises:
      TypeError: ``degree`` not an int; an integer-dtype ``f_vals_on_grid``.
      ValueError: a scalar ``f_vals_on_grid``; ``degree < 0``; M < 2W + 1.
    """
    f = as_array(f_vals_on_grid, "f_vals_on_grid", kind="complex")
    if f.ndim == 0:
        raise ValueError("f_vals_on_grid must have a grid axis, got a scalar")
    M = f.shape[axis]
    W = (M - 1) // 2 if degree is None else check_int(degree, "degree", min_value=0)
    if M < 2 * W + 1:
        raise ValueError(
            f"f_vals_on_grid must have at least 2*degree + 1 = {2 * W + 1} grid points along axis "
            f"{axis} to avoid aliasing, got {M}"
        )
    F = jnp.moveaxis(jnp.fft.fft(f, axis=axis), axis, 0) / M
    c = jnp.concatenate([F[M - W :], F[: W + 1]], axis=0)  # ω = −W..−1, 0..W
    omega = jnp.arange(-W, W + 1)
    phase = jnp.exp(-1j * omega * x0).astype(c.dtype).reshape((-1,) + (1,) * (c.ndim - 1))
    return jnp.moveaxis(c * phase, 0, axis)


def grid_coefficients(vals, x_grid, degree: int | None = None) -> Complex[Array, "..."]:
    """:func:`fourier_coefficients` of ``vals`` sampled on an equispaced ``x_grid`` (with its own x0).

    Args:
      vals: float or complex array, the samples along axis 0 (length M).
      x_grid: ``(M,)`` float array, x_m = x_0 + 2πm/M (checked to about 1e-9, or 1e-5 in float32).
      degree: int W >= 0, or ``None`` for (M − 1) // 2.

    Returns:
      Complex array with axis 0 of length 2W + 1, ordered ω = −W..W.

    Raises:
      ValueError: ``x_grid`` not 1-d, non-finite or not equispaced (under ``jit``: at run time); the errors
        of :func:`fourier_coefficients`.
    """
    x = _check_grid(x_grid)
    return fourier_coefficients(vals, degree, axis=0, x0=x[0])


def fourier_coeffs_of(fn: Callable, degree: int, n_points: int | None = None) -> Complex[Array, " K"]:
    """Fourier coefficients c_ω, ω = −degree..degree, of a function ``fn`` sampled on :func:`grid`.

    Args:
      fn: ``x -> scalar``, vmappable (e.g. ``lambda x: qnn_apply(params, x, cfg)``).
      degree: int W >= 0.
      n_points: int M >= 2W + 1, or ``None`` for 2W + 1.

    Returns:
      ``(2W + 1,)`` complex array, ordered ω = −W..W.

    Raises:
      TypeError: ``degree`` or ``n_points`` not an int.
      ValueError: ``degree < 0``; M < 2W + 1.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.quantum import fourier_coeffs_of
      >>> c = fourier_coeffs_of(lambda x: 1.0 + jnp.cos(2 * x), degree=2)  # 0.5 at ω = ±2, 1 at ω = 0
      >>> c.shape
      (5,)
    """
    degree = check_int(degree, "degree", min_value=0)
    M = 2 * degree + 1 if n_points is None else check_int(n_points, "n_points", min_value=1)
    return fourier_coefficients(jax.vmap(fn)(grid(M)), degree)


def eval_fourier(c, x) -> Float[Array, "..."]:
    """The real part of the Fourier series Σ_ω c_ω e^{iωx}, ω = −W..W.

    Args:
      c: ``(2W + 1,)`` complex (or real float) array of coefficients, ordered ω = −W..W.
      x: float array (any shape) of inputs.

    Returns:
      Float array of the shape of ``x``.

    Raises:
      TypeError: an integer-dtype ``c`` or ``x``.
      ValueError: ``c`` not 1-d or of even length.
    """
    c = as_array(c, "c", kind="complex", ndim=1)
    if c.shape[0] % 2 != 1:
        raise ValueError(f"c must have odd length 2W + 1 (ω = −W..W), got length {c.shape[0]}")
    W = c.shape[0] // 2
    x = as_array(x, "x")
    omega = jnp.arange(-W, W + 1, dtype=x.dtype)
    return jnp.real(jnp.exp(1j * x[..., None] * omega) @ c)


@functools.partial(jax.jit, static_argnums=0)
def _jacobian_on_grid(fn: Callable, params, xs: jax.Array) -> jax.Array:
    """``(M, P)`` Jacobian of ``fn(params, x)`` w.r.t. the flattened params, for each grid point."""
    flat, unravel = ravel_pytree(params)
    return jax.vmap(lambda x: jax.jacrev(lambda p: fn(unravel(p), x))(flat))(xs)


@cites(SAP)
def coefficient_jacobian_of(fn: Callable, params, degree: int, n_points: int | None = None):
    """The coefficient Jacobian J_{ωj} = ∂c_ω/∂θ_j of any model ``fn(params, x)``.

    The Fourier transform (:func:`fourier_coefficients`) of the ``(M, P)`` Jacobian of f on :func:`grid`
    (``jacrev`` per point, vmapped). For a non-periodic model (an MLP) this is the DFT on that grid.

    Args:
      fn: ``(params, x) -> scalar``, hashable (it is a static argument of ``jit``), e.g.
        :func:`~jaxlab.quantum.qnn.qnn_fn` or :func:`~jaxlab.quantum.baselines.mlp_apply`.
      params: a pytree of float arrays with ``P`` entries in all (flattened in ``ravel_pytree`` order).
      degree: int W >= 0.
      n_points: int M >= 2W + 1, or ``None`` for 2W + 1.

    Returns:
      ``(2W + 1, P)`` complex array, rows ordered ω = −W..W.

    Raises:
      TypeError: ``degree`` or ``n_points`` not an int.
      ValueError: ``degree < 0``; M < 2W + 1.
    """
    degree = check_int(degree, "degree", min_value=0)
    M = 2 * degree + 1 if n_points is None else check_int(n_points, "n_points", min_value=1)
    xs = grid(M, ravel_pytree(params)[0].dtype)
    return fourier_coefficients(_jacobian_on_grid(fn, params, xs), degree)


@cites(SAP)
def coefficient_jacobian(params, cfg: QNNConfig, degree: int | None = None) -> Complex[Array, "K P"]:
    """The QNN's coefficient Jacobian J_{ωj} = ∂c_ω/∂θ_j, ω = −W..W.

    Xu, Zhang, Yan (arXiv:2409.06682) analyse training through J: the loss gradient is
    Σ_ω Re(conj(r̂_ω) J_{ω·}) and the Fourier-basis QNTK is G = J J†. By the parameter-shift rule
    |J_{ωj}| <= ‖O‖ and Σ_ω |J_{ωj}|² = mean_x (∂_j f)² <= ‖O‖².

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig` (integer scales).
      degree: int W >= the spectrum's maximum frequency, or ``None`` for that maximum.

    Returns:
      ``(2W + 1, P)`` complex array, P = ``params.size`` (θ flattened in C order).

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``; ``degree`` not an int.
      ValueError: an invalid ``cfg`` or non-integer scales; ``params`` of the wrong shape or non-finite;
        ``degree`` below the maximum frequency (the message gives the needed value).
    """
    W = _degree_for(cfg, degree)
    return coefficient_jacobian_of(qnn_fn(cfg), _check_params(params, cfg), W)


def _binomial_redundancy(N: int) -> np.ndarray:
    """``C(2N, N + ω)`` for ω = −N..N (the unary closed form, used by tests and claims)."""
    return np.array([math.comb(2 * N, N + w) for w in range(-N, N + 1)], dtype=np.int64)
