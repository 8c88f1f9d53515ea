r"""Convex surrogate losses for classification with rejection (CwR) and their links to decisions.

Target paper: a 2026 paper on low-dimensional convex calibrated surrogates for CwR (title, authors and
arXiv id not retrieved; only its abstract is known). It claims a 2-dimensional convex calibrated surrogate
for every K and every c in (0, 1/2), optimal in dimension, and a 4-dimensional one at c = 1/2. Its formulas
are unknown, so the 2-d surrogate shipped here (:func:`cwr2d_loss`) is **jaxlab's own construction**, proven
and checked numerically for jaxlab; it is not a transcription of the paper. No 4-d surrogate is shipped (no
construction has passed the checker).

A surrogate L : R^d x [K] -> R with link psi is calibrated for the 0-1-c target (:mod:`.target`) when for
every p in the simplex

    inf_{u: psi(u) not in Gamma_c(p)} sum_y p_y L(u, y)  >  inf_u sum_y p_y L(u, y).

Surrogates (u is the score vector; d its dimension):

* ``ce``  (d = K, any c in (0, 1)):  L = logsumexp(u) - u_y;
  link: q = softmax(u), argmax q if max q >= 1 - c.
* ``ova`` (d = K, c = 1/2; Ramaswamy et al. 2018):  L = sum_i [1(y=i)(1 - u_i)_+ + 1(y!=i)(1 + u_i)_+];
  link: argmax u if max u > tau, tau in (-1, 1).
* ``cs``  (d = K, c = 1/2; Crammer-Singer, Ramaswamy et al. 2018):  L = (1 + max_{j!=y} u_j - u_y)_+;
  link: argmax u if u_(1) - u_(2) > tau, tau in (0, 1).
* ``bep`` (d = ceil(log2 K), c = 1/2; Ramaswamy et al. 2018):  injective code B : [K] -> {-1, +1}^d,
  B_j(y) = +1 iff bit j of y is set;  L = (1 + max_j B_j(y) u_j)_+;
  link: REJECT if min_j |u_j| <= tau, else the y with B(y) = -sign(u) (REJECT if none), tau in (0, 1).
* ``ref2d`` (d = 2, small K; **derived** for jaxlab):
  normals n_k = (cos 2 pi k/K, sin 2 pi k/K), vertices s_{y,j} of {s : <s, n_i> <= 1 - c - 1[i = y]}
  (facets j, j+1), gauge of the regular K-gon g_Q(u) = max_k <u, m_k> / cos(pi/K),
  m_k = (cos (2k+1)pi/K, sin (2k+1)pi/K);  L = max_j <s_{y,j}, u> + mu (g_Q(u) - 1)_+;
  link: argmax_k <u, n_k> if it exceeds tau.  It embeds l_c - c exactly when the fan condition
  cos(2 pi/K) <= (1 - 2c) / (2(1 - c)) holds (K = 3, 4; K = 5 for c <= 0.2764).
* ``hinge2`` (K = 2, d = 1, c in (0, 1/2); Bartlett & Wegkamp 2008): phi_c(z) = max(0, 1 - z, 1 - (1-c)z/c)
  at z = (2y - 1) u; link: class 1 if u > tau, class 0 if u < -tau, else REJECT.
* ``cwr2d`` (d = 2, every K >= 2 and c in (0, 1/2); **jaxlab's construction**): classes sit at
  the integers 1..K of a line, u = (m, r) is a centre and a radius, a >= c/(1 - 2c) (default equality):
      L((m, r), y) = a |m - (y+1)| + (|m - (y+1)| - r)_+ + c r.
  For fixed m, (D - r)_+ + c r is the pinball loss of the (1-c)-quantile of D = |Y - m|; the a-term pins
  m at a median.  Link: class j if r <= theta and |m - j| < 1/2 for an integer j in 1..K, else REJECT;
  theta in (0, 1/2), default 1/4.  With a < c/(1-2c) calibration fails; at c = 1/2 it fails for every a.

Papers: H. G. Ramaswamy, A. Tewari, S. Agarwal, "Consistent algorithms for multiclass classification with
an abstain option", EJS 12 (2018), arXiv:1505.04137; C. K. Chow, "On optimum recognition error and reject
tradeoff", IEEE Trans. IT 16 (1970); P. L. Bartlett, M. H. Wegkamp, "Classification with a reject option
using a hinge loss", JMLR 9 (2008); J. Finocchiaro, R. Frongillo, B. Waggoner, "An embedding framework for
the design and analysis of consistent polyhedral surrogates", arXiv:1907.07330.

Every loss takes ``u`` of shape (..., d) and integer labels ``y`` broadcastable to u.shape[:-1], and
returns the loss of shape broadcast(u.shape[:-1], y.shape); every link maps (..., d) to int32 decisions of
shape (...). Inputs are validated when called (shapes at trace time, values when concrete).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_in_range, is_concrete, value_check
from jaxlab.losses.cwr._checks import (
    _CWR2D_WHY,
    _broadcast,
    _check_cost,
    _check_K,
    _check_tau,
    _finite_scores,
    _labels,
    _loss_inputs,
    _pick,
    _poison,
    _scores,
    _tie_loss,
)
from jaxlab.losses.cwr.papers import BARTLETT, CHOW, CWR2026, FINOCCHIARO, RAMASWAMY
from jaxlab.losses.cwr.target import REJECT

__all__ = [
    "bep_code",
    "bep_link",
    "bep_loss",
    "ce_chow_link",
    "ce_chow_loss",
    "cs_link",
    "cs_loss",
    "cwr2d_default_a",
    "cwr2d_link",
    "cwr2d_loss",
    "generalized_hinge_link",
    "generalized_hinge_loss",
    "ova_hinge_loss",
    "ova_link",
    "ref2d_link",
    "ref2d_loss",
    "ref2d_valid",
]


# ----------------------------------------------------------------------------------------------------
# K-dimensional baselines


@cites(CHOW)
def ce_chow_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """Cross-entropy L(u, y) = logsumexp(u) - u_y (d = K, any c in (0, 1) with :func:`ce_chow_link`).

    The conditional risk is minimised where softmax(u) = p, so Chow's rule on softmax(u) is the Bayes
    decision (Chow, 1970).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      y: int array of labels in 0..K-1, broadcastable to ``u.shape[:-1]``.

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u`` or non-integer ``y``.
      ValueError: ``u`` scalar or non-finite, labels out of range, or batch shapes that do not broadcast.
    """
    u, y = _loss_inputs(u, y)
    # logsumexp as jax.nn.logsumexp computes it (bitwise), with the finiteness poison inside the exponent: the
    # loss is then NaN wherever u has a non-finite entry, and it vouches for u (_tie_loss)
    m = jnp.max(u, axis=-1, keepdims=True)
    m = jax.lax.stop_gradient(jnp.where(jnp.isfinite(m), m, 0))
    lse = jnp.log(jnp.sum(jnp.exp((u - m) + _poison(u)), axis=-1)) + m[..., 0]
    return _tie_loss(lse - _pick(u, y), u, y)


@cites(CHOW)
@_finite_scores
def ce_chow_link(u: Float[Array, "... K"], c: float) -> Int[Array, "..."]:
    """Chow's rule on q = softmax(u): argmax q if max q >= 1 - c, else REJECT (compared in log space).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      c: rejection cost in (0, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: non-float ``u``.
      ValueError: ``u`` scalar or non-finite, or ``c`` outside (0, 1).
    """
    u = _scores(u, None)
    c = _check_cost(c, "ce", lo=0.0, hi=1.0, hi_open=True)
    logq = jax.nn.log_softmax(u, axis=-1)
    k = jnp.argmax(u, axis=-1).astype(jnp.int32)
    return jnp.where(jnp.max(logq, axis=-1) >= jnp.log1p(-c), k, REJECT)


@cites(RAMASWAMY)
def ova_hinge_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """One-vs-all hinge L(u, y) = sum_i [1(y = i)(1 - u_i)_+ + 1(y != i)(1 + u_i)_+] (d = K).

    Calibrated for c = 1/2 with :func:`ova_link` (H. G. Ramaswamy, A. Tewari, S. Agarwal, *Consistent algorithms
    for multiclass classification with an abstain option*, arXiv:1505.04137).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      y: int array of labels in 0..K-1, broadcastable to ``u.shape[:-1]``.

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u`` or non-integer ``y``.
      ValueError: ``u`` scalar or non-finite, labels out of range, or batch shapes that do not broadcast.
    """
    u, y = _loss_inputs(u, y)
    is_y = jnp.arange(u.shape[-1]) == y[..., None]
    # one select and one hinge per entry, instead of two hinges blended by a float one-hot: XLA then writes one
    # (batch, K) intermediate for the forward pass and one for the gradient (relu's derivative at 0 is kept: 0);
    # the poison makes the sum NaN wherever u is not finite (the hinge alone would clip a NaN or -inf to 0)
    z = jnp.where(is_y, 1 - u, 1 + u)
    return _tie_loss(jnp.sum(jnp.where(z > 0, z, 0) + _poison(u), axis=-1), u, y)


@cites(RAMASWAMY)
@_finite_scores
def ova_link(u: Float[Array, "... K"], tau: float = 0.0) -> Int[Array, "..."]:
    """Link of the one-vs-all hinge: argmax_i u_i if max_i u_i > tau, else REJECT (Ramaswamy et al., 2018).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      tau: threshold in (-1, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: non-float ``u``.
      ValueError: ``u`` scalar or non-finite, or ``tau`` outside (-1, 1).
    """
    u = _scores(u, None)
    tau = _check_tau(tau, "tau", -1.0, 1.0)
    return jnp.where(jnp.max(u, axis=-1) > tau, jnp.argmax(u, axis=-1).astype(jnp.int32), REJECT)


@cites(RAMASWAMY)
def cs_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """Crammer-Singer hinge L(u, y) = (1 + max_{j != y} u_j - u_y)_+ (d = K; embeds 2 l_{1/2}).

    Calibrated for c = 1/2 with :func:`cs_link` (Ramaswamy, Tewari, Agarwal, arXiv:1505.04137).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      y: int array of labels in 0..K-1, broadcastable to ``u.shape[:-1]``.

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u`` or non-integer ``y``.
      ValueError: ``u`` scalar or non-finite, labels out of range, or batch shapes that do not broadcast.
    """
    u, y = _loss_inputs(u, y)
    return _tie_loss(_cs_hinge(u, y), u, y)


@jax.custom_jvp
def _cs_hinge(u: jax.Array, y: jax.Array) -> jax.Array:
    """``(1 + max_{j != y} u_j - u_y)_+`` on checked inputs, NaN where a row of ``u`` is not finite. Its derivative is
    the one autodiff gives ``jnp.max`` and ``relu`` (-1 at y, +1 shared equally among the maxima over j != y, zero
    where the hinge is not active), in one pass over the scores instead of autodiff's four."""
    return _cs_parts(u, y)[0]


def _cs_parts(u, y):
    others = jnp.where(jnp.arange(u.shape[-1]) == y[..., None], -jnp.inf, u)
    m = jnp.max(others, axis=-1)
    # the number of maxima (their share of the derivative), counted on `others`, and the finiteness poison: XLA sums
    # the two in one pass, and the derivative below compares u itself, so no (batch, K) mask outlives the forward
    count = jnp.sum(jnp.where(others == m[..., None], 1, 0).astype(u.dtype), axis=-1) + jnp.sum(_poison(u), axis=-1)
    z = 1 + m - _pick(u, y)
    return jnp.where(z > 0, z, 0) + (count - count), m, count, z > 0


@_cs_hinge.defjvp
def _cs_hinge_jvp(primals, tangents):
    u, y = primals
    out, m, count, active = _cs_parts(u, y)
    t = tangents[0]
    top = (u == m[..., None]) & (jnp.arange(u.shape[-1]) != y[..., None])
    dmax = jnp.sum(jnp.where(top, t, 0), axis=-1) / count
    return out, jnp.where(active, dmax - _pick(t, y), 0)


@cites(RAMASWAMY)
@_finite_scores
def cs_link(u: Float[Array, "... K"], tau: float = 0.5) -> Int[Array, "..."]:
    """Link of the Crammer-Singer hinge: argmax u if u_(1) - u_(2) > tau, else REJECT (Ramaswamy et al., 2018).

    Args:
      u: ``(..., K)`` float array of scores (finite).
      tau: margin threshold in (0, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: non-float ``u``.
      ValueError: ``u`` scalar, non-finite or with last dimension below 2, or ``tau`` outside (0, 1).
    """
    u = _scores(u, None)
    if u.shape[-1] < 2:
        raise ValueError(f"u must have last dimension K >= 2, got shape {u.shape}")
    tau = _check_tau(tau, "tau", 0.0, 1.0)
    top2 = jax.lax.top_k(u, 2)[0]
    return jnp.where(top2[..., 0] - top2[..., 1] > tau, jnp.argmax(u, axis=-1).astype(jnp.int32), REJECT)


# ----------------------------------------------------------------------------------------------------
# BEP: ceil(log2 K) dimensions


@cites(RAMASWAMY)
def bep_code(K: int) -> Float[Array, "K d"]:
    """Binary encoding B of the BEP surrogate: B[y, j] = +1 if bit j (LSB first) of y is 1, else -1.

    d = ceil(log2 K) (Ramaswamy, Tewari, Agarwal, arXiv:1505.04137).

    Args:
      K: number of classes ``>= 2``.

    Returns:
      ``(K, d)`` float array with entries +-1 and distinct rows (default float dtype).

    Raises:
      TypeError: ``K`` is not an int.
      ValueError: ``K < 2``.
    """
    K = _check_K(K)
    d = max(1, math.ceil(math.log2(K)))
    bits = (np.arange(K)[:, None] >> np.arange(d)[None, :]) & 1
    return jnp.asarray(2.0 * bits - 1.0)


def _check_code(code: Any) -> jax.Array:
    """Return the code (K, d); raise unless its entries are +-1 and its rows distinct, eagerly or under jit."""
    code = as_array(code, "code", kind="float", ndim=2)
    msg = "code must have entries in {-1, +1}"
    try:
        code = value_check(code, lambda a: jnp.abs(a) != 1.0, msg)
    except ValueError:
        arr = np.asarray(code)
        raise ValueError(f"{msg}, got an entry {float(arr[np.abs(arr) != 1.0][0])!r}") from None
    K = code.shape[0]
    repeated = lambda a: jnp.all(a[:, None, :] == a[None, :, :], axis=-1) & ~jnp.eye(K, dtype=bool)  # noqa: E731
    return value_check(code, repeated, f"code must be injective (distinct rows for the {K} classes), got "
                       "repeated codewords")


@cites(RAMASWAMY)
@_finite_scores
def bep_loss(u: Float[Array, "... d"], y: Int[Array, "..."],
             code: Float[Array, "K d"]) -> Float[Array, "..."]:
    """BEP surrogate L(u, y) = (1 + max_j B_j(y) u_j)_+ with an injective code B in {-1, +1}^{K x d}.

    Calibrated for c = 1/2 with :func:`bep_link` in d = ceil(log2 K) dimensions (Ramaswamy, Tewari, Agarwal,
    arXiv:1505.04137).

    Args:
      u: ``(..., d)`` float array of scores (finite).
      y: int array of labels in 0..K-1, broadcastable to ``u.shape[:-1]``.
      code: ``(K, d)`` float array with entries +-1 and distinct rows (e.g. :func:`bep_code`).

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u``/``code`` or non-integer ``y``.
      ValueError: ``code`` not 2-D, with an entry other than +-1 or repeated rows; ``u`` without last dimension
        d, scalar or non-finite; labels out of range; batch shapes that do not broadcast.
    """
    code = _check_code(code)
    u = _scores(u, code.shape[1])
    u, y = _broadcast(u, _labels(y, code.shape[0]))
    return jax.nn.relu(1 + jnp.max(code[y] * u, axis=-1))


@cites(RAMASWAMY)
@_finite_scores
def bep_link(u: Float[Array, "... d"], code: Float[Array, "K d"], tau: float = 0.5) -> Int[Array, "..."]:
    """Link of the BEP surrogate: REJECT if min_j |u_j| <= tau; else the y with B(y) = -sign(u) (REJECT if none).

    Args:
      u: ``(..., d)`` float array of scores (finite).
      code: ``(K, d)`` float array with entries +-1 and distinct rows.
      tau: threshold in (0, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: non-float ``u`` or ``code``.
      ValueError: an invalid ``code``, ``u`` without last dimension d or non-finite, or ``tau`` outside (0, 1).
    """
    code = _check_code(code)
    u = _scores(u, code.shape[1])
    tau = _check_tau(tau, "tau", 0.0, 1.0)
    match = jnp.all(code == -jnp.sign(u)[..., None, :], axis=-1)
    y = jnp.argmax(match, axis=-1).astype(jnp.int32)
    ok = jnp.any(match, axis=-1) & (jnp.min(jnp.abs(u), axis=-1) > tau)
    return jnp.where(ok, y, REJECT)


# ----------------------------------------------------------------------------------------------------
# K = 2: the generalized hinge of Bartlett & Wegkamp (d = 1)


def _bw_slope(c: Any) -> Any:
    return (1 - c) / c


@cites(BARTLETT)
@_finite_scores
def generalized_hinge_loss(u: Float[Array, "... 1"], y: Int[Array, "..."], c: float) -> Float[Array, "..."]:
    """Binary (K = 2) generalized hinge phi_c(s u), s = +1 for label 1 and -1 for label 0.

    phi_c(z) = max(0, 1 - z, 1 - ((1 - c)/c) z), c in (0, 1/2): P. L. Bartlett and M. H. Wegkamp,
    *Classification with a reject option using a hinge loss* (JMLR 9, 2008). One dimension suffices for K = 2.

    Args:
      u: ``(..., 1)`` float array of scores (finite).
      y: int array of labels in {0, 1}, broadcastable to ``u.shape[:-1]``.
      c: rejection cost in (0, 1/2).

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u`` or non-integer ``y``.
      ValueError: ``c`` outside (0, 1/2), ``u`` without last dimension 1 or non-finite, labels outside {0, 1},
        or batch shapes that do not broadcast.
    """
    c = _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
    u = _scores(u, 1)
    u, y = _broadcast(u, _labels(y, 2))
    z = (2 * y - 1).astype(u.dtype) * u[..., 0]
    return jnp.maximum(jax.nn.relu(1 - z), 1 - _bw_slope(c) * z)


@cites(BARTLETT)
@_finite_scores
def generalized_hinge_link(u: Float[Array, "... 1"], tau: float = 0.5) -> Int[Array, "..."]:
    """Link of the generalized hinge: class 1 if u > tau, class 0 if u < -tau, else REJECT (Bartlett and Wegkamp).

    Args:
      u: ``(..., 1)`` float array of scores (finite).
      tau: threshold in (0, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: non-float ``u``.
      ValueError: ``tau`` outside (0, 1), or ``u`` without last dimension 1 or non-finite.
    """
    tau = _check_tau(tau, "tau", 0.0, 1.0)
    u = _scores(u, 1)[..., 0]
    return jnp.where(u > tau, 1, jnp.where(u < -tau, 0, REJECT)).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------------
# ref2d: the small-K fan embedding (derived for this project)


@cites(FINOCCHIARO)
def ref2d_valid(K: int, c: float) -> bool:
    """Fan condition of the 2-d reference embedding: K >= 3 and cos(2 pi / K) <= (1 - 2c) / (2 (1 - c)).

    Derived for jaxlab (module docstring) in the embedding framework of J. Finocchiaro, R. Frongillo and
    B. Waggoner (arXiv:1907.07330); it holds for K = 3, 4 and for K = 5 when c <= 0.2764.

    Args:
      K: number of classes ``>= 2``.
      c: rejection cost in (0, 1/2), concrete.

    Returns:
      ``True`` when ``ref2d`` embeds the 0-1-c loss (up to the constant c), as a Python bool.

    Raises:
      TypeError: ``K`` is not an int.
      ValueError: ``K < 2`` or ``c`` outside (0, 1/2).
    """
    K = _check_K(K)
    c = _check_cost(c, "ref2d", lo=0.0, hi=0.5, hi_open=True)
    return K >= 3 and math.cos(2 * math.pi / K) <= (1 - 2 * float(c)) / (2 * (1 - float(c))) + 1e-12


def _ref2d_check(K: Any, c: Any, allow_invalid: bool) -> tuple[int, float]:
    K = _check_K(K, 3)
    if not is_concrete(c):
        raise TypeError("c must be a concrete number for ref2d (its vertices are precomputed), got a tracer")
    c = float(c)
    c = _check_cost(c, "ref2d", lo=0.0, hi=0.5, hi_open=True)
    if not allow_invalid and not ref2d_valid(K, c):
        raise ValueError(
            f"ref2d needs the fan condition cos(2 pi/K) <= (1 - 2c)/(2(1 - c)), which fails for K={K}, c={c} "
            f"({math.cos(2 * math.pi / K):.4f} > {(1 - 2 * c) / (2 * (1 - c)):.4f}); pass allow_invalid=True "
            "only for a negative control"
        )
    return K, c


def _ref2d_geometry(K: int, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normals n_k (K, 2), vertices s_{y,j} (K, K, 2) and gauge directions m_k / cos(pi/K) (K, 2)."""
    ang = 2 * np.pi * np.arange(K) / K
    n = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    mid = (2 * np.arange(K) + 1) * np.pi / K
    gauge = np.stack([np.cos(mid), np.sin(mid)], axis=1) / np.cos(np.pi / K)
    S = np.empty((K, K, 2))
    for y in range(K):
        bvec = 1 - c - (np.arange(K) == y)
        for j in range(K):
            j1 = (j + 1) % K
            S[y, j] = np.linalg.solve(np.stack([n[j], n[j1]]), np.array([bvec[j], bvec[j1]]))
    return n, S, gauge


@cites(FINOCCHIARO)
@_finite_scores
def ref2d_loss(u: Float[Array, "... 2"], y: Int[Array, "..."], K: int, c: float, mu: float = 10.0, *,
               allow_invalid: bool = False) -> Float[Array, "..."]:
    """2-d fan embedding L(u, y) = max_j <s_{y,j}, u> + mu (g_Q(u) - 1)_+ (derived for jaxlab).

    The vertices ``s_{y,j}`` and the gauge ``g_Q`` of the regular K-gon are those of the module docstring;
    the loss embeds l_c - c exactly only under the fan condition :func:`ref2d_valid`. ``allow_invalid=True``
    builds it when the condition fails, as a negative control (it is then not calibrated).

    Args:
      u: ``(..., 2)`` float array of scores (finite).
      y: int array of labels in 0..K-1, broadcastable to ``u.shape[:-1]``.
      K: number of classes ``>= 3``.
      c: rejection cost in (0, 1/2), a concrete number (the vertices are precomputed).
      mu: penalty weight ``> 0`` of the gauge term.
      allow_invalid: build the loss even when the fan condition fails.

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: ``K`` not an int, a traced ``c``, non-float ``u`` or non-integer ``y``.
      ValueError: ``K < 3``, ``c`` outside (0, 1/2), the fan condition fails (without ``allow_invalid``),
        ``mu <= 0``, invalid ``u`` or labels, or batch shapes that do not broadcast.
    """
    K, c = _ref2d_check(K, c, allow_invalid)
    mu = check_in_range(mu, "mu", 0.0, lo_open=True)
    u = _scores(u, 2)
    u, y = _broadcast(u, _labels(y, K))
    _, S, gauge = _ref2d_geometry(K, c)
    S, gauge = jnp.asarray(S, u.dtype), jnp.asarray(gauge, u.dtype)
    vert = jnp.max(jnp.einsum("...jd,...d->...j", S[y], u), axis=-1)
    return vert + mu * jax.nn.relu(jnp.max(u @ gauge.T, axis=-1) - 1)


@cites(FINOCCHIARO)
@_finite_scores
def ref2d_link(u: Float[Array, "... 2"], K: int, tau: float = 0.5) -> Int[Array, "..."]:
    """Link of ``ref2d``: argmax_k <u, n_k> if that maximum exceeds tau, else REJECT.

    ``n_k = (cos 2 pi k/K, sin 2 pi k/K)`` are the facet normals of the module docstring.

    Args:
      u: ``(..., 2)`` float array of scores (finite).
      K: number of classes ``>= 3``.
      tau: threshold in (0, 1).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: ``K`` not an int or non-float ``u``.
      ValueError: ``K < 3``, ``tau`` outside (0, 1), or ``u`` without last dimension 2 or non-finite.
    """
    K = _check_K(K, 3)
    tau = _check_tau(tau, "tau", 0.0, 1.0)
    u = _scores(u, 2)
    ang = 2 * jnp.pi * jnp.arange(K) / K
    s = u @ jnp.stack([jnp.cos(ang), jnp.sin(ang)]).astype(u.dtype)
    return jnp.where(jnp.max(s, axis=-1) > tau, jnp.argmax(s, axis=-1).astype(jnp.int32), REJECT)


# ----------------------------------------------------------------------------------------------------
# cwr2d: jaxlab's 2-d interval-coverage surrogate


def cwr2d_default_a(c: float) -> float:
    """Smallest centre weight a = c / (1 - 2c) for which the interval-coverage loss ``cwr2d`` is calibrated.

    The bound is sharp (jaxlab's construction, checked by :func:`jaxlab.losses.cwr.check.cwr2d_lattice_report`).

    Args:
      c: rejection cost in (0, 1/2).

    Returns:
      ``c / (1 - 2c)``, a float (or an array for an array ``c``).

    Raises:
      ValueError: ``c`` outside (0, 1/2) (at c = 1/2 the loss is not calibrated for any a).
    """
    c = _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    return c / (1 - 2 * c)


@cites(CWR2026)
@_finite_scores
def cwr2d_loss(u: Float[Array, "... 2"], y: Int[Array, "..."], c: float,
               a: float | None = None) -> Float[Array, "..."]:
    """jaxlab's 2-d interval-coverage loss a |m - (y+1)| + (|m - (y+1)| - r)_+ + c r, u = (m, r).

    Convex and polyhedral; calibrated for every K >= 2 and c in (0, 1/2) when a >= c / (1 - 2c) (default
    a = c / (1 - 2c)). A smaller ``a`` is accepted (it is a useful negative control) but is not calibrated.
    Labels are not range-checked against K here (the loss does not depend on K); use ``cwr2d_link`` with K.
    This surrogate is jaxlab's own construction: the target paper on low-dimensional calibrated surrogates for
    classification with rejection (2026; title, authors and arXiv id not retrieved) announces a 2-d calibrated
    surrogate for c < 1/2, but its formula was not available.

    Args:
      u: ``(..., 2)`` float array of scores ``(m, r)``: a centre and a radius (finite).
      y: int array of labels ``>= 0``, broadcastable to ``u.shape[:-1]``.
      c: rejection cost in (0, 1/2).
      a: centre weight ``>= 0``, or ``None`` for ``c / (1 - 2c)``.

    Returns:
      Float array of the broadcast shape of ``u.shape[:-1]`` and ``y.shape``.

    Raises:
      TypeError: non-float ``u`` or non-integer ``y``.
      ValueError: ``c`` outside (0, 1/2), ``a < 0``, ``u`` without last dimension 2 or non-finite, negative
        labels, or batch shapes that do not broadcast.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.losses.cwr import cwr2d_link, cwr2d_loss
      >>> u = jnp.array([[2.0, 0.0], [2.5, 1.0]])  # (centre m, radius r) per point
      >>> y = jnp.array([1, 1])
      >>> loss = cwr2d_loss(u, y, c=0.2)
      >>> decision = cwr2d_link(u, K=3)  # class m - 1 when r <= 1/4, else -1 (reject)
      >>> decision.tolist()
      [1, -1]
    """
    c = _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    if a is None:
        a = c / (1 - 2 * c)
    else:
        a = check_in_range(a, "a", 0.0)
    u = _scores(u, 2)
    u, y = _broadcast(u, _labels(y, None))
    y = check_in_range(y, "y", 0)
    m, r = u[..., 0], u[..., 1]
    dist = jnp.abs(m - (y + 1).astype(u.dtype))
    return a * dist + jax.nn.relu(dist - r) + c * r


@cites(CWR2026)
@_finite_scores
def cwr2d_link(u: Float[Array, "... 2"], K: int, theta: float = 0.25) -> Int[Array, "..."]:
    """Link of ``cwr2d``: class j - 1 if r <= theta and |m - j| < 1/2 for an integer j in 1..K, else REJECT.

    Args:
      u: ``(..., 2)`` float array of scores ``(m, r)`` (finite).
      K: number of classes ``>= 2``.
      theta: radius threshold in (0, 1/2) (default 1/4, the value the lattice check assumes).

    Returns:
      int32 array of shape ``u.shape[:-1]``: a class in 0..K-1 or REJECT (-1).

    Raises:
      TypeError: ``K`` not an int or non-float ``u``.
      ValueError: ``K < 2``, ``theta`` outside (0, 1/2), or ``u`` without last dimension 2 or non-finite.
    """
    K = _check_K(K)
    theta = _check_tau(theta, "theta", 0.0, 0.5)
    u = _scores(u, 2)
    m, r = u[..., 0], u[..., 1]
    j = jnp.floor(m + 0.5)
    ok = (r <= theta) & (jnp.abs(m - j) < 0.5) & (j >= 1) & (j <= K)
    return jnp.where(ok, j.astype(jnp.int32) - 1, REJECT)

