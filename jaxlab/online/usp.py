r"""Universal Sequence Preconditioning (USP): preconditioning coefficients, ARX features, the USP predictor.

Papers: A. Marsden and E. Hazan, *Universal Sequence Preconditioning*, arXiv:2502.06545 (NeurIPS 2025), and
A. Marsden and E. Hazan, *The Power of Second Order Methods for Sequence Preconditioning*, arXiv:2605.08390
(v1), which pairs USP with the Vovk-Azoury-Warmuth forecaster (:mod:`jaxlab.online.vaw`).

Coefficients. For degree ``n`` the vector ``c = (c_0, ..., c_n)``, ``c_0 = 1``, holds the coefficients of a
monic polynomial in descending powers, ``p(z) = sum_j c_j z^{n-j}``:

- Chebyshev: ``M_n = 2^{1-n} T_n``, ``M_0 = 1, M_1 = z, M_2 = z M_1 - M_0/2, M_{k+1} = z M_k - M_{k-1}/4``;
  ``sup_{[-1,1]} |M_n| = 2^{1-n}`` and ``||c||_1 = ((1+sqrt2)^n + (1-sqrt2)^n) / 2^n``.
- Legendre (monic): ``L_0 = 1, L_1 = z, L_{k+1} = z L_k - k^2/(4k^2-1) L_{k-1}``.

Preconditioning (causal convolution with zero history; arrays are 0-based, element k is time k+1, and every
quantity at a non-positive time is zero)::

    y~_t = sum_{j=0}^{n} c_j y_{t-j},        inverse:  y_t = y~_t - sum_{j=1}^{n} c_j y_{t-j}.

ARX ("USP") features of history ``n``: ``a_t = [y_{t-1}, ..., y_{t-n}, u_t, ..., u_{t-n+1}]``.

Annihilation identity. For the LDS ``x_t = A x_{t-1} + B u_t, y_t = C x_t`` (see :mod:`jaxlab.online.lds`)::

    sum_j c_j y_{t-j} = C p(A) x_{t-n} + sum_{i=0}^{n-1} Q_i u_{t-i},   Q_i = sum_{j=0}^{i} c_j C A^{i-j} B,

so the USP predictor ``y*_t = -sum_{j>=1} c_j y_{t-j} + sum_i Q_i u_{t-i}`` is linear in ``a_t`` with
``theta* = (-c_1 I, ..., -c_n I, Q_0, ..., Q_{n-1})`` and residual ``y_t - y*_t = C p(A) x_{t-n}``.
A nonzero ``D`` (``y_t = C x_t + D u_t``) is folded in as ``Q_i += c_i D``; the term ``c_n D u_{t-n}`` is then
outside the features and adds to the residual (it vanishes for odd-degree Chebyshev, where ``c_n = 0``).

Complex bound (derived here from the classical Joukowski map, not the paper's own lemma): for
``z = (w + 1/w)/2`` with ``|w| >= 1``, ``rho(z) = |w|`` (Bernstein-ellipse parameter) and
``|M_n(z)| = 2^{-n} |w^n + w^{-n}| <= 2^{1-n} rho(z)^n``; ``rho(e^{i phi}) = 2`` at ``phi* ~ 0.5974064``.

API note: ``dtype=None`` (instead of a fixed ``jnp.float32``) means the default float dtype, float64 when
``jax_enable_x64`` is on, so that theorem checks get exact coefficients without passing a dtype.
"""

from __future__ import annotations

import functools
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Complex, Float
from jaxlab.core.validation import as_array, check_int, check_ndim, check_positive
from jaxlab.online import vaw
from jaxlab.online._checks import check_series
from jaxlab.online.lds import LDSParams, check_params

__all__ = [
    "arx_features",
    "bernstein_rho",
    "chebyshev_coeffs",
    "coeffs",
    "lag_stack",
    "legendre_coeffs",
    "matrix_polynomial",
    "monic_chebyshev_eval",
    "monic_chebyshev_matrices",
    "precondition",
    "predicting_y",
    "unprecondition",
    "usp_predictor",
    "usp_stream",
    "usp_vaw_algorithm",
    "usp_vaw_run",
]

KINDS = ("chebyshev", "legendre", "none")
MODES = ("arx", "precondition")
_MAX_N_FLOAT32 = 64


def _float_dtype(dtype) -> jnp.dtype:
    return jnp.dtype(jnp.result_type(float) if dtype is None else dtype)


def _check_degree(n, dtype: jnp.dtype) -> int:
    n = check_int(n, "n", min_value=1)
    if dtype.itemsize < 8 and n > _MAX_N_FLOAT32:
        raise ValueError(f"n must be <= {_MAX_N_FLOAT32} for {dtype} coefficients (they lose precision), "
                         f"got n={n}; use float64 (jax_enable_x64) or a smaller n")
    return n


def _monic_recurrence(n: int, beta) -> np.ndarray:
    """Descending-power coefficients of p_n from p_{k+1} = z p_k - beta(k) p_{k-1}, p_0 = 1, p_1 = z."""
    prev, cur = np.array([1.0]), np.array([1.0, 0.0])
    for k in range(1, n):
        nxt = np.append(cur, 0.0)
        nxt[2:] -= beta(k) * prev
        prev, cur = cur, nxt
    return cur


@cites("marsden2025usp")
def chebyshev_coeffs(n: int, *, dtype=None) -> Float[Array, " n+1"]:
    """Coefficients ``(1, c_1, ..., c_n)`` of the monic Chebyshev polynomial ``M_n = 2^{1-n} T_n``.

    ``M_n(z) = sum_j c_j z^{n-j}``, the USP coefficients of Marsden and Hazan, *Universal Sequence
    Preconditioning* (arXiv:2502.06545). Computed in float64 with the monic three-term recurrence
    ``M_{k+1} = z M_k - beta_k M_{k-1}`` (``beta_1 = 1/2``, ``beta_k = 1/4`` for ``k >= 2``), then cast to ``dtype``.

    Args:
      n: degree ``>= 1`` (at most 64 for float32 or narrower ``dtype``: the coefficients grow like ``(1+sqrt2)^n / 2^n``
        and lose precision).
      dtype: float dtype; ``None`` is the default float dtype (float64 under ``jax_enable_x64``).

    Returns:
      ``(n + 1,)`` array in ``dtype``, descending powers, ``c_0 = 1``.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1``, or ``n > 64`` with a float32 (or narrower) ``dtype``.
    """
    dtype = _float_dtype(dtype)
    n = _check_degree(n, dtype)
    return jnp.asarray(_monic_recurrence(n, lambda k: 0.5 if k == 1 else 0.25), dtype=dtype)


@cites("marsden2025usp")
def legendre_coeffs(n: int, *, dtype=None) -> Float[Array, " n+1"]:
    """Coefficients ``(1, c_1, ..., c_n)`` of the monic Legendre polynomial of degree ``n``.

    Recurrence ``L_{k+1} = z L_k - k^2/(4k^2-1) L_{k-1}``, ``L_0 = 1``, ``L_1 = z``, in float64, then cast.

    Args:
      n: degree ``>= 1`` (at most 64 for float32 or narrower ``dtype``, where the coefficients lose precision).
      dtype: float dtype; ``None`` is the default float dtype (float64 under ``jax_enable_x64``).

    Returns:
      ``(n + 1,)`` array in ``dtype``, descending powers, ``c_0 = 1``.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 1``, or ``n > 64`` with a float32 (or narrower) ``dtype``.
    """
    dtype = _float_dtype(dtype)
    n = _check_degree(n, dtype)
    return jnp.asarray(_monic_recurrence(n, lambda k: k * k / (4.0 * k * k - 1.0)), dtype=dtype)


@cites("marsden2025usp")
def coeffs(kind: Literal["chebyshev", "legendre", "none"], n: int, *, dtype=None) -> Float[Array, " m"]:
    """Preconditioning coefficients of ``kind``: :func:`chebyshev_coeffs`, :func:`legendre_coeffs` or none.

    Args:
      kind: ``"chebyshev"``, ``"legendre"`` or ``"none"`` (``(1,)``, no preconditioning: ``y~ = y``).
      n: degree ``>= 1`` (checked but unused for ``"none"``; at most 64 in float32).
      dtype: float dtype; ``None`` is the default float dtype.

    Returns:
      ``(m,)`` array in ``dtype``: ``m = n + 1``, or ``m = 1`` for ``"none"``.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: unknown ``kind``, ``n < 1``, or ``n > 64`` in float32.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "none":
        check_int(n, "n", min_value=1)
        return jnp.ones((1,), _float_dtype(dtype))
    return (chebyshev_coeffs if kind == "chebyshev" else legendre_coeffs)(n, dtype=dtype)


def _check_coeffs(c) -> jax.Array:
    c = as_array(c, "c", ndim=1)
    if c.shape[0] < 1:
        raise ValueError("c must have at least one entry (c_0 = 1), got shape (0,)")
    return c


def lag_stack(x: Float[Array, "T *d"], lags: int, *, start: int = 0) -> Float[Array, "T lags *d"]:
    """Stack of lagged copies: ``out[t, i] = x[t - start - i]`` for ``i = 0 .. lags-1``, zero for negative indices.

    Args:
      x: ``(T, *d)`` array (not validated).
      lags: number of lags ``>= 1`` (a static Python int).
      start: the first lag (``1`` skips the current time).

    Returns:
      ``(T, lags, *d)`` array in the dtype of ``x``.
    """
    T = x.shape[0]
    pad = jnp.concatenate([jnp.zeros((start + lags - 1, *x.shape[1:]), x.dtype), x], axis=0)
    first = lags - 1
    return jnp.stack([pad[first - i: first - i + T] for i in range(lags)], axis=1)


@cites("marsden2025usp")
def precondition(y: Float[Array, "T *dy"], c: Float[Array, " n+1"]) -> Float[Array, "T *dy"]:
    """USP preconditioning: the causal convolution ``y~_t = sum_{j=0}^{n} c_j y_{t-j}`` with zero history.

    Marsden and Hazan, *Universal Sequence Preconditioning* (arXiv:2502.06545).

    Args:
      y: ``(T, *dy)`` float array (time first), ``T >= 1``, finite.
      c: ``(n+1,)`` float array of coefficients (e.g. :func:`coeffs`), at least one entry.

    Returns:
      ``(T, *dy)`` array ``y~`` in the dtype of ``y``.

    Raises:
      TypeError: non-float inputs.
      ValueError: ``y`` scalar, empty or non-finite; ``c`` not 1-D or empty.
    """
    y = check_series(y, "y")
    return _precondition(y, _check_coeffs(c).astype(y.dtype))


@jax.jit
def _precondition(y, c):
    return jnp.tensordot(lag_stack(y, c.shape[0]), c, axes=([1], [0]))


@cites("marsden2025usp")
def unprecondition(y_tilde: Float[Array, "T *dy"], c: Float[Array, " n+1"]) -> Float[Array, "T *dy"]:
    """Inverse of :func:`precondition`: ``y_t = (y~_t - sum_{j>=1} c_j y_{t-j}) / c_0`` by ``lax.scan``.

    Args:
      y_tilde: ``(T, *dy)`` float array, ``T >= 1``, finite.
      c: ``(n+1,)`` float array of coefficients with ``c_0 != 0`` (not checked).

    Returns:
      ``(T, *dy)`` array ``y`` in the dtype of ``y_tilde``.

    Raises:
      TypeError: non-float inputs.
      ValueError: ``y_tilde`` scalar, empty or non-finite; ``c`` not 1-D or empty.
    """
    y_tilde = check_series(y_tilde, "y_tilde")
    return _unprecondition(y_tilde, _check_coeffs(c).astype(y_tilde.dtype))


@jax.jit
def _unprecondition(y_tilde, c):
    n = c.shape[0] - 1
    if n == 0:
        return y_tilde / c[0]
    tail = c[1:].reshape((n,) + (1,) * (y_tilde.ndim - 1))

    def body(hist, yt):
        y_t = (yt - jnp.sum(tail * hist, axis=0)) / c[0]
        return jnp.concatenate([y_t[None], hist[:-1]], axis=0), y_t

    hist0 = jnp.zeros((n, *y_tilde.shape[1:]), y_tilde.dtype)
    return jax.lax.scan(body, hist0, y_tilde)[1]


def _as_2d(x: jax.Array) -> jax.Array:
    return x[:, None] if x.ndim == 1 else x


@cites("marsden2025usp", "marsden2026second")
def arx_features(y: Float[Array, "T dy"], u: Float[Array, "T du"] | None, n: int) -> Float[Array, "T n*(dy+du)"]:
    """USP/ARX features ``a_t = [y_{t-1}, ..., y_{t-n}, u_t, ..., u_{t-n+1}]`` (zero-padded for ``t <= n``).

    The features on which the USP predictor ``theta*`` (:func:`usp_predictor`) is linear (Marsden and Hazan,
    arXiv:2502.06545 and arXiv:2605.08390).

    Args:
      y: ``(T,)`` (one output) or ``(T, dy)`` float array of outputs, finite.
      u: ``(T,)`` or ``(T, du)`` float array of inputs, or ``None`` for autoregressive features only.
      n: history length ``>= 1``.

    Returns:
      ``(T, n*(dy+du))`` array (``(T, n*dy)`` without ``u``) in the dtype of ``y``: the ``n`` output lags
      (lag-major, each ``dy`` wide), then the ``n`` input lags.

    Raises:
      TypeError: non-float arrays or a non-int ``n``.
      ValueError: ``n < 1``, arrays of more than 2 dimensions, different lengths, empty or non-finite series.
    """
    n = check_int(n, "n", min_value=1)
    y = _as_2d(check_series(y, "y"))
    check_ndim(y, "y", 2)
    if u is not None:
        u = _as_2d(check_series(u, "u"))
        check_ndim(u, "u", 2)
        if u.shape[0] != y.shape[0]:
            raise ValueError(f"u must have the same length as y ({y.shape[0]}), got length {u.shape[0]}")
        u = u.astype(y.dtype)
    return _arx(y, u, n)


@functools.partial(jax.jit, static_argnums=2)
def _arx(y, u, n):
    T = y.shape[0]
    parts = [lag_stack(y, n, start=1).reshape(T, -1)]
    if u is not None:
        parts.append(lag_stack(u, n).reshape(T, -1))
    return jnp.concatenate(parts, axis=1)


@cites("marsden2025usp")
def matrix_polynomial(A: Float[Array, "d d"], c: Float[Array, " n+1"]) -> Float[Array, "d d"]:
    """Matrix polynomial ``p(A) = sum_j c_j A^{n-j}`` by Horner's rule (``c`` in descending powers, as everywhere here).

    Args:
      A: ``(d, d)`` real or complex array.
      c: ``(n+1,)`` float array of coefficients.

    Returns:
      ``(d, d)`` array in the dtype of ``A`` and ``c`` combined.

    Raises:
      TypeError: non-numeric ``A`` or non-float ``c``.
      ValueError: ``A`` not square, ``c`` not 1-D or empty.
    """
    A = as_array(A, "A", ndim=2, kind="complex")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {tuple(A.shape)}")
    return _horner(A, _check_coeffs(c))


@jax.jit
def _horner(A, c):
    eye = jnp.eye(A.shape[0], dtype=jnp.result_type(A, c))
    R = c[0] * eye
    for j in range(1, c.shape[0]):  # n is static and small: unrolled Horner
        R = R @ A + c[j] * eye
    return R


@cites("marsden2025usp", "marsden2026second")
def monic_chebyshev_matrices(A: Float[Array, "d d"], n_max: int) -> Float[Array, "n_max+1 d d"]:
    """``M_0(A), ..., M_{n_max}(A)`` stacked, by the monic recurrence ``M_{k+1} = A M_k - beta_k M_{k-1}``
    (``beta_1 = 1/2``, ``beta_k = 1/4`` for ``k >= 2``) in one ``lax.scan``; equals :func:`matrix_polynomial`
    with :func:`chebyshev_coeffs` but without forming the (exponentially large) coefficients.

    Args:
      A: ``(d, d)`` real or complex array.
      n_max: highest degree ``>= 1``.

    Returns:
      ``(n_max + 1, d, d)`` array in the dtype of ``A``, entry ``k`` being ``M_k(A)``.

    Raises:
      TypeError: non-numeric ``A`` or a non-int ``n_max``.
      ValueError: ``A`` not square, or ``n_max < 1``.
    """
    n_max = check_int(n_max, "n_max", min_value=1)
    A = as_array(A, "A", ndim=2, kind="complex")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {tuple(A.shape)}")
    return _cheb_matrices(A, n_max)


@functools.partial(jax.jit, static_argnums=1)
def _cheb_matrices(A, n_max):
    beta = jnp.full((n_max - 1,), 0.25, A.dtype).at[0].set(0.5)

    def body(carry, b):
        prev, cur = carry
        nxt = A @ cur - b * prev
        return (cur, nxt), nxt

    eye = jnp.eye(A.shape[0], dtype=A.dtype)
    rest = jax.lax.scan(body, (eye, A), beta)[1]
    return jnp.concatenate([eye[None], A[None], rest], axis=0)


@cites("marsden2025usp")
def usp_predictor(params: LDSParams, c: Float[Array, " n+1"]) -> Float[Array, "dy n*(dy+du)"]:
    """The USP comparator ``theta* = (-c_1 I, ..., -c_n I, Q_0, ..., Q_{n-1})``.

    ``Q_i = sum_{j<=i} c_j C A^{i-j} B + c_i D``.

    ``theta* @ a_t`` (features of :func:`arx_features`) is the USP predictor of Marsden and Hazan
    (arXiv:2502.06545), whose residual on the noise-free LDS with ``D = 0`` is ``C p(A) x_{t-n}`` (the
    annihilation identity of the module docstring; a nonzero ``D`` adds ``c_n D u_{t-n}``).

    Args:
      params: :class:`~jaxlab.online.lds.LDSParams` ``(A (h, h), B (h, du), C (dy, h), D (dy, du))``.
      c: ``(n+1,)`` float array of coefficients, ``n >= 1``.

    Returns:
      ``(dy, n*(dy+du))`` array in the dtype of ``A``.

    Raises:
      TypeError: non-float arrays.
      ValueError: mismatched parameter shapes, or ``c`` with fewer than two entries.
    """
    params = check_params(params)
    c = _check_coeffs(c).astype(params.A.dtype)
    if c.shape[0] < 2:
        raise ValueError("c must have degree n >= 1 (at least two entries), got shape (1,)")
    return _theta_star(params, c)


@jax.jit
def _theta_star(params, c):
    A, B, C, D = params
    n = c.shape[0] - 1
    dy = C.shape[0]

    def markov(carry, _):
        return A @ carry, C @ carry

    G = jax.lax.scan(markov, B, None, length=n)[1]  # G[k] = C A^k B
    Q = jnp.stack([sum(c[j] * G[i - j] for j in range(i + 1)) + c[i] * D for i in range(n)])
    ar = -c[1:, None, None] * jnp.eye(dy, dtype=A.dtype)
    return jnp.concatenate([ar.transpose(1, 0, 2).reshape(dy, -1), Q.transpose(1, 0, 2).reshape(dy, -1)], axis=1)


@cites("marsden2025usp", "marsden2026second")
def monic_chebyshev_eval(z: Complex[Array, "..."], n: int) -> Complex[Array, "..."]:
    """The monic Chebyshev polynomial ``M_n(z) = 2^{1-n} T_n(z)`` at real or complex ``z``, by the monic recurrence.

    Args:
      z: array of any shape, real floating or complex.
      n: degree ``>= 0``.

    Returns:
      Array of the shape and dtype of ``z``.

    Raises:
      TypeError: ``z`` not floating/complex, or ``n`` not an int.
      ValueError: ``n < 0``.
    """
    n = check_int(n, "n", min_value=0)
    return _cheb_eval(as_array(z, "z", kind="complex"), n)


@functools.partial(jax.jit, static_argnums=1)
def _cheb_eval(z, n):
    prev, cur = jnp.ones_like(z), z
    if n == 0:
        return prev
    for k in range(1, n):
        prev, cur = cur, z * cur - (0.5 if k == 1 else 0.25) * prev
    return cur


@cites("marsden2026second")
def bernstein_rho(z: Complex[Array, "..."]) -> Float[Array, "..."]:
    """Bernstein-ellipse parameter ``rho(z) = |w|`` for the root ``w = z +- sqrt(z^2 - 1)`` with ``|w| >= 1``.

    ``rho = 1`` on ``[-1, 1]``; ``|M_n(z)| <= 2^{1-n} rho(z)^n`` (the Joukowski bound of the module docstring,
    derived here).

    Args:
      z: array of any shape, real floating or complex.

    Returns:
      Real array of the shape of ``z`` (float64 for float64 or complex128 inputs, else float32).

    Raises:
      TypeError: ``z`` is not floating or complex.
    """
    return _rho(as_array(z, "z", kind="complex"))


@jax.jit
def _rho(z):
    z = z.astype(jnp.result_type(z.dtype, jnp.complex64))
    s = jnp.sqrt(z * z - 1)
    # The two roots multiply to 1, so the larger modulus is the one outside the unit circle.
    return jnp.maximum(jnp.abs(z + s), jnp.abs(z - s))


def predicting_y(algo: Algorithm) -> Algorithm:
    """Wrap an online learner fitted to a preconditioned target ``y~_t`` so that it reports predictions of ``y_t``.

    ``step(key, state, (a_t, y~_t, y_t))`` runs ``algo.step(key, state, (a_t, y~_t))`` and shifts the prediction:
    ``y^_t = theta_t . a_t - (y~_t - y_t) = theta_t . a_t - sum_{j>=1} c_j y_{t-j}`` (the loss stays the one on
    ``y~``). ``init`` is ``algo.init``.

    Args:
      algo: a data-driven :class:`~jaxlab.core.Algorithm` whose ``step(key, state, (a_t, y~_t))`` returns an info
        NamedTuple with a ``y_hat`` field.

    Returns:
      The wrapped ``Algorithm(init, step)`` over ``x = (a_t, y~_t, y_t)``.
    """

    def step(key, state, x):
        a, y_tilde, y = x
        state, info = algo.step(key, state, (a, y_tilde))
        return state, info._replace(y_hat=info.y_hat - (y_tilde - y))

    return Algorithm(algo.init, step)


@cites("marsden2026second", "marsden2025usp")
def usp_stream(
    y: Float[Array, "T *dy"],
    u: Float[Array, "T *du"] | None,
    *,
    n: int = 8,
    kind: Literal["chebyshev", "legendre", "none"] = "chebyshev",
    mode: Literal["arx", "precondition"] = "arx",
    include_y_lags: bool = False,
) -> tuple[Float[Array, "T p"], Float[Array, "T *dy"], Float[Array, "T *dy"]]:
    """The data stream ``(features, y~, y)`` that USP feeds to an online learner (see :func:`usp_vaw_run`).

    ``mode="arx"``: :func:`arx_features` ``a_t = [y_{t-1..t-n}, u_{t..t-n+1}]`` and ``y~ = y`` (USP enters through
    the comparator :func:`usp_predictor`). ``mode="precondition"``: the input lags ``[u_t, ..., u_{t-n+1}]``
    (preceded by the ``y`` lags when ``include_y_lags``) and ``y~_t = sum_j c_j y_{t-j}`` (:func:`precondition`)
    for the coefficients ``c`` of ``kind`` (Marsden and Hazan, arXiv:2502.06545 and arXiv:2605.08390).

    Args:
      y: ``(T,)`` or ``(T, dy)`` float array of outputs, finite.
      u: ``(T,)`` or ``(T, du)`` float array of inputs, or ``None`` (then ``mode="precondition"`` needs
        ``include_y_lags=True``).
      n: history length and polynomial degree, ``>= 1`` (at most 64 in float32 with ``mode="precondition"``).
      kind: ``"chebyshev"``, ``"legendre"`` or ``"none"`` (used by ``mode="precondition"`` only).
      mode: ``"arx"`` or ``"precondition"``.
      include_y_lags: keep the ``y`` lags among the features in ``"precondition"`` mode.

    Returns:
      ``(features, y_tilde, y)``: ``(T, p)`` features (``p = n*(dy+du)`` in ``"arx"`` mode, ``n*du`` (plus
      ``n*dy``) in ``"precondition"`` mode) and two arrays of the shape of ``y``; the ``xs`` of
      :func:`usp_vaw_algorithm`.

    Raises:
      TypeError: non-float arrays or a non-int ``n``.
      ValueError: unknown ``mode`` or ``kind``, ``n < 1``, ``u=None`` in ``"precondition"`` mode without
        ``include_y_lags``, or invalid series (empty, non-finite, different lengths).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    n = check_int(n, "n", min_value=1)
    y = check_series(y, "y")
    if mode == "arx":
        return arx_features(y, u, n), y, y
    if u is None and not include_y_lags:
        raise ValueError("mode='precondition' needs inputs u (or include_y_lags=True), got u=None")
    c = coeffs(kind, n, dtype=y.dtype)
    y_tilde = precondition(y, c)
    feats = arx_features(y, u, n)
    if not include_y_lags:
        feats = feats[:, n * _as_2d(y).shape[1]:]
    return feats, y_tilde, y


@cites("marsden2026second", "marsden2025usp", "vovk2001competitive", "azoury2001relative")
def usp_vaw_algorithm(lam: float = 1.0, *, method: str = "auto") -> Algorithm:
    """USP + VAW as a data-driven :class:`~jaxlab.core.Algorithm` over the stream of :func:`usp_stream`.

    ``init(dim, *, num_outputs=1, dtype=None)`` is VAW's (:func:`jaxlab.online.vaw.vaw_algorithm`);
    ``step(key, state, (a_t, y~_t, y_t))`` is one VAW round on ``(a_t, y~_t)`` whose ``info.y_hat`` predicts
    ``y_t`` (:func:`predicting_y`).

    The pairing of USP with the Vovk-Azoury-Warmuth forecaster follows A. Marsden and E. Hazan, *The Power of
    Second Order Methods for Sequence Preconditioning* (arXiv:2605.08390).

    Args:
      lam: VAW regulariser ``lam > 0`` (checked at ``init``).
      method: VAW's ``"auto"``, ``"sherman_morrison"`` or ``"solve"``.

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(VAWState | VAWGramState, VAWInfo)`` with ``info.y_hat`` the
      prediction of ``y_t`` and ``info.loss`` the squared loss on ``y~_t``.

    Raises:
      ValueError: unknown ``method``; ``lam <= 0`` (at ``init``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.online import usp_stream, usp_vaw_algorithm
      >>> u = jax.random.normal(jax.random.key(0), (64, 1))
      >>> y = jnp.cumsum(u[:, 0]) * 0.1
      >>> xs = usp_stream(y, u, n=2, mode="precondition")
      >>> algo = usp_vaw_algorithm(1.0)
      >>> state, trace = run(algo.step, algo.init(xs[0].shape[1], dtype=xs[0].dtype), None, xs=xs)
      >>> trace.infos.y_hat.shape
      (64, 1)
    """
    return predicting_y(vaw.vaw_algorithm(lam, method=method))


@cites("marsden2026second", "marsden2025usp", "vovk2001competitive", "azoury2001relative")
def usp_vaw_run(
    y: Float[Array, "T *dy"],
    u: Float[Array, "T *du"] | None,
    *,
    n: int = 8,
    lam: float = 1.0,
    kind: Literal["chebyshev", "legendre", "none"] = "chebyshev",
    mode: Literal["arx", "precondition"] = "arx",
    include_y_lags: bool = False,
    method: str = "auto",
) -> tuple[vaw.VAWState | vaw.VAWGramState, vaw.VAWInfo]:
    """USP + VAW, online over one sequence (``vmap`` it for many).

    ``mode="arx"``: VAW on :func:`arx_features` with target ``y_t`` (USP enters through the comparator
    ``theta*``; ``kind`` is then unused). ``mode="precondition"`` (USP Algorithm 1 made online): VAW on the
    input lags ``[u_t, ..., u_{t-n+1}]`` (plus the ``y`` lags when ``include_y_lags``) with target ``y~_t``;
    the reported prediction is ``y^_t = theta_t . a'_t - sum_{j>=1} c_j y_{t-j}`` (same loss as on ``y~``).
    USP is A. Marsden and E. Hazan, *Universal Sequence Preconditioning* (arXiv:2502.06545); its pairing with the
    Vovk-Azoury-Warmuth forecaster, *The Power of Second Order Methods for Sequence Preconditioning*
    (arXiv:2605.08390).

    Args:
      y: ``(T,)`` or ``(T, dy)`` float array of outputs, finite.
      u: ``(T,)`` or ``(T, du)`` float array of inputs, or ``None`` (autoregressive only).
      n: history length and polynomial degree, ``>= 1``.
      lam: VAW regulariser ``lam > 0``.
      kind: ``"chebyshev"``, ``"legendre"`` or ``"none"`` (``mode="precondition"`` only).
      mode: ``"arx"`` or ``"precondition"`` (see :func:`usp_stream`).
      include_y_lags: keep the ``y`` lags among the features in ``"precondition"`` mode.
      method: VAW's ``"auto"``, ``"sherman_morrison"`` or ``"solve"`` (see :mod:`jaxlab.online.vaw`).

    Returns:
      ``(state, info)``: the final :class:`~jaxlab.online.vaw.VAWState` (or ``VAWGramState``) and the per-step
      :class:`~jaxlab.online.vaw.VAWInfo` with leading axis ``T``; ``info.y_hat`` (shape of ``y``) predicts
      ``y_t``, ``info.loss`` ``(T,)`` and ``info.leverage`` ``(T,)``.

    Raises:
      TypeError: non-float arrays or a non-int ``n``.
      ValueError: ``lam <= 0``, unknown ``mode``/``kind``/``method``, ``n < 1``, or invalid series.

    Example:
      >>> import jax
      >>> from jaxlab.online import random_lds, simulate, usp_vaw_run
      >>> params = random_lds(jax.random.key(0), 10)
      >>> u = jax.random.normal(jax.random.key(1), (200, 1))
      >>> y, _ = simulate(jax.random.key(2), params, u, obs_noise=0.1)
      >>> state, info = usp_vaw_run(y[:, 0], u, n=4, lam=1.0)
      >>> info.y_hat.shape, info.loss.shape
      ((200,), (200,))
    """
    lam = check_positive(lam, "lam")
    feats, y_tilde, y = usp_stream(y, u, n=n, kind=kind, mode=mode, include_y_lags=include_y_lags)
    if mode == "arx":
        return vaw.run(feats, y, lam, method=method)
    state, info = vaw.run(feats, y_tilde, lam, method=method)
    return state, info._replace(y_hat=info.y_hat - (y_tilde - y))


def _example(key):
    u = jax.random.normal(key, (12, 1))
    y = jnp.cumsum(u[:, 0]) * 0.1
    xs = usp_stream(y, u, n=2, mode="precondition")
    algo = usp_vaw_algorithm(1.0)
    return algo, algo.init(xs[0].shape[1], dtype=xs[0].dtype), xs


register_algorithm("usp_vaw", usp_vaw_algorithm, _example, area="online")
