r"""Numerical calibration checker for classification-with-rejection surrogates (spec section 3.6).

For a polyhedral loss L(u, y) = max_r A[y, r] . u + b[y, r] the conditional risk R_L(u; p) = sum_y p_y L(u, y)
is minimised exactly by the linear programme over (u, z) in R^d x R^K

    minimise  sum_y p_y z_y   subject to  z_y >= A[y, r] . u + b[y, r]  for all (y, r)            (LP)

(:func:`lp_min`, scipy's HiGHS). The calibration gap of a link psi at p is

    gap(p) = min_{t not in Gamma_c(p)}  min_{cell {G u <= h} of psi^{-1}(t)}  LP + {G u <= h}  -  min LP,

and (L, psi) is calibrated iff gap(p) > 0 for every p. :func:`calibration_report` computes, for a batch of
distributions, the link errors (psi(u*) not in Gamma_c(p) at the LP minimiser u*) and the gaps.

For jaxlab's 2-d interval-coverage loss (``cwr2d``, theta = 1/4) every kink of the loss and every link
boundary lies on the lattice (Z/4)^2, so the minimum of R_L over the plane and over each closed link cell is
attained at a lattice point: :func:`cwr2d_lattice_report` evaluates R_L on that lattice in JAX, vmapped over
p, as an exact solver independent of the LP (derived for this project, spec 3.5).

Smooth losses (``ce``) use the optax minimiser :func:`jaxlab.losses.cwr.minimize_conditional_risk`
(L-BFGS) for the link check, and a quadratic-penalty minimisation over each link cell (convex for CE:
log(1-c) - log softmax_k(u) <= 0, or max_k log softmax_k(u) - log(1-c) <= 0) for the gap.

scipy is an optional dependency (the ``test`` extra); it is imported only when an LP is solved.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_in_range, check_int, check_simplex
from jaxlab.losses.cwr import (
    REJECT,
    conditional_risk,
    cwr2d_loss,
    link_cells,
    minimize,
    minimize_conditional_risk,
    polyhedral_pieces,
    surrogate,
)

__all__ = [
    "CalibrationReport",
    "bayes_set",
    "calibration_report",
    "cwr2d_lattice_report",
    "lp_min",
    "threshold_distributions",
]


class CalibrationReport(NamedTuple):
    """Per-distribution outcome of a calibration check; ``link_errors`` and ``min_gap`` summarise it."""

    link_errors: int
    min_gap: float
    errors: np.ndarray  # (n,) bool: psi(u*) not in Gamma_c(p)
    gaps: np.ndarray  # (n,) calibration gap
    min_risk: np.ndarray  # (n,) min_u R_L(u; p)
    u_star: np.ndarray  # (n, d) a minimiser


def _linprog():
    try:
        from scipy.optimize import linprog
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the exact LP calibration checker needs scipy (HiGHS linprog): install the `test` extra "
            "(pip install 'jaxlab[test]') or `pip install scipy`"
        ) from exc
    return linprog


def _check_p(p: Any, K: int | None = None, name: str = "p") -> np.ndarray:
    p = as_array(p, name, kind="float", ndim=1, shape=None if K is None else (K,))
    check_simplex(p, name)
    return np.asarray(p, dtype=float)


def bayes_set(p: Any, c: float) -> set[int]:
    """Gamma_c(p) as a set: all maximisers if max p > 1 - c, REJECT if max p < 1 - c, both at equality."""
    p = _check_p(p)
    pmax = float(p.max())
    classes = {int(k) for k in np.flatnonzero(p == pmax)}
    if pmax > 1 - c:
        return classes
    if pmax < 1 - c:
        return {REJECT}
    return classes | {REJECT}


def lp_min(pieces: tuple[Any, Any, Any], p: Any, G: Any = None, h: Any = None) -> tuple[float, np.ndarray]:
    """Exact min of R_L(u; p) over {G u <= h} (or all of R^d): ``(value, u*)``; ``(inf, nan)`` if infeasible.

    ``pieces = (A (K, R, d), b (K, R), valid (K, R))`` as returned by
    :func:`jaxlab.losses.cwr.polyhedral_pieces`.
    """
    linprog = _linprog()
    A, b, valid = (np.asarray(x) for x in pieces)
    if A.ndim != 3 or b.shape != A.shape[:2] or valid.shape != A.shape[:2]:
        raise ValueError(f"pieces must be (A (K, R, d), b (K, R), valid (K, R)), got shapes {A.shape}, "
                         f"{b.shape}, {valid.shape}")
    K, _, d = A.shape
    p = _check_p(p, K)
    ys, rs = np.nonzero(valid)
    rows = np.zeros((len(ys), d + K))
    rows[:, :d] = A[ys, rs]
    rows[np.arange(len(ys)), d + ys] = -1.0
    rhs = -b[ys, rs]
    if G is not None:
        G, h = np.atleast_2d(np.asarray(G, dtype=float)), np.atleast_1d(np.asarray(h, dtype=float))
        if G.shape[1] != d or h.shape != (G.shape[0],):
            raise ValueError(f"G must have shape (n, {d}) and h shape (n,), got {G.shape} and {h.shape}")
        rows = np.vstack([rows, np.hstack([G, np.zeros((G.shape[0], K))])])
        rhs = np.concatenate([rhs, h])
    res = linprog(np.concatenate([np.zeros(d), p]), A_ub=rows, b_ub=rhs, bounds=(None, None), method="highs")
    if res.status == 2:
        return float("inf"), np.full(d, np.nan)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the conditional-risk LP: {res.message}")
    return float(res.fun), np.asarray(res.x[:d])


@cites("ramaswamy2018abstain")
def threshold_distributions(seed: int, K: int, c: float, n: int, *, drop: float = 2e-3) -> np.ndarray:
    """Test distributions (n, K): Dirichlet(0.3), Dirichlet(1), near-threshold and adversarial draws.

    Near-threshold: one class gets p_k = 1 - c +- delta, delta ~ U[0.005, min(c, 0.2)], the rest is spread by a
    Dirichlet(1); adversarial: the same with the rest concentrated by a Dirichlet(0.2). Draws with
    |max p - (1 - c)| < ``drop`` are replaced. The four kinds alternate.
    """
    seed, K, n = check_int(seed, "seed"), check_int(K, "K", min_value=2), check_int(n, "n", min_value=1)
    check_in_range(c, "c", 0.0, 1.0, lo_open=True, hi_open=True)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        kind = len(out) % 4
        if kind < 2:
            p = rng.dirichlet(np.full(K, 0.3 if kind == 0 else 1.0))
        else:
            k = rng.integers(K)
            delta = rng.uniform(0.005, min(c, 0.2)) * rng.choice([-1.0, 1.0])
            pk = 1 - c + delta
            rest = rng.dirichlet(np.full(K - 1, 1.0 if kind == 2 else 0.2)) * (1 - pk)
            p = np.insert(rest, k, pk)
        if abs(p.max() - (1 - c)) >= drop:
            out.append(p)
    return np.stack(out)


def _wrong(p: np.ndarray, c: float, K: int) -> list[int]:
    gamma = bayes_set(p, c)
    return [t for t in range(-1, K) if t not in gamma]


@cites("ramaswamy2018abstain", "cwr2026lowdim")
def calibration_report(name: str, K: int, c: float, ps: Any, *, key: Any = None, steps: int = 300,
                       restarts: int = 4, **kw: Any) -> CalibrationReport:
    """Link errors and calibration gaps of a named surrogate at each distribution of ``ps`` (n, K).

    Polyhedral surrogates (cs, ova, bep, ref2d, cwr2d, hinge2) are solved exactly by LP; ``ce`` by optax
    L-BFGS (``steps`` iterations, ``restarts`` starts; the gap is a quadratic-penalty estimate with weight
    1e8, below the true gap by about 1e-8). ``kw`` goes to :func:`jaxlab.losses.cwr.surrogate`.
    """
    sur = surrogate(name, K, c, **kw)  # validates name, K, c and the link parameters
    ps = as_array(ps, "ps", kind="float", ndim=2, shape=(None, sur.K))
    check_simplex(ps, "ps")
    ps = np.asarray(ps, dtype=float)
    if name == "ce":
        return _smooth_report(sur, ps, jax.random.key(0) if key is None else key, steps, restarts)
    pieces = polyhedral_pieces(name, K, c=c, **kw)
    cells = link_cells(name, K, **kw)
    gaps, risks, us = [], [], []
    for p in ps:
        val, u = lp_min(pieces, p)
        wrong_vals = [lp_min(pieces, p, G, h)[0] for t_bad in _wrong(p, c, K) for G, h in cells[t_bad]]
        gaps.append(max(min(wrong_vals, default=np.inf) - val, 0.0))
        risks.append(val)
        us.append(u)
    return _report(sur, ps, np.stack(us), np.array(risks), np.array(gaps))


def _report(sur, ps: np.ndarray, u_star: np.ndarray, risk: np.ndarray, gaps: np.ndarray) -> CalibrationReport:
    decisions = np.asarray(sur.link(jnp.asarray(u_star)))
    errors = np.array([int(t) not in bayes_set(p, sur.c) for t, p in zip(decisions, ps, strict=True)])
    return CalibrationReport(int(errors.sum()), float(gaps.min()), errors, gaps, risk, u_star)


def _cell_gaps(ps: np.ndarray, c: float, K: int, risk: np.ndarray, cell_min: np.ndarray) -> np.ndarray:
    """gap_i = min over wrong decisions t of cell_min[i, t + 1], minus risk_i (clipped at 0)."""
    return np.array([max(min(cell_min[i, t + 1] for t in _wrong(p, c, K)) - risk[i], 0.0)
                     for i, p in enumerate(ps)])


def _ce_cell_violation(u: jax.Array, t: jax.Array, log1mc: float) -> jax.Array:
    """g(u) <= 0 on the closure of the CE+Chow cell of decision t (t = -1: reject)."""
    logq = jax.nn.log_softmax(u)
    accept = log1mc - logq[jnp.maximum(t, 0)]
    reject = jnp.max(logq) - log1mc
    return jnp.where(t == REJECT, reject, accept)


@functools.partial(jax.jit, static_argnames=("K", "steps", "restarts"))
def _ce_solve(ps, key, c, K, steps, restarts):
    log1mc = jnp.log1p(-c)
    opt = optax.lbfgs()
    rho = 1e8

    def per_p(p, k):
        k1, k2 = jax.random.split(k)
        u_star = minimize_conditional_risk(lambda u, y: jax.nn.logsumexp(u) - u[y], p, K, k1, steps=steps,
                                           restarts=restarts, method="lbfgs")
        risk = conditional_risk(lambda u, y: jax.nn.logsumexp(u) - u[y], u_star, p)

        def in_cell(t):
            def obj(u):
                g = _ce_cell_violation(u, t, log1mc)
                return conditional_risk(lambda v, y: jax.nn.logsumexp(v) - v[y], u, p) + rho * jax.nn.relu(g) ** 2

            return minimize(obj, u_star, k2, steps, opt).value

        cell_vals = jax.vmap(in_cell)(jnp.arange(-1, K))
        return u_star, risk, cell_vals

    return jax.vmap(per_p)(ps, jax.random.split(key, ps.shape[0]))


def _smooth_report(sur, ps: np.ndarray, key: Any, steps: int, restarts: int) -> CalibrationReport:
    u_star, risk, cell_vals = _ce_solve(jnp.asarray(ps), key, sur.c, sur.K, steps, restarts)
    u_star, risk, cell_vals = np.asarray(u_star), np.asarray(risk), np.asarray(cell_vals)
    return _report(sur, ps, u_star, risk, _cell_gaps(ps, sur.c, sur.K, risk, cell_vals))


@functools.partial(jax.jit, static_argnames=("K",))
def _lattice_solve(ps, c, a, theta, K):
    step = 0.25
    m = jnp.arange(0, 4 * (K + 1) + 1) * step
    r = jnp.arange(-4, 4 * (K + 1) + 1) * step
    M, Rr = jnp.meshgrid(m, r, indexing="ij")
    U = jnp.stack([M.ravel(), Rr.ravel()], axis=-1)  # (P, 2)
    losses = jax.vmap(lambda y: cwr2d_loss(U, y, c, a))(jnp.arange(K))  # (K, P)
    risks = ps @ losses  # (n, P)
    mm, rr = U[:, 0], U[:, 1]
    j = jnp.arange(1, K + 1)[:, None]
    in_class = (rr <= theta) & (jnp.abs(mm - j) <= 0.5)  # (K, P) closures of the class cells
    half = jnp.abs(mm - jnp.floor(mm) - 0.5) < 1e-9
    in_reject = (rr >= theta) | (mm <= 0.5) | (mm >= K + 0.5) | half
    member = jnp.concatenate([in_reject[None], in_class])  # row t + 1
    cell_min = jnp.min(jnp.where(member[None], risks[:, None, :], jnp.inf), axis=-1)  # (n, K + 1)
    best = jnp.argmin(risks, axis=-1)
    return risks[jnp.arange(ps.shape[0]), best], U[best], cell_min


@cites("cwr2026lowdim")
def cwr2d_lattice_report(K: int, c: float, ps: Any, *, a: float | None = None,
                         theta: float = 0.25) -> CalibrationReport:
    """Exact calibration check of ``cwr2d`` by enumeration of the lattice (Z/4)^2 (no LP, vmapped over p).

    Exact because every kink of R_L(.; p) and every link boundary (theta = 1/4) lies on the lattice; the window
    m in [0, K+1], r in [-1, K+1] contains every relevant vertex.
    """
    sur = surrogate("cwr2d", K, c, a=a, theta=theta)
    if theta != 0.25:
        raise ValueError(f"theta must be 0.25 for the lattice check (the cell boundaries must lie on (Z/4)^2), "
                         f"got {theta!r}")
    ps = np.asarray(as_array(ps, "ps", kind="float", ndim=2, shape=(None, K)), dtype=float)
    check_simplex(ps, "ps")
    a_val = c / (1 - 2 * c) if a is None else float(a)
    risk, u_star, cell_min = (np.asarray(x) for x in _lattice_solve(jnp.asarray(ps), c, a_val, theta, K))
    return _report(sur, ps, u_star, risk, _cell_gaps(ps, c, K, risk, cell_min))
