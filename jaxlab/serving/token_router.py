r"""TokenRouter-style delayed batching (jaxlab derivation): step-cost model, throughput models and token routers.

Paper: "TokenRouter" (2026, an efficient serving system for token-level routed LLM inference; text, authors and
arXiv id not retrieved, abstract only). TokenRouter serves token-level routing model-centrically: one subserver
per candidate model, each with its own queue and KV cache, the router dispatching every request's next token to
the chosen model's subserver, and a *delayed-batching* scheduler whose batch threshold and timeout are computed
from a throughput model. **[reconstructed]** The throughput model, the scheduler rule and the baselines below are
the spec's own derivation (``agents_systems.md`` A.3 and A.9), checked against the discrete-event simulator of
:mod:`jaxlab.serving.simulator`, not the paper's formulas.

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

Routers (pure, ``jit``/``vmap``; each returns the model index per row, 0 = S, 1 = L): Bernoulli(q_L);
confidence threshold (She et al. 2025: L when ``max_v p_S(v) < tau``); Co-LLM gate (Shen et al. 2024:
``P(Z=1 | x_<t) = sigma(w . h^S_t + c)``, defer when ``> eta``; the marginal likelihood
``prod_t sum_z P(Z_t = z) P_z(x_t | x_<t)`` trains it); R2R-style divergence classifier (Fu et al. 2025: a small
MLP on S's hidden state and logit statistics, L regenerates the tokens it flags).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float, Int, Key
from jaxlab.core.validation import as_array, check_finite, check_in_range, check_int, check_simplex, is_concrete
from jaxlab.serving._papers import COLLM, R2R, TOKEN_ROUTER
from jaxlab.serving._papers_token_router import EDGE_ROUTING

__all__ = [
    "CoLLMGate",
    "DelayedBatchingParams",
    "R2RParams",
    "StepCostModel",
    "bernoulli_router",
    "check_cost",
    "colm_gate",
    "colm_gate_prob",
    "colm_marginal_nll",
    "confidence_router",
    "derive_delayed_batching",
    "fit_step_cost",
    "init_colm_gate",
    "init_r2r",
    "r2r_router",
    "r2r_score",
    "step_latency",
    "throughput_lockstep",
    "throughput_separate",
    "throughput_sequential",
    "throughput_shared",
]


class StepCostModel(NamedTuple):
    """Per-model step latency ``T_m(n) = alpha[m] + beta[m] n`` (``alpha`` in ms, ``beta`` in ms per token)."""

    alpha: Float[Array, " M"]
    beta: Float[Array, " M"]


class DelayedBatchingParams(NamedTuple):
    """Delayed-batching hyperparameters of the large model derived from the shared-device throughput model:
    the batch threshold ``B_L*``, the timeout ``tau_L*`` (ms) and the predicted throughput ``X(B_L*)``
    (tokens/ms)."""

    batch_threshold: int
    timeout: float
    predicted_throughput: float


def check_cost(cost: StepCostModel, num_models: int | None = None) -> StepCostModel:
    """Validate a :class:`StepCostModel`: 1-d arrays of equal length, ``alpha > 0``, ``beta >= 0``, finite."""
    alpha = as_array(cost.alpha, "cost.alpha", ndim=1, finite=True)
    beta = as_array(cost.beta, "cost.beta", ndim=1, shape=alpha.shape, finite=True)
    if num_models is not None and alpha.shape[0] != num_models:
        raise ValueError(f"cost must describe {num_models} models, got {alpha.shape[0]}")
    if is_concrete(alpha) and bool(np.any(np.asarray(alpha) <= 0)):
        raise ValueError(f"cost.alpha (fixed step cost) must be > 0 for every model, got {np.asarray(alpha)}")
    if is_concrete(beta) and bool(np.any(np.asarray(beta) < 0)):
        raise ValueError(f"cost.beta (cost per token) must be >= 0 for every model, got {np.asarray(beta)}")
    return StepCostModel(alpha, beta)


def step_latency(cost: StepCostModel, model: int, n_tokens) -> Array:
    """``T_m(n) = alpha_m + beta_m n``."""
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

    Returns ``(alpha, beta, r2)`` (0-d arrays; ``r2`` = coefficient of determination). Needs at least two
    distinct token counts. A fitted ``alpha <= 0`` is returned as is; :func:`check_cost` rejects it on use.
    """
    n = as_array(batch_tokens, "batch_tokens", ndim=1, finite=True)
    y = as_array(latencies, "latencies", ndim=1, shape=n.shape, finite=True)
    if n.shape[0] < 2:
        raise ValueError(f"batch_tokens needs at least 2 measurements, got {n.shape[0]}")
    if is_concrete(n) and float(np.ptp(np.asarray(n))) == 0.0:
        raise ValueError("batch_tokens must contain at least two distinct token counts to fit a slope")
    return _fit(n, y)


def _check_visits(visits, m: int) -> Array:
    v = as_array(visits, "visits", ndim=1, shape=(m,), finite=True)
    check_in_range(v, "visits", 0.0, 1.0)
    if is_concrete(v) and float(np.sum(np.asarray(v))) <= 0:
        raise ValueError("visits must have a positive entry (some model must produce tokens)")
    return v


def _check_q(q_large, name: str = "q_large", *, open_interval: bool) -> None:
    check_finite(q_large, name)
    check_in_range(q_large, name, 0.0, 1.0, lo_open=open_interval, hi_open=open_interval)


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
    """Fluid throughput (tokens/ms) with each subserver on its own device: the root of
    ``F(X) = sum_m v_m alpha_m X / (1 - beta_m X) = N`` on ``(0, 1 / max beta)``, by bisection in a
    ``lax.while_loop``. ``visits[m]`` = expected visits of model ``m`` per generated token (``q_m`` for exclusive
    routing, ``(1, q_L)`` for R2R-style). One model: ``X = N / (alpha + beta N)``. An upper bound of the DES
    (it assumes every device always busy). ``exclusive=True`` also checks that ``visits`` is a probability vector
    (each token produced by exactly one model). **[reconstructed]** (spec A.3(a))."""
    cost = check_cost(cost)
    v = _check_visits(visits, cost.alpha.shape[0])
    if exclusive:
        check_simplex(v, "visits (exclusive routing)", atol=1e-6)
    n = _check_n(n_requests)
    dtype = jnp.result_type(cost.alpha.dtype, cost.beta.dtype, v.dtype)
    return _bisect_separate(cost.alpha.astype(dtype), cost.beta.astype(dtype), v.astype(dtype), jnp.asarray(n, dtype))


def _k_cycle(q, n, b):
    """Integer number of S steps per cycle, ``k(B)`` (the 1e-9 of the spec makes exact ties deterministic)."""
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
    _check_q(q_large, open_interval=True)
    n = _check_n(n_requests, lo=2)
    dtype = jnp.result_type(cost.alpha.dtype, cost.beta.dtype, jnp.asarray(q_large).dtype)
    return cost.alpha.astype(dtype), cost.beta.astype(dtype), jnp.asarray(q_large, dtype), n, dtype


@cites(TOKEN_ROUTER)
def throughput_shared(cost: StepCostModel, q_large, n_requests: int, batch_threshold) -> Float[Array, "*B"]:
    """Fluid throughput ``X(B)`` (tokens/ms) of delayed batching on one shared device (M = 2, exclusive
    routing): ``(B/q_L) / (alpha_L + k(B) alpha_S + (beta_S + beta_L) B/q_L)``. ``batch_threshold`` may be an
    array of thresholds (elementwise); jit and vmap over ``B``. Needs ``N >= 2`` and ``1 <= B <= N - 1``.
    **[reconstructed]** (spec A.3(b))."""
    alpha, beta, q, n, dtype = _shared_inputs(cost, q_large, n_requests)
    b = jnp.asarray(batch_threshold)
    if is_concrete(b):
        check_in_range(b, "batch_threshold", 1, n - 1)
    return _shared(alpha, beta, q, jnp.asarray(n, dtype), b.astype(dtype))


@cites(TOKEN_ROUTER)
def derive_delayed_batching(cost: StepCostModel, q_large: float, n_requests: int) -> DelayedBatchingParams:
    """``B_L* = argmax_{B in 1..N-1} X(B)`` (ties: smallest ``B``), ``tau_L* = k(B_L*) T_S(nbar_S)`` with
    ``nbar_S = (B_L*(1 - q_L)/q_L) / max(k, 1)``; S stays greedy (``B_S = 1``, ``tau_S = 0``).
    **[reconstructed]** (spec A.3(b)); the timeout only guards against starvation when traffic drops."""
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
    """Request-centric lockstep baseline on one device (every step all N requests produce one token, S runs on
    its sub-batch and L on its own): ``X_sync = N / (alpha_S (1 - q_L^N) + alpha_L (1 - (1 - q_L)^N) +
    (beta_S + beta_L) N)``. **[reconstructed]** (spec A.3)."""
    cost = check_cost(cost, 2)
    _check_q(q_large, open_interval=False)
    n = _check_n(n_requests)
    a, b, q = cost.alpha, cost.beta, jnp.asarray(q_large)
    return n / (a[0] * (1 - q**n) + a[1] * (1 - (1 - q) ** n) + (b[0] + b[1]) * n)


@cites(TOKEN_ROUTER)
def throughput_sequential(cost: StepCostModel, q_large) -> Float[Array, ""]:
    """Per-request sequential baseline (batch 1, steps serialised on one device):
    ``X_seq = 1 / (q_S alpha_S + q_L alpha_L + beta_S + beta_L)``, whatever ``N``. **[reconstructed]**."""
    cost = check_cost(cost, 2)
    _check_q(q_large, open_interval=False)
    a, b, q = cost.alpha, cost.beta, jnp.asarray(q_large)
    return 1.0 / ((1 - q) * a[0] + q * a[1] + b[0] + b[1])


# ----------------------------------------------------------------------------------------------------- routers


@cites(TOKEN_ROUTER)
def bernoulli_router(key: Key, batch: int, q_large) -> Int[Array, " batch"]:
    """Synthetic router: each token goes to L (1) with probability ``q_large``, else to S (0)."""
    batch = check_int(batch, "batch", min_value=1)
    _check_q(q_large, open_interval=False)
    return (jax.random.uniform(key, (batch,)) < q_large).astype(jnp.int32)


def _check_logits(small_logits) -> Array:
    return as_array(small_logits, "small_logits", ndim=2)


@cites(EDGE_ROUTING)
def confidence_router(small_logits: Float[Array, "b V"], tau) -> Int[Array, " b"]:
    """Confidence-threshold routing (She et al. 2025): S proposes; the token goes to L (1) when S's top
    probability ``max_v softmax(small_logits)_v < tau``."""
    logits = _check_logits(small_logits)
    _check_q(tau, "tau", open_interval=False)
    pmax = jnp.exp(jnp.max(jax.nn.log_softmax(logits, axis=-1), axis=-1))
    return (pmax < tau).astype(jnp.int32)


class CoLLMGate(NamedTuple):
    """Co-LLM deferral head: ``P(Z_t = 1 | x_<t) = sigma(w . h_t + c)`` on the small model's last hidden state."""

    w: Float[Array, " d"]
    c: Float[Array, ""]


def init_colm_gate(key: Key, d: int, bias: float = 0.0) -> CoLLMGate:
    """Random gate ``w ~ N(0, 1/d)``, ``c = bias``."""
    d = check_int(d, "d", min_value=1)
    return CoLLMGate(jax.random.normal(key, (d,)) / math.sqrt(d), jnp.asarray(float(bias)))


def _check_hidden(small_hidden, d: int) -> Array:
    h = as_array(small_hidden, "small_hidden", ndim=2)
    if h.shape[1] != d:
        raise ValueError(f"small_hidden has hidden size {h.shape[1]}, but the router parameters expect {d}")
    return h


@cites(COLLM)
def colm_gate_prob(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"]) -> Float[Array, " b"]:
    """``P_theta(Z_t = 1 | x_<t) = sigma(w . h^S_t + c)``."""
    w = as_array(gate_params.w, "gate_params.w", ndim=1)
    h = _check_hidden(small_hidden, w.shape[0])
    return jax.nn.sigmoid(h @ w + gate_params.c)


@cites(COLLM)
def colm_gate(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"], eta) -> Int[Array, " b"]:
    """Co-LLM greedy deferral: the token goes to the assistant L (1) when ``P_theta(Z_t = 1) > eta``."""
    _check_q(eta, "eta", open_interval=False)
    return (colm_gate_prob(gate_params, small_hidden) > eta).astype(jnp.int32)


@cites(COLLM)
def colm_marginal_nll(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"], logp_small: Float[Array, " b"],
                      logp_large: Float[Array, " b"]) -> Float[Array, ""]:
    """Mean negative marginal log-likelihood of Co-LLM,
    ``-log( sigma(-s) P_S(x_t | x_<t) + sigma(s) P_L(x_t | x_<t) )``, ``s = w . h_t + c``; ``logp_*`` are the
    log-probabilities each model gives the observed token. Differentiable in ``gate_params`` (train with optax)."""
    w = as_array(gate_params.w, "gate_params.w", ndim=1)
    h = _check_hidden(small_hidden, w.shape[0])
    ls = as_array(logp_small, "logp_small", ndim=1, shape=(h.shape[0],))
    ll = as_array(logp_large, "logp_large", ndim=1, shape=(h.shape[0],))
    s = h @ w + gate_params.c
    return -jnp.mean(jnp.logaddexp(jax.nn.log_sigmoid(-s) + ls, jax.nn.log_sigmoid(s) + ll))


class R2RParams(NamedTuple):
    """One-hidden-layer MLP of the R2R-style divergence classifier on ``[h, max log p, entropy]``."""

    w1: Float[Array, "f k"]
    b1: Float[Array, " k"]
    w2: Float[Array, " k"]
    b2: Float[Array, ""]


def init_r2r(key: Key, d: int, width: int = 32) -> R2RParams:
    """Random R2R classifier for hidden size ``d`` (input features ``d + 2``)."""
    d = check_int(d, "d", min_value=1)
    width = check_int(width, "width", min_value=1)
    k1, k2 = jax.random.split(key)
    f = d + 2
    return R2RParams(jax.random.normal(k1, (f, width)) / math.sqrt(f), jnp.zeros(width),
                     jax.random.normal(k2, (width,)) / math.sqrt(width), jnp.asarray(0.0))


@cites(R2R)
def r2r_score(mlp_params: R2RParams, small_hidden: Float[Array, "b d"], small_logits: Float[Array, "b V"]):
    """Divergence probability ``sigma(MLP([h, max_v log p_S(v), H(p_S)]))`` of the R2R-style classifier."""
    w1 = as_array(mlp_params.w1, "mlp_params.w1", ndim=2)
    h = _check_hidden(small_hidden, w1.shape[0] - 2)
    logits = _check_logits(small_logits)
    if logits.shape[0] != h.shape[0]:
        raise ValueError(f"small_logits has {logits.shape[0]} rows but small_hidden has {h.shape[0]}")
    logp = jax.nn.log_softmax(logits, axis=-1)
    feats = jnp.concatenate([h, jnp.max(logp, -1, keepdims=True), -jnp.sum(jnp.exp(logp) * logp, -1, keepdims=True)],
                            axis=-1)
    z = jax.nn.gelu(feats @ w1 + mlp_params.b1)
    return jax.nn.sigmoid(z @ mlp_params.w2 + mlp_params.b2)


@cites(R2R)
def r2r_router(mlp_params: R2RParams, small_hidden: Float[Array, "b d"], small_logits: Float[Array, "b V"],
               threshold) -> Int[Array, " b"]:
    """R2R-style routing: S generates every token; tokens whose divergence score exceeds ``threshold`` are
    regenerated by L (1). Visits per token: ``v_S = 1``, ``v_L = q_L``."""
    _check_q(threshold, "threshold", open_interval=False)
    return (r2r_score(mlp_params, small_hidden, small_logits) > threshold).astype(jnp.int32)
