r"""TokenRouter-style delayed batching (jaxlab derivation): the step-cost model and the throughput models.

Paper: "TokenRouter" (2026, an efficient serving system for token-level routed LLM inference; text, authors and
arXiv id not retrieved, abstract only). TokenRouter serves token-level routing model-centrically: one subserver
per candidate model, each with its own queue and KV cache, the router dispatching every request's next token to
the chosen model's subserver, and a *delayed-batching* scheduler whose batch threshold and timeout are computed
from a throughput model. **[reconstructed]** The throughput model, the scheduler rule and the baselines below are
this port's own derivation from the abstract's description, checked against the discrete-event simulator of
:mod:`jaxlab.serving.token_router.simulator`, not the paper's formulas.

Models ``m = 0..M-1`` (``M = 2``: 0 = small S, 1 = large L). Step latency of subserver ``m`` on ``n`` input
tokens (decode plus KV catch-up)::

    T_m(n) = alpha_m + beta_m n                                   (fit_step_cost: least squares)

Separate devices (every subserver busy on its own accelerator), visits per generated token ``v_m``::

    F(X) = sum_m v_m alpha_m X / (1 - beta_m X) = N,   0 < X < 1 / max_m beta_m   (bisection; F increasing)

Shared device, exclusive routing with ``q_L`` the fraction of tokens produced by L, one cycle = one L step on
``B`` requests then ``k(B)`` S steps; ``k(B)`` = smallest ``k >= 0`` with ``N - (N - q_L B)(1 - q_L)^k >= B``::

    X(B) = (B / q_L) / (alpha_L + k(B) alpha_S + (beta_S + beta_L) B / q_L),     1 <= B <= N - 1
    B_L* = argmax_B X(B) (ties: smallest B),   tau_L* = k(B_L*) T_S(nbar_S),
    nbar_S = (B_L* (1 - q_L) / q_L) / max(k(B_L*), 1)

Lockstep (request-centric) and per-request sequential baselines on one device::

    X_sync = N / (alpha_S (1 - q_L^N) + alpha_L (1 - (1 - q_L)^N) + (beta_S + beta_L) N)
    X_seq  = 1 / (q_S alpha_S + q_L alpha_L + beta_S + beta_L)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_finite, check_in_range, check_int, check_simplex, value_check
from jaxlab.serving.token_router.papers import TOKEN_ROUTER

__all__ = [
    "DelayedBatchingParams",
    "StepCostModel",
    "check_cost",
    "derive_delayed_batching",
    "fit_step_cost",
    "step_latency",
    "throughput_lockstep",
    "throughput_separate",
    "throughput_sequential",
    "throughput_shared",
]


class StepCostModel(NamedTuple):
    """Per-model step latency ``T_m(n) = alpha[m] + beta[m] n`` for a step on ``n`` input tokens.

    Attributes:
      alpha: ``(M,)`` float array, fixed cost of a step (ms), ``> 0``; model 0 is the small model S.
      beta: ``(M,)`` float array, cost per input token (ms/token), ``>= 0``.
    """

    alpha: Float[Array, " M"]
    beta: Float[Array, " M"]


class DelayedBatchingParams(NamedTuple):
    """Delayed-batching hyperparameters of the large model, from :func:`derive_delayed_batching`.

    Attributes:
      batch_threshold: ``B_L*``, the number of queued requests at which L launches.
      timeout: ``tau_L*`` (ms), the longest a queued request waits for L.
      predicted_throughput: ``X(B_L*)`` (tokens/ms) of the shared-device throughput model.
    """

    batch_threshold: int
    timeout: float
    predicted_throughput: float


def check_cost(cost: StepCostModel, num_models: int | None = None) -> StepCostModel:
    """Validate a :class:`StepCostModel`: 1-d float arrays of equal length, finite, ``alpha > 0``, ``beta >= 0``.

    Args:
      cost: the step-cost model.
      num_models: if given, the required number of models ``M``.

    Returns:
      The model with ``alpha`` and ``beta`` as JAX arrays (under ``jit``, wrapped in the run-time value checks).

    Raises:
      TypeError: ``alpha`` or ``beta`` is not a float array.
      ValueError: not 1-d, unequal lengths, not ``num_models`` entries, non-finite entries, ``alpha <= 0`` or
        ``beta < 0`` (the value checks also under ``jit``, as run-time errors).
    """
    alpha = as_array(cost.alpha, "cost.alpha", ndim=1, finite=True)
    beta = as_array(cost.beta, "cost.beta", ndim=1, shape=alpha.shape, finite=True)
    if num_models is not None and alpha.shape[0] != num_models:
        raise ValueError(f"cost must describe {num_models} models, got {alpha.shape[0]}")
    alpha = value_check(alpha, lambda a: a <= 0, "cost.alpha (fixed step cost) must be > 0 for every model")
    beta = value_check(beta, lambda b: b < 0, "cost.beta (cost per token) must be >= 0 for every model")
    return StepCostModel(alpha, beta)


def step_latency(cost: StepCostModel, model: int, n_tokens) -> Array:
    """Step latency ``T_m(n) = alpha_m + beta_m n`` (ms).

    Args:
      cost: the :class:`StepCostModel`.
      model: the model index ``m`` (an int, or an int array for a gather).
      n_tokens: ``n``, input tokens of the step (scalar or array; broadcasts).

    Returns:
      Float array of ``n_tokens``' shape, the latency in ms.

    Raises:
      TypeError, ValueError: ``cost`` is invalid (see :func:`check_cost`).
    """
    cost = check_cost(cost)
    return cost.alpha[model] + cost.beta[model] * jnp.asarray(n_tokens)


@jax.jit
def _fit(n, y):
    nbar, ybar = jnp.mean(n), jnp.mean(y)
    beta = jnp.sum((n - nbar) * (y - ybar)) / jnp.sum((n - nbar) ** 2)
    alpha = ybar - beta * nbar
    r2 = 1.0 - jnp.sum((y - alpha - beta * n) ** 2) / jnp.sum((y - ybar) ** 2)
    return alpha, beta, r2


@cites(TOKEN_ROUTER)
def fit_step_cost(batch_tokens: Float[Array, " K"], latencies: Float[Array, " K"]):
    """Least-squares fit of ``T(n) = alpha + beta n`` to ``K`` measured step latencies.

    ``beta = sum (n_i - nbar)(y_i - ybar) / sum (n_i - nbar)^2``, ``alpha = ybar - beta nbar``,
    ``r2 = 1 - sum (y_i - alpha - beta n_i)^2 / sum (y_i - ybar)^2``. A fitted ``alpha <= 0`` is returned as is;
    :func:`check_cost` rejects it on use.

    Args:
      batch_tokens: ``(K,)`` float array, input tokens ``n_i`` of each measured step.
      latencies: ``(K,)`` float array, the measured latencies ``y_i`` (ms).

    Returns:
      A tuple ``(alpha, beta, r2)`` of 0-d float arrays (``r2`` the coefficient of determination).

    Raises:
      TypeError: an input is not a float array.
      ValueError: not 1-d, unequal shapes, non-finite entries, ``K < 2``, or fewer than two distinct token
        counts.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.serving.token_router import fit_step_cost
      >>> alpha, beta, r2 = fit_step_cost(jnp.array([1.0, 2.0, 4.0, 8.0]), jnp.array([2.1, 2.2, 2.4, 2.8]))
      >>> round(float(alpha), 3), round(float(beta), 3), round(float(r2), 3)
      (2.0, 0.1, 1.0)
    """
    n = as_array(batch_tokens, "batch_tokens", ndim=1, finite=True)
    y = as_array(latencies, "latencies", ndim=1, shape=n.shape, finite=True)
    if n.shape[0] < 2:
        raise ValueError(f"batch_tokens needs at least 2 measurements, got {n.shape[0]}")
    n = value_check(n, lambda a: jnp.max(a) == jnp.min(a),
                    "batch_tokens must contain at least two distinct token counts to fit a slope")
    return _fit(n, y)


def _check_visits(visits, m: int) -> Array:
    v = as_array(visits, "visits", ndim=1, shape=(m,), finite=True)
    v = check_in_range(v, "visits", 0.0, 1.0)
    return value_check(v, lambda a: jnp.sum(a) <= 0, "visits must have a positive entry (some model must produce "
                       "tokens)")


def _check_q(q_large, name: str = "q_large", *, open_interval: bool):
    """``q_large`` checked finite and in ``[0, 1]`` (``(0, 1)`` when ``open_interval``), eagerly and under jit."""
    q_large = check_finite(q_large, name)
    return check_in_range(q_large, name, 0.0, 1.0, lo_open=open_interval, hi_open=open_interval)


def _check_n(n_requests, lo: int = 1) -> int:
    return check_int(n_requests, "n_requests", min_value=lo)


@jax.jit
def _bisect_separate(alpha, beta, v, n):
    total = jnp.sum(v * alpha)
    cap = jnp.where(jnp.max(beta) > 0, 1.0 / jnp.max(beta), jnp.inf)
    hi0 = jnp.minimum(cap, n / total)  # F(X) >= X sum v alpha, so the root is <= N / sum v alpha

    def f(x):
        return jnp.sum(v * alpha * x / (1.0 - beta * x)) - n

    def cond(c):
        lo, hi, it = c
        return (it < 200) & (hi - lo > 4 * jnp.finfo(hi.dtype).eps * hi)

    def body(c):
        lo, hi, it = c
        mid = 0.5 * (lo + hi)
        up = f(mid) < 0
        return jnp.where(up, mid, lo), jnp.where(up, hi, mid), it + 1

    lo, hi, _ = jax.lax.while_loop(cond, body, (jnp.zeros_like(hi0), hi0, 0))
    return 0.5 * (lo + hi)


@cites(TOKEN_ROUTER)
def throughput_separate(cost: StepCostModel, visits: Float[Array, " M"], n_requests: int, *,
                        exclusive: bool = False) -> Float[Array, ""]:
    """Fluid throughput (tokens/ms) with each subserver on its own device (**[reconstructed]** from the abstract).

    ``X`` is the root of ``F(X) = sum_m v_m alpha_m X / (1 - beta_m X) = N`` on ``(0, 1 / max beta)``, found by
    bisection in a ``lax.while_loop`` (``F`` is increasing). One model: ``X = N / (alpha + beta N)``. An upper
    bound of the discrete-event simulator (it assumes every device always busy).

    Args:
      cost: the :class:`StepCostModel` of the ``M`` models.
      visits: ``(M,)`` float array in ``[0, 1]``, ``v_m`` = expected visits of model ``m`` per generated token
        (``q_m`` for exclusive routing, ``(1, q_L)`` for R2R-style); at least one entry ``> 0``.
      n_requests: ``N``, concurrent requests, an int ``>= 1``.
      exclusive: also check that ``visits`` is a probability vector (each token produced by exactly one model).

    Returns:
      0-d float array, the throughput ``X`` in tokens/ms.

    Raises:
      TypeError: ``n_requests`` is not an int, or an array has the wrong dtype.
      ValueError: an invalid ``cost`` (see :func:`check_cost`), ``visits`` of the wrong shape, non-finite, outside
        ``[0, 1]``, all zero, or (``exclusive``) not summing to 1, or ``n_requests < 1``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.serving.token_router import StepCostModel, throughput_separate
      >>> cost = StepCostModel(alpha=jnp.array([2.0, 10.0]), beta=jnp.array([0.05, 0.4]))
      >>> x = throughput_separate(cost, jnp.array([0.8, 0.2]), n_requests=32, exclusive=True)
      >>> round(float(x), 2)
      2.12
    """
    cost = check_cost(cost)
    v = _check_visits(visits, cost.alpha.shape[0])
    if exclusive:
        v = check_simplex(v, "visits (exclusive routing)", atol=1e-6)
    n = _check_n(n_requests)
    dtype = jnp.result_type(cost.alpha.dtype, cost.beta.dtype, v.dtype)
    return _bisect_separate(cost.alpha.astype(dtype), cost.beta.astype(dtype), v.astype(dtype), jnp.asarray(n, dtype))


def _k_cycle(q, n, b):
    """Integer number of S steps per cycle, ``k(B) = max(ceil(log((N - B) / (N - q B)) / log(1 - q)), 0)``; the
    ``1e-9`` added to ``N - B`` (**[chosen]**) settles exact integer ties, whatever the rounding, to the smaller
    ``k``."""
    n0 = n - q * b
    kf = jnp.log((n - b + 1e-9) / n0) / jnp.log1p(-q)
    return jnp.maximum(jnp.ceil(kf), 0.0)


@jax.jit
def _shared(alpha, beta, q, n, b):
    k = _k_cycle(q, n, b)
    tokens = b / q
    return tokens / (alpha[1] + k * alpha[0] + (beta[0] + beta[1]) * tokens)


def _shared_inputs(cost, q_large, n_requests):
    cost = check_cost(cost)
    if cost.alpha.shape[0] != 2:
        raise ValueError(f"the shared-device model covers M = 2 models (small, large), got M = {cost.alpha.shape[0]}")
    q_large = _check_q(q_large, open_interval=True)
    n = _check_n(n_requests, lo=2)
    dtype = jnp.result_type(cost.alpha.dtype, cost.beta.dtype, jnp.asarray(q_large).dtype)
    return cost.alpha.astype(dtype), cost.beta.astype(dtype), jnp.asarray(q_large, dtype), n, dtype


@cites(TOKEN_ROUTER)
def throughput_shared(cost: StepCostModel, q_large, n_requests: int, batch_threshold) -> Float[Array, "*B"]:
    """Fluid throughput ``X(B)`` (tokens/ms) of delayed batching on one shared device (M = 2, exclusive routing;
    **[reconstructed]** from the abstract).

    One cycle is one L step on ``B`` requests then ``k(B)`` S steps, ``k(B)`` the smallest ``k >= 0`` with
    ``N - (N - q_L B)(1 - q_L)^k >= B``::

        X(B) = (B / q_L) / (alpha_L + k(B) alpha_S + (beta_S + beta_L) B / q_L)

    Args:
      cost: the :class:`StepCostModel` of ``M = 2`` models (0 = S, 1 = L).
      q_large: ``q_L``, the fraction of tokens produced by L, in ``(0, 1)``.
      n_requests: ``N``, concurrent requests, an int ``>= 2``.
      batch_threshold: ``B``, a number or an array of thresholds in ``[1, N - 1]`` (elementwise; jit and vmap
        over ``B``).

    Returns:
      Float array of ``batch_threshold``'s shape, ``X(B)`` in tokens/ms.

    Raises:
      TypeError: ``n_requests`` is not an int, or ``cost`` has the wrong dtype.
      ValueError: an invalid ``cost`` or ``M != 2``, ``q_large`` not finite or outside ``(0, 1)``,
        ``n_requests < 2``, or ``B`` outside ``[1, N - 1]``.
    """
    alpha, beta, q, n, dtype = _shared_inputs(cost, q_large, n_requests)
    b = check_in_range(jnp.asarray(batch_threshold), "batch_threshold", 1, n - 1)
    return _shared(alpha, beta, q, jnp.asarray(n, dtype), b.astype(dtype))


@cites(TOKEN_ROUTER)
def derive_delayed_batching(cost: StepCostModel, q_large: float, n_requests: int) -> DelayedBatchingParams:
    """TokenRouter-style delayed-batching parameters of the large model from the shared-device throughput model.

    ``B_L* = argmax_{B in 1..N-1} X(B)`` (:func:`throughput_shared`; ties: smallest ``B``),
    ``tau_L* = k(B_L*) T_S(nbar_S)`` with ``nbar_S = (B_L* (1 - q_L) / q_L) / max(k(B_L*), 1)``; S stays greedy
    (``B_S = 1``, ``tau_S = 0``). "TokenRouter: Efficient Serving of Token-Level Routed LLM Inference" (2026;
    authors and arXiv id not retrieved) derives the threshold and timeout from a throughput model, but its
    formulas were not retrieved: this rule is **[reconstructed]** from the abstract and checked against the
    discrete-event simulator. The timeout only guards against starvation when traffic drops.

    Args:
      cost: the :class:`StepCostModel` of ``M = 2`` models (0 = S, 1 = L).
      q_large: ``q_L``, the fraction of tokens produced by L, in ``(0, 1)``.
      n_requests: ``N``, concurrent requests, an int ``>= 2``.

    Returns:
      The :class:`DelayedBatchingParams` ``(B_L*, tau_L*, X(B_L*))``.

    Raises:
      TypeError: ``n_requests`` is not an int, or ``cost`` has the wrong dtype.
      ValueError: an invalid ``cost`` or ``M != 2``, ``q_large`` not finite or outside ``(0, 1)``, or
        ``n_requests < 2``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.serving.token_router import StepCostModel, derive_delayed_batching
      >>> cost = StepCostModel(alpha=jnp.array([2.0, 10.0]), beta=jnp.array([0.05, 0.4]))
      >>> p = derive_delayed_batching(cost, q_large=0.2, n_requests=32)
      >>> p.batch_threshold, round(p.predicted_throughput, 4)
      (23, 1.6028)
    """
    alpha, beta, q, n, dtype = _shared_inputs(cost, q_large, n_requests)
    bs = jnp.arange(1, n, dtype=dtype)
    x = _shared(alpha, beta, q, jnp.asarray(n, dtype), bs)
    i = int(jnp.argmax(x))  # first maximum: the smallest B among exact ties
    b = float(bs[i])
    k = float(_k_cycle(q, jnp.asarray(n, dtype), bs[i]))
    nbar = (b * (1.0 - float(q)) / float(q)) / max(k, 1.0)
    timeout = k * (float(alpha[0]) + float(beta[0]) * nbar)
    return DelayedBatchingParams(int(b), timeout, float(x[i]))


@cites(TOKEN_ROUTER)
def throughput_lockstep(cost: StepCostModel, q_large, n_requests: int) -> Float[Array, ""]:
    """Throughput (tokens/ms) of the request-centric lockstep baseline on one device (**[reconstructed]**).

    Every step all ``N`` requests produce one token, S runs on its sub-batch and L on its own (a model with an
    empty sub-batch skips its step)::

        X_sync = N / (alpha_S (1 - q_L^N) + alpha_L (1 - (1 - q_L)^N) + (beta_S + beta_L) N)

    Args:
      cost: the :class:`StepCostModel` of ``M = 2`` models (0 = S, 1 = L).
      q_large: ``q_L``, the fraction of tokens produced by L, in ``[0, 1]``.
      n_requests: ``N``, concurrent requests, an int ``>= 1``.

    Returns:
      0-d float array, ``X_sync`` in tokens/ms.

    Raises:
      TypeError: ``n_requests`` is not an int, or ``cost`` has the wrong dtype.
      ValueError: an invalid ``cost`` or ``M != 2``, ``q_large`` not finite or outside ``[0, 1]``, or
        ``n_requests < 1``.
    """
    cost = check_cost(cost, 2)
    q_large = _check_q(q_large, open_interval=False)
    n = _check_n(n_requests)
    a, b, q = cost.alpha, cost.beta, jnp.asarray(q_large)
    return n / (a[0] * (1 - q**n) + a[1] * (1 - (1 - q) ** n) + (b[0] + b[1]) * n)


@cites(TOKEN_ROUTER)
def throughput_sequential(cost: StepCostModel, q_large) -> Float[Array, ""]:
    """Throughput (tokens/ms) of the per-request sequential baseline: batch 1, steps serialised on one device
    (**[reconstructed]**)::

        X_seq = 1 / (q_S alpha_S + q_L alpha_L + beta_S + beta_L),   q_S = 1 - q_L,   whatever N

    Args:
      cost: the :class:`StepCostModel` of ``M = 2`` models (0 = S, 1 = L).
      q_large: ``q_L``, the fraction of tokens produced by L, in ``[0, 1]``.

    Returns:
      0-d float array, ``X_seq`` in tokens/ms.

    Raises:
      TypeError: ``cost`` has the wrong dtype.
      ValueError: an invalid ``cost`` or ``M != 2``, or ``q_large`` not finite or outside ``[0, 1]``.
    """
    cost = check_cost(cost, 2)
    q_large = _check_q(q_large, open_interval=False)
    a, b, q = cost.alpha, cost.beta, jnp.asarray(q_large)
    return 1.0 / ((1 - q) * a[0] + q * a[1] + b[0] + b[1])
