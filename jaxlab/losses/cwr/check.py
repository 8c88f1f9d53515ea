r"""Exact calibration checker for classification-with-rejection surrogates: polyhedral geometry and LPs.

For a polyhedral loss L(u, y) = max_r A[y, r] . u + b[y, r] the conditional risk R_L(u; p) = sum_y p_y L(u, y)
is minimised exactly by the linear programme over (u, z) in R^d x R^K

    minimise  sum_y p_y z_y   subject to  z_y >= A[y, r] . u + b[y, r]  for all (y, r)            (LP)

(:func:`lp_min`, scipy's HiGHS). The geometry comes from :func:`polyhedral_pieces` (the affine pieces
(A, b) of each surrogate) and :func:`link_cells` (each link's decision regions as unions of polyhedra
{G u <= h}). The calibration gap of a link psi at p is

    gap(p) = min_{t not in Gamma_c(p)}  min_{cell {G u <= h} of psi^{-1}(t)}  LP + {G u <= h}  -  min LP,

and (L, psi) is calibrated iff gap(p) > 0 for every p. :func:`calibration_report` computes, for a batch of
distributions, the link errors (psi(u*) not in Gamma_c(p) at the LP minimiser u*) and the gaps.

For jaxlab's 2-d interval-coverage loss (``cwr2d``, theta = 1/4) every kink of the loss and every link
boundary lies on the lattice (Z/4)^2, so the minimum of R_L over the plane and over each closed link cell is
attained at a lattice point: :func:`cwr2d_lattice_report` evaluates R_L on that lattice in JAX, vmapped over
p, as an exact solver independent of the LP (derived for jaxlab).

Smooth losses (``ce``) use the optax minimiser :func:`jaxlab.losses.cwr.risk.minimize_conditional_risk`
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
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.validation import as_array, check_in_range, check_int, check_simplex
from jaxlab.losses.cwr._checks import _CWR2D_WHY, _check_cost, _check_tau
from jaxlab.losses.cwr.losses import _bw_slope, _check_code, _ref2d_check, _ref2d_geometry, bep_code, cwr2d_loss
from jaxlab.losses.cwr.papers import CWR2026, RAMASWAMY
from jaxlab.losses.cwr.registry import surrogate, surrogate_dim
from jaxlab.losses.cwr.risk import conditional_risk, minimize, minimize_conditional_risk
from jaxlab.losses.cwr.target import REJECT

__all__ = [
    "CalibrationReport",
    "bayes_set",
    "calibration_report",
    "cwr2d_lattice_report",
    "link_cells",
    "lp_min",
    "polyhedral_pieces",
    "threshold_distributions",
]


class CalibrationReport(NamedTuple):
    """Per-distribution outcome of a calibration check; ``link_errors`` and ``min_gap`` summarise it.

    The pair (L, psi) passes on the sample when ``link_errors == 0`` and ``min_gap > 0``.

    Attributes:
      link_errors: number of distributions with psi(u*) not in Gamma_c(p) (a Python int).
      min_gap: smallest calibration gap over the distributions (a Python float).
      errors: ``(n,)`` bool NumPy array, psi(u*) not in Gamma_c(p).
      gaps: ``(n,)`` float NumPy array, the calibration gaps gap(p) (clipped at 0).
      min_risk: ``(n,)`` float NumPy array, min_u R_L(u; p).
      u_star: ``(n, d)`` float NumPy array, a minimiser per distribution.
    """

    link_errors: int
    min_gap: float
    errors: np.ndarray
    gaps: np.ndarray
    min_risk: np.ndarray
    u_star: np.ndarray


# ----------------------------------------------------------------------------------------------------
# polyhedral pieces of the losses and cells of the links (static NumPy data for the LP)


def _e(d: int, i: int) -> np.ndarray:
    v = np.zeros(d)
    v[i] = 1.0
    return v


def polyhedral_pieces(name: str, K: int, **kw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Affine pieces of a polyhedral surrogate: L(u, y) = max_{r: valid[y, r]} A[y, r] . u + b[y, r].

    Names: ``cs``, ``ova`` (2^K pieces, K <= 12), ``bep`` (``code=``), ``ref2d`` (``c=``, ``mu=``,
    ``allow_invalid=``), ``cwr2d`` (``c=``, ``a=``), ``hinge2`` (K = 2, ``c=``). ``ce`` is not polyhedral.
    The pieces are the max-of-affine forms of the formulas in :mod:`jaxlab.losses.cwr.losses`.

    Args:
      name: a polyhedral surrogate of :data:`~jaxlab.losses.cwr.registry.SURROGATES`.
      K: number of classes ``>= 2`` (``>= 3`` for ``ref2d``).
      **kw: the surrogate's parameters: ``c`` (hinge2, ref2d, cwr2d; required there), ``a`` (cwr2d), ``mu``
        and ``allow_invalid`` (ref2d), ``code`` (bep); others are ignored.

    Returns:
      ``(A, b, valid)``: NumPy arrays ``A (K, R, d)``, ``b (K, R)`` and ``valid (K, R)`` (all true here).

    Raises:
      TypeError: ``K`` is not an int, or a required ``c`` is missing.
      ValueError: unknown name, ``name == "ce"``, ``K > 12`` for ``ova``, or parameters out of range.
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
        c = _check_cost(c, "generalized hinge", lo=0.0, hi=0.5, hi_open=True)
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
        c = _check_cost(c, "cwr2d", lo=0.0, hi=0.5, hi_open=True, why=_CWR2D_WHY)
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

    t runs over REJECT (-1) and 0..K-1.

    Args:
      name: a polyhedral surrogate (``cs``, ``ova``, ``bep``, ``ref2d``, ``cwr2d``, ``hinge2``).
      K: number of classes ``>= 2``.
      **kw: the link's parameters as in :func:`~jaxlab.losses.cwr.registry.surrogate` (``tau``, ``code``,
        ``theta``); others are ignored.

    Returns:
      A dict from each decision t in {-1, 0, ..., K-1} to a list of ``(G, h)`` NumPy pairs, ``G (m, d)`` and
      ``h (m,)``.

    Raises:
      TypeError: ``K`` is not an int.
      ValueError: unknown name (or ``ce``), ``K < 2``, or a link parameter out of range.
    """
    surrogate_dim(name, K)  # validates name and K
    cells: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {t: [] for t in range(-1, K)}
    if name == "cs":
        tau = float(kw.get("tau", 0.5))
        tau = _check_tau(tau, "tau", 0.0, 1.0)
        for i in range(K):
            G = np.stack([_e(K, j) - _e(K, i) for j in range(K) if j != i])
            cells[i].append((G, -tau * np.ones(K - 1)))
            for j in range(K):
                if j != i:
                    top = [_e(K, k) - _e(K, i) for k in range(K) if k != i]
                    cells[REJECT].append((np.stack([*top, _e(K, i) - _e(K, j)]), np.r_[np.zeros(K - 1), tau]))
    elif name == "hinge2":
        tau = float(kw.get("tau", 0.5))
        tau = _check_tau(tau, "tau", 0.0, 1.0)
        cells[1].append((np.array([[-1.0]]), np.array([-tau])))
        cells[0].append((np.array([[1.0]]), np.array([-tau])))
        cells[REJECT].append((np.array([[1.0], [-1.0]]), np.array([tau, tau])))
    elif name == "ova":
        tau = float(kw.get("tau", 0.0))
        tau = _check_tau(tau, "tau", -1.0, 1.0)
        for i in range(K):
            G = np.stack([*(_e(K, j) - _e(K, i) for j in range(K) if j != i), -_e(K, i)])
            cells[i].append((G, np.r_[np.zeros(K - 1), -tau]))
        cells[REJECT].append((np.eye(K), tau * np.ones(K)))
    elif name == "bep":
        code = kw.get("code")
        code = np.asarray(bep_code(K) if code is None else _check_code(code))
        d = code.shape[1]
        tau = float(kw.get("tau", 0.5))
        tau = _check_tau(tau, "tau", 0.0, 1.0)
        words = {tuple(row): y for y, row in enumerate(code.tolist())}
        for mask in range(2**d):
            bvec = np.where((mask >> np.arange(d)) & 1, 1.0, -1.0)  # the cell {b_j u_j <= -tau}: -sign(u) = b
            cells[words.get(tuple(bvec.tolist()), REJECT)].append((np.diag(bvec), -tau * np.ones(d)))
        for j in range(d):
            cells[REJECT].append((np.stack([_e(d, j), -_e(d, j)]), np.array([tau, tau])))
    elif name == "ref2d":
        tau = float(kw.get("tau", 0.5))
        tau = _check_tau(tau, "tau", 0.0, 1.0)
        ang = 2 * np.pi * np.arange(K) / K
        n = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        for k in range(K):
            G = np.stack([*(n[j] - n[k] for j in range(K) if j != k), -n[k]])
            cells[k].append((G, np.r_[np.zeros(K - 1), -tau]))
        cells[REJECT].append((n, tau * np.ones(K)))
    elif name == "cwr2d":
        theta = float(kw.get("theta", 0.25))
        theta = _check_tau(theta, "theta", 0.0, 0.5)
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
# the conditional-risk LP and the calibration reports


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
    check_simplex(as_array(p, name, kind="float", ndim=1, shape=None if K is None else (K,)), name)
    return np.asarray(p, dtype=float)  # the caller's values: the LP runs in float64, whatever JAX's default float


def bayes_set(p: Any, c: float) -> set[int]:
    """The Bayes-optimal decisions Gamma_c(p) of the 0-1-c loss, as a set.

    All maximisers of p if max p > 1 - c, {REJECT} if max p < 1 - c, both at equality (exact float
    comparisons).

    Args:
      p: ``(K,)`` float array on the simplex.
      c: rejection cost (not validated).

    Returns:
      A set of Python ints in {-1, 0, ..., K-1}.

    Raises:
      TypeError: ``p`` is not a float array.
      ValueError: ``p`` not 1-D or not a probability vector.
    """
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

    Solves the LP of the module docstring with scipy's HiGHS (``scipy.optimize.linprog``).

    Args:
      pieces: ``(A (K, R, d), b (K, R), valid (K, R))`` as returned by :func:`polyhedral_pieces`.
      p: ``(K,)`` float array on the simplex.
      G: ``(m, d)`` constraint matrix (or one row), or ``None`` for no constraint.
      h: ``(m,)`` right-hand side (with ``G``).

    Returns:
      ``(value, u_star)``: the minimum (a Python float) and a ``(d,)`` NumPy minimiser; ``(inf, nan)`` if
      ``{G u <= h}`` is empty.

    Raises:
      ImportError: scipy is not installed.
      TypeError: ``p`` is not a float array.
      ValueError: ``pieces`` or ``G``/``h`` of inconsistent shapes, or ``p`` not a probability vector of length K.
      RuntimeError: HiGHS fails otherwise (e.g. an unbounded LP).
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


@cites(RAMASWAMY)
def threshold_distributions(seed: int, K: int, c: float, n: int, *, drop: float = 2e-3) -> np.ndarray:
    """Test distributions (n, K): Dirichlet(0.3), Dirichlet(1), near-threshold and adversarial draws.

    Near-threshold: one class gets p_k = 1 - c +- delta, delta ~ U[0.005, min(c, 0.2)], the rest is spread by a
    Dirichlet(1); adversarial: the same with the rest concentrated by a Dirichlet(0.2). Draws with
    |max p - (1 - c)| < ``drop`` are replaced. The four kinds alternate. The design is chosen here.

    Args:
      seed: NumPy seed (``numpy.random.default_rng``).
      K: number of classes ``>= 2``.
      c: rejection cost in (0, 1).
      n: number of distributions ``>= 1``.
      drop: half-width of the excluded band around the Chow threshold max p = 1 - c.

    Returns:
      ``(n, K)`` float64 NumPy array, each row on the simplex.

    Raises:
      TypeError: ``seed``, ``K`` or ``n`` is not an int.
      ValueError: ``K < 2``, ``n < 1`` or ``c`` outside (0, 1).
    """
    seed, K, n = check_int(seed, "seed"), check_int(K, "K", min_value=2), check_int(n, "n", min_value=1)
    c = check_in_range(c, "c", 0.0, 1.0, lo_open=True, hi_open=True)
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


@cites(RAMASWAMY, CWR2026)
@renamed_kwargs(steps="num_steps")
def calibration_report(name: str, K: int, c: float, ps: Any, *, key: Any = None, num_steps: int = 300,
                       restarts: int = 4, **kw: Any) -> CalibrationReport:
    """Link errors and calibration gaps of a named surrogate at each distribution of ``ps`` (n, K).

    Polyhedral surrogates (cs, ova, bep, ref2d, cwr2d, hinge2) are solved exactly by LP; ``ce`` by optax
    L-BFGS (``num_steps`` iterations, ``restarts`` starts; the gap is a quadratic-penalty estimate with weight
    1e8, below the true gap by about 1e-8). ``kw`` goes to :func:`jaxlab.losses.cwr.registry.surrogate`.
    The calibration gap is the one of the module docstring; (L, psi) is calibrated on the sample when the report
    has no link errors and ``min_gap > 0``.

    Args:
      name: one of :data:`~jaxlab.losses.cwr.registry.SURROGATES`.
      K: number of classes.
      c: rejection cost, in the surrogate's range.
      ps: ``(n, K)`` float array of distributions (rows on the simplex), e.g. :func:`threshold_distributions`.
      key: PRNG key for the ``ce`` starts (``None``: ``jax.random.key(0)``); unused for polyhedral losses.
      num_steps: L-BFGS steps per start (``ce`` only; ``steps`` is its deprecated name).
      restarts: number of random starts (``ce`` only).
      **kw: the surrogate's parameters (``tau``, ``code``, ``mu``, ``allow_invalid``, ``a``, ``theta``).

    Returns:
      A :class:`CalibrationReport` over the ``n`` distributions.

    Raises:
      ImportError: scipy is missing (polyhedral losses).
      TypeError: ``K`` is not an int or ``ps`` not a float array.
      ValueError: invalid name, K, c or parameters (see :func:`~jaxlab.losses.cwr.registry.surrogate`), or
        ``ps`` not ``(n, K)`` rows on the simplex.

    Example:
      >>> from jaxlab.losses.cwr import calibration_report, threshold_distributions
      >>> ps = threshold_distributions(0, 4, 0.2, 8)
      >>> rep = calibration_report("cwr2d", 4, 0.2, ps)
      >>> rep.link_errors, rep.min_gap > 0
      (0, True)
    """
    sur = surrogate(name, K, c, **kw)  # validates name, K, c and the link parameters
    check_simplex(as_array(ps, "ps", kind="float", ndim=2, shape=(None, sur.K)), "ps")
    # the LPs run in float64 (HiGHS): keep the caller's values, not their conversion to JAX's default float
    ps = np.asarray(ps, dtype=float)
    if name == "ce":
        return _smooth_report(sur, ps, jax.random.key(0) if key is None else key, num_steps, restarts)
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


@functools.partial(jax.jit, static_argnames=("K", "num_steps", "restarts"))
def _ce_solve(ps, key, c, K, num_steps, restarts):
    log1mc = jnp.log1p(-c)
    opt = optax.lbfgs()
    rho = 1e8

    def per_p(p, k):
        k1, k2 = jax.random.split(k)
        u_star = minimize_conditional_risk(lambda u, y: jax.nn.logsumexp(u) - u[y], p, K, k1, num_steps=num_steps,
                                           restarts=restarts, method="lbfgs")
        risk = conditional_risk(lambda u, y: jax.nn.logsumexp(u) - u[y], u_star, p)

        def in_cell(t):
            def obj(u):
                g = _ce_cell_violation(u, t, log1mc)
                return conditional_risk(lambda v, y: jax.nn.logsumexp(v) - v[y], u, p) + rho * jax.nn.relu(g) ** 2

            return minimize(obj, u_star, k2, num_steps, opt).value

        cell_vals = jax.vmap(in_cell)(jnp.arange(-1, K))
        return u_star, risk, cell_vals

    return jax.vmap(per_p)(ps, jax.random.split(key, ps.shape[0]))


def _smooth_report(sur, ps: np.ndarray, key: Any, num_steps: int, restarts: int) -> CalibrationReport:
    u_star, risk, cell_vals = _ce_solve(jnp.asarray(ps), key, sur.c, sur.K, num_steps, restarts)
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


@cites(CWR2026)
def cwr2d_lattice_report(K: int, c: float, ps: Any, *, a: float | None = None,
                         theta: float = 0.25) -> CalibrationReport:
    """Exact calibration check of ``cwr2d`` by enumeration of the lattice (Z/4)^2 (no LP, vmapped over p).

    Exact because every kink of R_L(.; p) and every link boundary (theta = 1/4) lies on the lattice; the window
    m in [0, K+1], r in [-1, K+1] contains every relevant vertex (derived for jaxlab's ``cwr2d``, which is
    jaxlab's own construction).

    Args:
      K: number of classes ``>= 2``.
      c: rejection cost in (0, 1/2).
      ps: ``(n, K)`` float array of distributions (rows on the simplex).
      a: centre weight of the loss, or ``None`` for ``c / (1 - 2c)``.
      theta: the link's radius threshold; must be 0.25.

    Returns:
      A :class:`CalibrationReport` over the ``n`` distributions.

    Raises:
      TypeError: ``K`` is not an int or ``ps`` not a float array.
      ValueError: ``c`` outside (0, 1/2), ``theta != 0.25``, or ``ps`` not ``(n, K)`` rows on the simplex.

    Example:
      >>> from jaxlab.losses.cwr import cwr2d_lattice_report, threshold_distributions
      >>> rep = cwr2d_lattice_report(5, 0.2, threshold_distributions(0, 5, 0.2, 16))
      >>> rep.link_errors, rep.min_gap > 0
      (0, True)
    """
    sur = surrogate("cwr2d", K, c, a=a, theta=theta)
    if theta != 0.25:
        raise ValueError(f"theta must be 0.25 for the lattice check (the cell boundaries must lie on (Z/4)^2), "
                         f"got {theta!r}")
    check_simplex(as_array(ps, "ps", kind="float", ndim=2, shape=(None, K)), "ps")
    ps = np.asarray(ps, dtype=float)  # the caller's values (Bayes sets, gaps), not their float32 rounding
    a_val = c / (1 - 2 * c) if a is None else float(a)
    risk, u_star, cell_min = (np.asarray(x) for x in _lattice_solve(jnp.asarray(ps), c, a_val, theta, K))
    return _report(sur, ps, u_star, risk, _cell_gaps(ps, c, K, risk, cell_min))
