r"""Quantum neural tangent kernel, frequency-domain gradient and linearised residual dynamics.

Papers: Xu, Zhang, Yan, "The Spectral Amplitude Principle for Dynamics of Quantum Neural Networks"
(arXiv:2409.06682; the identities below are **reconstructed** from its abstract and the standard NTK algebra);
Liu, Tacchino, Glick, Jiang, Mezzacapo, "Representation learning via quantum
neural tangent kernels" (arXiv:2111.04225); Jacot, Gabriel, Hongler (arXiv:1806.07572).

On the equispaced grid ``x_m = x_0 + 2πm/M`` with targets ``y_m``, residual ``r = f_θ − y`` and
``r̂_ω = (1/M) Σ_m r_m e^{−iωx_m}``:

* loss ``ℒ(θ) = (1/2M) Σ_m r_m² = ½ Σ_ω |r̂_ω|²`` (Parseval);
* gradient ``∂ℒ/∂θ_j = Σ_ω Re(conj(r̂_ω) J_{ωj})`` with ``J = ∂c/∂θ`` (exact for ``M ≥ 2W + 1``); the
  per-frequency contribution, with the ±ω pair folded, is ``g_{ω,j} = (2 − δ_{ω0}) Re(conj(r̂_ω) J_{ωj})``,
  ω = 0..W, and ``|g_{ω,j}| ≤ 2|r̂_ω| ‖O‖``;
* QNTK ``K(x, x') = Σ_j ∂_j f(x) ∂_j f(x')`` (real, symmetric, PSD); in the Fourier basis
  ``K(x, x') = Σ_{ω,ω'} G_{ωω'} e^{iωx} e^{−iω'x'}`` with ``G = J J†``;
* gradient flow ``dθ/dt = −η∇ℒ`` gives ``dr̂/dt = −η G r̂`` on ω = −W..W, and with a frozen kernel
  ``r̂(t) = exp(−ηtG) r̂(0)``, evaluated with ``eigh``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Complex, Float

from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.validation import as_array, value_check
from jaxlab.quantum.fourier import (
    _check_grid,
    _degree_for,
    _jacobian_on_grid,
    coefficient_jacobian,
    fourier_coefficients,
)
from jaxlab.quantum.papers import NTK, QNTK, SAP
from jaxlab.quantum.qnn import QNNConfig, _check_config, _check_params, qnn_fn

__all__ = [
    "empirical_ntk",
    "frequency_gradient",
    "linearized_residual",
    "qntk",
    "qntk_fourier",
    "residual_spectrum",
]


@cites(NTK)
def empirical_ntk(apply_fn: Callable, params, xs1, xs2) -> Float[Array, "N1 N2"]:
    """The empirical neural tangent kernel K(x, x') = Σ_j ∂_j f(x) ∂_j f(x') of any model at ``params``.

    Jacot, Gabriel, Hongler, "Neural Tangent Kernel: Convergence and Generalization in Neural Networks"
    (arXiv:1806.07572): under gradient flow on the squared loss, the outputs move by −η K r. Computed as
    J₁ J₂ᵀ from the per-input gradients (``jacrev``, vmapped).

    Args:
      apply_fn: ``(params, x) -> scalar``, hashable (a static argument of ``jit``), e.g.
        :func:`~jaxlab.quantum.qnn.qnn_fn` or :func:`~jaxlab.quantum.baselines.mlp_apply`.
      params: a pytree of float arrays (flattened in ``ravel_pytree`` order).
      xs1: ``(N1,)`` float array of scalar inputs, or ``(N1, d)`` of vector inputs; finite.
      xs2: ``(N2,)`` or ``(N2, d)`` float array, finite.

    Returns:
      ``(N1, N2)`` float array (symmetric PSD when ``xs1`` and ``xs2`` are equal).

    Raises:
      TypeError: integer-dtype inputs.
      ValueError: ``xs1`` or ``xs2`` not 1-d or 2-d, or non-finite.
    """
    xs1 = as_array(xs1, "xs1", ndim=(1, 2), finite=True)
    xs2 = as_array(xs2, "xs2", ndim=(1, 2), finite=True)
    J1 = _jacobian_on_grid(apply_fn, params, xs1)
    J2 = _jacobian_on_grid(apply_fn, params, xs2)
    return J1 @ J2.T


@cites(QNTK, SAP)
def qntk(params, xs1, xs2, cfg: QNNConfig) -> Float[Array, "N1 N2"]:
    """The quantum neural tangent kernel K(x, x') = Σ_j ∂_j f_θ(x) ∂_j f_θ(x') of the QNN.

    Liu, Tacchino, Glick, Jiang, Mezzacapo, "Representation learning via quantum neural tangent kernels"
    (arXiv:2111.04225); :func:`empirical_ntk` of the QNN. Its Fourier form is :func:`qntk_fourier`.

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite.
      xs1: ``(N1,)`` float array of inputs, finite.
      xs2: ``(N2,)`` float array of inputs, finite.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.

    Returns:
      ``(N1, N2)`` float array.

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg``; ``params`` not of shape ``(L + 1, n, 3)`` or non-finite; ``xs1`` or ``xs2``
        neither 1-d nor 2-d, or non-finite. A 2-d input is not rejected, but the QNN takes scalar inputs:
        pass 1-d arrays.
    """
    _check_config(cfg)
    params = _check_params(params, cfg)
    return empirical_ntk(qnn_fn(cfg), params, xs1, xs2)


@cites(QNTK, SAP)
def qntk_fourier(params, cfg: QNNConfig, degree: int | None = None) -> Complex[Array, "K K"]:
    """The QNTK in the Fourier basis, G = J J† with J = :func:`~jaxlab.quantum.fourier.coefficient_jacobian`.

    K(x, x') = Σ_{ω,ω'} G_{ωω'} e^{iωx} e^{−iω'x'}, and under gradient flow the residual spectrum obeys
    dr̂/dt = −η G r̂ (reconstructed from the abstract of Xu, Zhang, Yan, arXiv:2409.06682, with the standard
    NTK algebra). Large diagonal entries G_ωω mark the frequencies that are learned fast.

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig` (integer scales).
      degree: int W >= the spectrum's maximum frequency, or ``None`` for that maximum.

    Returns:
      ``(2W + 1, 2W + 1)`` complex array, Hermitian PSD, both axes ordered ω = −W..W.

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg``; ``params`` not of shape ``(L + 1, n, 3)`` or non-finite; ``degree``
        below the maximum frequency or not an int (``TypeError``).
    """
    J = coefficient_jacobian(_check_params(params, _check_config(cfg)), cfg, degree)
    return J @ J.conj().T


def _check_targets(x_grid, y_grid) -> tuple[jax.Array, jax.Array]:
    x = _check_grid(x_grid)
    y = as_array(y_grid, "y_grid", ndim=1, finite=True)
    if y.shape != x.shape:
        raise ValueError(f"y_grid must have the grid's length {x.shape[0]}, got {y.shape[0]}")
    return x, y


@cites(SAP)
def residual_spectrum(params, x_grid, y_grid, cfg: QNNConfig, degree: int | None = None) -> Complex[Array, " K"]:
    """The residual spectrum r̂_ω = (1/M) Σ_m (f_θ(x_m) − y_m) e^{−iωx_m}, ω = −K..K, on an equispaced grid.

    By Parseval the loss is ℒ = (1/2M) Σ_m r_m² = ½ Σ_ω |r̂_ω|² when all M bins are kept (odd M, default K).

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite.
      x_grid: ``(M,)`` float array x_m = x_0 + 2πm/M.
      y_grid: ``(M,)`` float array of targets, finite.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig`.
      degree: int K >= 0, or ``None`` for (M − 1) // 2 (for even M the Nyquist bin is left out).

    Returns:
      ``(2K + 1,)`` complex array, ordered ω = −K..K.

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg``; ``params`` not of shape ``(L + 1, n, 3)`` or non-finite; ``x_grid`` not
        equispaced or non-finite; ``y_grid`` of another length or non-finite; M < 2K + 1.
    """
    _check_config(cfg)
    params = _check_params(params, cfg)
    x, y = _check_targets(x_grid, y_grid)
    r = jax.vmap(qnn_fn(cfg), (None, 0))(params, x) - y
    return fourier_coefficients(r, degree, x0=x[0])


@cites(SAP)
def frequency_gradient(params, x_grid, y_grid, cfg: QNNConfig) -> tuple[jax.Array, Float[Array, "W1 P"]]:
    """The loss gradient split by frequency: ∇_θ ℒ = Σ_{ω=0..W} g_ω, g_ω = (2 − δ_{ω0}) Re(conj(r̂_ω) J_{ω·}).

    ℒ(θ) = (1/2M) Σ_m r_m² = ½ Σ_ω |r̂_ω|² on the grid, so ∂ℒ/∂θ_j = Σ_{ω=−W..W} Re(conj(r̂_ω) J_{ωj}); the ±ω
    terms are equal and are folded into g_ω. Since |J_{ωj}| <= ‖O‖, |g_{ω,j}| <= 2 |r̂_ω| ‖O‖: a frequency
    pulls on θ in proportion to its residual amplitude, not its index (the mechanism of Spectral Amplitude
    Priority, Xu, Zhang, Yan, arXiv:2409.06682; reconstructed from the abstract).

    Args:
      params: ``(L + 1, n, 3)`` float array θ, finite.
      x_grid: ``(M,)`` float array x_m = x_0 + 2πm/M, M >= 2W + 1 (W = the model's largest frequency).
      y_grid: ``(M,)`` float array of targets, finite.
      cfg: the :class:`~jaxlab.quantum.qnn.QNNConfig` (integer scales).

    Returns:
      ``(grad_total, per_freq)``: ∇_θ ℒ as an ``(L + 1, n, 3)`` float array, and the ``(W + 1, P)`` float
      array of the g_ω, ω = 0..W (P = ``params.size``).

    Raises:
      TypeError: ``cfg`` not a ``QNNConfig``.
      ValueError: an invalid ``cfg``; ``params`` not of shape ``(L + 1, n, 3)`` or non-finite; non-integer
        scales; ``x_grid`` not equispaced or with fewer than 2W + 1 points; ``y_grid`` of another length or
        non-finite.
    """
    _check_config(cfg)
    params = _check_params(params, cfg)
    x, y = _check_targets(x_grid, y_grid)
    W = _degree_for(cfg, None)
    M = x.shape[0]
    if M < 2 * W + 1:
        raise ValueError(f"x_grid must have at least 2W + 1 = {2 * W + 1} points (W = {W}), got {M}")
    fn = qnn_fn(cfg)
    r = jax.vmap(fn, (None, 0))(params, x) - y
    r_hat = fourier_coefficients(r, W, x0=x[0])
    J = fourier_coefficients(_jacobian_on_grid(fn, params, x), W, x0=x[0])
    contrib = jnp.real(jnp.conj(r_hat)[:, None] * J)  # ω = −W..W
    fold = contrib[W:].at[1:].add(contrib[:W][::-1])  # ω = 0..W, the −ω term added to ω
    return fold.sum(0).reshape(params.shape), fold


def _check_hermitian_psd(G: jax.Array, name: str, atol: float) -> jax.Array:
    """Return ``G``; raise (eagerly, or at run time under ``jit``) unless it is Hermitian and PSD within
    ``atol`` relative to ``max(1, max |G|)``."""

    def scale(g):
        return jnp.maximum(1.0, jnp.max(jnp.abs(g), initial=0.0))

    G = value_check(G, lambda g: jnp.max(jnp.abs(g - g.conj().T), initial=0.0) > atol * scale(g),
                    f"{name} must be Hermitian (max |G - G^dagger| <= {atol:g} max(1, max |G|))")
    return value_check(G, lambda g: jnp.linalg.eigvalsh((g + g.conj().T) / 2)[0] < -atol * scale(g),
                       f"{name} must be positive semidefinite (smallest eigenvalue >= -{atol:g} max(1, max |G|))")


@cites(SAP)
@renamed_kwargs(eta="learning_rate")
def linearized_residual(G, r_hat0, learning_rate, t, *, atol: float = 1e-6) -> Complex[Array, "... K"]:
    """The linearized residual dynamics r̂(t) = exp(−η t G) r̂(0) with a frozen kernel G.

    Gradient flow dθ/dt = −η∇ℒ gives dr̂/dt = −η G r̂ with the Fourier-basis QNTK G (:func:`qntk_fourier`;
    reconstructed from the abstract of Xu, Zhang, Yan, arXiv:2409.06682, with the standard NTK algebra).
    Computed via G = V diag(λ) V† (``eigh``): r̂(t) = V diag(exp(−η t λ)) V† r̂(0), so each eigendirection
    decays at its own rate η λ.

    Args:
      G: the QNTK in the Fourier basis, shape ``(K, K)``, Hermitian PSD within ``atol`` (relative).
      r_hat0: the residual spectrum at ``t = 0``, shape ``(K,)``.
      learning_rate: the gradient-flow rate ``η`` (scalar; ``eta`` is its deprecated name).
      t: time(s), any shape; they become the leading axes of the result.
      atol: relative tolerance of the Hermitian and PSD checks.

    Returns:
      ``r̂(t)``, shape ``t.shape + (K,)``.

    Raises:
      TypeError: integer-dtype inputs.
      ValueError: ``G`` not square, not Hermitian or not PSD (under ``jit``: at run time); ``r_hat0`` of the
        wrong length; ``learning_rate`` not a scalar; non-finite ``learning_rate`` or ``t``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.quantum import linearized_residual
      >>> J = jax.random.normal(jax.random.key(0), (5, 3))  # a toy coefficient Jacobian, K = 5 frequencies
      >>> r_t = linearized_residual(J @ J.T, jnp.ones(5), 0.1, jnp.array([0.0, 1.0, 10.0]))
      >>> r_t.shape  # one residual spectrum per time
      (3, 5)
    """
    G = as_array(G, "G", kind="complex", ndim=2)
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"G must be square, got shape {tuple(G.shape)}")
    G = _check_hermitian_psd(G, "G", atol)
    r0 = as_array(r_hat0, "r_hat0", kind="complex", shape=(G.shape[0],))
    eta = as_array(learning_rate, "learning_rate", ndim=0, finite=True)
    t = as_array(t, "t", finite=True)
    lam, V = jnp.linalg.eigh((G + G.conj().T) / 2)
    a = V.conj().T @ r0.astype(V.dtype)
    decay = jnp.exp(-eta * t[..., None] * lam)  # (..., K)
    return (decay * a) @ V.T
