r"""Discrete-event simulator (DES) of token-level routed decoding under four serving policies.

Plain Python + NumPy (event-driven code). **[reconstructed]**: the scheduler rules are this port's derivation of
TokenRouter's delayed batching, the paper's own rules were not retrieved. Exact given the step-cost model
``T_m(n) = alpha_m + beta_m n``, the routing decisions and the policy.

State: per request its context length ``c_r`` and, per model, the number of its tokens that model has in KV cache
``l_{r,m}``; per model a FIFO queue; the device(s). To produce token ``c_r`` model ``m`` processes
``c_r - l_{r,m}`` input tokens (1, plus the lazy KV catch-up of the tokens produced elsewhere since its last
visit); prompts start prefilled in every model (``l_{r,m} = c_r - 1``). After each produced token the router
picks the model of the request's next token. Closed system: the N requests decode until ``n_tokens`` tokens have
been produced (a finished request would be replaced, so N stays constant); throughput = produced / makespan.

Policies:

- ``lockstep`` (request-centric): every step all N requests produce one token; the step runs every model on its
  sub-batch, one after the other on a shared device (``sum_m T_m``) or in parallel on separate devices
  (``max_m T_m``).
- ``sequential``: one request at a time, batch 1, round robin (shared device only).
- ``async_greedy``: model-centric subservers, a step launches as soon as the device is free.
- ``async_delayed`` (TokenRouter-style): shared device, M = 2: when the device frees, run L on all requests
  queued at L if ``|Q_L| >= B_L`` or the oldest waited ``>= tau_L`` or ``Q_S`` is empty; otherwise run S on all
  requests queued at S. Separate devices: device ``m`` launches when ``|Q_m| >= B_m`` or its oldest request waited
  ``>= tau_m`` (a timeout event), or when no step is running anywhere (liveness). ``async_greedy`` is
  ``async_delayed`` with every ``B_m = 1``. Without an explicit ``batch_threshold`` on a shared device the
  parameters come from :func:`~jaxlab.serving.token_router.derive_delayed_batching`.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_in_range, check_int
from jaxlab.serving.token_router.cost_model import StepCostModel, check_cost, derive_delayed_batching
from jaxlab.serving.token_router.papers import TOKEN_ROUTER

__all__ = ["POLICIES", "SimResult", "bernoulli_sim_router", "check_route", "simulate"]

POLICIES = ("lockstep", "sequential", "async_greedy", "async_delayed")

RouterFn = Callable[[np.random.Generator, np.ndarray, np.ndarray], np.ndarray]


class SimResult(NamedTuple):
    """Outcome of :func:`simulate`.

    Attributes:
      throughput: produced tokens per ms, ``tokens / makespan``.
      makespan: simulated time (ms) until ``tokens`` were produced.
      batch_sizes: per model, an int64 array of the batch size (requests) of each of its steps.
      per_model_steps: ``(M,)`` int array, the number of steps per model.
      tokens: the tokens produced (``>= n_tokens``; the last step may overshoot).
      processed_tokens: ``(M,)`` int64 array, the input tokens each model processed (decode + KV catch-up).
    """

    throughput: float
    makespan: float
    batch_sizes: tuple[np.ndarray, ...]
    per_model_steps: np.ndarray
    tokens: int
    processed_tokens: np.ndarray


def bernoulli_sim_router(q_large: float) -> RouterFn:
    """DES router sending each next token to model 1 (L) with probability ``q_large``, else to model 0 (S).

    The returned function carries ``q_large`` as an attribute, so :func:`simulate` derives delayed-batching
    parameters from it without estimating ``q``.

    Args:
      q_large: probability of the large model, in ``[0, 1]``.

    Returns:
      ``route(rng, request_ids, positions) -> (len(request_ids),)`` int64 model indices.

    Raises:
      ValueError: ``q_large`` outside ``[0, 1]``.
    """
    check_in_range(q_large, "q_large", 0.0, 1.0)
    q = float(q_large)

    def route(rng: np.random.Generator, request_ids: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return (rng.random(len(request_ids)) < q).astype(np.int64)

    route.q_large = q  # lets simulate derive delayed-batching parameters without estimating q
    return route


def check_route(z, n: int, num_models: int, who: str = "router_fn") -> np.ndarray:
    """Validate a router's output: ``n`` integer model indices in ``{0..num_models-1}``.

    Args:
      z: the router's output (array-like; integer, or float/bool with integral values).
      n: the number of routed requests.
      num_models: ``M``.
      who: the router's name in the error message.

    Returns:
      ``(n,)`` int64 NumPy array.

    Raises:
      ValueError: ``z`` not of shape ``(n,)``, not integral, or an index outside ``{0..M-1}``.
    """
    z = np.asarray(z)
    if z.shape != (n,):
        raise ValueError(f"{who} must return {n} model indices (shape ({n},)), got shape {z.shape}")
    if z.dtype.kind not in "iu" and not (z.dtype.kind in "fb" and np.all(z == np.round(z))):
        raise ValueError(f"{who} must return integer model indices, got dtype {z.dtype}")
    if n and (z.min() < 0 or z.max() >= num_models):
        bad = z[(z < 0) | (z >= num_models)][0]
        raise ValueError(f"{who} returned model index {bad} outside the model set {{0..{num_models - 1}}}")
    return z.astype(np.int64)


def _per_model(value, m: int, name: str, default, *, integer: bool) -> np.ndarray:
    """Threshold/timeout of every model: a scalar applies to the large model(s) 1..M-1, model 0 keeps default."""
    if value is None:
        return np.full(m, default, dtype=float)
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        out = np.full(m, default, dtype=float)
        out[1:] = arr
        arr = out
    if arr.shape != (m,):
        raise ValueError(f"{name} must be a scalar or have one entry per model ({m}), got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not be NaN, got {arr}")
    if integer and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be integer, got {arr}")
    return arr


class _State:
    """Mutable bookkeeping of one simulation run (requests, KV lengths, queues, counters)."""

    def __init__(self, cost, router_fn, n, m, seed, prompt_len):
        self.alpha = np.asarray(cost.alpha, dtype=float)
        self.beta = np.asarray(cost.beta, dtype=float)
        self.router_fn, self.n, self.m = router_fn, n, m
        self.rng = np.random.default_rng(seed)
        self.ctx = np.full(n, prompt_len, dtype=np.int64)
        self.kv = np.full((n, m), prompt_len - 1, dtype=np.int64)
        self.queues: list[list[int]] = [[] for _ in range(m)]
        self.enq = np.zeros(n)
        self.batches: list[list[int]] = [[] for _ in range(m)]
        self.processed = np.zeros(m, dtype=np.int64)
        self.tokens = 0
        ids = np.arange(n)
        self.next = check_route(router_fn(self.rng, ids, self.ctx.copy()), n, m)

    def step_cost(self, model: int, ids: np.ndarray) -> float:
        """Cost of running ``model`` on requests ``ids``; updates their KV length in that model."""
        ntok = int(np.sum(self.ctx[ids] - self.kv[ids, model]))
        self.kv[ids, model] = self.ctx[ids]
        self.batches[model].append(len(ids))
        self.processed[model] += ntok
        return self.alpha[model] + self.beta[model] * ntok

    def produce(self, ids: np.ndarray, now: float, enqueue: bool) -> None:
        """Requests ``ids`` got their token: advance, route the next token, queue them at the chosen model."""
        self.ctx[ids] += 1
        self.tokens += len(ids)
        z = check_route(self.router_fn(self.rng, ids, self.ctx[ids].copy()), len(ids), self.m)
        self.next[ids] = z
        if enqueue:
            self.enq[ids] = now
            for r, zm in zip(ids.tolist(), z.tolist(), strict=True):
                self.queues[zm].append(r)

    def take(self, model: int, cap: int | None) -> np.ndarray:
        q = self.queues[model]
        k = len(q) if cap is None else min(cap, len(q))
        ids, self.queues[model] = np.asarray(q[:k], dtype=np.int64), q[k:]
        return ids


def _lockstep(st: _State, n_tokens: int, separate: bool) -> float:
    now, ids = 0.0, np.arange(st.n)
    while st.tokens < n_tokens:
        costs = [st.step_cost(mm, ids[st.next == mm]) for mm in range(st.m) if np.any(st.next == mm)]
        now += max(costs) if separate else sum(costs)
        st.produce(ids, now, enqueue=False)
    return now


def _sequential(st: _State, n_tokens: int) -> float:
    now, r = 0.0, 0
    while st.tokens < n_tokens:
        one = np.array([r])
        now += st.step_cost(int(st.next[r]), one)
        st.produce(one, now, enqueue=False)
        r = (r + 1) % st.n
    return now


def _async_shared(st: _State, n_tokens: int, thr: np.ndarray, tau: np.ndarray, cap) -> float:
    now = 0.0
    while st.tokens < n_tokens:
        model = None
        for mm in range(st.m - 1, 0, -1):  # the large model(s) first, if their launch rule fires
            q = st.queues[mm]
            if q and (len(q) >= thr[mm] or now - st.enq[q[0]] >= tau[mm] or not any(st.queues[:mm])):
                model = mm
                break
        if model is None:
            model = 0
        ids = st.take(model, cap)
        now += st.step_cost(model, ids)
        st.produce(ids, now, enqueue=True)
    return now


def _async_separate(st: _State, n_tokens: int, thr: np.ndarray, tau: np.ndarray, cap) -> float:
    busy = np.zeros(st.m, dtype=bool)
    events: list[tuple[float, int, int, np.ndarray | None]] = []  # (time, seq, model, ids or None = timeout)
    pending: set[tuple[float, int]] = set()
    seq, now = 0, 0.0

    def try_launch(force: bool) -> None:
        nonlocal seq
        for mm in range(st.m):
            q = st.queues[mm]
            if busy[mm] or not q:
                continue
            if len(q) >= thr[mm] or now - st.enq[q[0]] >= tau[mm] or force:
                ids = st.take(mm, cap)
                busy[mm] = True
                heapq.heappush(events, (now + st.step_cost(mm, ids), seq, mm, ids))
                seq += 1
            elif np.isfinite(tau[mm]) and (st.enq[q[0]] + tau[mm], mm) not in pending:
                pending.add((st.enq[q[0]] + tau[mm], mm))
                heapq.heappush(events, (st.enq[q[0]] + tau[mm], seq, mm, None))
                seq += 1

    while st.tokens < n_tokens:
        if not events:
            try_launch(True)  # liveness: no step runs and no timeout is pending
            continue
        now, _, mm, ids = heapq.heappop(events)
        if ids is None:
            pending.discard((now, mm))
        else:
            busy[mm] = False
            st.produce(ids, now, enqueue=True)
            if st.tokens >= n_tokens:
                break
        try_launch(False)
    return now


@cites(TOKEN_ROUTER)
def simulate(
    policy: Literal["lockstep", "sequential", "async_greedy", "async_delayed"],
    cost: StepCostModel,
    router_fn: RouterFn,
    n_requests: int,
    n_tokens: int,
    *,
    deployment: Literal["shared", "separate"] = "shared",
    batch_threshold: int | Sequence[int] | None = None,
    timeout: float | Sequence[float] | None = None,
    max_batch: int | None = None,
    prompt_len: int = 1,
    seed: int = 0,
) -> SimResult:
    """Simulate ``policy`` until ``n_tokens`` tokens are produced by ``n_requests`` concurrent requests.

    Exact discrete-event simulation (module docstring) given the step costs ``T_m(n) = alpha_m + beta_m n``, the
    routing decisions and the policy; the ``async_delayed`` rules are **[reconstructed]** from the abstract of
    "TokenRouter: Efficient Serving of Token-Level Routed LLM Inference" (2026; authors and arXiv id not
    retrieved).

    Args:
      policy: ``"lockstep"``, ``"sequential"``, ``"async_greedy"`` or ``"async_delayed"`` (module docstring).
      cost: per-model step costs (ms, ms/token); model 0 is the small model.
      router_fn: ``router_fn(rng, request_ids, positions) -> model index per request`` choosing the model of
        each request's next token (e.g. :func:`bernoulli_sim_router`); ``rng`` is a NumPy ``Generator`` seeded
        with ``seed``.
      n_requests: ``N``, concurrent requests (closed system), an int ``>= 1``.
      n_tokens: tokens to produce, an int ``>= 1``.
      deployment: ``"shared"`` (one device time-shared by the subservers) or ``"separate"`` (one each).
      batch_threshold: ``B`` of ``async_delayed``; a scalar applies to the large model(s), or one per model;
        ``1 <= B <= n_requests``. Shared default: :func:`derive_delayed_batching`.
      timeout: ``tau`` (ms) of ``async_delayed`` (scalar for the large model(s), or one per model); ``>= 0``;
        default: derived (shared) or none (separate).
      max_batch: optional cap on the requests of one step (``async_*`` policies).
      prompt_len: context length at the start (the prompt is prefilled in every model).
      seed: seed of the routing ``Generator``.

    Returns:
      The :class:`SimResult`.

    Raises:
      ValueError: an unknown ``policy`` or ``deployment``; an invalid ``cost``; ``n_requests``, ``n_tokens``,
        ``prompt_len`` or ``max_batch`` below 1; ``batch_threshold`` / ``timeout`` with another policy, or out of
        range; ``"sequential"`` on separate devices; shared ``async_delayed`` with ``M != 2``, or derived
        parameters with ``n_requests < 2`` or a router whose estimated ``q_L`` is not in ``(0, 1)``; separate
        ``async_delayed`` without ``batch_threshold``; a router output rejected by :func:`check_route`.
      TypeError: ``router_fn`` is not callable, or an integer argument is not an int.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.serving.token_router import StepCostModel, bernoulli_sim_router, simulate
      >>> cost = StepCostModel(alpha=jnp.array([2.0, 10.0]), beta=jnp.array([0.05, 0.4]))
      >>> route = bernoulli_sim_router(0.2)
      >>> delayed = simulate("async_delayed", cost, route, n_requests=32, n_tokens=2000)
      >>> lockstep = simulate("lockstep", cost, route, n_requests=32, n_tokens=2000)
      >>> delayed.throughput > lockstep.throughput
      True
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if deployment not in ("shared", "separate"):
        raise ValueError(f"deployment must be 'shared' or 'separate', got {deployment!r}")
    cost = check_cost(cost)
    m = int(cost.alpha.shape[0])
    n = check_int(n_requests, "n_requests", min_value=1)
    n_tokens = check_int(n_tokens, "n_tokens", min_value=1)
    prompt_len = check_int(prompt_len, "prompt_len", min_value=1)
    cap = None if max_batch is None else check_int(max_batch, "max_batch", min_value=1)
    if not callable(router_fn):
        raise TypeError(f"router_fn must be callable, got {type(router_fn).__name__}")
    separate = deployment == "separate"
    if policy != "async_delayed" and (batch_threshold is not None or timeout is not None):
        raise ValueError(f"batch_threshold and timeout apply to policy 'async_delayed' only, got policy {policy!r}")
    if policy == "sequential" and separate:
        raise ValueError("policy 'sequential' is defined on a shared device only, got deployment 'separate'")
    if policy == "async_delayed" and not separate and m != 2:
        raise ValueError(f"async_delayed on a shared device needs M = 2 models, got M = {m}")
    thr = np.ones(m)
    tau = np.full(m, np.inf)
    if policy == "async_delayed":
        if batch_threshold is None and not separate:
            if n < 2:
                raise ValueError("async_delayed with derived parameters needs n_requests >= 2")
            q_large = getattr(router_fn, "q_large", None)
            q_large = _q_estimate(router_fn, n, m, seed) if q_large is None else q_large
            params = derive_delayed_batching(cost, q_large, n)
            batch_threshold = params.batch_threshold
            timeout = params.timeout if timeout is None else timeout
        if batch_threshold is None:
            raise ValueError("async_delayed on separate devices needs an explicit batch_threshold")
        thr = _per_model(batch_threshold, m, "batch_threshold", 1, integer=True)
        if np.any(thr < 1) or np.any(thr > n):
            raise ValueError(f"batch_threshold must lie in [1, n_requests = {n}], got {thr}")
        tau = _per_model(timeout, m, "timeout", np.inf, integer=False)
        if np.any(tau < 0):
            raise ValueError(f"timeout must be >= 0, got {tau}")
        if not separate:
            tau[0] = np.inf  # S stays greedy on the shared device (it runs whenever L's rule does not fire)
    st = _State(cost, router_fn, n, m, seed, prompt_len)
    if policy == "lockstep":
        makespan = _lockstep(st, n_tokens, separate)
    elif policy == "sequential":
        makespan = _sequential(st, n_tokens)
    else:
        for r in range(n):
            st.queues[int(st.next[r])].append(r)
        run = _async_separate if separate else _async_shared
        makespan = run(st, n_tokens, thr, tau, cap)
    makespan = float(makespan)  # host floats, as documented (not numpy float64 scalars)
    return SimResult(st.tokens / makespan, makespan, tuple(np.asarray(b, dtype=np.int64) for b in st.batches),
                     np.array([len(b) for b in st.batches]), st.tokens, st.processed.copy())


def _q_estimate(router_fn: RouterFn, n: int, m: int, seed: int) -> float:
    """Fraction of tokens ``router_fn`` sends to the large model, estimated on 4096 draws of its own stream
    (a separate generator, so the simulation's routing stream is untouched)."""
    rng = np.random.default_rng([seed, 1])
    ids = np.arange(4096) % n
    z = check_route(router_fn(rng, ids, np.ones(4096, dtype=np.int64)), 4096, m)
    q = float(np.mean(z == 1))
    if not 0.0 < q < 1.0:
        raise ValueError(f"router_fn sends a fraction {q} of tokens to the large model: delayed batching needs "
                         "0 < q_large < 1; pass batch_threshold explicitly")
    return q
