r"""Linear dynamical systems (LDS): marginally stable random generators and simulation.

Data model of A. Marsden and E. Hazan, *Universal Sequence Preconditioning*, arXiv:2502.06545, and
*The Power of Second Order Methods for Sequence Preconditioning*, arXiv:2605.08390::

    x_t = A x_{t-1} + B u_t,      y_t = C x_t + D u_t + xi_t,      x_0 given (zero by default), t = 1..T,

arrays 0-based (element k is time k+1). *Marginally stable*: ``A = P Lambda P^{-1}`` with every eigenvalue
``|lambda| <= 1``; ``kappa = ||P|| ||P^{-1}||``.

Generator (:func:`random_lds`, our construction): ``Lambda`` is block diagonal, real
eigenvalues on the diagonal and each conjugate pair ``r e^{+-i theta}`` as the real 2x2 block
``r [[cos, -sin], [sin, cos]]``; ``P = I + p_scale G / sqrt(d_hidden)`` with ``G`` standard normal
(asymmetric, so ``A`` is not normal); ``B`` and ``C`` have ``N(0, 1/d_hidden)`` entries and ``D = 0``.
"""

from __future__ import annotations

import functools
import math
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Complex, Float, Key
from jaxlab.core.validation import as_array, check_finite, check_in_range, check_int, check_positive

__all__ = [
    "EIGS", "LDSParams", "block_diagonal", "check_params", "deterministic_lds", "random_lds", "simulate", "spectrum",
]

EIGS = ("real_marginal", "arc")


class LDSParams(NamedTuple):
    """Parameters of the LDS ``x_t = A x_{t-1} + B u_t``, ``y_t = C x_t + D u_t + xi_t``.

    Attributes:
      A: ``(h, h)`` float array, the state transition (marginally stable for the generators of this module).
      B: ``(h, du)`` float array, the input matrix.
      C: ``(dy, h)`` float array, the observation matrix.
      D: ``(dy, du)`` float array, the direct feedthrough (zero for the generators of this module).
    """

    A: Float[Array, "h h"]
    B: Float[Array, "h du"]
    C: Float[Array, "dy h"]
    D: Float[Array, "dy du"]


@cites("marsden2025usp")
def block_diagonal(real: Float[Array, " r"], complex_pairs: Complex[Array, " m"] | None = None) -> Float[Array, "h h"]:
    """Real block-diagonal matrix ``Lambda`` with prescribed real eigenvalues and conjugate pairs.

    ``Lambda = diag(real_1, ..., real_r, B(z_1), ..., B(z_m))`` with the 2x2 block
    ``B(z) = [[Re z, -Im z], [Im z, Re z]]``, whose eigenvalues are ``z`` and ``conj(z)``; ``h = r + 2m``.

    Args:
      real: ``(r,)`` float array of real eigenvalues.
      complex_pairs: ``(m,)`` complex (or real floating) array, one entry ``z`` per conjugate pair, or ``None``
        for none.

    Returns:
      ``(h, h)`` array in the dtype of ``real``.

    Raises:
      TypeError: ``real`` is not a float array or ``complex_pairs`` not a complex/float array.
      ValueError: either argument is not 1-D.
    """
    real = as_array(real, "real", ndim=1)
    z = jnp.zeros((0,), jnp.result_type(real.dtype, jnp.complex64)) if complex_pairs is None else \
        as_array(complex_pairs, "complex_pairs", ndim=1, kind="complex")
    r, m = real.shape[0], z.shape[0]
    i = r + 2 * jnp.arange(m)
    re, im = jnp.real(z).astype(real.dtype), jnp.imag(z).astype(real.dtype)
    out = jnp.zeros((r + 2 * m, r + 2 * m), real.dtype).at[jnp.arange(r), jnp.arange(r)].set(real)
    return out.at[i, i].set(re).at[i + 1, i + 1].set(re).at[i, i + 1].set(-im).at[i + 1, i].set(im)


@cites("marsden2025usp", "marsden2026second")
def random_lds(
    key: Key,
    d_hidden: int,
    d_in: int = 1,
    d_out: int = 1,
    *,
    eigs: Literal["real_marginal", "arc"] = "real_marginal",
    max_arg: float = 0.0,
    p_scale: float = 0.5,
    extra_eigs: tuple[float, ...] = (1.0, 0.999, -0.999),
    dtype=None,
) -> LDSParams:
    """A random marginally stable, asymmetric LDS (the generator of the module docstring, chosen here).

    ``A = P Lambda P^{-1}`` with ``P = I + p_scale G / sqrt(d_hidden)``, ``G`` standard normal; ``B``, ``C`` have
    ``N(0, 1/d_hidden)`` entries and ``D = 0``. The spectrum of ``Lambda``:

    - ``eigs="real_marginal"``: the ``extra_eigs`` (real, ``|.| <= 1``) plus eigenvalues uniform in [-1, 1]; with
      ``max_arg > 0`` the remaining ones are conjugate pairs ``r e^{+-i theta}``, ``r ~ U[0, 1]``,
      ``theta ~ U[0, max_arg]``, each pair reflected to ``-r e^{-+i theta}`` with probability 1/2 (the sector
      around both real half-axes);
    - ``eigs="arc"``: the remaining ones are conjugate pairs on the unit circle, ``e^{+-i theta}``,
      ``theta ~ U[0, max_arg]`` with the end point ``theta = max_arg`` always included.

    An odd leftover is a real eigenvalue uniform in [-1, 1]. The data model is the one of A. Marsden and
    E. Hazan, *Universal Sequence Preconditioning* (arXiv:2502.06545) and *The Power of Second Order Methods for
    Sequence Preconditioning* (arXiv:2605.08390).

    Args:
      key: PRNG key.
      d_hidden: state dimension ``h >= 1``.
      d_in: input dimension ``du >= 1``.
      d_out: output dimension ``dy >= 1``.
      eigs: ``"real_marginal"`` or ``"arc"`` (see above).
      max_arg: largest eigenvalue argument ``theta``, in ``[0, pi]``; must be > 0 with ``eigs="arc"``.
      p_scale: ``>= 0``, the scale of the non-normal part of ``P`` (0 gives a normal ``A``).
      extra_eigs: real eigenvalues of magnitude ``<= 1`` always included (at most ``d_hidden`` of them).
      dtype: float dtype of the arrays; ``None`` is the default float dtype (float64 under ``jax_enable_x64``).

    Returns:
      :class:`LDSParams` with ``A (h, h)``, ``B (h, du)``, ``C (dy, h)`` and ``D = 0 (dy, du)`` in ``dtype``.

    Raises:
      TypeError: ``d_hidden``, ``d_in`` or ``d_out`` is not an int.
      ValueError: a dimension below 1, unknown ``eigs``, ``max_arg`` outside ``[0, pi]`` (or 0 with
        ``eigs="arc"``), ``p_scale < 0``, an ``extra_eigs`` entry of magnitude > 1, or more ``extra_eigs`` than
        ``d_hidden``.

    Example:
      >>> import jax
      >>> from jaxlab.online import random_lds
      >>> params = random_lds(jax.random.key(0), 6, eigs="arc", max_arg=0.5)
      >>> params.A.shape, params.B.shape, params.C.shape
      ((6, 6), (6, 1), (1, 6))
    """
    d_hidden = check_int(d_hidden, "d_hidden", min_value=1)
    d_in = check_int(d_in, "d_in", min_value=1)
    d_out = check_int(d_out, "d_out", min_value=1)
    if eigs not in EIGS:
        raise ValueError(f"eigs must be one of {EIGS}, got {eigs!r}")
    max_arg = check_in_range(max_arg, "max_arg", 0.0, math.pi)
    p_scale = check_positive(p_scale, "p_scale", strict=False)
    extra = np.asarray(extra_eigs, dtype=float).reshape(-1)
    if extra.size and np.max(np.abs(extra)) > 1:
        raise ValueError(f"extra_eigs must have magnitude <= 1 for a marginally stable system (eigs={eigs!r}), "
                         f"got {float(extra[np.argmax(np.abs(extra))])!r}")
    if extra.size > d_hidden:
        raise ValueError(f"extra_eigs must have at most d_hidden={d_hidden} entries, got {extra.size}")
    if eigs == "arc" and max_arg <= 0:
        raise ValueError(f"max_arg must be > 0 with eigs='arc', got {max_arg!r}")
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    m = (d_hidden - extra.size) // 2 if max_arg > 0 else 0
    return _build(key, jnp.asarray(extra, dtype), jnp.asarray(max_arg, dtype), jnp.asarray(p_scale, dtype),
                  d_hidden, d_in, d_out, m, eigs == "arc")


@functools.partial(jax.jit, static_argnums=(4, 5, 6, 7, 8))
def _build(key, extra, max_arg, p_scale, d_hidden, d_in, d_out, m, arc):
    dtype = extra.dtype
    k_unif, k_norm = jax.random.split(key)
    n_real = d_hidden - extra.shape[0] - 2 * m
    # One uniform and one normal draw, cut into pieces (fewer RNG kernels to compile).
    unif = jax.random.uniform(k_unif, (n_real + 3 * m,), dtype)
    real = jnp.concatenate([extra, 2 * unif[:n_real] - 1])
    pairs = None
    if m:
        theta = max_arg * unif[n_real:n_real + m]
        if arc:
            pairs = jnp.exp(1j * theta.at[0].set(max_arg))
        else:
            sign = jnp.where(unif[n_real + 2 * m:] < 0.5, -1.0, 1.0)
            pairs = sign * unif[n_real + m:n_real + 2 * m] * jnp.exp(1j * theta)
    Lam = block_diagonal(real, pairs)
    g = jax.random.normal(k_norm, (d_hidden + d_in + d_out, d_hidden), dtype) / math.sqrt(d_hidden)
    P = jnp.eye(d_hidden, dtype=dtype) + p_scale * g[:d_hidden]
    A = jnp.linalg.solve(P.T, (P @ Lam).T).T  # P Lambda P^{-1}
    B = g[d_hidden:d_hidden + d_in].T
    C = g[d_hidden + d_in:]
    return LDSParams(A, B, C, jnp.zeros((d_out, d_in), dtype))


@cites("marsden2025usp")
def spectrum(params: LDSParams) -> Array:
    """Eigenvalues of ``params.A``, computed on the host with ``numpy.linalg.eigvals``.

    Args:
      params: :class:`LDSParams` with a concrete (not traced) ``A`` of shape ``(h, h)``.

    Returns:
      ``(h,)`` complex array of eigenvalues.
    """
    return jnp.asarray(np.linalg.eigvals(np.asarray(params.A)))


def check_params(params: LDSParams) -> LDSParams:
    """Validate the shapes of ``(A, B, C, D)``: ``A`` square (h, h), ``B`` (h, du), ``C`` (dy, h), ``D`` (dy, du).

    Args:
      params: :class:`LDSParams` (array-likes are converted).

    Returns:
      The parameters as JAX float arrays.

    Raises:
      TypeError: an entry is not a float array.
      ValueError: an entry is not 2-D, ``A`` is not square, or the shapes do not match.
    """
    A = as_array(params.A, "params.A", ndim=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"params.A must be square, got shape {tuple(A.shape)}")
    h = A.shape[0]
    B = as_array(params.B, "params.B", ndim=2, shape=(h, None))
    C = as_array(params.C, "params.C", ndim=2, shape=(None, h))
    D = as_array(params.D, "params.D", ndim=2, shape=(C.shape[0], B.shape[1]))
    return LDSParams(A, B, C, D)


def _check_lds(params: LDSParams, u) -> tuple[LDSParams, jax.Array]:
    params = check_params(params)
    B = params.B
    u = as_array(u, "u", ndim=(1, 2))
    u = u[:, None] if u.ndim == 1 else u
    if u.shape[1] != B.shape[1]:
        raise ValueError(f"u must have {B.shape[1]} columns (params.B has shape {tuple(B.shape)}), "
                         f"got shape {tuple(u.shape)}")
    if u.shape[0] == 0:
        raise ValueError("u must have at least one time step (T >= 1), got length 0")
    u = check_finite(u, "u")
    return params, u


@cites("marsden2025usp")
def simulate(key: Key, params: LDSParams, u: Float[Array, "T du"], *, obs_noise: float = 0.0,
             x0: Float[Array, " h"] | None = None) -> tuple[Float[Array, "T dy"], Float[Array, "T h"]]:
    """Roll the LDS over the inputs ``u`` with ``lax.scan``.

    ``x_t = A x_{t-1} + B u_t``, ``y_t = C x_t + D u_t + xi_t`` for ``t = 1..T``, with
    ``xi_t ~ N(0, obs_noise^2 I)`` drawn from ``key`` (row ``k`` of the outputs is time ``k + 1``).

    Args:
      key: PRNG key for the observation noise.
      params: :class:`LDSParams` ``(A (h, h), B (h, du), C (dy, h), D (dy, du))``.
      u: ``(T, du)`` float array of inputs (a ``(T,)`` array is one input channel), ``T >= 1``, finite.
      obs_noise: ``>= 0``, the standard deviation of ``xi_t``.
      x0: ``(h,)`` float array, the initial state ``x_0``; ``None`` for zero.

    Returns:
      ``(y, x)``: outputs ``(T, dy)`` and states ``(T, h)``, in the dtype of ``A`` and ``u`` combined.

    Raises:
      TypeError: a non-float array.
      ValueError: mismatched shapes, ``T = 0``, non-finite ``u``, or ``obs_noise < 0``.

    Example:
      >>> import jax
      >>> from jaxlab.online import random_lds, simulate
      >>> params = random_lds(jax.random.key(0), 6)
      >>> u = jax.random.normal(jax.random.key(1), (100, 1))
      >>> y, x = simulate(jax.random.key(2), params, u, obs_noise=0.1)
      >>> y.shape, x.shape
      ((100, 1), (100, 6))
    """
    (A, B, C, D), u = _check_lds(params, u)
    obs_noise = check_positive(obs_noise, "obs_noise", strict=False)
    dtype = jnp.result_type(A.dtype, u.dtype)
    x0 = jnp.zeros(A.shape[0], dtype) if x0 is None else as_array(x0, "x0", shape=(A.shape[0],)).astype(dtype)
    return _roll(key, LDSParams(A, B, C, D), u.astype(dtype), jnp.asarray(obs_noise, dtype), x0)


@jax.jit
def _roll(key, params, u, obs_noise, x0):
    A, B, C, D = params
    dtype = x0.dtype

    def body(x, ut):
        x = A @ x + B @ ut
        return x, x

    x = jax.lax.scan(body, x0, u)[1]
    noise = obs_noise * jax.random.normal(key, (u.shape[0], C.shape[0]), dtype)
    return x @ C.T + u @ D.T + noise, x


@cites("marsden2026second")
def deterministic_lds(T: int = 2000, *, dtype=None) -> tuple[LDSParams, Float[Array, "T 1"]]:
    """A deterministic regression system and its input (no randomness, no noise).

    ``d_h = 20``, eigenvalues ``linspace(0, 1, 20)``, ``P = I + 0.3 (strict upper triangle of ones)``,
    ``A = P diag(eigs) P^{-1}``, ``B = 1``, ``C = 1/20``, ``D = 0``, ``u_t = sin(0.05 t) + 0.5 cos(0.13 t)``,
    ``t = 1..T``. USP+VAW (n = 8, lam = 1) has cumulative squared loss 350.6589 on it at T = 2000 (measured).

    Args:
      T: number of time steps ``>= 1``.
      dtype: float dtype; ``None`` is the default float dtype.

    Returns:
      ``(params, u)``: :class:`LDSParams` with ``A (20, 20)``, ``B (20, 1)``, ``C (1, 20)``, ``D (1, 1)``, and the
      input ``u`` of shape ``(T, 1)``.

    Raises:
      TypeError: ``T`` is not an int.
      ValueError: ``T < 1``.
    """
    T = check_int(T, "T", min_value=1)
    d = 20
    P = np.eye(d) + 0.3 * np.triu(np.ones((d, d)), 1)
    A = P @ np.diag(np.linspace(0.0, 1.0, d)) @ np.linalg.inv(P)
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    params = LDSParams(jnp.asarray(A, dtype), jnp.ones((d, 1), dtype), jnp.full((1, d), 1.0 / d, dtype),
                       jnp.zeros((1, 1), dtype))
    t = np.arange(1, T + 1)
    return params, jnp.asarray(np.sin(0.05 * t) + 0.5 * np.cos(0.13 * t), dtype)[:, None]
