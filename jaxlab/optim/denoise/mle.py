r"""Maximum-likelihood gradient denoisers for quadratic and cubic objectives (batch and recursive).

Source: the 2026 gradient-denoising paper whose full text was not located (abstract only: "maximum-likelihood
estimation of gradient and Hessian for quadratic and cubic problems"). The estimators below are **derived**
from that problem statement (least squares is the Gaussian MLE); none of the formulas is taken from the paper.

Quadratic :math:`f(x) = \tfrac12 x^\top H x + b^\top x`, observations :math:`g_s = H x_s + b + w_s`,
:math:`w_s \sim N(0, \sigma^2 I)`, :math:`s = 1..t`:

.. math::  (\hat H, \hat b) = \arg\min_{H, b} \sum_{s \le t} \|g_s - H x_s - b\|^2 + \rho \|H\|_F^2,
           \qquad \hat g_t = \hat H x_t + \hat b .

The intercept is unpenalized, so with centred data :math:`X_c, G_c` (rows :math:`x_s - \bar x`,
:math:`g_s - \bar g`) and :math:`S = X_c^\top X_c + \rho I`:

- unconstrained :math:`H`: :math:`\hat H = G_c^\top X_c S^{-1}`, :math:`\hat b = \bar g - \hat H \bar x`;
- symmetric :math:`H = H^\top` (derived): stationarity over symmetric matrices gives the Lyapunov equation
  :math:`\hat H S + S \hat H = G_c^\top X_c + X_c^\top G_c`, solved in the eigenbasis
  :math:`S = U \Lambda U^\top` as :math:`(U^\top \hat H U)_{ij} = (U^\top C U)_{ij} / (\lambda_i + \lambda_j)`.

In 1-D the plug-in estimate has variance :math:`\sigma^2 [1/t + (x_t - \bar x)^2 / \sum_s (x_s - \bar x)^2]`.
Identifiability needs :math:`t \ge d + 1` affinely independent points when :math:`\rho = 0`.

Cubic (constant third derivative): :math:`\nabla f(x) = b + H_0 x + \tfrac12 T_3[x, x]` is linear in the
features :math:`\phi(x) = [1, x, \mathrm{vech}(x x^\top)]`, so the MLE is least squares on :math:`\phi`
(:math:`1 + d + d(d+1)/2` coefficients per output; small :math:`d` only). With :math:`\beta_{i,jk}` the
coefficient of :math:`x_j x_k` (:math:`j \le k`) in output :math:`i`: :math:`T_{3,ijj} = 2\beta_{i,jj}`,
:math:`T_{3,ijk} = T_{3,ikj} = \beta_{i,jk}` (:math:`j < k`).

Online (recursive least squares, unconstrained :math:`H`): with :math:`\phi_s = [x_s, 1]`, inverse Gram
:math:`P_0 = I/\rho` and coefficients :math:`W` (:math:`g \approx W^\top \phi`), each step is a
Sherman-Morrison update, :math:`O(d^2)`:

.. math::  k = P\phi/(1 + \phi^\top P \phi),\quad W \leftarrow W + k (g - W^\top\phi)^\top,\quad
           P \leftarrow P - k \phi^\top P,\qquad \hat g = W^\top \phi .

RLS penalizes the intercept too (:math:`\rho\|W\|_F^2`), so it matches the batch fit up to :math:`O(\rho)`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float, Int
from jaxlab.core.validation import as_array, check_int, check_positive, value_check
from jaxlab.optim.denoise.papers import DENOISE

__all__ = ["RLSInfo", "RLSState", "cubic_mle", "quadratic_mle", "rls_algorithm", "rls_init", "rls_step"]


def _pair(xs, gs):
    xs = as_array(xs, "xs", ndim=2)
    gs = as_array(gs, "gs", ndim=2)
    if xs.shape != gs.shape:
        raise ValueError(f"xs and gs must have the same shape (t, d), got xs {xs.shape} and gs {gs.shape}")
    return xs, gs


def _check_rank(t: int, p: int, ridge: float, what: str):
    """Return ``ridge`` checked >= 0, and > 0 when the ``t`` rows cannot identify the ``p`` coefficients."""
    ridge = check_positive(ridge, "ridge", strict=False)
    if t < p:
        ridge = value_check(ridge, lambda r: r == 0,
                            f"xs must have at least {p} rows for the {what} fit with ridge == 0 (rank deficient), "
                            f"got t = {t}; add observations or set ridge > 0")
    return ridge


def _centered_ridge(features, gs, ridge):
    """Unpenalized intercept + ridge-penalized slopes: (S, C, mean features, mean gs) of the centred data."""
    fbar, gbar = features.mean(0), gs.mean(0)
    fc, gc = features - fbar, gs - gbar
    S = fc.T @ fc + ridge * jnp.eye(features.shape[1], dtype=features.dtype)
    return S, gc.T @ fc, fbar, gbar


@cites(DENOISE)
def quadratic_mle(
    xs: Float[Array, "t d"], gs: Float[Array, "t d"], *, symmetric: bool = False, ridge: float = 0.0
) -> tuple[Float[Array, "d d"], Float[Array, " d"]]:
    """MLE :math:`(\\hat H, \\hat b)` of a quadratic's Hessian and linear term from gradient observations.

    Ridge least squares with an unpenalized intercept (the Gaussian MLE for :math:`\\rho = 0`), with the
    symmetric case solved as a Lyapunov equation (module docstring). Derived here from the problem statement in
    the abstract of the 2026 gradient-denoising paper (full text not located); no formula is taken from it.

    Args:
      xs: query points, shape (t, d).
      gs: observed gradients at ``xs``, shape (t, d).
      symmetric: constrain :math:`H = H^\\top` (Lyapunov solve) instead of ordinary least squares.
      ridge: :math:`\\rho \\ge 0`, penalty :math:`\\rho\\|H\\|_F^2`; ``ridge == 0`` needs ``t >= d + 1``.

    Returns:
      ``(H, b)``: ``(d, d)`` and ``(d,)`` arrays; the gradient estimate at ``x`` is ``H @ x + b``.

    Raises:
      TypeError: non-float ``xs``/``gs``.
      ValueError: ``xs``/``gs`` not 2-D or of different shapes, ``ridge < 0``, or ``ridge == 0`` with fewer than
        ``d + 1`` rows.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.optim import quadratic_mle
      >>> H = jnp.array([[2.0, 0.5], [0.5, 1.0]]); b = jnp.array([1.0, -1.0])
      >>> xs = jax.random.normal(jax.random.key(0), (50, 2))
      >>> gs = xs @ H + b + 0.1 * jax.random.normal(jax.random.key(1), (50, 2))
      >>> H_hat, b_hat = quadratic_mle(xs, gs, symmetric=True)
      >>> H_hat.shape, b_hat.shape
      ((2, 2), (2,))
    """
    xs, gs = _pair(xs, gs)
    t, d = xs.shape
    ridge = _check_rank(t, d + 1, ridge, "quadratic")
    return _quadratic_solve(xs, gs, ridge, symmetric)


@functools.partial(jax.jit, static_argnums=3)
def _quadratic_solve(xs, gs, ridge, symmetric):
    S, C, xbar, gbar = _centered_ridge(xs, gs, ridge)
    if symmetric:
        lam, U = jnp.linalg.eigh(S)
        Ct = U.T @ (C + C.T) @ U
        H = U @ (Ct / (lam[:, None] + lam[None, :])) @ U.T
    else:
        H = jnp.linalg.solve(S, C.T).T
    return H, gbar - H @ xbar


def _vech_index(d: int):
    j, k = jnp.triu_indices(d)
    return j, k


def _cubic_features(xs):
    j, k = _vech_index(xs.shape[1])
    return jnp.concatenate([xs, xs[:, j] * xs[:, k]], axis=1)


@cites(DENOISE)
def cubic_mle(
    xs: Float[Array, "t d"], gs: Float[Array, "t d"], *, ridge: float = 0.0
) -> tuple[Float[Array, "d d"], Float[Array, " d"], Float[Array, "d d d"]]:
    """MLE of a cubic's gradient model :math:`\\nabla f(x) = b + H_0 x + \\tfrac12 T_3[x, x]` (small ``d``).

    Least squares on the features :math:`\\phi(x) = [1, x, \\mathrm{vech}(x x^\\top)]` (module docstring;
    derived here, the Gaussian MLE).

    Args:
      xs: query points, shape ``(t, d)``.
      gs: observed gradients at ``xs``, shape ``(t, d)``.
      ridge: penalty on the non-intercept coefficients; ``ridge == 0`` needs ``t >= 1 + d + d(d+1)/2``.

    Returns:
      ``(H0, b, T3)``: ``(d, d)``, ``(d,)`` and ``(d, d, d)`` arrays with ``T3[i, j, k]`` symmetric in ``(j, k)``.

    Raises:
      TypeError: non-float ``xs``/``gs``.
      ValueError: ``xs``/``gs`` not 2-D or of different shapes, ``ridge < 0``, or ``ridge == 0`` with fewer than
        ``1 + d + d(d+1)/2`` rows.
    """
    xs, gs = _pair(xs, gs)
    t, d = xs.shape
    ridge = _check_rank(t, 1 + d + d * (d + 1) // 2, ridge, "cubic")
    return _cubic_solve(xs, gs, ridge)


@jax.jit
def _cubic_solve(xs, gs, ridge):
    d = xs.shape[1]
    phi = _cubic_features(xs)
    S, C, fbar, gbar = _centered_ridge(phi, gs, ridge)
    B = jnp.linalg.solve(S, C.T)  # (p, d): coefficient of feature p in output i
    b = gbar - fbar @ B
    H0 = B[:d].T
    beta = B[d:].T  # (d, d(d+1)/2)
    j, k = _vech_index(d)
    T3 = jnp.zeros((d, d, d), xs.dtype)
    scale = jnp.where(j == k, 2.0, 1.0)
    T3 = T3.at[:, j, k].set(beta * scale).at[:, k, j].set(beta * scale)
    return H0, b, T3


class RLSState(NamedTuple):
    """Recursive least squares state, with :math:`\\hat g(x) = W^\\top [x, 1]`.

    Attributes:
      P: ``(d+1, d+1)`` float array, the inverse Gram matrix.
      W: ``(d+1, d)`` float array, the coefficients.
      count: 0-d int32 array, the number of observations absorbed.
    """

    P: Float[Array, "p p"]
    W: Float[Array, "p d"]
    count: Int[Array, ""]


@cites(DENOISE)
def rls_init(d: int, ridge: float, *, dtype=None) -> RLSState:
    """Empty RLS state for dimension ``d`` with prior :math:`P_0 = I/\\rho` (``ridge`` :math:`=\\rho > 0`), ``W_0 = 0``.

    Args:
      d: parameter dimension ``>= 1``.
      ridge: prior precision :math:`\\rho > 0`.
      dtype: float dtype; ``None`` is the default float dtype.

    Returns:
      :class:`RLSState` with ``P`` of shape ``(d+1, d+1)``, ``W`` of shape ``(d+1, d)`` and ``count = 0``.

    Raises:
      TypeError: ``d`` is not an int.
      ValueError: ``d < 1`` or ``ridge <= 0``.
    """
    d = check_int(d, "d", min_value=1)
    ridge = check_positive(ridge, "ridge")
    dtype = dtype or jnp.result_type(float)
    return RLSState(jnp.eye(d + 1, dtype=dtype) / ridge, jnp.zeros((d + 1, d), dtype), jnp.zeros((), jnp.int32))


@cites(DENOISE)
def rls_step(state: RLSState, x: Float[Array, " d"], g: Float[Array, " d"]) -> tuple[RLSState, Float[Array, " d"]]:
    """Absorb the observation ``g`` at ``x`` and return the online MLE :math:`\\hat g(x)` (after the update).

    Sherman-Morrison with :math:`\\phi = [x, 1]`: :math:`k = P\\phi/(1 + \\phi^\\top P \\phi)`,
    :math:`W \\leftarrow W + k (g - W^\\top\\phi)^\\top`, :math:`P \\leftarrow P - k \\phi^\\top P`.

    Args:
      state: the current :class:`RLSState`.
      x: ``(d,)`` float array, the query point.
      g: ``(d,)`` float array, the gradient observed at ``x``.

    Returns:
      ``(state, g_hat)``: the updated state and the ``(d,)`` estimate :math:`W^\\top [x, 1]`.

    Raises:
      TypeError: non-float ``x`` or ``g``.
      ValueError: ``x`` or ``g`` not of shape ``(d,)``.
    """
    d = state.W.shape[1]
    x = as_array(x, "x", shape=(d,))
    g = as_array(g, "g", shape=(d,))
    phi = jnp.concatenate([x, jnp.ones((1,), x.dtype)])
    Pphi = state.P @ phi
    k = Pphi / (1.0 + phi @ Pphi)
    W = state.W + jnp.outer(k, g - phi @ state.W)
    P = state.P - jnp.outer(k, Pphi)
    return RLSState(P, W, state.count + 1), phi @ W


class RLSInfo(NamedTuple):
    """Per-step output of :func:`rls_algorithm`.

    Attributes:
      g_hat: ``(d,)`` float array, the online MLE :math:`\\hat g(x_t) = W_t^\\top [x_t, 1]` of the gradient at
        :math:`x_t`, after absorbing the observation.
    """

    g_hat: Float[Array, " d"]


@cites(DENOISE)
def rls_algorithm(ridge: float) -> Algorithm:
    """Recursive least squares (the online quadratic MLE) as an :class:`~jaxlab.core.Algorithm` (data-driven).

    ``init(d, *, dtype=None)`` is :func:`rls_init` (``P_0 = I / ridge``, ``W_0 = 0``);
    ``step(key, state, x)`` with ``x = (x_t, g_t)`` is :func:`rls_step`: the Sherman-Morrison update
    ``k = P phi / (1 + phi^T P phi)``, ``W += k (g - W^T phi)^T``, ``P -= k phi^T P`` with ``phi = [x_t, 1]``
    (``key`` is ignored). Derived here, like :func:`quadratic_mle`, from the abstract of the 2026
    gradient-denoising paper (full text not located).

    Args:
      ridge: prior precision ``rho > 0``.

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(RLSState, RLSInfo)``.

    Raises:
      ValueError: ``ridge <= 0`` (at ``init``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.optim import rls_algorithm
      >>> xs = jax.random.normal(jax.random.key(0), (30, 2))
      >>> gs = xs @ jnp.array([[2.0, 0.5], [0.5, 1.0]]) + 1.0
      >>> algo = rls_algorithm(1e-3)
      >>> state, trace = run(algo.step, algo.init(2), None, xs=(xs, gs))
      >>> trace.infos.g_hat.shape
      (30, 2)
    """

    def init_fn(d: int, *, dtype=None) -> RLSState:
        return rls_init(d, ridge, dtype=dtype)

    def step_fn(key, state: RLSState, x) -> tuple[RLSState, RLSInfo]:
        del key  # deterministic
        x_t, g_t = x
        state, g_hat = rls_step(state, x_t, g_t)
        return state, RLSInfo(g_hat)

    return Algorithm(init_fn, step_fn)


def _rls_example(key):
    xs = jax.random.normal(key, (6, 2))
    gs = xs @ jnp.array([[2.0, 0.5], [0.5, 1.0]]) + 1.0
    algo = rls_algorithm(1e-3)
    return algo, algo.init(2, dtype=xs.dtype), (xs, gs)


register_algorithm("rls", rls_algorithm, _rls_example, area="denoise")
