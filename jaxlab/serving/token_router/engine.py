r"""A real token-routed decoding engine over tiny JAX LMs: model-centric subservers with (delayed) batching, and the
request-centric lockstep and per-request sequential baselines, on one shared device.

Event bookkeeping is plain Python + NumPy; every step is one jitted call of
:func:`~jaxlab.serving.token_router.tiny_lm.decode_step_flat` on a subserver's KV cache (rows = request slots). Routing
decisions depend only on (request, position) (e.g. a pre-drawn Bernoulli table), so the host never waits for a
step's tokens: generated tokens stay on the device in a token buffer, steps are dispatched asynchronously (JAX's
asynchronous dispatch) and the host only blocks at the end. All policies therefore produce the same tokens as the
cache-free routed reference decode (:func:`reference_decode`); only the schedule, and so the throughput, differs.

KV catch-up is lazy: when request ``r`` visits model ``m`` to produce its token at index ``c``, the step feeds
``m`` the tokens ``l_{r,m} .. c-1`` (the prompt on the first visit, then 1 plus what other models produced since);
a step packs the tokens of all its requests into one ragged list, padded to a bucket of ``2^k`` or ``3 * 2^(k-1)``
tokens (one compilation per model and bucket). Closed system: when a request finishes, the next prompt takes its
slot. **[reconstructed]** Policies as in
:mod:`jaxlab.serving.token_router.simulator` (TokenRouter-style delayed batching: the large model's step waits for
``B_L`` queued requests, a timeout of ``tau_L`` ms of host time, or an empty small-model queue).
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.validation import check_in_range, check_int
from jaxlab.serving.token_router.cost_model import StepCostModel, derive_delayed_batching, fit_step_cost
from jaxlab.serving.token_router.papers import TOKEN_ROUTER
from jaxlab.serving.token_router.simulator import check_route
from jaxlab.serving.token_router.tiny_lm import KVCache, TinyDecoder, decode_step_flat, forward, init_cache

__all__ = ["EngineStats", "Subserver", "TokenRouterEngine", "measure_step_cost", "reference_decode",
           "table_router"]

RouteFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


# Padded token counts of a step: 2^k and 3 * 2^(k-1), so that padding wastes at most a third of a step (on a CPU
# a large model's step costs about linearly in its tokens, and powers of two alone wasted ~30% of its work).
BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def _bucket(x: int, buckets: tuple[int, ...]) -> int:
    """Smallest bucket >= x (the next power of two beyond the largest bucket)."""
    return next((b for b in buckets if b >= x), 1 << max(0, int(x) - 1).bit_length())


def table_router(table) -> RouteFn:
    """Router reading pre-drawn decisions ``table[request, position]`` (model index of the token produced at
    ``position``), e.g. ``np.asarray(bernoulli_router(key, P * T, q).reshape(P, T))``.

    Args:
      table: ``(P, T)`` integer array-like: model index per request (row) and position (column).

    Returns:
      ``route(request_ids, positions) -> table[request_ids, positions]`` (NumPy).

    Raises:
      ValueError: ``table`` is not 2-d.
    """
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError(f"table must be 2-dimensional (requests, positions), got shape {table.shape}")

    def route(request_ids: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return table[request_ids, positions]

    return route


@functools.partial(jax.jit, static_argnames=("ctx",), donate_argnums=(1, 2))
def _engine_step(model, cache, seq, req, slots, posn, valid, is_last, *, ctx):
    logits, _, cache = decode_step_flat(model, cache, slots, seq[req, posn], posn, valid, ctx)
    write = jnp.where(is_last, posn + 1, seq.shape[1])  # out of range: dropped
    seq = seq.at[req, write].set(jnp.argmax(logits, -1).astype(seq.dtype), mode="drop")
    return cache, seq


def _pack(req, slots, pos, lengths, bucket: int, dummy_req: int, dummy_slot: int):
    """Ragged rows -> one padded token list: (req, slot, position, valid, is_last) per token."""
    total = int(lengths.sum())
    rep = np.repeat(np.arange(len(req)), lengths)
    offs = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    pad = bucket - total
    cols = ((req[rep], dummy_req), (slots[rep], dummy_slot), (pos[rep] + offs, 0))
    out = [np.concatenate([a, np.full(pad, v)]).astype(np.int32) for a, v in cols]
    out.append(np.arange(bucket) < total)
    out.append(np.concatenate([offs == lengths[rep] - 1, np.zeros(pad, bool)]))
    return out


class Subserver:
    """One model's server: its KV cache over ``n_slots`` request slots, its FIFO queue and step counters.

    Args:
      model: the :class:`~jaxlab.serving.token_router.tiny_lm.TinyDecoder` it serves.
      n_slots: request slots (cache rows), an int ``>= 1``.
      ctx: positions per cache row (the attention context of every step).
      token_buckets: sorted padded token counts of a step (beyond the largest: the next power of two; ``()``:
        always the next power of two).
    """

    def __init__(self, model: TinyDecoder, n_slots: int, ctx: int, token_buckets=BUCKETS):
        self.model, self.n_slots, self.ctx, self.token_buckets = model, n_slots, ctx, token_buckets
        self.cache: KVCache = init_cache(model, n_slots, ctx)
        self.queue: list[int] = []
        self.batch_sizes: list[int] = []
        self.tokens_processed = 0
        self.tokens_padded = 0

    def launch(self, seq, req: np.ndarray, slots: np.ndarray, pos: np.ndarray, lengths: np.ndarray):
        """Dispatch one step (asynchronously) on the given rows; returns the new token buffer."""
        bucket = _bucket(int(lengths.sum()), self.token_buckets)
        args = _pack(req, slots, pos, lengths, bucket, seq.shape[0] - 1, self.n_slots)
        self.cache, seq = _engine_step(self.model, self.cache, seq, *args, ctx=self.ctx)
        self.batch_sizes.append(len(req))
        self.tokens_processed += int(lengths.sum())
        self.tokens_padded += bucket
        return seq


class EngineStats(NamedTuple):
    """Measurements of one :meth:`TokenRouterEngine.run`.

    Attributes:
      tokens: generated tokens.
      seconds: wall-clock seconds of the run (host clock, after the last step finished).
      throughput: decode throughput, ``tokens / seconds``.
      steps: steps per model.
      mean_batch: mean requests per step, per model (0 for a model that never ran).
      tokens_processed: input tokens processed per model (decode + KV catch-up + prefill).
      tokens_padded: token slots computed per model, padding included.
    """

    tokens: int
    seconds: float
    throughput: float
    steps: tuple[int, ...]
    mean_batch: tuple[float, ...]
    tokens_processed: tuple[int, ...]
    tokens_padded: tuple[int, ...]


POLICIES = ("lockstep", "sequential", "async_greedy", "async_delayed")


@cites(TOKEN_ROUTER)
class TokenRouterEngine:
    """Token-level routed decoding of tiny LMs with one :class:`Subserver` per model on one shared device.

    Model-centric serving after the abstract of "TokenRouter: Efficient Serving of Token-Level Routed LLM
    Inference" (2026; authors and arXiv id not retrieved): each model has a subserver with its own KV cache and
    queue; every produced token sends its request to the queue of the model that produces its next token; on the
    shared device the large model's step waits for ``B_L`` queued requests, a timeout ``tau_L`` or an empty
    small-model queue (**[reconstructed]** scheduler, as in :mod:`~jaxlab.serving.token_router.simulator`).
    Every policy produces the tokens of :func:`reference_decode`; only the schedule differs.
    :meth:`run` decodes a list of prompts and returns ``(outputs, EngineStats)``.

    Args:
      models: the candidate models, model 0 the small one (equal vocabularies and ``max_len``).
      route: ``route(request_ids, positions) -> model index`` of the token each request produces at
        ``position`` (deterministic; e.g. :func:`table_router`).
      n_slots: concurrent requests ``N`` (closed system), an int ``>= 1``.
      policy: ``"async_delayed"`` (TokenRouter-style), ``"async_greedy"``, ``"lockstep"`` or ``"sequential"``.
      batch_threshold: ``B_L`` of ``async_delayed``, an int in ``[1, n_slots]``; when None it is derived with
        :func:`derive_delayed_batching` from ``cost`` and ``q_large`` (M = 2).
      timeout: ``tau_L`` (ms, host clock) of ``async_delayed``, ``>= 0``; when None, the derived one if
        ``batch_threshold`` is derived, else no timeout.
      cost: the :class:`~jaxlab.serving.token_router.cost_model.StepCostModel` used to derive ``B_L`` and
        ``tau_L`` (e.g. from :func:`measure_step_cost`); ignored otherwise.
      q_large: fraction of tokens routed to the large model, used to derive ``B_L`` and ``tau_L``.
      token_buckets: padded token counts of a step; each bucket used compiles once per model (fewer buckets
        compile faster and pad more).
      max_step_tokens: token budget of one step of the async policies, an int ``>= 1`` or None (no budget): a
        step takes queued requests in FIFO order while their tokens (catch-up included) fit, at least one;
        the others stay queued for the next step. Past ~128 tokens a step amortises its fixed cost no further,
        and on a CPU its cost grows faster than linearly (6-layer d = 256 model: 26 ms at 128 tokens, 54 ms at
        192). The lockstep and sequential policies run every request of a step by definition and ignore it.

    Raises:
      ValueError: an unknown ``policy``; models with different vocabularies or ``max_len``; ``batch_threshold``
        or ``timeout`` with a policy other than ``async_delayed``; ``async_delayed`` without ``batch_threshold``
        nor ``cost`` and ``q_large``; an integer out of range or a negative ``timeout``.
      TypeError: ``models`` is empty or holds something other than ``TinyDecoder``, ``route`` is not callable,
        or an integer argument is not an int.

    Example:
      >>> import jax, numpy as np
      >>> from jaxlab.serving.token_router import TinyDecoder, TokenRouterEngine, reference_decode, table_router
      >>> small, large = (TinyDecoder(k, num_layers=1, d_model=8, num_heads=1, vocab=8, max_len=8)
      ...                 for k in jax.random.split(jax.random.key(0)))  # two toy models, same size here
      >>> route = table_router(np.random.default_rng(0).integers(0, 2, size=(3, 8)))  # (request, position)
      >>> engine = TokenRouterEngine([small, large], route, n_slots=2, batch_threshold=2, token_buckets=(4,))
      >>> prompts = [[1, 2], [3, 4], [5, 6]]
      >>> outputs, stats = engine.run(prompts, max_new_tokens=2)
      >>> ref = reference_decode([small, large], route, prompts, max_new_tokens=2)
      >>> all((o == r).all() for o, r in zip(outputs, ref)), stats.tokens
      (True, 6)
    """

    def __init__(self, models: Sequence[TinyDecoder], route: RouteFn, *, n_slots: int,
                 policy: Literal["lockstep", "sequential", "async_greedy", "async_delayed"] = "async_delayed",
                 batch_threshold: int | None = None, timeout: float | None = None,
                 cost: StepCostModel | None = None, q_large: float | None = None,
                 token_buckets: Sequence[int] = BUCKETS, max_step_tokens: int | None = 128):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if len(models) < 1 or not all(isinstance(m, TinyDecoder) for m in models):
            raise TypeError("models must be a non-empty sequence of TinyDecoder")
        if len({(m.vocab, m.max_len) for m in models}) != 1:
            raise ValueError("models must share vocabulary size and max_len")
        if not callable(route):
            raise TypeError(f"route must be callable, got {type(route).__name__}")
        self.models, self.route, self.policy = tuple(models), route, policy
        self.n_slots = check_int(n_slots, "n_slots", min_value=1)
        self.batch_threshold, self.timeout = 1, math.inf
        if policy == "async_delayed":
            if batch_threshold is None:
                if cost is None or q_large is None:
                    raise ValueError("async_delayed needs batch_threshold, or cost and q_large to derive it")
                params = derive_delayed_batching(cost, q_large, self.n_slots)
                batch_threshold = params.batch_threshold
                timeout = params.timeout if timeout is None else timeout
            self.batch_threshold = check_int(batch_threshold, "batch_threshold", min_value=1, max_value=self.n_slots)
            if timeout is not None:
                check_in_range(timeout, "timeout", 0.0)
                self.timeout = float(timeout)
        elif batch_threshold is not None or timeout is not None:
            raise ValueError(f"batch_threshold and timeout apply to policy 'async_delayed' only, got {policy!r}")
        self.token_buckets = tuple(sorted(check_int(b, "token_buckets", min_value=1) for b in token_buckets))
        self.max_step_tokens = None if max_step_tokens is None else check_int(max_step_tokens, "max_step_tokens",
                                                                              min_value=1)
        self.subservers: dict[int, Subserver] = {}

    def run(self, prompts: Sequence[Sequence[int]], max_new_tokens: int):
        """Decode ``max_new_tokens`` greedy tokens after every prompt (``n_slots`` requests at a time).

        Args:
          prompts: non-empty 1-d integer token sequences, ids in ``[0, vocab)``.
          max_new_tokens: tokens to generate per prompt, an int ``>= 1``; prompt length plus it must fit in the
            models' ``max_len``.

        Returns:
          A tuple ``(outputs, stats)``: ``outputs[i]`` the ``(max_new_tokens,)`` int32 NumPy array generated after
          prompt ``i``, and the :class:`EngineStats`.

        Raises:
          ValueError: no prompts, a prompt that is empty, not 1-d integer, too long or with ids outside the
            vocabulary, ``max_new_tokens < 1``, or a route output rejected by
            :func:`~jaxlab.serving.token_router.simulator.check_route`.
          TypeError: ``max_new_tokens`` is not an int.
        """
        max_new = check_int(max_new_tokens, "max_new_tokens", min_value=1)
        prompts = [np.asarray(p) for p in prompts]
        vocab, max_len = self.models[0].vocab, self.models[0].max_len
        if not prompts:
            raise ValueError("prompts must contain at least one prompt")
        for i, p in enumerate(prompts):
            if p.ndim != 1 or p.size < 1 or p.dtype.kind not in "iu":
                raise ValueError(f"prompt {i} must be a non-empty 1-d integer sequence, got shape {p.shape}")
            if p.size + max_new > max_len:
                raise ValueError(f"prompt {i} of length {p.size} plus max_new_tokens {max_new} exceeds the models' "
                                 f"max length {max_len}")
            if p.min() < 0 or p.max() >= vocab:
                raise ValueError(f"prompt {i} has token ids outside [0, {vocab})")
        n_req, m = len(prompts), len(self.models)
        plen = np.array([p.size for p in prompts])
        end = plen + max_new
        ctx = min(max_len, 16 * math.ceil(int(end.max()) / 16))
        seq_np = np.zeros((n_req + 1, ctx), np.int32)  # last row: target of padding rows
        for i, p in enumerate(prompts):
            seq_np[i, : p.size] = p
        seq = jnp.asarray(seq_np)
        self.subservers = {k: Subserver(model, self.n_slots, ctx, self.token_buckets)
                           for k, model in enumerate(self.models)}
        length = plen.copy()
        kv = np.zeros((n_req, m), np.int64)
        slot = np.full(n_req, -1)
        nxt = np.full(n_req, -1)
        enq = self._enq = np.zeros(n_req)
        active: list[int] = []
        waiting = list(range(n_req))[::-1]
        free = list(range(self.n_slots))[::-1]
        generated = 0

        def admit() -> None:
            while free and waiting:
                r = waiting.pop()
                slot[r] = free.pop()
                active.append(r)
                route_and_queue(np.array([r]))

        def route_and_queue(ids: np.ndarray) -> None:
            z = check_route(self.route(ids, length[ids].copy()), len(ids), m, "route")
            nxt[ids] = z
            now = time.perf_counter()
            for r, zm in zip(ids.tolist(), z.tolist(), strict=True):
                enq[r] = now
                self.subservers[zm].queue.append(r)

        def step(model: int, ids: np.ndarray) -> np.ndarray:
            """Run ``model`` on requests ``ids``; returns the requests that are still decoding."""
            nonlocal seq, generated
            sub = self.subservers[model]
            pos = kv[ids, model]
            seq = sub.launch(seq, ids, slot[ids], pos, length[ids] - pos)
            kv[ids, model] = length[ids]
            length[ids] += 1
            generated += len(ids)
            finished = ids[length[ids] >= end[ids]]
            for r in finished.tolist():
                active.remove(r)
                free.append(int(slot[r]))
            return ids[length[ids] < end[ids]]

        t0 = time.perf_counter()
        if self.policy in ("lockstep", "sequential"):
            admit()
            for s in self.subservers.values():
                s.queue.clear()
            while active:
                batch = np.array(active)
                groups = [[r] for r in batch] if self.policy == "sequential" else [batch]
                for g in groups:
                    g = np.asarray(g)
                    parts = [g[nxt[g] == model] for model in range(m)]  # fixed before any step runs
                    for model, ids in enumerate(parts):
                        if len(ids):
                            cont = step(model, ids)
                            if len(cont):
                                nxt[cont] = check_route(self.route(cont, length[cont].copy()), len(cont), m, "route")
                admit()
                for s in self.subservers.values():
                    s.queue.clear()
        else:
            admit()
            while active:
                model = self._choose()
                q = self.subservers[model].queue
                ids = np.array(q)
                if self.max_step_tokens is not None:  # FIFO prefix within the token budget, at least one
                    need = np.cumsum(length[ids] - kv[ids, model])
                    ids = ids[: max(1, int(np.searchsorted(need, self.max_step_tokens, side="right")))]
                del q[: len(ids)]
                cont = step(model, ids)
                if len(cont):
                    route_and_queue(cont)
                admit()
        seq = jax.block_until_ready(seq)
        seconds = time.perf_counter() - t0
        out = np.asarray(seq)
        outputs = [out[i, plen[i]: end[i]].copy() for i in range(n_req)]
        subs = [self.subservers[k] for k in range(m)]
        stats = EngineStats(generated, seconds, generated / seconds, tuple(len(s.batch_sizes) for s in subs),
                            tuple(float(np.mean(s.batch_sizes)) if s.batch_sizes else 0.0 for s in subs),
                            tuple(s.tokens_processed for s in subs), tuple(s.tokens_padded for s in subs))
        return outputs, stats

    def _choose(self) -> int:
        """Shared-device scheduler: the largest model whose launch rule fires, else the small model."""
        queues = [self.subservers[k].queue for k in range(len(self.models))]
        now = time.perf_counter()
        for k in range(len(queues) - 1, 0, -1):
            q = queues[k]
            if q and (len(q) >= self.batch_threshold or 1e3 * (now - self._enq_time(q)) >= self.timeout
                      or not any(queues[:k])):
                return k
        return 0 if queues[0] else next(k for k in range(len(queues)) if queues[k])

    def _enq_time(self, q: list[int]) -> float:
        return self._enq[q[0]]


@jax.jit
def _forward_logits(model, tokens):
    return forward(model, tokens)[0]


@cites(TOKEN_ROUTER)
def reference_decode(models: Sequence[TinyDecoder], route: RouteFn, prompts: Sequence[Sequence[int]],
                     max_new_tokens: int) -> list[np.ndarray]:
    """Routed greedy decoding without KV caches, one request and one token at a time (the engine's reference):
    the token at position ``c`` of request ``r`` is ``argmax forward(models[route(r, c)], x_<c)[c - 1]``.

    Args:
      models: the candidate :class:`~jaxlab.serving.token_router.tiny_lm.TinyDecoder` models.
      route: ``route(request_ids, positions) -> model index`` (as for :class:`TokenRouterEngine`).
      prompts: 1-d integer token sequences.
      max_new_tokens: tokens to generate per prompt, an int ``>= 1``.

    Returns:
      One ``(max_new_tokens,)`` int32 NumPy array per prompt.

    Raises:
      ValueError: ``max_new_tokens < 1``, the longest prompt plus ``max_new_tokens`` beyond the models'
        ``max_len``, or a route output rejected by :func:`~jaxlab.serving.token_router.simulator.check_route`.
      TypeError: ``max_new_tokens`` is not an int.
    """
    max_new = check_int(max_new_tokens, "max_new_tokens", min_value=1)
    prompts = [np.asarray(p) for p in prompts]
    total = max(p.size for p in prompts) + max_new
    if total > models[0].max_len:
        raise ValueError(f"prompt length plus max_new_tokens ({total}) exceeds the models' max length")
    outputs = []
    for r, p in enumerate(prompts):
        buf = np.zeros(total, np.int32)
        buf[: p.size] = p
        for c in range(p.size, p.size + max_new):
            z = int(check_route(route(np.array([r]), np.array([c])), 1, len(models), "route")[0])
            buf[c] = int(jnp.argmax(_forward_logits(models[z], jnp.asarray(buf))[c - 1]))
        outputs.append(buf[p.size: p.size + max_new].copy())
    return outputs


@cites(TOKEN_ROUTER)
def measure_step_cost(model: TinyDecoder, grid: Sequence[tuple[int, int]], *, ctx: int = 64, repeats: int = 5,
                      n_slots: int | None = None):
    """Measure the step latency ``T(n)`` (ms) of ``model`` on a grid of ``(batch, chunk)`` shapes and fit
    ``T(n) = alpha + beta n`` (:func:`~jaxlab.serving.token_router.cost_model.fit_step_cost`).

    Each shape runs ``n = batch * chunk`` input tokens (computed padded to the next power of two): the median
    of ``repeats`` blocking calls after a warm-up. The cache has ``n_slots`` rows (default: the largest batch);
    with the ``n_slots`` and ``ctx`` of a later engine run the measured step shapes are the engine's (compiled
    once).

    Args:
      model: the :class:`~jaxlab.serving.token_router.tiny_lm.TinyDecoder`.
      grid: ``(batch, chunk)`` pairs; at least two distinct ``batch * chunk`` for the fit.
      ctx: positions per cache row, at least every ``chunk``.
      repeats: timed calls per shape, ``>= 1``.
      n_slots: cache rows, at least every ``batch``; default the largest ``batch``.

    Returns:
      A tuple ``(alpha, beta, r2, n_tokens, latencies_ms)``: the fit as Python floats, and the ``(K,)`` float
      NumPy arrays of token counts and median latencies.

    Raises:
      ValueError: an empty ``grid``, a ``batch`` or ``chunk`` out of range, or fewer than two distinct token
        counts (from the fit).
      TypeError: a ``batch`` or ``chunk`` is not an int.
    """
    if not grid:
        raise ValueError("grid must contain at least two (batch, chunk) shapes")
    ns, lat = [], []
    rows = max(int(b) for b, _ in grid) if n_slots is None else n_slots
    for b, n in grid:
        b = check_int(b, "batch", min_value=1, max_value=rows)
        n = check_int(n, "chunk", min_value=1, max_value=ctx)
        sub = Subserver(model, rows, ctx, ())
        seq = jnp.zeros((rows + 1, ctx), jnp.int32)
        ids = np.arange(b)
        args = (ids, ids, np.zeros(b, np.int64), np.full(b, n))
        seq = jax.block_until_ready(sub.launch(seq, *args))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            seq = jax.block_until_ready(sub.launch(seq, *args))
            times.append(1e3 * (time.perf_counter() - t0))
        ns.append(b * n)
        lat.append(statistics.median(times))
    ns_a, lat_a = np.asarray(ns, float), np.asarray(lat, float)
    alpha, beta, r2 = fit_step_cost(ns_a, lat_a)
    return float(alpha), float(beta), float(r2), ns_a, lat_a
