"""Drive any ``init``/``step`` pair with :func:`jax.lax.scan`.

Every iterative jaxlab method (particles, Langevin chains, SGD, online learners) exposes
``step(key, state) -> (state, info)``. :func:`run` iterates it ``num_steps`` times with one fresh key per
step (``jax.random.split(key, num_steps)``), optionally keeps every ``thin``-th state and info, and can print
a progress meter from inside ``jit`` (through :func:`jax.debug.callback`; off by default). The callback feeds
nothing back into the computation, so the numbers are the same either way; they can differ in the last bit
only, because the compiler may fuse floating-point operations (e.g. into FMAs) differently around it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.validation import check_int

__all__ = ["RunTrace", "progress_meter", "run"]


class RunTrace(NamedTuple):
    """What :func:`run` records every ``thin`` steps: the states (when ``save_states``) and the infos."""

    states: Any
    infos: Any


class _Meter:
    """Host-side state of one progress meter (a plain object: it never enters the traced computation)."""

    def __init__(self, total: int, label: str, stream):
        self.total, self.label, self.stream = total, label, stream
        self.t0 = time.perf_counter()

    def __call__(self, i) -> None:
        done = int(i) + 1
        if done == 1:
            self.t0 = time.perf_counter()
        frac = done / self.total
        bar = "#" * int(30 * frac)
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        end = "\n" if done == self.total else ""
        self.stream.write(f"\r{self.label} [{bar:<30}] {done}/{self.total} ({rate:.0f} it/s)" + end)
        self.stream.flush()


def progress_meter(i, total: int, *, every: int | None = None, label: str = "jaxlab", stream=None):
    """Report step ``i`` (0-based, may be traced) of ``total`` from inside a jitted loop.

    Prints about 20 updates (every ``every`` steps) and the last one. Returns nothing: use it for its side
    effect inside a ``scan`` body.
    """
    every = every or max(1, total // 20)
    meter = _Meter(total, label, stream or sys.stderr)

    def report(j):
        jax.debug.callback(meter, j)

    jax.lax.cond(((i + 1) % every == 0) | (i + 1 == total) | (i == 0), report, lambda j: None, i)


def run(
    step: Callable[[Any, Any], tuple[Any, Any]],
    init_state: Any,
    key: Any,
    num_steps: int,
    *,
    thin: int = 1,
    save_states: bool = False,
    progress: bool = False,
    label: str = "jaxlab.run",
) -> tuple[Any, RunTrace]:
    """Iterate ``state, info = step(key_t, state)`` for ``t = 0 .. num_steps - 1`` under ``lax.scan``.

    Args:
      step: pure function ``(key, state) -> (state, info)``; bind other arguments with a closure or
        ``functools.partial``.
      init_state: initial state pytree.
      key: PRNG key, split into one key per step.
      num_steps: number of steps (static, >= 0; must be a multiple of ``thin``).
      thin: record the state/info after every ``thin``-th step (the ``thin - 1`` in between are not stored).
      save_states: also record the thinned states (the trajectory), not just the infos.
      progress: print a progress meter from inside the compiled loop.

    Returns:
      ``(final_state, RunTrace(states, infos))`` where ``states`` (or ``None``) and ``infos`` have a leading
      axis of length ``num_steps // thin``.
    """
    num_steps = check_int(num_steps, "num_steps", min_value=0)
    thin = check_int(thin, "thin", min_value=1)
    if num_steps % thin:
        raise ValueError(f"num_steps must be a multiple of thin={thin}, got num_steps={num_steps}")
    n_out = num_steps // thin
    keys = jax.random.split(key, num_steps)
    keys = keys.reshape((n_out, thin, *keys.shape[1:]))
    index = jnp.arange(num_steps).reshape(n_out, thin)

    def one(state, xs):
        i, k = xs
        state, info = step(k, state)
        if progress:
            progress_meter(i, num_steps, label=label)
        return state, info

    def block(state, xs):
        idx, ks = xs
        if thin == 1:
            state, info = one(state, (idx[0], ks[0]))
        else:
            state, infos = jax.lax.scan(one, state, (idx, ks))
            info = jax.tree_util.tree_map(lambda a: a[-1], infos)
        return state, ((state if save_states else None), info)

    final, (states, infos) = jax.lax.scan(block, init_state, (index, keys))
    return final, RunTrace(states, infos)
