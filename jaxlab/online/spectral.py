r"""Spectral filtering (Hazan, Singh, Zhang 2017) as an online baseline, with optional USP preconditioning.

Paper: E. Hazan, K. Singh, C. Zhang, *Learning linear dynamical systems via spectral filtering*, NeurIPS 2017,
arXiv:1711.00946; the USP variant follows A. Marsden and E. Hazan, arXiv:2502.06545.

Filters: the Hankel matrix ``Z in R^{L x L}``, ``Z_ij = 2 / ((i+j)^3 - (i+j))`` (``i, j = 1..L``), and its
top-``k`` eigenpairs ``(sigma_j, phi_j)``. Filtered inputs (causal, zero history)::

    U_{t,j} = sigma_j^{1/4} sum_{i=0}^{L-1} phi_j(i) u_{t-i}.

Predictor ``y^_t = y_{t-1} + sum_j M_j U_{t,j} + sum_{i<3} N_i u_{t-i}``; with preconditioning coefficients
``c`` the autoregressive part becomes ``-sum_{j>=1} c_j y_{t-j}`` (``c = (1, -1)`` is the original). The
linear part is learned online by OGD (:mod:`jaxlab.online.ogd`) on the target ``y~_t = sum_j c_j y_{t-j}``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_int
from jaxlab.online import ogd
from jaxlab.online._checks import check_series
from jaxlab.online.usp import lag_stack, precondition, predicting_y

__all__ = [
    "filtered_inputs",
    "hankel_filters",
    "hankel_matrix",
    "spectral_features",
    "spectral_ogd_algorithm",
    "spectral_ogd_run",
]


@cites("hazan2017spectral")
def hankel_matrix(L: int, *, dtype=None) -> Float[Array, "L L"]:
    """The Hankel matrix of spectral filtering, ``Z_ij = 2 / ((i+j)^3 - (i+j))`` for ``i, j = 1..L``.

    Hazan, Singh and Zhang, *Learning linear dynamical systems via spectral filtering* (arXiv:1711.00946).

    Args:
      L: filter length ``>= 1``.
      dtype: float dtype; ``None`` is the default float dtype.

    Returns:
      ``(L, L)`` float array.

    Raises:
      TypeError: ``L`` is not an int.
      ValueError: ``L < 1``.
    """
    L = check_int(L, "L", min_value=1)
    s = jnp.arange(1, L + 1, dtype=jnp.result_type(float) if dtype is None else dtype)
    s = s[:, None] + s[None, :]
    return 2.0 / (s**3 - s)


@cites("hazan2017spectral")
def hankel_filters(L: int, k: int, *, dtype=None) -> tuple[Float[Array, " k"], Float[Array, "L k"]]:
    """The spectral filters: top-``k`` eigenpairs ``(sigma_j, phi_j)`` of the Hankel matrix :func:`hankel_matrix`.

    Hazan, Singh and Zhang, *Learning linear dynamical systems via spectral filtering* (arXiv:1711.00946).

    Args:
      L: filter length ``>= 1``.
      k: number of filters, ``1 <= k <= L``.
      dtype: float dtype; ``None`` is the default float dtype.

    Returns:
      ``(sigma, phi)``: ``(k,)`` eigenvalues in descending order and ``(L, k)`` eigenvectors (columns).

    Raises:
      TypeError: ``L`` or ``k`` is not an int.
      ValueError: ``L < 1`` or ``k`` outside ``[1, L]``.
    """
    L = check_int(L, "L", min_value=1)
    k = check_int(k, "k", min_value=1, max_value=L)
    sigma, phi = jnp.linalg.eigh(hankel_matrix(L, dtype=dtype))
    return sigma[::-1][:k], phi[:, ::-1][:, :k]


@cites("hazan2017spectral")
def filtered_inputs(u: Float[Array, "T du"], sigma: Float[Array, " k"],
                    phi: Float[Array, "L k"]) -> Float[Array, "T k du"]:
    """Filtered inputs ``U_{t,j} = sigma_j^{1/4} sum_{i<L} phi_j(i) u_{t-i}`` by FFT convolution (zero history).

    Negative ``sigma_j`` (rounding of tiny eigenvalues) are clipped to 0 before the fourth root.

    Args:
      u: ``(T, du)`` float array of inputs (a ``(T,)`` array is one channel), ``T >= 1``, finite.
      sigma: ``(k,)`` float array of filter eigenvalues.
      phi: ``(L, k)`` float array of filters (columns).

    Returns:
      ``(T, k, du)`` array in the dtype of ``u``.

    Raises:
      TypeError: non-float inputs.
      ValueError: ``u`` empty or non-finite, ``phi`` not 2-D, or ``sigma`` not of shape ``(k,)``.
    """
    u = check_series(u, "u")
    u = u[:, None] if u.ndim == 1 else u
    phi = as_array(phi, "phi", ndim=2)
    sigma = as_array(sigma, "sigma", ndim=1, shape=(phi.shape[1],))
    T, L = u.shape[0], phi.shape[0]
    nfft = 1 << (T + L - 1).bit_length()
    conv = jnp.fft.irfft(jnp.fft.rfft(u, nfft, axis=0)[:, None, :] * jnp.fft.rfft(phi, nfft, axis=0)[:, :, None],
                         nfft, axis=0)[:T]
    return (jnp.clip(sigma, 0.0) ** 0.25)[None, :, None].astype(u.dtype) * conv.astype(u.dtype)


@cites("hazan2017spectral", "marsden2025usp")
def spectral_features(y: Float[Array, " T"], u: Float[Array, "T du"], sigma: Float[Array, " k"],
                      phi: Float[Array, "L k"], *, c: Float[Array, " n+1"] | None = None,
                      n_direct: int = 3) -> tuple[Float[Array, "T k*du+n_direct*du"], Float[Array, " T"]]:
    """Spectral-filtering features ``[U_t (k*du), u_t, ..., u_{t-n_direct+1}]`` and target ``y~_t = sum_j c_j y_{t-j}``.

    ``U_t`` is :func:`filtered_inputs` flattened; the input lags are zero before time 1. ``c=None`` is
    ``(1, -1)``, i.e. ``y~_t = y_t - y_{t-1}``: the original autoregressive term of Hazan, Singh and Zhang
    (arXiv:1711.00946); other ``c`` give the USP-preconditioned variant (Marsden and Hazan, arXiv:2502.06545).

    Args:
      y: ``(T,)`` float array of outputs, finite.
      u: ``(T, du)`` float array of inputs (a ``(T,)`` array is one channel).
      sigma: ``(k,)`` filter eigenvalues (from :func:`hankel_filters`).
      phi: ``(L, k)`` filters (from :func:`hankel_filters`).
      c: ``(n+1,)`` float array of preconditioning coefficients, or ``None`` for ``(1, -1)``.
      n_direct: number of direct input lags ``>= 0``.

    Returns:
      ``(features, y_tilde)``: ``(T, k*du + n_direct*du)`` features and the ``(T,)`` target ``y~``.

    Raises:
      TypeError: non-float arrays or a non-int ``n_direct``.
      ValueError: ``y`` and ``u`` of different lengths, empty or non-finite series, ``n_direct < 0``, or
        mismatched filter shapes.
    """
    y = check_series(y, "y")
    n_direct = check_int(n_direct, "n_direct", min_value=0)
    U = filtered_inputs(u, sigma, phi)
    T = U.shape[0]
    if y.shape[0] != T:
        raise ValueError(f"y must have the same length as u ({T}), got length {y.shape[0]}")
    parts = [U.reshape(T, -1)]
    if n_direct:
        uu = u[:, None] if jnp.ndim(u) == 1 else jnp.asarray(u)
        parts.append(lag_stack(uu.astype(U.dtype), n_direct).reshape(T, -1))
    c = jnp.asarray([1.0, -1.0], y.dtype) if c is None else c
    return jnp.concatenate(parts, axis=1), precondition(y, c)


@cites("hazan2017spectral", "marsden2025usp")
def spectral_ogd_algorithm(optimizer: optax.GradientTransformation, *,
                           radius: float | None = None) -> Algorithm:
    """Spectral filtering learned by OGD as a data-driven :class:`~jaxlab.core.Algorithm`.

    ``init(dim, *, num_outputs=1, dtype=None)`` is OGD's (:func:`jaxlab.online.ogd.ogd_algorithm`);
    ``step(key, state, (a_t, y~_t, y_t))`` takes one OGD round on the spectral features ``a_t`` and the target
    ``y~_t = sum_j c_j y_{t-j}`` (:func:`spectral_features`) and reports the prediction of ``y_t``
    (:func:`jaxlab.online.usp.predicting_y`).

    Args:
      optimizer: any optax transformation (``optax.sgd(learning_rate)`` is plain OGD).
      radius: the Frobenius ball's radius, or ``None``.

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(OGDState, OGDInfo)`` with ``info.y_hat`` the prediction of
      ``y_t`` and ``info.loss`` the squared loss on ``y~_t``.

    Raises:
      TypeError: ``optimizer`` is not an optax transformation.
      ValueError: ``radius <= 0``.
    """
    return predicting_y(ogd.ogd_algorithm(optimizer, radius=radius))


@cites("hazan2017spectral", "marsden2025usp")
def spectral_ogd_run(y: Float[Array, " T"], u: Float[Array, "T du"], optimizer: optax.GradientTransformation, *,
                     L: int, k: int = 24, c: Float[Array, " n+1"] | None = None,
                     radius: float | None = None) -> tuple[ogd.OGDState, ogd.OGDInfo]:
    """Spectral filtering learned by OGD over one sequence (the baseline of the USP experiments).

    Builds the filters (:func:`hankel_filters`), the features and the target ``y~`` (:func:`spectral_features`,
    ``n_direct = 3``) and runs :func:`jaxlab.online.ogd.run` on them; the reported prediction of ``y_t`` is
    ``y^_t = theta_t^T a_t - sum_{j>=1} c_j y_{t-j}``.

    Args:
      y: ``(T,)`` float array of outputs.
      u: ``(T, du)`` float array of inputs (a ``(T,)`` array is one channel).
      optimizer: any optax transformation (``optax.sgd(learning_rate)`` is plain OGD).
      L: filter length ``>= 1``.
      k: number of filters, ``1 <= k <= L``.
      c: ``(n+1,)`` preconditioning coefficients (e.g. :func:`jaxlab.online.usp.coeffs`), or ``None`` for
        ``(1, -1)``.
      radius: the Frobenius ball's radius ``R > 0``, or ``None`` for no projection.

    Returns:
      ``(state, info)``: the final :class:`~jaxlab.online.ogd.OGDState` and per-step
      :class:`~jaxlab.online.ogd.OGDInfo` with ``info.y_hat`` ``(T,)``, the prediction of ``y_t``, and
      ``info.loss`` ``(T,)``, the squared loss on ``y~_t``.

    Raises:
      TypeError: non-float arrays or non-int ``L``/``k``.
      ValueError: invalid sizes, mismatched lengths, non-finite series, or ``radius <= 0``.

    Example:
      >>> import jax, optax
      >>> from jaxlab.online import random_lds, simulate, spectral_ogd_run
      >>> params = random_lds(jax.random.key(0), 6)
      >>> u = jax.random.normal(jax.random.key(1), (100, 1))
      >>> y, _ = simulate(jax.random.key(2), params, u, obs_noise=0.01)
      >>> state, info = spectral_ogd_run(y[:, 0], u, optax.sgd(1e-2), L=16, k=4)
      >>> info.y_hat.shape
      (100,)
    """
    sigma, phi = hankel_filters(L, k, dtype=jnp.asarray(y).dtype)
    feats, y_tilde = spectral_features(y, u, sigma, phi, c=c)
    state, info = ogd.run(feats, y_tilde, optimizer, radius=radius)
    return state, info._replace(y_hat=info.y_hat - (y_tilde - y))


def _example(key):
    u = jax.random.normal(key, (12, 1))
    y = jnp.cumsum(u[:, 0]) * 0.1
    sigma, phi = hankel_filters(8, 3, dtype=y.dtype)
    feats, y_tilde = spectral_features(y, u, sigma, phi)
    algo = spectral_ogd_algorithm(optax.sgd(1e-2))
    return algo, algo.init(feats.shape[1], dtype=feats.dtype), (feats, y_tilde, y)


register_algorithm("spectral_ogd", spectral_ogd_algorithm, _example, area="online")
