"""Drive any ``init``/``step`` pair with :func:`jax.lax.scan`.

Every iterative jaxlab method (particles, Langevin chains, SGD, online learners) is an
:class:`~jaxlab.core.Algorithm` whose ``step(key, state) -> (state, info)`` (data-driven:
``step(key, state, x)``) :func:`run` iterates: ``num_steps`` times with one fresh key per step
(``jax.random.split(key, num_steps)``), or once per leading entry of a data stream ``xs``; it optionally
keeps every ``thin``-th state and info, and can print a progress meter from inside ``jit`` (through
:func:`jax.debug.callback`; off by default). The callback feeds
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
    """What :func:`run` records every ``thin`` steps.

    Attributes:
      states: the state pytree after every ``thin``-th step, each leaf with a leading axis of length
        ``num_steps // thin``; ``None`` unless ``run(..., save_states=True)``.
      infos: the info pytree returned by the step at every ``thin``-th step, with the same leading axis.
    """

    states: Any
    infos: Any


class _Meter:
    """Host-side state of one progress meter (a plain object: it never enters the traced computation).

    On a terminal each report redraws one line with ``\\r``; on anything else (a log file, a pipe, CI) each
    report is a plain line of its own, so no carriage returns end up in the log.
    """

    def __init__(self, total: int, label: str, stream, tty: bool):
        self.total, self.label, self.stream, self.tty = total, label, stream, tty
        self.t0 = time.perf_counter()

    def __call__(self, i) -> None:
        done = int(i) + 1
        if done == 1:
            self.t0 = time.perf_counter()
        frac = done / self.total
        bar = "#" * int(30 * frac)
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        line = f"{self.label} [{bar:<30}] {done}/{self.total} ({rate:.0f} it/s)"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal (``False`` for files, pipes and streams without isatty)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def progress_meter(i, total: int, *, every: int | None = None, label: str = "jaxlab", stream=None):
    """Report step ``i`` (0-based, may be traced) of ``total`` from inside a jitted loop.

    Prints at step 0, after every ``every``-th step and after the last one, through :func:`jax.debug.callback`
    under a :func:`jax.lax.cond` (nothing flows back into the computation). Each report shows a 30-character
    bar, ``done/total`` and the rate in iterations per second since the first report. When ``stream`` is a
    terminal (``stream.isatty()``, checked when the loop is traced) the reports redraw one line with ``\\r``;
    otherwise (a file, a pipe, a CI log) each report is a plain line, by default about one per 10 % of the run.

    Args:
      i: the 0-based step index, a Python int or an int scalar array (traced inside ``scan``).
      total: the number of steps, a static Python int.
      every: report every ``every`` steps; ``None`` means ``max(1, total // 20)`` on a terminal (about 20
        updates) and ``max(1, total // 10)`` otherwise (about 10 lines).
      label: text printed before the bar.
      stream: a text stream with ``write`` and ``flush``; ``None`` means ``sys.stderr``.

    Returns:
      ``None``: call it for its side effect inside a ``scan`` body (:func:`run` does with ``progress=True``).
    """
    stream = stream or sys.stderr
    tty = is_terminal(stream)
    every = every or max(1, total // (20 if tty else 10))
    meter = _Meter(total, label, stream, tty)

    def report(j):
        jax.debug.callback(meter, j)

    jax.lax.cond(((i + 1) % every == 0) | (i + 1 == total) | (i == 0), report, lambda j: None, i)


def run(
    step: Callable[..., tuple[Any, Any]],
    init_state: Any,
    key: Any,
    num_steps: int | None = None,
    *,
    xs: Any = None,
    thin: int = 1,
    save_states: bool = False,
    progress: bool = False,
    label: str = "jaxlab.run",
    unroll: int = 1,
) -> tuple[Any, RunTrace]:
    """Iterate a step ``num_steps`` times under ``lax.scan``: ``state, info = step(key_t, state[, x_t])``.

    Key-driven (``xs=None``): ``step(key_t, state)`` for ``t = 0 .. num_steps - 1``, with
    ``key_0, ..., key_{num_steps-1} = jax.random.split(key, num_steps)``.

    Data-driven (``xs`` given): ``step(key_t, state, x_t)`` once per leading entry ``x_t`` of ``xs`` (a pytree
    whose leaves share their leading length, which is the number of steps). ``key`` may then be ``None``, and
    every ``key_t`` is ``None`` (deterministic learners ignore their key); otherwise it is split as above.

    Args:
      step: pure function ``(key, state) -> (state, info)``, or ``(key, state, x) -> (state, info)`` with
        ``xs``; ``Algorithm.step`` of any jaxlab method. Bind other arguments with a factory or a closure.
      init_state: initial state pytree.
      key: PRNG key, split into one key per step; ``None`` only with ``xs``.
      num_steps: number of steps (static int >= 0). Required without ``xs``; with ``xs`` it defaults to (and
        must equal) the leading length of ``xs``.
      xs: optional data stream, a pytree of arrays with a common leading axis.
      thin: record the state/info after every ``thin``-th step (the ``thin - 1`` in between are not stored);
        ``num_steps`` must be a multiple of it.
      save_states: also record the thinned states (the trajectory), not just the infos.
      progress: print a progress meter from inside the compiled loop.
      label: the meter's label.
      unroll: iterations of the loop per pass of the compiled loop body (``lax.scan``'s ``unroll``; with ``thin``,
        of blocks of ``thin`` steps), an int ``>= 1``. Results are the same; for a short step on CPU a few (4)
        can save much of the loop's per-iteration overhead (VAW's Sherman-Morrison round: 1.25-1.7x for d <= 32).

    Returns:
      ``(final_state, RunTrace(states, infos))`` where ``states`` (or ``None``) and ``infos`` have a leading
      axis of length ``num_steps // thin``.

    Raises:
      TypeError: ``num_steps`` missing without ``xs``, not an int, or ``key`` is ``None`` without ``xs``.
      ValueError: ``num_steps < 0``, not a multiple of ``thin``, or different from the length of ``xs``; leaves
        of ``xs`` without a common leading axis.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import Algorithm, run
      >>> walk = Algorithm(init=lambda x0: x0, step=lambda key, x: (x + jax.random.normal(key, x.shape), x))
      >>> final, trace = run(walk.step, walk.init(jnp.zeros(3)), jax.random.key(0), 100)
      >>> trace.infos.shape
      (100, 3)
    """
    if xs is None:
        if num_steps is None:
            raise TypeError("run() needs num_steps when no xs is given")
        if key is None:
            raise TypeError("run() needs a PRNG key when no xs is given (key=None is for data-driven steps)")
        num_steps = check_int(num_steps, "num_steps", min_value=0)
    else:
        leaves = jax.tree_util.tree_leaves(xs)
        if not leaves:
            raise ValueError("xs must hold at least one array")
        lengths = {int(jnp.shape(leaf)[0]) if jnp.ndim(leaf) else -1 for leaf in leaves}
        if len(lengths) != 1 or -1 in lengths:
            raise ValueError(f"every leaf of xs must have the same leading axis, got leading lengths {lengths}")
        n = lengths.pop()
        if num_steps is not None and check_int(num_steps, "num_steps", min_value=0) != n:
            raise ValueError(f"num_steps={num_steps} differs from the leading length {n} of xs")
        num_steps = n
    thin = check_int(thin, "thin", min_value=1)
    unroll = check_int(unroll, "unroll", min_value=1)
    if num_steps % thin:
        raise ValueError(f"num_steps must be a multiple of thin={thin}, got num_steps={num_steps}")
    n_out = num_steps // thin
    keys = None if key is None else jax.random.split(key, num_steps)
    data, index = xs, jnp.arange(num_steps)
    if thin > 1:  # blocks of thin steps; with thin = 1 the scan reads xs as given (a reshape costs a layout copy)
        keys = None if keys is None else keys.reshape((n_out, thin, *keys.shape[1:]))
        data = None if xs is None else jax.tree_util.tree_map(lambda a: a.reshape((n_out, thin, *a.shape[1:])), xs)
        index = index.reshape(n_out, thin)

    def one(state, inp):
        i, k, x = inp
        state, info = step(k, state) if xs is None else step(k, state, x)
        if progress:
            progress_meter(i, num_steps, label=label)
        return state, info

    def block(state, inp):
        if thin == 1:
            state, info = one(state, inp)
        else:
            state, infos = jax.lax.scan(one, state, inp)
            info = jax.tree_util.tree_map(lambda a: a[-1], infos)
        return state, ((state if save_states else None), info)

    final, (states, infos) = jax.lax.scan(block, init_state, (index, keys, data), unroll=unroll)
    return final, RunTrace(states, infos)
