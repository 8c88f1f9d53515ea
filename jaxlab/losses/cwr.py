r"""Classification with rejection (CwR): the 0-1-c target, Chow's rule, convex surrogates and their links.

Target paper: a 2026 paper on low-dimensional convex calibrated surrogates for CwR (title, authors and
arXiv id not retrieved; only its abstract is known). It claims a 2-dimensional convex calibrated surrogate
for every K and every c in (0, 1/2), optimal in dimension, and a 4-dimensional one at c = 1/2. Its formulas
are unknown, so the 2-d surrogate shipped here (:func:`cwr2d_loss`) is **jaxlab's own construction** (spec
section 3.5), proven and checked numerically for this project; it is not a transcription of the paper. No
4-d surrogate is shipped (no construction has passed the checker).

Notation. K classes, labels y in {0..K-1}, rejection cost c, decision t in {0..K-1} or REJECT = -1.

* Target:  l_c(t, y) = 0 if t = y,  c if t = REJECT,  1 otherwise.
* Conditional risk for p in the simplex: l_c(k; p) = 1 - p_k,  l_c(REJECT; p) = c.
* Chow's rule (Chow 1970):  Gamma_c(p) = argmax_k p_k  if max_k p_k >= 1 - c,  else REJECT;
  Bayes risk  min(c, 1 - max_k p_k).
* A surrogate L : R^d x [K] -> R with link psi is calibrated when for every p
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
* ``ref2d`` (d = 2, small K; **derived** for this project, spec 3.4):
  normals n_k = (cos 2 pi k/K, sin 2 pi k/K), vertices s_{y,j} of {s : <s, n_i> <= 1 - c - 1[i = y]}
  (facets j, j+1), gauge of the regular K-gon g_Q(u) = max_k <u, m_k> / cos(pi/K),
  m_k = (cos (2k+1)pi/K, sin (2k+1)pi/K);  L = max_j <s_{y,j}, u> + mu (g_Q(u) - 1)_+;
  link: argmax_k <u, n_k> if it exceeds tau.  It embeds l_c - c exactly when the fan condition
  cos(2 pi/K) <= (1 - 2c) / (2(1 - c)) holds (K = 3, 4; K = 5 for c <= 0.2764).
* ``hinge2`` (K = 2, d = 1, c in (0, 1/2); Bartlett & Wegkamp 2008): phi_c(z) = max(0, 1 - z, 1 - (1-c)z/c)
  at z = (2y - 1) u; link: class 1 if u > tau, class 0 if u < -tau, else REJECT.
* ``cwr2d`` (d = 2, every K >= 2 and c in (0, 1/2); **jaxlab's construction**, spec 3.5): classes sit at
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
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, Int

from jaxlab.core.citations import cites, register_paper
from jaxlab.core.loop import run
from jaxlab.core.validation import as_array, check_in_range, check_int, check_simplex, is_concrete

__all__ = [
    "REJECT",
    "SURROGATES",
    "MinimizerState",
    "Surrogate",
    "bayes_decision",
    "bayes_risk",
    "bep_code",
    "bep_link",
    "bep_loss",
    "ce_chow_link",
    "ce_chow_loss",
    "conditional_risk",
    "cs_link",
    "cs_loss",
    "cwr2d_default_a",
    "cwr2d_link",
    "cwr2d_loss",
    "cwr_target_loss",
    "generalized_hinge_link",
    "generalized_hinge_loss",
    "link_cells",
    "minimize",
    "minimize_conditional_risk",
    "minimizer_init",
    "minimizer_step",
    "ova_hinge_loss",
    "ova_link",
    "polyhedral_pieces",
    "ref2d_link",
    "ref2d_loss",
    "ref2d_valid",
    "surrogate",
    "surrogate_dim",
]

register_paper("chow1970reject", """@article{chow1970reject,
  title = {On optimum recognition error and reject tradeoff},
  author = {Chow, C. K.},
  journal = {IEEE Transactions on Information Theory},
  volume = {16}, number = {1}, pages = {41--46}, year = {1970}
}""")
register_paper("ramaswamy2018abstain", """@article{ramaswamy2018abstain,
  title = {Consistent algorithms for multiclass classification with an abstain option},
  author = {Ramaswamy, Harish G. and Tewari, Ambuj and Agarwal, Shivani},
  journal = {Electronic Journal of Statistics}, volume = {12}, pages = {530--554}, year = {2018},
  eprint = {1505.04137}, archivePrefix = {arXiv}
}""")
register_paper("bartlett2008reject", """@article{bartlett2008reject,
  title = {Classification with a reject option using a hinge loss},
  author = {Bartlett, Peter L. and Wegkamp, Marten H.},
  journal = {Journal of Machine Learning Research}, volume = {9}, pages = {1823--1840}, year = {2008}
}""")
register_paper("finocchiaro2024embedding", """@article{finocchiaro2024embedding,
  title = {An embedding framework for the design and analysis of consistent polyhedral surrogates},
  author = {Finocchiaro, Jessie and Frongillo, Rafael M. and Waggoner, Bo},
  journal = {Journal of Machine Learning Research}, year = {2024},
  eprint = {1907.07330}, archivePrefix = {arXiv}
}""")
register_paper("cwr2026lowdim", """@misc{cwr2026lowdim,
  title = {Low-dimensional convex calibrated surrogates for classification with rejection},
  year = {2026},
  note = {Descriptive title: the paper's title, authors and arXiv id were not retrieved.
          jaxlab's cwr2d loss is a construction made for jaxlab (spec section 3.5), not the paper's formula.}
}""")

REJECT: int = -1


# ----------------------------------------------------------------------------------------------------
# validation helpers


def _check_cost(c: Any, name: str, *, lo: float, hi: float, hi_open: bool, why: str = "") -> None:
    if is_concrete(c):
        v = np.asarray(c, dtype=float)
        ok = bool(np.all((v > lo) & ((v < hi) if hi_open else (v <= hi))))
        if not ok:
            interval = f"({lo}, {hi}{')' if hi_open else ']'}"
            got = float(v.ravel()[0])
            raise ValueError(f"c must lie in {interval} for the {name} surrogate{why}, got {got!r}")


def _check_half(c: Any, name: str) -> None:
    if is_concrete(c) and float(np.asarray(c)) != 0.5:
        raise ValueError(
            f"c must equal 1/2 for the {name} surrogate (Ramaswamy et al. calibrate it at c = 1/2; their "
            f"c < 1/2 variants are not implemented), got {float(np.asarray(c))!r}"
        )


_CWR2D_WHY = (
    " (at c = 1/2 the midpoint of a tied pair with radius 1/2 beats the accept vertex for every a, so the "
    "interval-coverage loss is not calibrated there)"
)


def _check_K(K: Any, min_value: int = 2) -> int:
    return check_int(K, "K", min_value=min_value)


def _scores(u: Any, d: int | None, name: str = "u") -> jax.Array:
    u = as_array(u, name, kind="float", finite=True)
    if u.ndim < 1:
        raise ValueError(f"{name} must have at least 1 dimension (scores on the last axis), got a scalar")
    if d is not None and u.shape[-1] != d:
        raise ValueError(f"{name} must have last dimension {d} (the surrogate's dimension), "
                         f"got shape {u.shape}")
    return u


def _labels(y: Any, K: int | None, name: str = "y") -> jax.Array:
    y = as_array(y, name, kind="int")
    if K is not None:
        check_in_range(y, name, 0, K - 1)
    return y


def _broadcast(u: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    batch = jnp.broadcast_shapes(u.shape[:-1], y.shape)
    return jnp.broadcast_to(u, (*batch, u.shape[-1])), jnp.broadcast_to(y, batch)


def _pick(u: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.take_along_axis(u, y[..., None], axis=-1)[..., 0]


def _check_tau(tau: Any, name: str, lo: float, hi: float) -> None:
    check_in_range(tau, name, lo, hi, lo_open=True, hi_open=True)


# ----------------------------------------------------------------------------------------------------
# target loss and Chow's rule


@cites("chow1970reject")
def cwr_target_loss(t: Int[Array, "..."], y: Int[Array, "..."], c: float) -> Float[Array, "..."]:
    """0-1-c loss l_c(t, y): 0 if t = y, c if t = REJECT (-1), 1 otherwise. c in (0, 1)."""
    t = as_array(t, "t", kind="int")
    y = as_array(y, "y", kind="int")
    check_in_range(t, "t", -1)
    check_in_range(y, "y", 0)
    _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    c = jnp.asarray(c, dtype=jnp.result_type(float))
    return jnp.where(t == REJECT, c, jnp.where(t == y, 0.0, 1.0).astype(c.dtype))


@cites("chow1970reject")
def bayes_decision(p: Float[Array, "... K"], c: float) -> Int[Array, "..."]:
    """Chow's rule: argmax_k p_k (lowest index on ties) if max_k p_k >= 1 - c, else REJECT."""
    p = as_array(p, "p", kind="float", ndim=None)
    check_simplex(p, "p")
    _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    k = jnp.argmax(p, axis=-1).astype(jnp.int32)
    return jnp.where(jnp.max(p, axis=-1) >= 1 - c, k, REJECT)


@cites("chow1970reject")
def bayes_risk(p: Float[Array, "... K"], c: float) -> Float[Array, "..."]:
    """Bayes 0-1-c risk min(c, 1 - max_k p_k)."""
    p = as_array(p, "p", kind="float")
    check_simplex(p, "p")
    _check_cost(c, "0-1-c target", lo=0.0, hi=1.0, hi_open=True)
    return jnp.minimum(c, 1.0 - jnp.max(p, axis=-1))


# ----------------------------------------------------------------------------------------------------
# K-dimensional baselines


@cites("chow1970reject")
def ce_chow_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """Cross-entropy logsumexp(u) - u_y (minimiser: softmax(u) = p, so Chow's rule on softmax is exact)."""
    u = _scores(u, None)
    u, y = _broadcast(u, _labels(y, u.shape[-1]))
    return jax.nn.logsumexp(u, axis=-1) - _pick(u, y)


@cites("chow1970reject")
def ce_chow_link(u: Float[Array, "... K"], c: float) -> Int[Array, "..."]:
    """Chow's rule on q = softmax(u): argmax q if max q >= 1 - c, else REJECT. c in (0, 1)."""
    u = _scores(u, None)
    _check_cost(c, "ce", lo=0.0, hi=1.0, hi_open=True)
    logq = jax.nn.log_softmax(u, axis=-1)
    k = jnp.argmax(u, axis=-1).astype(jnp.int32)
    return jnp.where(jnp.max(logq, axis=-1) >= jnp.log1p(-c), k, REJECT)


@cites("ramaswamy2018abstain")
def ova_hinge_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """One-vs-all hinge sum_i [1(y = i)(1 - u_i)_+ + 1(y != i)(1 + u_i)_+] (calibrated at c = 1/2)."""
    u = _scores(u, None)
    u, y = _broadcast(u, _labels(y, u.shape[-1]))
    onehot = jax.nn.one_hot(y, u.shape[-1], dtype=u.dtype)
    return jnp.sum(onehot * jax.nn.relu(1 - u) + (1 - onehot) * jax.nn.relu(1 + u), axis=-1)


@cites("ramaswamy2018abstain")
def ova_link(u: Float[Array, "... K"], tau: float = 0.0) -> Int[Array, "..."]:
    """argmax_i u_i if max_i u_i > tau, else REJECT; tau in (-1, 1)."""
    u = _scores(u, None)
    _check_tau(tau, "tau", -1.0, 1.0)
    return jnp.where(jnp.max(u, axis=-1) > tau, jnp.argmax(u, axis=-1).astype(jnp.int32), REJECT)


@cites("ramaswamy2018abstain")
def cs_loss(u: Float[Array, "... K"], y: Int[Array, "..."]) -> Float[Array, "..."]:
    """Crammer-Singer hinge (1 + max_{j != y} u_j - u_y)_+ (embeds 2 l_{1/2})."""
    u = _scores(u, None)
    u, y = _broadcast(u, _labels(y, u.shape[-1]))
    others = jnp.where(jax.nn.one_hot(y, u.shape[-1], dtype=bool), -jnp.inf, u)
    return jax.nn.relu(1 + jnp.max(others, axis=-1) - _pick(u, y))


@cites("ramaswamy2018abstain")
def cs_link(u: Float[Array, "... K"], tau: float = 0.5) -> Int[Array, "..."]:
    """argmax u if the top score exceeds the second by more than tau, else REJECT; tau in (0, 1)."""
    u = _scores(u, None)
    if u.shape[-1] < 2:
        raise ValueError(f"u must have last dimension K >= 2, got shape {u.shape}")
    _check_tau(tau, "tau", 0.0, 1.0)
    top2 = jax.lax.top_k(u, 2)[0]
    return jnp.where(top2[..., 0] - top2[..., 1] > tau, jnp.argmax(u, axis=-1).astype(jnp.int32), REJECT)


# ----------------------------------------------------------------------------------------------------
# BEP: ceil(log2 K) dimensions


@cites("ramaswamy2018abstain")
def bep_code(K: int) -> Float[Array, "K d"]:
    """Binary code B (K, d), d = ceil(log2 K): B[y, j] = +1 if bit j (LSB first) of y is 1, else -1."""
    K = _check_K(K)
    d = max(1, math.ceil(math.log2(K)))
    bits = (np.arange(K)[:, None] >> np.arange(d)[None, :]) & 1
    return jnp.asarray(2.0 * bits - 1.0)


def _check_code(code: Any) -> jax.Array:
    code = as_array(code, "code", kind="float", ndim=2)
    if is_concrete(code):
        arr = np.asarray(code)
        if not np.all(np.abs(arr) == 1.0):
            raise ValueError("code must have entries in {-1, +1}, got an entry "
                             f"{float(arr[np.abs(arr) != 1.0][0])!r}")
        if len({tuple(row) for row in arr.tolist()}) != arr.shape[0]:
            raise ValueError(f"code must be injective (distinct rows for the {arr.shape[0]} classes), "
                             "got repeated codewords")
    return code


@cites("ramaswamy2018abstain")
def bep_loss(u: Float[Array, "... d"], y: Int[Array, "..."],
             code: Float[Array, "K d"]) -> Float[Array, "..."]:
    """BEP surrogate (1 + max_j B_j(y) u_j)_+ with an injective code B in {-1, +1}^{K x d}."""
    code = _check_code(code)
    u = _scores(u, code.shape[1])
    u, y = _broadcast(u, _labels(y, code.shape[0]))
    return jax.nn.relu(1 + jnp.max(code[y] * u, axis=-1))


@cites("ramaswamy2018abstain")
def bep_link(u: Float[Array, "... d"], code: Float[Array, "K d"], tau: float = 0.5) -> Int[Array, "..."]:
    """REJECT if min_j |u_j| <= tau; else the class y with B(y) = -sign(u), REJECT if there is none."""
    code = _check_code(code)
    u = _scores(u, code.shape[1])
    _check_tau(tau, "tau", 0.0, 1.0)
    match = jnp.all(code == -jnp.sign(u)[..., None, :], axis=-1)
    y = jnp.argmax(match, axis=-1).astype(jnp.int32)
    ok = jnp.any(match, axis=-1) & (jnp.min(jnp.abs(u), axis=-1) > tau)
    return jnp.where(ok, y, REJECT)


# ----------------------------------------------------------------------------------------------------
# K = 2: the generalized hinge of Bartlett & Wegkamp (d = 1)


def _bw_slope(c: Any) -> Any:
    return (1 - c) / c


@cites("bartlett2008reject")
def generalized_hinge_loss(u: Float[Array, "... 1"], y: Int[Array, "..."], c: float) -> Float[Array, "..."]:
    """Binary (K = 2) generalized hinge phi_c(s u) with s = +1 for label 1 and -1 for label 0,

    phi_c(z) = max(0, 1 - z, 1 - ((1 - c)/c) z), c in (0, 1/2). One dimension suffices for K = 2."""
    _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
    u = _scores(u, 1)
    u, y = _broadcast(u, _labels(y, 2))
    z = (2 * y - 1).astype(u.dtype) * u[..., 0]
    return jnp.maximum(jax.nn.relu(1 - z), 1 - _bw_slope(c) * z)


@cites("bartlett2008reject")
def generalized_hinge_link(u: Float[Array, "... 1"], tau: float = 0.5) -> Int[Array, "..."]:
    """Class 1 if u > tau, class 0 if u < -tau, else REJECT; tau in (0, 1)."""
    _check_tau(tau, "tau", 0.0, 1.0)
    u = _scores(u, 1)[..., 0]
    return jnp.where(u > tau, 1, jnp.where(u < -tau, 0, REJECT)).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------------
# ref2d: the small-K fan embedding (derived for this project)


@cites("finocchiaro2024embedding")
def ref2d_valid(K: int, c: float) -> bool:
    """Fan condition of the 2-d reference embedding: K >= 3 and cos(2 pi / K) <= (1 - 2c) / (2 (1 - c))."""
    K = _check_K(K)
    _check_cost(c, "ref2d", lo=0.0, hi=0.5, hi_open=True)
    return K >= 3 and math.cos(2 * math.pi / K) <= (1 - 2 * float(c)) / (2 * (1 - float(c))) + 1e-12


def _ref2d_check(K: Any, c: Any, allow_invalid: bool) -> tuple[int, float]:
    K = _check_K(K, 3)
    if not is_concrete(c):
        raise TypeError("c must be a concrete number for ref2d (its vertices are precomputed), got a tracer")
    c = float(c)
    _check_cost(c, "ref2d", lo=0.0, hi=0.5, hi_open=True)
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


@cites("finocchiaro2024embedding")
def ref2d_loss(u: Float[Array, "... 2"], y: Int[Array, "..."], K: int, c: float, mu: float = 10.0, *,
               allow_invalid: bool = False) -> Float[Array, "..."]:
    """2-d fan embedding max_j <s_{y,j}, u> + mu (g_Q(u) - 1)_+ (derived; valid under the fan condition only).

    ``allow_invalid=True`` builds it when the fan condition fails, as a negative control (it is then not
    calibrated)."""
    K, c = _ref2d_check(K, c, allow_invalid)
    check_in_range(mu, "mu", 0.0, lo_open=True)
    u = _scores(u, 2)
    u, y = _broadcast(u, _labels(y, K))
    _, S, gauge = _ref2d_geometry(K, c)
    S, gauge = jnp.asarray(S, u.dtype), jnp.asarray(gauge, u.dtype)
    vert = jnp.max(jnp.einsum("...jd,...d->...j", S[y], u), axis=-1)
    return vert + mu * jax.nn.relu(jnp.max(u @ gauge.T, axis=-1) - 1)


@cites("finocchiaro2024embedding")
def ref2d_link(u: Float[Array, "... 2"], K: int, tau: float = 0.5) -> Int[Array, "..."]:
    """argmax_k <u, n_k> if that maximum exceeds tau, else REJECT; tau in (0, 1)."""
    K = _check_K(K, 3)
    _check_tau(tau, "tau", 0.0, 1.0)
    u = _scores(u, 2)
    ang = 2 * jnp.pi * jnp.arange(K) / K
    s = u @ jnp.stack([jnp.cos(ang), jnp.sin(ang)]).astype(u.dtype)
    return jnp.where(jnp.max(s, axis=-1) > tau, jnp.argmax(s, axis=-1).astype(jnp.int32), REJECT)


# ----------------------------------------------------------------------------------------------------
# cwr2d: jaxlab's 2-d interval-coverage surrogate (spec 3.5)


def cwr2d_default_a(c: float) -> float:
    """Smallest centre weight a = c / (1 - 2c) for which the interval-coverage loss is calibrated (sharp)."""
    _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    return c / (1 - 2 * c)


@cites("cwr2026lowdim")
def cwr2d_loss(u: Float[Array, "... 2"], y: Int[Array, "..."], c: float,
               a: float | None = None) -> Float[Array, "..."]:
    """jaxlab's 2-d interval-coverage loss a |m - (y+1)| + (|m - (y+1)| - r)_+ + c r, u = (m, r).

    Convex and polyhedral; calibrated for every K >= 2 and c in (0, 1/2) when a >= c / (1 - 2c) (default
    a = c / (1 - 2c)). A smaller ``a`` is accepted (it is a useful negative control) but is not calibrated.
    Labels are not range-checked against K here (the loss does not depend on K); use ``cwr2d_link`` with K.
    """
    _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    if a is None:
        a = c / (1 - 2 * c)
    else:
        check_in_range(a, "a", 0.0)
    u = _scores(u, 2)
    u, y = _broadcast(u, _labels(y, None))
    check_in_range(y, "y", 0)
    m, r = u[..., 0], u[..., 1]
    dist = jnp.abs(m - (y + 1).astype(u.dtype))
    return a * dist + jax.nn.relu(dist - r) + c * r


@cites("cwr2026lowdim")
def cwr2d_link(u: Float[Array, "... 2"], K: int, theta: float = 0.25) -> Int[Array, "..."]:
    """Class j - 1 if r <= theta and |m - j| < 1/2 for an integer j in 1..K, else REJECT.

    theta in (0, 1/2); default 1/4."""
    K = _check_K(K)
    _check_tau(theta, "theta", 0.0, 0.5)
    u = _scores(u, 2)
    m, r = u[..., 0], u[..., 1]
    j = jnp.floor(m + 0.5)
    ok = (r <= theta) & (jnp.abs(m - j) < 0.5) & (j >= 1) & (j <= K)
    return jnp.where(ok, j.astype(jnp.int32) - 1, REJECT)


# ----------------------------------------------------------------------------------------------------
# registry of surrogates


class Surrogate(NamedTuple):
    """A surrogate bound to (K, c): ``loss(u, y)`` and ``link(u)`` on scores of dimension ``dim``."""

    name: str
    K: int
    c: float
    dim: int
    loss: Callable[[Any, Any], jax.Array]
    link: Callable[[Any], jax.Array]


SURROGATES = ("ce", "ova", "cs", "bep", "ref2d", "cwr2d", "hinge2")


def surrogate_dim(name: str, K: int) -> int:
    """Score dimension d of a named surrogate for K classes."""
    K = _check_K(K)
    dims = {"ce": K, "ova": K, "cs": K, "bep": max(1, math.ceil(math.log2(K))), "ref2d": 2, "cwr2d": 2,
            "hinge2": 1}
    if name not in dims:
        raise ValueError(f"name must be one of {', '.join(SURROGATES)}, got {name!r}")
    return dims[name]


@cites("ramaswamy2018abstain", "cwr2026lowdim")
def surrogate(name: str, K: int, c: float, **kw: Any) -> Surrogate:
    """Bind a named surrogate to K classes and cost c, checking that c is in the surrogate's range.

    Keywords: ``tau`` (ova/cs/bep/ref2d links), ``code`` (bep), ``mu`` and ``allow_invalid`` (ref2d),
    ``a`` and ``theta`` (cwr2d).
    """
    d = surrogate_dim(name, K)
    c = float(c)
    if name == "ce":
        _check_cost(c, "ce", lo=0.0, hi=1.0, hi_open=True)
        return Surrogate(name, K, c, d, ce_chow_loss, lambda u: ce_chow_link(u, c))
    if name in ("ova", "cs", "bep"):
        _check_half(c, name)
    if name == "hinge2":
        if K != 2:
            raise ValueError(f"K must be 2 for the generalized hinge (a 1-d surrogate), got {K}")
        _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, d, lambda u, y: generalized_hinge_loss(u, y, c),
                         lambda u: generalized_hinge_link(u, tau))
    if name == "ova":
        tau = kw.get("tau", 0.0)
        return Surrogate(name, K, c, d, ova_hinge_loss, lambda u: ova_link(u, tau))
    if name == "cs":
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, d, cs_loss, lambda u: cs_link(u, tau))
    if name == "bep":
        code = kw.get("code")
        code = bep_code(K) if code is None else _check_code(code)
        tau = kw.get("tau", 0.5)
        return Surrogate(name, K, c, code.shape[1], lambda u, y: bep_loss(u, y, code),
                         lambda u: bep_link(u, code, tau))
    if name == "ref2d":
        mu, tau, allow = kw.get("mu", 10.0), kw.get("tau", 0.5), kw.get("allow_invalid", False)
        _ref2d_check(K, c, allow)
        return Surrogate(name, K, c, d, lambda u, y: ref2d_loss(u, y, K, c, mu, allow_invalid=allow),
                         lambda u: ref2d_link(u, K, tau))
    a, theta = kw.get("a"), kw.get("theta", 0.25)
    _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
    return Surrogate(name, K, c, d, lambda u, y: cwr2d_loss(u, y, c, a), lambda u: cwr2d_link(u, K, theta))


# ----------------------------------------------------------------------------------------------------
# polyhedral pieces and link cells (static NumPy data for the LP checker)


def _e(d: int, i: int) -> np.ndarray:
    v = np.zeros(d)
    v[i] = 1.0
    return v


def polyhedral_pieces(name: str, K: int, **kw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Affine pieces of a polyhedral surrogate: L(u, y) = max_{r: valid[y, r]} A[y, r] . u + b[y, r].

    Returns NumPy ``A (K, R, d)``, ``b (K, R)``, ``valid (K, R)``. Names: ``cs``, ``ova`` (2^K pieces,
    K <= 12), ``bep`` (``code=``), ``ref2d`` (``c=``, ``mu=``, ``allow_invalid=``), ``cwr2d`` (``c=``,
    ``a=``), ``hinge2`` (K = 2, ``c=``). ``ce`` is not polyhedral.
    """
    d = surrogate_dim(name, K)
    if name == "ce":
        raise ValueError("name 'ce' is not polyhedral; use minimize_conditional_risk for it")
    if name == "cs":
        A = np.zeros((K, K, K))
        b = np.ones((K, K))
        for y in range(K):
            for j in range(K):
                A[y, j] = 0.0 if j == y else _e(K, j) - _e(K, y)
            b[y, y] = 0.0
    elif name == "hinge2":
        c = float(kw.get("c"))
        _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
        coef = np.array([0.0, -1.0, -_bw_slope(c)])  # phi_c(z) = max(0, 1 - z, 1 - slope z), z = s u
        s = np.array([-1.0, 1.0])
        A = (s[:, None] * coef[None, :])[:, :, None]
        b = np.broadcast_to(np.array([0.0, 1.0, 1.0]), (2, 3)).copy()
    elif name == "ova":
        if K > 12:
            raise ValueError(f"K must be <= 12 for the ova pieces (2^K of them), got {K}")
        masks = (np.arange(2**K)[:, None] >> np.arange(K)[None, :]) & 1  # which hinges are active
        A = np.zeros((K, 2**K, K))
        b = np.broadcast_to(masks.sum(1).astype(float), (K, 2**K)).copy()
        for y in range(K):
            sign = np.where(np.arange(K) == y, -1.0, 1.0)
            A[y] = masks * sign
    elif name == "bep":
        code = kw.get("code")
        code = np.asarray(bep_code(K) if code is None else _check_code(code))
        d = code.shape[1]
        A = np.zeros((K, d + 1, d))
        b = np.ones((K, d + 1))
        b[:, 0] = 0.0
        for y in range(K):
            A[y, 1:] = np.diag(code[y])
    elif name == "ref2d":
        K, c = _ref2d_check(K, kw.get("c"), kw.get("allow_invalid", False))
        mu = float(kw.get("mu", 10.0))
        _, S, gauge = _ref2d_geometry(K, c)
        pen_A = np.concatenate([mu * gauge, np.zeros((1, 2))])  # (K + 1, 2): mu (g_Q - 1)_+ as a max
        pen_b = np.concatenate([-mu * np.ones(K), [0.0]])
        A = (S[:, :, None, :] + pen_A[None, None]).reshape(K, K * (K + 1), 2)
        b = np.broadcast_to(pen_b[None, None], (K, K, K + 1)).reshape(K, K * (K + 1)).copy()
    else:  # cwr2d
        c = float(kw.get("c"))
        _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
        a = kw.get("a")
        a = c / (1 - 2 * c) if a is None else float(a)
        rows = []
        for s1 in (1.0, -1.0):  # a |m - y'| = max over s1 of a s1 (m - y')
            for h in (0.0, 1.0, -1.0):  # (|m - y'| - r)_+ = max(0, (m - y') - r, (y' - m) - r)
                rows.append((a * s1 + h, c - abs(h)))
        coef = np.array(rows)  # (6, 2)
        A = np.broadcast_to(coef, (K, 6, 2)).copy()
        b = -coef[None, :, 0] * (np.arange(K)[:, None] + 1.0)
    return A, b, np.ones(b.shape, dtype=bool)


def link_cells(name: str, K: int, **kw: Any) -> dict[int, list[tuple[np.ndarray, np.ndarray]]]:
    """Closed polyhedral cells of a link: ``{t: [(G, h), ...]}``; closure of psi^{-1}(t) = U {G u <= h}.

    t runs over REJECT (-1) and 0..K-1. Keywords as in :func:`surrogate` (``tau``, ``code``, ``theta``).
    """
    surrogate_dim(name, K)  # validates name and K
    cells: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {t: [] for t in range(-1, K)}
    if name == "cs":
        tau = float(kw.get("tau", 0.5))
        _check_tau(tau, "tau", 0.0, 1.0)
        for i in range(K):
            G = np.stack([_e(K, j) - _e(K, i) for j in range(K) if j != i])
            cells[i].append((G, -tau * np.ones(K - 1)))
            for j in range(K):
                if j != i:
                    top = [_e(K, k) - _e(K, i) for k in range(K) if k != i]
                    cells[REJECT].append((np.stack([*top, _e(K, i) - _e(K, j)]), np.r_[np.zeros(K - 1), tau]))
    elif name == "hinge2":
        tau = float(kw.get("tau", 0.5))
        _check_tau(tau, "tau", 0.0, 1.0)
        cells[1].append((np.array([[-1.0]]), np.array([-tau])))
        cells[0].append((np.array([[1.0]]), np.array([-tau])))
        cells[REJECT].append((np.array([[1.0], [-1.0]]), np.array([tau, tau])))
    elif name == "ova":
        tau = float(kw.get("tau", 0.0))
        _check_tau(tau, "tau", -1.0, 1.0)
        for i in range(K):
            G = np.stack([*(_e(K, j) - _e(K, i) for j in range(K) if j != i), -_e(K, i)])
            cells[i].append((G, np.r_[np.zeros(K - 1), -tau]))
        cells[REJECT].append((np.eye(K), tau * np.ones(K)))
    elif name == "bep":
        code = kw.get("code")
        code = np.asarray(bep_code(K) if code is None else _check_code(code))
        d = code.shape[1]
        tau = float(kw.get("tau", 0.5))
        _check_tau(tau, "tau", 0.0, 1.0)
        words = {tuple(row): y for y, row in enumerate(code.tolist())}
        for mask in range(2**d):
            bvec = np.where((mask >> np.arange(d)) & 1, 1.0, -1.0)  # the cell {b_j u_j <= -tau}: -sign(u) = b
            cells[words.get(tuple(bvec.tolist()), REJECT)].append((np.diag(bvec), -tau * np.ones(d)))
        for j in range(d):
            cells[REJECT].append((np.stack([_e(d, j), -_e(d, j)]), np.array([tau, tau])))
    elif name == "ref2d":
        tau = float(kw.get("tau", 0.5))
        _check_tau(tau, "tau", 0.0, 1.0)
        ang = 2 * np.pi * np.arange(K) / K
        n = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        for k in range(K):
            G = np.stack([*(n[j] - n[k] for j in range(K) if j != k), -n[k]])
            cells[k].append((G, np.r_[np.zeros(K - 1), -tau]))
        cells[REJECT].append((n, tau * np.ones(K)))
    elif name == "cwr2d":
        theta = float(kw.get("theta", 0.25))
        _check_tau(theta, "theta", 0.0, 0.5)
        G_acc = np.array([[0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]])
        for j in range(1, K + 1):
            cells[j - 1].append((G_acc, np.array([theta, j + 0.5, -(j - 0.5)])))
        cells[REJECT] += [
            (np.array([[0.0, -1.0]]), np.array([-theta])),
            (np.array([[1.0, 0.0]]), np.array([0.5])),
            (np.array([[-1.0, 0.0]]), np.array([-(K + 0.5)])),
        ]
        for j in range(1, K):  # the half-integer lines |m - j| = 1/2 are rejected even when r <= theta
            cells[REJECT].append((G_acc, np.array([theta, j + 0.5, -(j + 0.5)])))
    else:
        raise ValueError(f"name {name!r} has no polyhedral link cells; known: cs, ova, bep, ref2d, cwr2d, "
                         "hinge2")
    return cells


# ----------------------------------------------------------------------------------------------------
# conditional risk and its first-order minimiser


def conditional_risk(loss_fn: Callable[..., jax.Array], u: Float[Array, "... d"], p: Float[Array, " K"],
                     **kw: Any) -> Float[Array, "..."]:
    """R_L(u; p) = sum_y p_y L(u, y), with the loss vmapped over the K labels."""
    p = as_array(p, "p", kind="float", ndim=1)
    check_simplex(p, "p")
    losses = jax.vmap(lambda y: loss_fn(u, y, **kw))(jnp.arange(p.shape[0], dtype=jnp.int32))
    return jnp.tensordot(p.astype(losses.dtype), losses, axes=1)


class MinimizerState(NamedTuple):
    """State of the first-order minimiser: the point, the optax state and the last objective value."""

    u: jax.Array
    opt_state: Any
    value: jax.Array


def minimizer_init(u0: Float[Array, "..."], optimizer: optax.GradientTransformation) -> MinimizerState:
    """Initial state at ``u0``."""
    return MinimizerState(u0, optimizer.init(u0), jnp.asarray(jnp.inf, u0.dtype))


def minimizer_step(key: Any, state: MinimizerState, objective: Callable[[jax.Array], jax.Array],
                   optimizer: optax.GradientTransformation) -> tuple[MinimizerState, jax.Array]:
    """One optax step on ``objective`` (the key is unused: the method is deterministic). Info: the value.

    The objective's value and ``value_fn`` are passed to the optimizer as extra arguments, so line-search
    methods such as ``optax.lbfgs()`` work as well as ``optax.adam``."""
    del key
    value, grad = jax.value_and_grad(objective)(state.u)
    opt = optax.with_extra_args_support(optimizer)
    updates, opt_state = opt.update(grad, state.opt_state, state.u, value=value, grad=grad,
                                    value_fn=objective)
    return MinimizerState(optax.apply_updates(state.u, updates), opt_state, value), value


def minimize(objective: Callable[[jax.Array], jax.Array], u0: Float[Array, "..."], key: Any, steps: int,
             optimizer: optax.GradientTransformation) -> MinimizerState:
    """Run :func:`minimizer_step` ``steps`` times with :func:`jaxlab.core.run`; the final state."""
    step = lambda k, s: minimizer_step(k, s, objective, optimizer)  # noqa: E731
    final, _ = run(step, minimizer_init(u0, optimizer), key, steps, thin=steps)
    return final._replace(value=objective(final.u))


@cites("ramaswamy2018abstain")
def minimize_conditional_risk(loss_fn: Callable[..., jax.Array], p: Float[Array, " K"], d: int, key: Any,
                              steps: int = 5000, restarts: int = 8, learning_rate: float = 0.05,
                              method: str = "adam", **kw: Any) -> Float[Array, " d"]:
    """Minimise R_L(u; p) over u in R^d from ``restarts`` random starts with optax.

    ``method="adam"``: Adam with a cosine-decayed step from ``learning_rate``; ``"lbfgs"``: ``optax.lbfgs``
    with its zoom line search (for smooth losses; a few hundred steps suffice). The starts run as one vmapped
    batch; the best final point is returned. Jit- and vmap-able over ``p`` and ``key``. For polyhedral losses
    prefer the exact LP of :mod:`jaxlab.losses.cwr_check`.
    """
    d = check_int(d, "d", min_value=1)
    steps = check_int(steps, "steps", min_value=1)
    restarts = check_int(restarts, "restarts", min_value=1)
    p = as_array(p, "p", kind="float", ndim=1)
    check_simplex(p, "p")
    if method not in ("adam", "lbfgs"):
        raise ValueError(f"method must be 'adam' or 'lbfgs', got {method!r}")
    opt = (optax.lbfgs() if method == "lbfgs"
           else optax.adam(optax.cosine_decay_schedule(learning_rate, steps, alpha=1e-3)))
    k0, k1 = jax.random.split(key)
    u0 = jax.random.normal(k0, (restarts, d), dtype=p.dtype)

    def one(u_start, k):
        return minimize(lambda u: conditional_risk(loss_fn, u, p, **kw), u_start, k, steps, opt)

    states = jax.vmap(one)(u0, jax.random.split(k1, restarts))
    return states.u[jnp.argmin(states.value)]
