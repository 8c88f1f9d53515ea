r"""Optimizer-agnostic gradient denoisers as optax transformations (EMA, IGT, DiSK, two-point).

Sources. The main paper (2026; abstract "Noisy gradient estimates are ubiquitous in machine learning...")
could not be located: its title, authors and arXiv id are unknown. The equations below follow its closest
published predecessor, *DiSK: Differentially Private Optimizer with Simplified Kalman Filter for Noise
Reduction* (X. Zhang, Z. Bu, B. Balle, M. Hong, M. Razaviyayn, V. Mirrokni, ICLR 2025, arXiv:2410.03883),
*Reducing the variance in online optimization by transporting past gradients* (IGT; S. Arnold, P.-A.
Manzagol, R. Babanezhad, I. Mitliagkas, N. Le Roux, NeurIPS 2019, arXiv:1906.03532) and *Momentum Improves
Normalized SGD* (A. Cutkosky, H. Mehta, ICML 2020, arXiv:2002.03305). The two-point estimator ``two_point``
(E3) is a **[reconstruction]** of the paper's "recursive algorithm with two gradient queries per iteration".

Math. An optimizer sees noisy gradients :math:`g(y) = \nabla f(y) + w`. With :math:`d_t = x_t - x_{t-1}`
(:math:`d_1 = 0`), a weight :math:`\alpha_t \in (0, 1]` on the new observation and
:math:`r_t = (1 - \alpha_t)/\alpha_t`, every denoiser runs

.. math::  m_1 = q_1, \qquad m_t = (1 - \alpha_t)\, m_{t-1} + \alpha_t\, q_t, \qquad \hat g_t = m_t,

and they differ in where the gradient is queried and how the queries are combined into :math:`q_t`:

- E0 ``ema``:       :math:`q_t = g(x_t)` (biased whenever :math:`x` moves);
- E1 ``igt``:       :math:`q_t = g(x_t + r_t d_t)` (exact on quadratics: :math:`\nabla f(z_t) = \nabla f(x_t)
  + r_t H d_t`);
- E2 ``disk``:      :math:`q_t = c\, g(x_t + \gamma d_t) + (1 - c)\, g(x_t)`, :math:`c = (1-\kappa)/(\kappa\gamma)`,
  :math:`\alpha_t = \kappa` (DiSK defaults :math:`\kappa = 0.7, \gamma = 0.5`);
- E3 ``two_point``: :math:`q_t = a\, g(x_t + \gamma_1 d_t) + (1 - a)\, g(x_t + \gamma_2 d_t)` with
  :math:`\gamma_2 = s r_t`, :math:`\gamma_1 = (1 + s r_t)/(s - 1)`, :math:`a = -r_t (s-1)^2/(1 + s r_t (2 - s))`,
  :math:`s \in (1, 2)`, which solves :math:`a\gamma_1 + (1-a)\gamma_2 = r_t` and
  :math:`a\gamma_1^2 + (1-a)\gamma_2^2 = -r_t` and so matches
  :math:`\nabla f(x_t) - \nabla f(x_{t-1}) = H d_t - \tfrac12 \nabla^3 f[d_t, d_t] + O(\|d_t\|^3)`:
  exact on every cubic **[reconstruction]**.

With the identity :math:`\alpha_t q_t = \alpha_t \nabla f(x_t) + (1-\alpha_t)(\nabla f(x_t) - \nabla f(x_{t-1}))
+ \alpha_t \tilde w_t` the error :math:`e_t = m_t - \nabla f(x_t)` obeys :math:`e_t = (1-\alpha_t) e_{t-1}
+ \alpha_t \tilde w_t`: with :math:`\alpha_t = 1/t` (``harmonic()``) :math:`E\|e_t\|^2 = \sigma_{\rm eff}^2 d/t`;
with constant :math:`\kappa`, :math:`E\|e\|^2 \to \kappa/(2-\kappa)\, \sigma_{\rm eff}^2 d`.

Protocol (per step, state :math:`S_{t-1} = (m_{t-1}, x_{t-1}, t-1)`): ``points = query_points(S, x_t)``;
the caller evaluates gradients there (per example if DP) and forms ``q = combine(S, grads)`` (a weighted sum,
``vmap``-able over a leading example axis, so DP clipping happens after combining, as DiSK does: the privacy
cost of a step is unchanged, one Gaussian release, but a step costs ``len(points)`` gradient passes);
``m_t, S_t = update(q, S, x_t)``. Put the denoiser first in a chain, ``optax.chain(disk(), optax.adam(lr))``;
:func:`find_state` locates its state inside the chain's state.

API change (documented): :class:`Denoiser` subclasses :class:`optax.GradientTransformationExtraArgs` (a
two-field NamedTuple) and carries ``query_points``, ``combine`` and ``num_queries`` as attributes instead of
being a four-field NamedTuple, so that ``isinstance(d, optax.GradientTransformation)`` holds and ``init,
update = d`` unpacks like any optax transformation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.loop import run as scan_run
from jaxlab.core.types import Array, Float, Int, Key, PyTree
from jaxlab.core.validation import check_in_range, check_int, check_positive, error_if
from jaxlab.optim.denoise.papers import DENOISE, DISK, IGT, NSGD

__all__ = [
    "DenoiseInfo",
    "DenoiseState",
    "Denoiser",
    "disk",
    "ema",
    "find_state",
    "gaussian_noise",
    "harmonic",
    "igt",
    "run",
    "track",
    "two_point",
]

Params = PyTree
Alpha = float | Callable[[Any], Any]
# A plan maps the 0-based count (= t - 1) and alpha_t to the query offsets gamma_i (query at x_t + gamma_i d_t)
# and the combination weights of the queries.
Plan = Callable[[Any, Any], tuple[tuple[Any, ...], tuple[Any, ...]]]


class DenoiseState(NamedTuple):
    """State :math:`S_t` of a denoiser.

    Denoisers that never query away from :math:`x_t` (:func:`ema`) do not need :math:`x_t` and keep
    ``prev_params = ()``: one parameter copy less per step.

    Attributes:
      m: the estimate :math:`m_t`, a pytree like the parameters (zeros before the first update).
      prev_params: the parameters :math:`x_t` of the last update (a pytree like the parameters), or ``()``.
      count: 0-d int32 array, :math:`t`, the number of observations absorbed so far.
    """

    m: Params
    prev_params: Params
    count: Int[Array, ""]


class Denoiser(optax.GradientTransformationExtraArgs):
    """An optax transformation (``init``, ``update``) plus the query-point protocol.

    Attributes:
      init: ``init(params) -> DenoiseState`` (:math:`m = 0`, ``count = 0``).
      update: ``update(q, state, params) -> (m_t, state)``, the optax update; ``params`` (:math:`x_t`) is required
        and ``q`` is the combined observation :math:`q_t` (a plain gradient for :func:`ema`).
      query_points: ``(state, params) -> tuple of params pytrees`` where gradients must be evaluated.
      combine: ``(state, grads: tuple) -> params pytree``, the weighted sum forming :math:`q_t`; pure and
        ``vmap``-able over a leading example axis of ``grads`` (``in_axes=(None, 0)``).
      num_queries: ``len(query_points(...))``.
    """

    def __new__(cls, init, update, query_points, combine, num_queries: int):
        self = super().__new__(cls, init, update)
        self.query_points = query_points
        self.combine = combine
        self.num_queries = num_queries
        return self


class DenoiseInfo(NamedTuple):
    """Per-step diagnostics of :func:`run` / :func:`track` (true gradient known).

    Attributes:
      error2: 0-d float array, :math:`\\|m_t - \\nabla f(x_t)\\|^2`.
      grad_norm2: 0-d float array, :math:`\\|\\nabla f(x_t)\\|^2`.
      loss: 0-d float array, :math:`f(x_t)` (NaN in :func:`track`, which has no loss).
    """

    error2: Float[Array, ""]  # ||m_t - grad f(x_t)||^2
    grad_norm2: Float[Array, ""]  # ||grad f(x_t)||^2
    loss: Float[Array, ""]  # f(x_t) (nan in track, which has no loss)


def _check_float_tree(tree: Any, name: str) -> None:
    for leaf in jax.tree_util.tree_leaves(tree):
        if not jnp.issubdtype(jnp.result_type(leaf), jnp.floating):
            raise TypeError(f"{name} must have floating dtypes, got a leaf of dtype {jnp.result_type(leaf)}")


def _check_same_structure(tree: Any, ref: Any, name: str, ref_name: str) -> None:
    s, r = jax.tree_util.tree_structure(tree), jax.tree_util.tree_structure(ref)
    if s != r:
        raise ValueError(f"{name} must have the pytree structure of {ref_name} ({r}), got {s}")


def _check_like(tree: Any, ref: Any, name: str, ref_name: str) -> None:
    """Same pytree structure and the same shape leaf by leaf (trace-time)."""
    _check_same_structure(tree, ref, name, ref_name)
    for (path, leaf), r in zip(jax.tree_util.tree_leaves_with_path(tree), jax.tree_util.tree_leaves(ref),
                               strict=True):
        if jnp.shape(leaf) != jnp.shape(r):
            raise ValueError(f"{name} must have the leaf shapes of {ref_name}: leaf {jax.tree_util.keystr(path)} "
                             f"has shape {jnp.shape(leaf)}, expected {jnp.shape(r)}")


def _check_real(value: Any, name: str) -> None:
    """A real number (Python int/float or a real array), not a string or another object (trace-time)."""
    if isinstance(value, bool) or not (isinstance(value, (int, float)) or (
            hasattr(value, "dtype") and jnp.issubdtype(jnp.result_type(value), jnp.number)
            and not jnp.issubdtype(jnp.result_type(value), jnp.complexfloating))):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")


def _alpha_fn(alpha: Alpha, name: str) -> Callable[[Any], Any]:
    """alpha_t as a function of the 0-based count; schedules are checked in (0, 1] at run time."""
    if callable(alpha):

        def checked(count):
            a = jnp.asarray(alpha(count))
            return error_if(a, (a <= 0) | (a > 1), f"{name} schedule must return values in (0, 1]")

        return checked
    _check_real(alpha, name)
    alpha = check_in_range(alpha, name, 0.0, 1.0, lo_open=True)
    return lambda count: jnp.asarray(alpha)


@cites(DENOISE)
def harmonic() -> Callable[[Any], Any]:
    """The schedule :math:`\\alpha_t = 1/t` (``count`` is 0-based: ``1 / (count + 1)``), optimal on quadratics
    and cubics: it makes :math:`m_t` the running mean of the transported observations.

    Returns:
      A function ``count -> 1 / (count + 1)`` (float array of the shape of ``count``), for the ``alpha`` of
      :func:`ema`, :func:`igt` or :func:`two_point`.
    """
    return lambda count: 1.0 / (jnp.asarray(count) + 1.0)


def _build(alpha_fn: Callable[[Any], Any], plan: Plan, num_queries: int, init: str, *,
           track_params: bool = True) -> Denoiser:
    if init not in ("first", "zero"):
        raise ValueError(f"init must be 'first' or 'zero', got {init!r}")

    def effective_alpha(count):
        a = alpha_fn(count)
        # m_1 = q_1: the first observation is taken as is (alpha_1 = 1, r_1 = 0) unless parity with a
        # zero-started filter is requested.
        return jnp.where(count == 0, 1.0, a) if init == "first" else a

    def init_fn(params):
        _check_float_tree(params, "params")
        prev = params if track_params else ()
        return DenoiseState(optax.tree_utils.tree_zeros_like(params), prev, jnp.zeros((), jnp.int32))

    def step_of(state, params):
        d = jax.tree_util.tree_map(lambda x, p: jnp.where(state.count == 0, 0, x - p), params, state.prev_params)
        gammas, weights = plan(state.count, effective_alpha(state.count))
        return d, gammas, weights

    def query_points(state: DenoiseState, params: Params) -> tuple[Params, ...]:
        if params is None:
            raise ValueError("params must be the current parameters x_t, got None")
        _check_float_tree(params, "params")
        _check_same_structure(params, state.m, "params", "the denoiser state")
        if not track_params:
            return (params,) * num_queries
        d, gammas, _ = step_of(state, params)
        return tuple(
            params if isinstance(g, float) and g == 0.0
            else jax.tree_util.tree_map(lambda x, dx, g=g: x + jnp.asarray(g, x.dtype) * dx, params, d)
            for g in gammas
        )

    def combine(state: DenoiseState, grads: tuple[Params, ...]) -> Params:
        if not isinstance(grads, (tuple, list)) or len(grads) != num_queries:
            got = len(grads) if isinstance(grads, (tuple, list)) else type(grads).__name__
            raise ValueError(f"grads must be a tuple of {num_queries} gradient pytree(s), one per query point, "
                             f"got {got}")
        for i, g in enumerate(grads):
            _check_same_structure(g, state.m, f"grads[{i}]", "params")
            _check_float_tree(g, f"grads[{i}]")
        if num_queries == 1:
            return grads[0]
        _, weights = plan(state.count, effective_alpha(state.count))
        return jax.tree_util.tree_map(
            lambda *gs: sum(jnp.asarray(w, g.dtype) * g for w, g in zip(weights, gs, strict=True)), *grads
        )

    def update_fn(updates, state, params=None, **extra_args):
        del extra_args
        if params is None:
            raise ValueError("params must be the current parameters x_t (a denoiser needs them to track d_t), "
                             "got None; pass params to update (optax.chain forwards them)")
        _check_float_tree(updates, "updates")
        _check_float_tree(params, "params")
        _check_like(updates, params, "updates", "params")
        _check_like(updates, state.m, "updates", "the denoiser state (the params it was initialised with)")
        a = effective_alpha(state.count)
        m = optax.tree_utils.tree_update_moment(updates, state.m, 1.0 - a, 1)
        m = optax.tree_utils.tree_cast_like(m, state.m)
        return m, DenoiseState(m, params if track_params else (), state.count + 1)

    return Denoiser(init_fn, update_fn, query_points, combine, num_queries)


@cites(DENOISE, DISK)
def ema(alpha: Alpha, *, init: str = "first") -> Denoiser:
    """E0: exponential moving average :math:`m_t = (1-\\alpha_t) m_{t-1} + \\alpha_t g(x_t)`, one query at :math:`x_t`.

    ``alpha`` is the weight of the new observation: ``optax.ema(decay, debias=False)`` has ``decay = 1 - alpha``
    and agrees exactly with ``ema(alpha, init="zero")``. Biased whenever :math:`x` moves.

    Args:
      alpha: float in (0, 1] or an optax schedule of the 0-based count with values in (0, 1].
      init: ``"first"`` (:math:`m_1 = q_1`, default) or ``"zero"`` (:math:`m_0 = 0`, parity with references).

    Returns:
      The :class:`Denoiser` (one query point).

    Raises:
      TypeError: a non-callable ``alpha`` that is not a real number.
      ValueError: a constant ``alpha`` outside (0, 1] or an unknown ``init``; a schedule value outside (0, 1]
        raises when the update runs (also under ``jit``).
    """
    return _build(_alpha_fn(alpha, "alpha"), lambda count, a: ((0.0,), (1.0,)), 1, init, track_params=False)


@cites(DENOISE, IGT, NSGD)
def igt(alpha: Alpha, *, init: str = "first") -> Denoiser:
    """E1: implicit gradient transport, one query at :math:`z_t = x_t + r_t d_t`, :math:`r_t = (1-\\alpha_t)/
    \\alpha_t`; exact on quadratics, bias :math:`O(L_2 r_t^2 \\|d_t\\|^2)` otherwise.

    Implicit gradient transport of S. Arnold, P.-A. Manzagol, R. Babanezhad, I. Mitliagkas and N. Le Roux,
    *Reducing the variance in online optimization by transporting past gradients* (arXiv:1906.03532); the
    extrapolated query also appears in A. Cutkosky and H. Mehta, *Momentum Improves Normalized SGD*
    (arXiv:2002.03305).

    Args:
      alpha: float in (0, 1] or an optax schedule (e.g. :func:`harmonic`).
      init: ``"first"`` or ``"zero"`` (see :func:`ema`).

    Returns:
      The :class:`Denoiser` (one query point).

    Raises:
      TypeError: a non-callable ``alpha`` that is not a real number.
      ValueError: a constant ``alpha`` outside (0, 1] or an unknown ``init``; a schedule value outside (0, 1]
        raises when the update runs (also under ``jit``).
    """
    return _build(_alpha_fn(alpha, "alpha"), lambda count, a: (((1.0 - a) / a,), (1.0,)), 1, init)


@cites(DENOISE, DISK)
def disk(kappa: float = 0.7, gamma: float = 0.5, *, init: str = "first") -> Denoiser:
    """E2: DiSK, two queries :math:`(x_t + \\gamma d_t, x_t)` combined as :math:`c\\, g_1 + (1-c)\\, g_2`,
    :math:`c = (1-\\kappa)/(\\kappa\\gamma)`, constant weight :math:`\\alpha_t = \\kappa`.

    The simplified Kalman filter of X. Zhang, Z. Bu, B. Balle, M. Hong, M. Razaviyayn and V. Mirrokni, *DiSK:
    Differentially Private Optimizer with Simplified Kalman Filter for Noise Reduction* (arXiv:2410.03883).
    Put it first in a chain: ``optax.chain(disk(), inner)``.

    Args:
      kappa: float in (0, 1] (DiSK default 0.7).
      gamma: float > 0 (DiSK default 0.5; the DiSK paper uses positive gamma, negative values are rejected).
      init: ``"first"`` or ``"zero"`` (see :func:`ema`).

    Returns:
      The :class:`Denoiser`.

    Raises:
      TypeError: ``kappa`` or ``gamma`` is not a real number (e.g. the string ``"0.7"``), at construction.
      ValueError: ``kappa`` outside (0, 1] (a traced ``kappa``: when the update runs), ``gamma <= 0`` or an
        unknown ``init``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.optim import disk
      >>> params = jnp.ones(3)
      >>> tx = optax.chain(disk(kappa=0.7, gamma=0.5), optax.sgd(0.1))
      >>> state = tx.init(params)
      >>> grad = jax.grad(lambda x: jnp.sum(x ** 2))(params)
      >>> updates, state = tx.update(grad, state, params)
      >>> params = optax.apply_updates(params, updates)
      >>> params.shape
      (3,)
    """
    _check_real(kappa, "kappa")
    _check_real(gamma, "gamma")
    check_in_range(kappa, "kappa", 0.0, 1.0, lo_open=True)
    check_positive(gamma, "gamma")
    gamma = float(gamma)  # kappa may be traced (tuning under vmap); it enters through alpha_t = kappa

    def plan(count, a):
        # c_t = r_t / gamma equals DiSK's c = (1 - kappa)/(kappa gamma) for t >= 2; at t = 1, alpha_1 = 1 gives
        # c_1 = 0, so q_1 = g(x_1) (d_1 = 0 anyway).
        c = (1.0 - a) / (a * gamma)
        return (gamma, 0.0), (c, 1.0 - c)

    return _build(_alpha_fn(kappa, "kappa"), plan, 2, init)


def _two_point_coefficients(a_t, s: float):
    r = (1.0 - a_t) / a_t
    gamma1 = (1.0 + s * r) / (s - 1.0)
    gamma2 = s * r
    a = -r * (s - 1.0) ** 2 / (1.0 + s * r * (2.0 - s))
    return (gamma1, gamma2), (a, 1.0 - a)


@cites(DENOISE)
def two_point(alpha: Alpha, s: float = 1.5, *, init: str = "first") -> Denoiser:
    """E3 **[reconstruction]**: two queries at :math:`x_t + \\gamma_1 d_t` and :math:`x_t + \\gamma_2 d_t`,
    :math:`\\gamma_2 = s r_t`, :math:`\\gamma_1 = (1 + s r_t)/(s-1)`, weights :math:`a = -r_t(s-1)^2/(1 + s r_t
    (2-s))` and :math:`1-a`: exact on every cubic for any alpha schedule; oracle-mode noise factor
    :math:`a^2 + (1-a)^2 \\to 17/9` at :math:`s = 1.5` as :math:`r_t \\to \\infty`.

    The scheme is reconstructed from the abstract of the (unlocated) 2026 gradient-denoising paper, which
    mentions "a recursive algorithm with two gradient queries per iteration": the coefficients above are
    derived here by matching the second-order expansion of :math:`\\nabla f(x_t) - \\nabla f(x_{t-1})` (module
    docstring), not taken from the paper.

    Args:
      alpha: float in (0, 1] or an optax schedule (coefficients are computed with ``jnp``, so traced
        schedules work).
      s: float in the open interval (1, 2) (default 1.5).
      init: ``"first"`` or ``"zero"`` (see :func:`ema`).

    Returns:
      The :class:`Denoiser` (two query points).

    Raises:
      TypeError: ``s`` or a non-callable ``alpha`` is not a real number.
      ValueError: ``s`` outside (1, 2), a constant ``alpha`` outside (0, 1] or an unknown ``init``; a schedule
        value outside (0, 1] raises when the update runs.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.optim import harmonic, track, two_point
      >>> grad_fn = jax.grad(lambda x: jnp.sum(x ** 3) / 3)
      >>> xs = jnp.cumsum(jnp.full((20, 2), 0.05), axis=0)  # a fixed trajectory x_1..x_20
      >>> noise = 0.1 * jax.random.normal(jax.random.key(0), (20, 2, 2))  # one draw per query
      >>> info = track(grad_fn, xs, two_point(harmonic()), noise)
      >>> info.error2.shape
      (20,)
    """
    _check_real(s, "s")
    check_in_range(s, "s", 1.0, 2.0, lo_open=True, hi_open=True)
    s = float(s)
    return _build(_alpha_fn(alpha, "alpha"), lambda count, a: _two_point_coefficients(a, s), 2, init)


@cites(DENOISE)
def find_state(opt_state: Any) -> DenoiseState:
    """The (single) :class:`DenoiseState` inside an optax state, e.g. of ``optax.chain(denoiser, inner)``.

    Found with :func:`optax.tree_utils.tree_get_all_with_path` by the NamedTuple's name.

    Args:
      opt_state: an optax state (pytree) holding exactly one :class:`DenoiseState`.

    Returns:
      That :class:`DenoiseState` (read :math:`m_t` as ``find_state(opt_state).m``).

    Raises:
      ValueError: ``opt_state`` holds no :class:`DenoiseState` or more than one.
    """
    found = optax.tree_utils.tree_get_all_with_path(opt_state, "DenoiseState")
    found = [v for _, v in found if isinstance(v, DenoiseState)]
    if len(found) != 1:
        raise ValueError(f"opt_state must contain exactly one DenoiseState, got {len(found)}")
    return found[0]


@cites(DENOISE)
def gaussian_noise(sigma: float) -> Callable[[Key, Params], Params]:
    """Isotropic Gaussian gradient noise :math:`w \\sim N(0, \\sigma^2 I)`, as a ``noise_fn`` for :func:`run`.

    Args:
      sigma: standard deviation :math:`\\sigma \\ge 0`.

    Returns:
      ``noise_fn(key, tree) -> tree``, drawing one independent normal per entry of every leaf (each leaf's shape
      and dtype).

    Raises:
      TypeError: ``sigma`` is not a real number.
      ValueError: ``sigma < 0`` or not finite.
    """
    _check_real(sigma, "sigma")
    sigma = check_positive(sigma, "sigma", strict=False)
    return lambda key, params: jax.tree_util.tree_map(
        lambda x, k: sigma * jax.random.normal(k, x.shape, x.dtype),
        params, optax.tree_utils.tree_split_key_like(key, params))


def _observe(key, grad_fn, denoiser: Denoiser, dstate: DenoiseState, params, noise_fn, mode: str):
    """:math:`q_t`: query, add noise per query (oracle mode) or once to the combination (DP mode), combine."""
    points = denoiser.query_points(dstate, params)
    keys = jax.random.split(key, len(points))
    grads = tuple(grad_fn(p) for p in points)
    if mode == "oracle":
        grads = tuple(optax.tree_utils.tree_add(g, noise_fn(k, g)) for g, k in zip(grads, keys, strict=True))
        return denoiser.combine(dstate, grads)
    return optax.tree_utils.tree_add(denoiser.combine(dstate, grads), noise_fn(keys[0], params))


def _check_mode(mode: str) -> None:
    if mode not in ("oracle", "dp"):
        raise ValueError(f"mode must be 'oracle' or 'dp', got {mode!r}")


class DenoisedOptState(NamedTuple):
    """State of :func:`denoised_optimizer_algorithm` (and of :func:`jaxlab.optim.denoise.dp.dp_denoised_algorithm`).

    Attributes:
      params: the parameters :math:`x_t` (a pytree).
      opt_state: the state of ``optax.chain(denoiser, inner)``.
    """

    params: Params
    opt_state: Any


def _check_denoiser(denoiser: Any) -> None:
    if not isinstance(denoiser, Denoiser):
        raise TypeError(f"denoiser must be a jaxlab.optim.Denoiser, got {type(denoiser).__name__}")


@cites(DENOISE)
def denoised_optimizer_algorithm(
    loss_fn: Callable[[Params], Any],
    denoiser: Denoiser,
    inner: optax.GradientTransformation,
    noise_fn: Callable[[Key, Params], Params],
    *,
    mode: str = "oracle",
) -> Algorithm:
    """Optimisation with ``optax.chain(denoiser, inner)`` on noisy gradients, as an :class:`~jaxlab.core.Algorithm`.

    ``init(params0)`` builds :class:`DenoisedOptState`; ``step(key, state)`` queries ``grad(loss_fn)`` at the
    denoiser's points :math:`x_t + \\gamma_i d_t`, adds ``noise_fn(key, grad)`` to each query
    (``mode="oracle"``) or once to the combination :math:`q_t` (``mode="dp"``), applies the chain and records
    :math:`\\|m_t - \\nabla f(x_t)\\|^2`, :math:`\\|\\nabla f(x_t)\\|^2` and :math:`f(x_t)` in a
    :class:`DenoiseInfo` (measured at :math:`x_t`, before the update). The query/combine/update protocol and
    the two noise modes are jaxlab's reading of the 2026 gradient-denoising paper, known from its abstract only
    (module docstring); DiSK (arXiv:2410.03883) is its closest published predecessor.

    Args:
      loss_fn: the objective :math:`f(x)` of a parameter pytree.
      denoiser: a :class:`Denoiser` (:func:`ema`, :func:`igt`, :func:`disk`, :func:`two_point`).
      inner: the optax optimizer applied to the denoised gradient.
      noise_fn: ``noise_fn(key, tree) -> tree`` (e.g. :func:`gaussian_noise`).
      mode: ``"oracle"`` or ``"dp"``.

    Returns:
      ``Algorithm(init, step)``, key-driven.

    Raises:
      TypeError: ``denoiser`` is not a :class:`Denoiser`.
      ValueError: unknown ``mode``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.core import run
      >>> from jaxlab.optim import denoised_optimizer_algorithm, disk, gaussian_noise
      >>> loss_fn = lambda x: 0.5 * jnp.sum(jnp.arange(1.0, 4.0) * x ** 2)
      >>> algo = denoised_optimizer_algorithm(loss_fn, disk(), optax.sgd(0.1), gaussian_noise(0.1))
      >>> state, trace = run(algo.step, algo.init(jnp.ones(3)), jax.random.key(0), 50)
      >>> trace.infos.error2.shape
      (50,)
    """
    _check_denoiser(denoiser)
    _check_mode(mode)
    tx = optax.chain(denoiser, inner)
    value_and_grad = jax.value_and_grad(loss_fn)
    grad_fn = jax.grad(loss_fn)

    def init_fn(params0: Params) -> DenoisedOptState:
        return DenoisedOptState(params0, tx.init(params0))

    def step_fn(key, state: DenoisedOptState) -> tuple[DenoisedOptState, DenoiseInfo]:
        params, opt_state = state
        q = _observe(key, grad_fn, denoiser, find_state(opt_state), params, noise_fn, mode)
        updates, opt_state = tx.update(q, opt_state, params)
        loss, g = value_and_grad(params)
        err = optax.tree_utils.tree_sub(find_state(opt_state).m, g)
        info = DenoiseInfo(optax.tree_utils.tree_vdot(err, err), optax.tree_utils.tree_vdot(g, g), loss)
        return DenoisedOptState(optax.apply_updates(params, updates), opt_state), info

    return Algorithm(init_fn, step_fn)


@cites(DENOISE)
def run(
    key: Key,
    loss_fn: Callable[[Params], Any],
    params0: Params,
    denoiser: Denoiser,
    inner: optax.GradientTransformation,
    noise_fn: Callable[[Key, Params], Params],
    num_steps: int,
    *,
    mode: str = "oracle",
    thin: int = 1,
) -> tuple[Params, DenoiseInfo]:
    """Optimize ``loss_fn`` with ``optax.chain(denoiser, inner)`` on noisy gradients, under ``lax.scan``:
    :func:`denoised_optimizer_algorithm` driven ``num_steps`` times by :func:`jaxlab.core.run`.

    Args:
      key: PRNG key (one split per step).
      loss_fn: the objective :math:`f(x)` of a parameter pytree (scalar).
      params0: the starting parameters :math:`x_1` (a pytree of float arrays).
      denoiser: a :class:`Denoiser` (:func:`ema`, :func:`igt`, :func:`disk`, :func:`two_point`).
      inner: the optax optimizer applied to the denoised gradient.
      noise_fn: ``noise_fn(key, tree) -> tree`` (e.g. :func:`gaussian_noise`).
      num_steps: number of steps ``>= 0`` (a multiple of ``thin``).
      mode: ``"oracle"`` (noise on each query) or ``"dp"`` (noise once on the combination).
      thin: keep one :class:`DenoiseInfo` row every ``thin`` steps.

    Returns:
      ``(params_T, DenoiseInfo)``: the final parameters (a pytree like ``params0``) and one :class:`DenoiseInfo`
      row per ``thin`` steps (leaves of shape ``(num_steps // thin,)``), measured at :math:`x_t` before the step
      (``error2`` = :math:`\\|m_t - \\nabla f(x_t)\\|^2`).

    Raises:
      TypeError: ``denoiser`` is not a :class:`Denoiser`, ``num_steps`` not an int, or non-float parameters.
      ValueError: unknown ``mode``, ``num_steps < 0`` or not a multiple of ``thin``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.optim import gaussian_noise, harmonic, igt, run
      >>> loss_fn = lambda x: 0.5 * jnp.sum(jnp.arange(1.0, 4.0) * x ** 2)
      >>> params, info = run(jax.random.key(0), loss_fn, jnp.ones(3), igt(harmonic()), optax.sgd(0.1),
      ...                    gaussian_noise(0.1), 100, thin=10)
      >>> info.error2.shape
      (10,)
    """
    algo = denoised_optimizer_algorithm(loss_fn, denoiser, inner, noise_fn, mode=mode)
    num_steps = check_int(num_steps, "num_steps", min_value=0)
    final, trace = scan_run(algo.step, algo.init(params0), key, num_steps, thin=thin)
    return final.params, trace.infos


@cites(DENOISE)
def denoiser_tracking_algorithm(grad_fn: Callable[[Params], Params], denoiser: Denoiser, *,
                                mode: str = "oracle") -> Algorithm:
    """A denoiser run along a given trajectory with given noise, as a data-driven :class:`~jaxlab.core.Algorithm`.

    ``init(x_1)`` is ``denoiser.init(x_1)``; ``step(key, state, x)`` with ``x = (x_t, w_t)`` queries
    ``grad_fn`` at the denoiser's points around :math:`x_t`, adds the given noise ``w_t`` (per query, shape
    ``(Q, ...)``, in ``"oracle"`` mode; once to :math:`q_t` in ``"dp"`` mode; ``w_t = None`` for none), updates the
    denoiser and records :math:`\\|m_t - \\nabla f(x_t)\\|^2` (``key`` is ignored; ``loss`` is nan).

    Args:
      grad_fn: the true gradient :math:`\\nabla f`.
      denoiser: the estimator.
      mode: ``"oracle"`` or ``"dp"``.

    Returns:
      ``Algorithm(init, step)``; ``step`` returns ``(DenoiseState, DenoiseInfo)``.

    Raises:
      TypeError: ``denoiser`` is not a :class:`Denoiser`.
      ValueError: unknown ``mode``.
    """
    _check_denoiser(denoiser)
    _check_mode(mode)

    def step_fn(key, dstate: DenoiseState, inputs) -> tuple[DenoiseState, DenoiseInfo]:
        del key  # deterministic: the noise is given
        x, w = inputs
        points = denoiser.query_points(dstate, x)
        grads = tuple(grad_fn(p) for p in points)
        if w is not None and mode == "oracle":
            grads = tuple(jax.tree_util.tree_map(lambda g, n, i=i: g + n[i], g, w) for i, g in enumerate(grads))
        q = denoiser.combine(dstate, grads)
        if w is not None and mode == "dp":
            q = optax.tree_utils.tree_add(q, w)
        m, dstate = denoiser.update(q, dstate, x)
        g = grad_fn(x)
        err = optax.tree_utils.tree_sub(m, g)
        e2 = optax.tree_utils.tree_vdot(err, err)
        return dstate, DenoiseInfo(e2, optax.tree_utils.tree_vdot(g, g), jnp.full_like(e2, jnp.nan))

    return Algorithm(denoiser.init, step_fn)


@cites(DENOISE)
def track(
    grad_fn: Callable[[Params], Params],
    xs: Params,
    denoiser: Denoiser,
    noise: Params | None = None,
    *,
    mode: str = "oracle",
) -> DenoiseInfo:
    """Denoise along a given trajectory ``xs`` with given injected noise and record
    :math:`\\|m_t - \\nabla f(x_t)\\|^2` for ``t = 1..T`` (``loss`` is nan).

    The trajectory is fixed in advance rather than produced by an optimizer, and the noise is passed in, so
    that runs can be compared draw for draw with a reference implementation.

    Args:
      grad_fn: true gradient :math:`\\nabla f`.
      xs: pytree with a leading time axis ``T`` (the iterates :math:`x_1..x_T`).
      denoiser: the estimator.
      noise: ``None`` (noise-free) or a pytree like ``xs`` whose leaves have shape ``(T, Q, ...)`` with
        ``Q = denoiser.num_queries`` (``mode="oracle"``: one draw per query) or ``(T, ...)`` (``mode="dp"``: one
        draw added to the combination).
      mode: ``"oracle"`` or ``"dp"``.

    Returns:
      :class:`DenoiseInfo` whose leaves have shape ``(T,)`` (``loss`` is NaN).

    Raises:
      TypeError: ``denoiser`` is not a :class:`Denoiser`.
      ValueError: unknown ``mode``, ``xs`` without a leading time axis, or ``noise`` of the wrong structure or
        shapes.
    """
    _check_denoiser(denoiser)
    _check_mode(mode)
    leaves = jax.tree_util.tree_leaves(xs)
    if not leaves or any(jnp.ndim(x) < 1 for x in leaves):
        raise ValueError("xs must be a pytree of arrays with a leading time axis, got a scalar leaf")
    num_steps = leaves[0].shape[0]
    if noise is not None:
        _check_same_structure(noise, xs, "noise", "xs")
        extra = (num_steps, denoiser.num_queries) if mode == "oracle" else (num_steps,)
        for w, x in zip(jax.tree_util.tree_leaves(noise), leaves, strict=True):
            want = extra + tuple(x.shape[1:])
            if tuple(w.shape) != want:
                raise ValueError(f"noise leaves must have shape {want} in mode {mode!r}, got {tuple(w.shape)}")

    algo = denoiser_tracking_algorithm(grad_fn, denoiser, mode=mode)
    x0 = jax.tree_util.tree_map(lambda x: x[0], xs)
    _, trace = scan_run(algo.step, algo.init(x0), None, xs=(xs, noise))
    return trace.infos


def _quadratic(x):
    return 0.5 * jnp.sum(jnp.arange(1.0, 4.0) * x**2)


def _optimizer_example(key):
    algo = denoised_optimizer_algorithm(_quadratic, disk(), optax.sgd(0.1), gaussian_noise(0.1))
    return algo, algo.init(jnp.ones(3)), None


def _tracking_example(key):
    xs = jnp.cumsum(0.1 * jax.random.normal(key, (6, 3)), axis=0)
    noise = 0.1 * jax.random.normal(jax.random.fold_in(key, 1), (6, 2, 3))
    algo = denoiser_tracking_algorithm(jax.grad(_quadratic), two_point(harmonic()))
    return algo, algo.init(xs[0]), (xs, noise)


register_algorithm("denoised_optimizer", denoised_optimizer_algorithm, _optimizer_example, area="denoise")
register_algorithm("denoiser_tracking", denoiser_tracking_algorithm, _tracking_example, area="denoise")
