r"""The Dormant Spiking Neuron (DSN) and the plain LIF neuron: parameters, state, surrogate Heaviside and one step.

Paper: "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks" (title from
the authors' repository github.com/Ruichen0424/DSN; paper text and arXiv id not located). The equations and
defaults follow the authors' reference implementation (SpikingJelly ``DLIFNode``).

Per neuron, steps ``t = 1..T``, input current ``X_t``; ``V_0 = V_reset``, ``D_0 = 1``; Heaviside
``Theta(x) = 1[x >= 0]``::

    D_t = D_{t-1} Theta(V_{t-1} - V_D)          (dormant gate, absorbing within a sample)
    H_t = beta V_{t-1} + X_t,   beta = 1 - 1/tau  (decay_input = False)
    S_t = D_t Theta(H_t - V_th)
    V_t = H_t (1 - S^_t) + V_reset S^_t         (hard reset; S^_t = stop_gradient(S_t) when detach_reset)

A dormant neuron keeps integrating but never spikes or resets again. Plain LIF is ``D = 1``
(``V_D = -inf``). Both Heavisides use the sigmoid surrogate (SpikingJelly ``Sigmoid``): forward ``Theta(x)``,
derivative ``alpha sigma(alpha x)(1 - sigma(alpha x))`` (the derivative of the smoothed step
``sigma(alpha x)``), so ``Theta'(0) = alpha / 4 = 1`` at ``alpha = 4``.

Neuron parameters (:class:`DSNParams`) are static configuration: close over them or pass them as a static
argument under ``jit``; validation runs when a public function is called with concrete parameters. A whole
sequence runs in one scan with :func:`jaxlab.snn.scan.dsn_scan`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_int, check_positive, error_if, is_concrete, value_check
from jaxlab.snn.papers import DSN

__all__ = [
    "DSNParams",
    "DSNState",
    "DSNStepInfo",
    "check_params",
    "dsn_algorithm",
    "dsn_init",
    "dsn_step",
    "heaviside_sg",
    "lif_algorithm",
    "lif_step",
]


class DSNParams(NamedTuple):
    """Neuron constants of the DSN and LIF neurons (static configuration).

    The defaults are those of the authors' reference implementation (SpikingJelly ``DLIFNode``).

    Attributes:
      tau: membrane time constant ``τ > 1``; the decay is ``beta = 1 − 1/τ`` (property :attr:`beta`).
      v_th: firing threshold ``V_th``.
      v_reset: hard-reset potential ``V_reset < V_th``, also the rest potential ``V_0``.
      v_dormant: dormancy threshold ``V_D < V_reset`` (``−inf`` gives plain LIF): a neuron whose post-reset
        potential falls below it stops spiking for the rest of the sample.
      alpha: sharpness ``α > 0`` of the sigmoid surrogate gradient (``Θ'(0) = α/4``).
      detach_reset: stop the gradient through the reset term (``S^_t = stop_gradient(S_t)``).
      allow_nonnegative_dormant: accept ``V_reset ≤ V_D < V_th``, where neurons at rest would fall dormant.
    """

    tau: float = 2.0
    v_th: float = 1.0
    v_reset: float = 0.0
    v_dormant: float = -0.05
    alpha: float = 4.0
    detach_reset: bool = True
    allow_nonnegative_dormant: bool = False

    @property
    def beta(self) -> float:
        """Membrane decay ``1 - 1/tau``."""
        return 1.0 - 1.0 / self.tau


class DSNState(NamedTuple):
    """State of a layer of DSN (or LIF) neurons; both arrays have the layer's shape and a float dtype.

    Attributes:
      v: the post-reset membrane potential ``V_t``.
      d: the dormancy gate ``D_t`` (1 awake, 0 dormant; always 1 for LIF).
    """

    v: Array
    d: Array


def check_params(params: DSNParams) -> DSNParams:
    """Validate the neuron constants and return them.

    Use the result: under ``jit`` traced constants come back wrapped in run-time checks (concrete constants stay Python
    numbers, so the scan specialises on them).

    Args:
      params: the :class:`DSNParams` to check.

    Returns:
      ``params``, with traced fields wrapped in their run-time checks.

    Raises:
      TypeError: ``params`` is not a :class:`DSNParams`.
      ValueError: (eagerly; under ``jit`` a run-time error with the same text) ``tau <= 1`` or non-finite,
        non-finite ``v_th``/``v_reset``, ``v_th <= v_reset``, ``alpha <= 0``, ``v_dormant >= v_th`` or NaN,
        and ``v_dormant >= v_reset`` unless ``allow_nonnegative_dormant``.
    """
    if not isinstance(params, DSNParams):
        raise TypeError(f"params must be a DSNParams, got {type(params).__name__}")
    if is_concrete(tuple(params)):
        _check_concrete_params(params)
        return params
    tau, v_th, v_reset, v_d, alpha = params[:5]
    tau = value_check(tau, lambda t: ~(jnp.isfinite(t) & (t > 1.0)),
                      "tau must be > 1 and finite (beta = 1 - 1/tau must be > 0)")
    v_th = value_check(v_th, lambda v: ~jnp.isfinite(v), "v_th must be finite")
    v_reset = value_check(v_reset, lambda v: ~jnp.isfinite(v), "v_reset must be finite")
    v_th, v_reset = _joint_check((v_th, v_reset), lambda th, r: th <= r, "v_th must be > v_reset")
    alpha = check_positive(alpha, "alpha")
    v_d, v_th = _joint_check((v_d, v_th), lambda d, th: jnp.isnan(d) | (d >= th),
                             "v_dormant must be < v_th (or -inf for LIF)")
    if not params.allow_nonnegative_dormant:
        v_d, v_reset = _joint_check(
            (v_d, v_reset), lambda d, r: d >= r,
            "v_dormant must be < v_reset (a neuron at rest would fall dormant); pass "
            "allow_nonnegative_dormant=True to accept it")
    return params._replace(tau=tau, v_th=v_th, v_reset=v_reset, v_dormant=v_d, alpha=alpha)


def _joint_check(values: tuple, bad, msg: str) -> tuple:
    """A check relating several constants: only the traced ones are wrapped in the run-time check, so that
    concrete constants stay Python numbers (the scan specialises on them)."""
    if is_concrete(values):
        value_check(values, lambda vs: bad(*vs), msg)
        return values
    pred = bad(*(jnp.asarray(v) for v in values))
    return tuple(v if is_concrete(v) else error_if(v, pred, msg) for v in values)


def _check_concrete_params(params: DSNParams) -> None:
    """The checks of :func:`check_params` on Python numbers, with the offending values in the messages."""
    tau, v_th, v_reset, v_d, alpha = (float(np.asarray(p)) for p in params[:5])
    if not (math.isfinite(tau) and tau > 1.0):
        raise ValueError(f"tau must be > 1 and finite (beta = 1 - 1/tau must be > 0), got {tau!r}")
    for name, val in (("v_th", v_th), ("v_reset", v_reset)):
        if not math.isfinite(val):
            raise ValueError(f"{name} must be finite, got {val!r}")
    if v_th <= v_reset:
        raise ValueError(f"v_th must be > v_reset = {v_reset!r}, got {v_th!r}")
    check_positive(alpha, "alpha")
    if math.isnan(v_d) or v_d >= v_th:
        raise ValueError(f"v_dormant must be < v_th = {v_th!r} (or -inf for LIF), got {v_d!r}")
    if v_d >= v_reset and not params.allow_nonnegative_dormant:
        raise ValueError(
            f"v_dormant must be < v_reset = {v_reset!r} (a neuron at rest would fall dormant), got {v_d!r}; "
            "pass allow_nonnegative_dormant=True to accept it"
        )


@jax.custom_jvp
def _heaviside(x: Array, alpha: Array) -> Array:
    x = jnp.asarray(x)
    return (x >= 0).astype(x.dtype)


@_heaviside.defjvp
def _heaviside_jvp(primals, tangents):
    x, alpha = primals
    x_dot, _ = tangents
    sig = jax.nn.sigmoid(alpha * x)
    return _heaviside(x, alpha), alpha * sig * (1 - sig) * x_dot


@cites(DSN)
def heaviside_sg(x: Float[Array, "..."], alpha: float = 4.0) -> Float[Array, "..."]:
    """Heaviside step ``Θ(x) = 1[x ≥ 0]`` with the sigmoid surrogate derivative ``α s (1 − s)``, ``s = σ(αx)``.

    The derivative is that of the smoothed step ``σ(αx)`` (SpikingJelly ``Sigmoid``), attached by a ``custom_jvp`` so
    that reverse mode gets the same surrogate; no gradient flows into ``alpha``.

    Args:
      x: float array (any shape).
      alpha: the surrogate sharpness ``α > 0``, a finite float or 0-d array.

    Returns:
      Float array of the shape and dtype of ``x``, entries 0 or 1.

    Raises:
      TypeError: ``x`` not floating.
      ValueError: ``alpha`` not positive and finite (under ``jit``: at run time).
    """
    x = as_array(x, "x")
    alpha = check_positive(alpha, "alpha")
    # The step's value does not depend on alpha: tie alpha's run-time check (under jit) to x, or it is dropped.
    x, alpha = value_check((x, alpha), lambda xa: ~(jnp.isfinite(xa[1]) & (xa[1] > 0)), "alpha must be > 0 and finite")
    return _heaviside(x, jax.lax.stop_gradient(jnp.asarray(alpha, x.dtype)))


def _float_dtype(dtype: Any) -> jnp.dtype:
    dtype = jnp.dtype(jnp.result_type(float) if dtype is None else dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"dtype must be a floating dtype, got {dtype}")
    return dtype


@cites(DSN)
def dsn_init(shape: Sequence[int], params: DSNParams | None = None, dtype: Any = None) -> DSNState:
    """Rest state of a layer: ``V_0 = v_reset``, ``D_0 = 1`` (every neuron awake).

    Args:
      shape: the layer's shape, a sequence of ints ``≥ 0``.
      params: the neuron constants (``None``: the defaults of :class:`DSNParams`).
      dtype: a floating dtype (``None``: the default float dtype).

    Returns:
      :class:`DSNState` with two arrays of ``shape`` and ``dtype``.

    Raises:
      TypeError: a shape entry not an int; a non-floating ``dtype``; ``params`` not a :class:`DSNParams`.
      ValueError: a negative shape entry; bad ``params`` (see :func:`check_params`).
    """
    params = check_params(DSNParams() if params is None else params)
    shape = tuple(check_int(s, "shape entry", min_value=0) for s in shape)
    dtype = _float_dtype(dtype)
    return DSNState(jnp.full(shape, params.v_reset, dtype), jnp.ones(shape, dtype))


def _fire_and_reset(p: DSNParams, v: Array, d: Array, x_t: Array) -> tuple[Array, Array]:
    h = p.beta * v + x_t
    s = d * _heaviside(h - p.v_th, jnp.asarray(p.alpha, h.dtype))
    s_hat = jax.lax.stop_gradient(s) if p.detach_reset else s
    return h * (1 - s_hat) + p.v_reset * s_hat, s


def _dsn_step(p: DSNParams, state: DSNState, x_t: Array) -> tuple[DSNState, Array]:
    d = state.d * _heaviside(state.v - p.v_dormant, jnp.asarray(p.alpha, state.v.dtype))
    v, s = _fire_and_reset(p, state.v, d, x_t)
    return DSNState(v, d), s


def _lif_step(p: DSNParams, state: DSNState, x_t: Array) -> tuple[DSNState, Array]:
    v, s = _fire_and_reset(p, state.v, jnp.ones((), state.v.dtype), x_t)
    return DSNState(v, state.d), s


def _check_step_inputs(params: DSNParams, state: DSNState, x_t: Any) -> tuple[DSNParams, Array]:
    params = check_params(params)
    x_t = as_array(x_t, "x_t", finite=True)
    if tuple(state.v.shape) != tuple(x_t.shape) or tuple(state.d.shape) != tuple(x_t.shape):
        raise ValueError(
            f"state must have the shape of x_t {tuple(x_t.shape)}, got v {tuple(state.v.shape)}, "
            f"d {tuple(state.d.shape)}"
        )
    return params, x_t


@cites(DSN)
def dsn_step(params: DSNParams, state: DSNState, x_t: Float[Array, "..."]) -> tuple[DSNState, Float[Array, "..."]]:
    """One DSN step: gate update from the post-reset ``V_{t-1}``, integrate, fire if awake, hard reset.

    Args:
      params: the neuron constants.
      state: ``DSNState(v, d)`` of the shape of ``x_t``.
      x_t: input currents of one step (finite).

    Returns:
      The new state and the spikes ``S_t`` (shape of ``x_t``).

    Raises:
      ValueError: ``state`` and ``x_t`` differ in shape; ``x_t`` has NaN or infinite entries (also under
        ``jit``, as a run-time error); bad ``params`` (see :func:`check_params`).
    """
    params, x_t = _check_step_inputs(params, state, x_t)
    return _dsn_step(params, state, x_t)


@cites(DSN)
def lif_step(params: DSNParams, state: DSNState, x_t: Float[Array, "..."]) -> tuple[DSNState, Float[Array, "..."]]:
    """One plain LIF step (``D = 1``; ``state.d`` is carried unchanged): integrate, fire, hard reset.

    ``H_t = β V_{t−1} + X_t``, ``S_t = Θ(H_t − V_th)``, ``V_t = H_t (1 − S_t) + V_reset S_t``.

    Args:
      params: the neuron constants (``v_dormant`` is ignored).
      state: ``DSNState(v, d)`` of the shape of ``x_t``.
      x_t: float array of the input currents of one step (finite).

    Returns:
      A tuple ``(state, spikes)``: the new :class:`DSNState` and the spikes ``S_t`` (shape of ``x_t``).

    Raises:
      ValueError: as :func:`dsn_step`.
    """
    params, x_t = _check_step_inputs(params, state, x_t)
    return _lif_step(params, state, x_t)


class DSNStepInfo(NamedTuple):
    """Diagnostics of one neuron step.

    Attributes:
      spikes: the spikes ``S_t`` emitted at this step (shape of the input).
    """

    spikes: Array


def _neuron_algorithm(params: DSNParams | None, step_fn) -> Algorithm:
    params = check_params(DSNParams() if params is None else params)

    def init(shape: Sequence[int], dtype: Any = None) -> DSNState:
        return dsn_init(shape, params, dtype)

    def step(key: Any, state: DSNState, x_t: Float[Array, "..."]) -> tuple[DSNState, DSNStepInfo]:
        del key  # the neuron is deterministic
        state, spikes = step_fn(params, state, x_t)
        return state, DSNStepInfo(spikes)

    return Algorithm(init, step)


@cites(DSN)
def dsn_algorithm(params: DSNParams | None = None) -> Algorithm:
    """The DSN neuron as a data-driven :class:`~jaxlab.core.Algorithm`, its constants bound once.

    ``init(shape, dtype=None) -> DSNState`` is the rest state (:func:`dsn_init`);
    ``step(key, state, x_t) -> (DSNState, DSNStepInfo)`` is :func:`dsn_step` (the key is ignored). Driven by
    ``jaxlab.core.run(algo.step, state, None, xs=x_seq)`` it gives the spikes of :func:`jaxlab.snn.dsn_scan`.

    Paper: "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks" (2026; authors
    and arXiv id not located); the equations follow the authors' reference implementation (github.com/Ruichen0424/DSN).

    Args:
      params: the neuron constants (default :class:`DSNParams`).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``params`` is not a :class:`DSNParams`.
      ValueError: bad ``params`` (see :func:`check_params`).

    Example:
      >>> import jax
      >>> from jaxlab.core import run
      >>> from jaxlab.snn import DSNParams, dsn_algorithm
      >>> x_seq = 0.3 + 0.8 * jax.random.normal(jax.random.key(0), (8, 16))   # (T, neurons) input currents
      >>> algo = dsn_algorithm(DSNParams(v_dormant=-0.05))
      >>> final, trace = run(algo.step, algo.init((16,)), None, xs=x_seq)
      >>> trace.infos.spikes.shape
      (8, 16)
    """
    return _neuron_algorithm(params, dsn_step)


@cites(DSN)
def lif_algorithm(params: DSNParams | None = None) -> Algorithm:
    """The plain LIF neuron (``D = 1``) as a data-driven :class:`~jaxlab.core.Algorithm`.

    As :func:`dsn_algorithm` with :func:`lif_step` (``params.v_dormant`` is ignored).

    Args:
      params: the neuron constants (default :class:`DSNParams`).

    Returns:
      ``Algorithm(init, step)``: ``init(shape, dtype=None) -> DSNState`` and
      ``step(key, state, x_t) -> (DSNState, DSNStepInfo)``.

    Raises:
      TypeError: ``params`` is not a :class:`DSNParams`.
      ValueError: bad ``params`` (see :func:`check_params`).
    """
    return _neuron_algorithm(params, lif_step)


def _neuron_example(algorithm_fn):
    def example(key: Any) -> tuple[Algorithm, DSNState, Array]:
        algo = algorithm_fn(DSNParams())
        return algo, algo.init((5,)), 0.3 + 0.8 * jax.random.normal(key, (6, 5))

    return example


register_algorithm("dsn", dsn_algorithm, _neuron_example(dsn_algorithm), area="snn")
register_algorithm("lif", lif_algorithm, _neuron_example(lif_algorithm), area="snn")
