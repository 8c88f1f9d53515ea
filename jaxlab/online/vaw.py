r"""The Vovk-Azoury-Warmuth (VAW) forecaster for online linear regression, and online ridge (follow the leader).

Papers: V. Vovk, *Competitive on-line statistics* (Int. Stat. Review 69, 2001); K. Azoury and M. Warmuth,
*Relative loss bounds for on-line density estimation with the exponential family of distributions* (Machine
Learning 43, 2001); N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games* (2006), section 11.8.
Used on USP features by A. Marsden and E. Hazan, *The Power of Second Order Methods for Sequence
Preconditioning*, arXiv:2605.08390.

Recursion (``d`` features, ``k`` outputs sharing one Gram matrix, regulariser ``lam > 0``)::

    A_0 = lam I,  b_0 = 0
    A_t = A_{t-1} + a_t a_t^T                 (the CURRENT feature is in the Gram before predicting)
    y^_t = (A_t^{-1} b_{t-1})^T a_t,          loss_t = ||y^_t - y_t||^2
    b_t = b_{t-1} + a_t y_t^T
    leverage h_t = a_t^T A_t^{-1} a_t = 1 - det A_{t-1} / det A_t  in [0, 1)

Online ridge / follow-the-leader predicts with ``A_{t-1}`` instead of ``A_t``. Regret bound (Cesa-Bianchi and
Lugosi, Thm 11.8), for every ``theta``::

    sum_t (y^_t - y_t)^2 <= lam ||theta||^2 + sum_t (theta^T a_t - y_t)^2 + Y^2 sum_t h_t,
    sum_t h_t <= ln det(A_T / lam) <= d ln(1 + T X^2 / (lam d)).

Three implementations of the same recursion (``method``):

- ``"sherman_morrison"``: carry ``P_t = A_t^{-1}`` (:class:`VAWState`), ``v = P_{t-1} a``,
  ``P_t = P_{t-1} - w w^T`` with ``w = v / sqrt(1 + a^T v)`` (= ``v v^T / (1 + a^T v)``; each entry is one product
  ``w_i w_j``, so ``P_t`` stays exactly symmetric); ``P_t a = v / (1 + a^T v)``, so
  ``y^_t = b^T v / (1 + a^T v)`` and ``h_t = a^T v / (1 + a^T v)``. O(d^2) per step; stable in float64 only
  (we measured float32 drifting from a cumulative loss of 350 to 1.6e4).
- ``"solve"``: carry ``A_t`` (:class:`VAWGramState`) and solve by LU, O(d^3) per step (Cholesky gives NaN
  in float32 on ill-conditioned Grams, LU stays within 0.05% of float64 on our check). One sequence calls
  LAPACK (``jnp.linalg.solve``); under ``vmap`` with ``d <= 16`` the same elimination (partial pivoting, then
  back substitution) runs as array operations on all sequences at once (``jaxlab.core.linalg.solve``),
  which on CPU is about twice as fast as one LAPACK call per sequence and step; results agree to float
  rounding.
- ``"block"`` (whole streams: :func:`run`, :func:`ridge_ftl_run`): the solve path's recursion, ``B = 16`` rounds at
  a time. With ``A = A_s``, ``b = b_s`` at the start of a block, ``U = [a_{s+1} .. a_{s+B}]`` and ``Y`` its
  targets, Woodbury's identity gives every prediction of the block from one solve ``W = A^{-1} U`` and a
  Cholesky factor ``R`` of ``C = I + G``, ``G = U^T W``: the Gram of round ``s + j`` is ``A + U_j U_j^T`` and
  the leading ``j x j`` block of ``C`` is factored by the leading block of ``R``. With
  ``(A + U_j U_j^T)^{-1} U_j = W_j C_j^{-1}`` the prediction of round ``s + j`` is ``(C_j^{-1} W_j^T b_{s+j-1})_j
  = s_j / R_jj`` with ``s = R^{-1} W^T b + L Y``, ``L`` the part of ``R^{-1} G = R^T - R^{-1}`` below the
  diagonal (the targets already seen in the block); its leverage is ``1 - 1 / R_jj^2`` (``det C_j / det C_{j-1}
  = R_jj^2``) and online ridge predicts ``s_j R_jj`` (= VAW's prediction / (1 - h)). This form avoids the
  subtraction in ``A^{-1} - W C^{-1} W^T``, which cancelled digits in float32 where a block adds much to ``A``
  (the first rounds: errors 5.6x the solve path's at B = 16, against 0.7x now). Then ``A += U U^T``,
  ``b += U Y``. Per round that is O(d^2 + d B) work in matrix products and one d x d solve per ``B`` rounds
  instead of one per round (64 float32 sequences of 1024 rounds, d = 32: about 6x faster than the per-round
  solve on a 2-core CPU). One round at a time (:func:`init`,
  :func:`step`, the algorithms) it is the solve path.
- ``"auto"`` picks Sherman-Morrison in float64; in lower precision the block path for whole streams and the
  solve path round by round.

Iteration: :func:`vaw_algorithm` / :func:`ridge_ftl_algorithm` return an :class:`~jaxlab.core.Algorithm`
whose ``step(key, state, (a_t, y_t))`` is one round; :func:`run` / :func:`ridge_ftl_run` drive it with
:func:`jaxlab.core.run` over ``xs = (features, targets)`` (``lax.scan``); ``vmap`` them for many sequences.
:func:`init`, :func:`predict` and :func:`step` are the same recursion as plain functions.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

import jaxlab.online.papers  # noqa: F401  (registers the BibTeX entries)
from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.linalg import solve
from jaxlab.core.loop import run as scan_run
from jaxlab.core.types import Array, Float, Int
from jaxlab.core.validation import check_int, check_positive, tie_finite_checks
from jaxlab.online._checks import check_stream
from jaxlab.online.regret import regret_vs_best_fixed

__all__ = [
    "METHODS",
    "VAWGramState",
    "VAWInfo",
    "VAWState",
    "check_stream",
    "init",
    "predict",
    "regret_vs_best_fixed",
    "ridge_ftl_algorithm",
    "ridge_ftl_run",
    "run",
    "step",
    "vaw_algorithm",
]

METHODS = ("auto", "sherman_morrison", "solve", "block")
_BLOCK = 16  # rounds per block of the "block" path
_PAPERS = ("vovk2001competitive", "azoury2001relative", "cesabianchi2006prediction")


class VAWState(NamedTuple):
    """VAW state of the Sherman-Morrison path (``method="sherman_morrison"``).

    Attributes:
      P: ``(d, d)`` float array, the inverse Gram ``A_t^{-1}``.
      b: ``(d, k)`` float array, ``b_t = sum_{s<=t} a_s y_s^T``.
      t: 0-d int32 array, the number of rounds played.
    """

    P: Float[Array, "d d"]
    b: Float[Array, "d k"]
    t: Int[Array, ""]


class VAWGramState(NamedTuple):
    """VAW state of the solve path (``method="solve"``).

    Attributes:
      A: ``(d, d)`` float array, the Gram matrix ``A_t = lam I + sum_{s<=t} a_s a_s^T``.
      b: ``(d, k)`` float array, ``b_t = sum_{s<=t} a_s y_s^T``.
      t: 0-d int32 array, the number of rounds played.
    """

    A: Float[Array, "d d"]
    b: Float[Array, "d k"]
    t: Int[Array, ""]


class VAWInfo(NamedTuple):
    """Record of one VAW (or online ridge) round.

    Attributes:
      y_hat: ``(k,)`` float array, the prediction made before ``y_t`` is used.
      loss: 0-d float array, ``||y^_t - y_t||^2``.
      leverage: 0-d float array, ``h_t = a_t^T A_t^{-1} a_t`` in ``[0, 1)``.
    """

    y_hat: Float[Array, " k"]
    loss: Float[Array, ""]
    leverage: Float[Array, ""]


def _resolve(method: str, dtype, stream: bool = False) -> str:
    """The path that ``method`` takes for ``dtype``: one round at a time, or over a whole stream (``stream``)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "auto":
        if jnp.dtype(dtype).itemsize >= 8:
            return "sherman_morrison"
        method = "block"
    return "solve" if method == "block" and not stream else method


@cites(*_PAPERS)
def init(dim: int, lam: float, *, num_outputs: int = 1, dtype=None,
         method: str = "auto") -> VAWState | VAWGramState:
    """Initial VAW state: ``A_0 = lam I`` (or ``P_0 = I / lam``), ``b_0 = 0``, ``t = 0``.

    Args:
      dim: feature dimension ``d >= 1``.
      lam: regulariser ``lam > 0``.
      num_outputs: number of outputs ``k >= 1``.
      dtype: float dtype; ``None`` is the default float dtype.
      method: ``"auto"`` (Sherman-Morrison in float64, solve otherwise), ``"sherman_morrison"``, ``"solve"`` or
        ``"block"`` (round by round the solve path).

    Returns:
      :class:`VAWState` (Sherman-Morrison) or :class:`VAWGramState` (solve), with ``b`` of shape ``(dim, k)``.

    Raises:
      TypeError: ``dim`` or ``num_outputs`` is not an int.
      ValueError: ``dim`` or ``num_outputs`` below 1, ``lam <= 0``, or unknown ``method``.
    """
    dim = check_int(dim, "dim", min_value=1)
    num_outputs = check_int(num_outputs, "num_outputs", min_value=1)
    lam = check_positive(lam, "lam")
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    b = jnp.zeros((dim, num_outputs), dtype)
    t = jnp.zeros((), jnp.int32)
    eye = jnp.eye(dim, dtype=dtype)
    if _resolve(method, dtype) == "sherman_morrison":
        return VAWState(eye / jnp.asarray(lam, dtype), b, t)
    return VAWGramState(jnp.asarray(lam, dtype) * eye, b, t)


def _forecast(state, a, current: bool):
    """Prediction, updated matrix and leverage; ``current`` puts ``a`` in the Gram first (VAW) or not (FTL)."""
    if isinstance(state, VAWState):
        v = state.P @ a
        s = a @ v
        # P - v v^T / (1 + s) as P - w w^T with w = v / sqrt(1 + s): every entry takes one product w_i w_j = w_j w_i
        # (fused into a multiply-add or not), so a symmetric P stays exactly symmetric with no symmetrising pass,
        # and d divisions replace d^2
        w = v / jnp.sqrt(1 + s)
        P = state.P - jnp.outer(w, w)
        y_hat = state.b.T @ (v / (1 + s) if current else v)
        return y_hat, P, s / (1 + s)
    A = state.A + jnp.outer(a, a)
    # LU rather than Cholesky: in float32 the accumulated Gram can lose definiteness to rounding (NaN).
    x = solve(A if current else state.A, jnp.concatenate([state.b, a[:, None]], axis=1))
    y_hat = x[:, :-1].T @ a
    return y_hat, A, (a @ x[:, -1] if current else a @ solve(A, a[:, None])[:, 0])


@cites(*_PAPERS)
def predict(state: VAWState | VAWGramState, a: Float[Array, " d"]) -> tuple[Float[Array, " k"], Float[Array, "d d"]]:
    """VAW prediction ``y^_t = ((A_{t-1} + a a^T)^{-1} b_{t-1})^T a`` and the updated ``P_t`` (or ``A_t``); pure.

    Args:
      state: :class:`VAWState` or :class:`VAWGramState` after ``t - 1`` rounds.
      a: ``(d,)`` float array, the features ``a_t``.

    Returns:
      ``(y_hat, M)``: the ``(k,)`` prediction and the ``(d, d)`` matrix ``P_t = A_t^{-1}`` (for a
      :class:`VAWState`) or ``A_t`` (for a :class:`VAWGramState`).
    """
    y_hat, M, _ = _forecast(state, a, True)
    return y_hat, M


def _advance(state, a, y, current: bool):
    y = jnp.atleast_1d(y)
    y_hat, M, lev = _forecast(state, a, current)
    b = state.b + jnp.outer(a, y)
    info = VAWInfo(y_hat, jnp.sum((y_hat - y) ** 2), lev)
    return type(state)(M, b, state.t + 1), info


@cites(*_PAPERS)
def step(state: VAWState | VAWGramState, a: Float[Array, " d"],
         y: Float[Array, " k"]) -> tuple[VAWState | VAWGramState, VAWInfo]:
    """One VAW round: predict at ``a`` (before ``y`` is used), suffer the loss, then add ``a y^T`` to ``b``.

    Args:
      state: :class:`VAWState` or :class:`VAWGramState` after ``t - 1`` rounds.
      a: ``(d,)`` float array, the features ``a_t``.
      y: ``(k,)`` float array (or a scalar when ``k = 1``), the target ``y_t``.

    Returns:
      ``(state, info)``: the state after round ``t`` (same type) and its :class:`VAWInfo`.
    """
    return _advance(state, a, y, True)


def _learner_algorithm(lam: float, method: str, current: bool) -> Algorithm:
    _resolve(method, jnp.float32)  # reject an unknown method when the factory is built

    def init_fn(dim: int, *, num_outputs: int = 1, dtype=None) -> VAWState | VAWGramState:
        dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
        state = init(dim, 1.0, num_outputs=num_outputs, dtype=dtype, method=method)
        # lam may be traced (jit, grad over lam): scale the initial matrix after init.
        lam_ = jnp.asarray(check_positive(lam, "lam"), dtype)
        return state._replace(**({"P": state.P / lam_} if isinstance(state, VAWState) else {"A": state.A * lam_}))

    def step_fn(key, state, x):
        del key  # deterministic
        a, y = x
        return _advance(state, a, y, current)

    return Algorithm(init_fn, step_fn)


@cites(*_PAPERS)
def vaw_algorithm(lam: float = 1.0, *, method: str = "auto") -> Algorithm:
    """The Vovk-Azoury-Warmuth forecaster as an :class:`~jaxlab.core.Algorithm` (data-driven).

    ``init(dim, *, num_outputs=1, dtype=None)`` builds ``A_0 = lam I`` (or ``P_0 = I / lam``), ``b_0 = 0``;
    ``step(key, state, x)`` with ``x = (a_t, y_t)`` predicts ``y^_t = (A_t^{-1} b_{t-1})^T a_t`` with the current
    feature in the Gram, then adds ``a_t y_t^T`` to ``b`` (``key`` is ignored). Drive it with
    ``jaxlab.core.run(algo.step, algo.init(d), None, xs=(features, targets))``.

    Args:
      lam: regulariser ``lam > 0`` (may be traced).
      method: ``"auto"``, ``"sherman_morrison"``, ``"solve"`` or ``"block"`` (round by round: ``"solve"``; see
        the module docstring).

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(VAWState | VAWGramState, VAWInfo)``.

    Raises:
      ValueError: unknown ``method``; ``lam <= 0`` (at ``init``; under ``jit`` when it runs).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.online import vaw_algorithm
      >>> a = jax.random.normal(jax.random.key(0), (50, 3))
      >>> y = a @ jnp.array([1.0, -0.5, 0.25]) + 0.1 * jax.random.normal(jax.random.key(1), (50,))
      >>> algo = vaw_algorithm(1.0)
      >>> state, trace = run(algo.step, algo.init(3), None, xs=(a, y))
      >>> trace.infos.loss.shape, trace.infos.leverage.shape
      ((50,), (50,))
    """
    return _learner_algorithm(lam, method, True)


@cites("cesabianchi2006prediction")
def ridge_ftl_algorithm(lam: float = 1.0, *, method: str = "auto") -> Algorithm:
    """Online ridge regression (follow the regularised leader) as an :class:`~jaxlab.core.Algorithm`.

    As :func:`vaw_algorithm` but predicting with ``A_{t-1}``: ``y^_t = (A_{t-1}^{-1} b_{t-1})^T a_t``.

    Args:
      lam: regulariser ``lam > 0``.
      method: ``"auto"``, ``"sherman_morrison"``, ``"solve"`` or ``"block"`` (round by round: ``"solve"``).

    Returns:
      ``Algorithm(init, step)`` with ``step(key, state, (a_t, y_t)) -> (state, VAWInfo)``; the leverage recorded
      is still ``a_t^T A_t^{-1} a_t``.

    Raises:
      ValueError: unknown ``method``; ``lam <= 0`` (at ``init``).
    """
    return _learner_algorithm(lam, method, False)


def _run(features, targets, lam, method: str, current: bool):
    features, targets = check_stream(features, targets, defer=True)
    lam = check_positive(lam, "lam")
    y2 = targets[:, None] if targets.ndim == 1 else targets
    method = _resolve(method, features.dtype, stream=True)
    scan = _block_scan if method == "block" else functools.partial(_scan, method=method)
    final, info = scan(features, y2, jnp.asarray(lam, features.dtype), current=current)
    if targets.ndim == 1:
        info = info._replace(y_hat=info.y_hat[:, 0])
    return tie_finite_checks((final, info), features=features, targets=targets)


@functools.partial(jax.jit, static_argnames=("method", "current"))
def _scan(features, y2, lam, method, current):
    algo = _learner_algorithm(lam, method, current)
    state0 = algo.init(features.shape[1], num_outputs=y2.shape[1], dtype=features.dtype)
    # four rounds per pass of the loop: a Sherman-Morrison round (d^2 work) is short enough for the loop's own
    # per-iteration cost to matter (float64, T = 100,000: d = 8 / 32 / 128 1.7x / 1.25x / 1.0x faster than one)
    unroll = 4 if method == "sherman_morrison" else 1
    final, trace = scan_run(algo.step, state0, None, xs=(features, y2), unroll=unroll)
    return final, trace.infos


def _block(A, b, U, Y, current: bool):
    """One block of the ``"block"`` path (module docstring): rounds with features ``U`` (rows, ``(B, d)``) and
    targets ``Y`` ``(B, k)`` from the Gram ``A`` and ``b``; returns the new ``A``, ``b``, predictions, leverages."""
    m = U.shape[0]
    W = solve(A, U.T)  # A^{-1} U, (d, B)
    G = U @ W
    R = jnp.linalg.cholesky(jnp.eye(m, dtype=A.dtype) + (G + G.T) / 2)  # C = I + G, eigenvalues >= 1
    Rinv = jax.scipy.linalg.solve_triangular(R, jnp.eye(m, dtype=A.dtype), lower=True)
    r = jnp.arange(m)
    # s_j = (R^{-1} W^T b_{s+j-1})_j = (R^{-1} W^T b)_j + sum_{i<j} (R^{-1} G)_{ji} y_i, and (R^{-1} G)_{ji} =
    # (R^T - R^{-1})_{ji} = -(R^{-1})_{ji} below the diagonal
    s = Rinv @ (W.T @ b) - jnp.where(r[:, None] > r[None, :], Rinv, 0) @ Y
    rjj = jnp.diag(R)
    y_hat = s / rjj[:, None] if current else s * rjj[:, None]
    return A + U.T @ U, b + U.T @ Y, y_hat, 1 - 1 / (rjj * rjj)


@functools.partial(jax.jit, static_argnames=("current",))
def _block_scan(features, y2, lam, current):
    T, d = features.shape
    k = y2.shape[1]
    A = lam * jnp.eye(d, dtype=features.dtype)
    b = jnp.zeros((d, k), features.dtype)
    nb, rest = divmod(T, _BLOCK)

    def body(carry, block):
        A, b, y_hat, lev = _block(*carry, *block, current)
        return (A, b), (y_hat, lev)

    n = nb * _BLOCK
    (A, b), (y_hat, lev) = jax.lax.scan(body, (A, b), (features[:n].reshape(nb, _BLOCK, d),
                                                        y2[:n].reshape(nb, _BLOCK, k)))
    y_hat, lev = y_hat.reshape(n, k), lev.reshape(n)
    if rest:
        A, b, y_rest, lev_rest = _block(A, b, features[n:], y2[n:], current)
        y_hat, lev = jnp.concatenate([y_hat, y_rest]), jnp.concatenate([lev, lev_rest])
    info = VAWInfo(y_hat, jnp.sum((y_hat - y2) ** 2, axis=1), lev)
    return VAWGramState(A, b, jnp.asarray(T, jnp.int32)), info


@cites(*_PAPERS)
def run(features: Float[Array, "T d"], targets: Float[Array, "T k"] | Float[Array, " T"], lam: float = 1.0, *,
        method: str = "auto") -> tuple[VAWState | VAWGramState, VAWInfo]:
    """Run VAW over a stream: :func:`vaw_algorithm` driven by :func:`jaxlab.core.run` (``lax.scan``), jitted.

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      lam: regulariser ``lam > 0``.
      method: ``"auto"`` (float64: ``"sherman_morrison"``, else ``"block"``), ``"sherman_morrison"``, ``"solve"``
        or ``"block"`` (see the module docstring).

    Returns:
      ``(state, info)``: the final :class:`VAWState` or :class:`VAWGramState` and the per-step :class:`VAWInfo`
      with leading axis ``T``; ``info.y_hat`` has the shape of ``targets``.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched lengths, ``T = 0``, non-finite entries, ``lam <= 0`` or unknown ``method``.
    """
    return _run(features, targets, lam, method, True)


@cites("cesabianchi2006prediction")
def ridge_ftl_run(features: Float[Array, "T d"], targets: Float[Array, "T k"] | Float[Array, " T"],
                  lam: float = 1.0, *, method: str = "auto") -> tuple[VAWState | VAWGramState, VAWInfo]:
    """Online ridge regression (follow the regularised leader): ``y^_t = (A_{t-1}^{-1} b_{t-1})^T a_t``.

    :func:`ridge_ftl_algorithm` driven by :func:`jaxlab.core.run`; same outputs as :func:`run`, and the leverage
    is still ``a_t^T A_t^{-1} a_t``.

    Args:
      features: ``(T, d)`` float array of features ``a_t``, ``T >= 1``, finite.
      targets: ``(T,)`` or ``(T, k)`` float array of targets ``y_t``, finite.
      lam: regulariser ``lam > 0``.
      method: ``"auto"`` (float64: ``"sherman_morrison"``, else ``"block"``), ``"sherman_morrison"``, ``"solve"``
        or ``"block"`` (see the module docstring).

    Returns:
      ``(state, info)`` as for :func:`run`.

    Raises:
      TypeError: non-float inputs.
      ValueError: mismatched lengths, ``T = 0``, non-finite entries, ``lam <= 0`` or unknown ``method``.
    """
    return _run(features, targets, lam, method, False)


def _example(algorithm):
    def example(key):
        features = jax.random.normal(key, (8, 3))
        targets = features @ jnp.array([1.0, -0.5, 0.25]) + 0.1 * jnp.arange(8.0)
        algo = algorithm(1.0)
        return algo, algo.init(3, dtype=features.dtype), (features, targets)

    return example


register_algorithm("vaw", vaw_algorithm, _example(vaw_algorithm), area="online")
register_algorithm("ridge_ftl", ridge_ftl_algorithm, _example(ridge_ftl_algorithm), area="online")
