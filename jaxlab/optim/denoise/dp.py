r"""Differentially private gradients for denoised training: per-example clipping, Gaussian noise, accounting.

Sources: *Deep Learning with Differential Privacy* (DP-SGD; M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan,
I. Mironov, K. Talwar, L. Zhang, CCS 2016, arXiv:1607.00133) and *DiSK* (X. Zhang, Z. Bu, B. Balle, M. Hong,
M. Razaviyayn, V. Mirrokni, ICLR 2025, arXiv:2410.03883) for combining the denoiser's queries per example
before clipping.

Privatized observation of a batch :math:`\mathcal B_t` of size :math:`B`, clip norm :math:`C` and noise
multiplier :math:`\sigma_{dp}`:

.. math::  \mathrm{clip}_C(v) = v \min(1, C/\|v\|), \qquad
           q_t = \frac1B\Big[\sum_{\xi \in \mathcal B_t} \mathrm{clip}_C(q(\xi)) + N(0, \sigma_{dp}^2 C^2 I)\Big],

where :math:`q(\xi) = \sum_i a_i \nabla f(y_i; \xi)` is the denoiser's combination of the per-example
gradients at its query points :math:`y_i`. The noise enters once per step whatever the combination, so the
privacy cost of a denoised step equals a DP-SGD step (each step costs one gradient pass per query point).
:func:`clip_and_noise` is optax's ``optax.contrib.differentially_private_aggregate`` (same semantics: sum of
globally clipped per-example gradients plus noise, divided by the batch axis length).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
import optax.contrib

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.loop import run as scan_run
from jaxlab.core.types import Key, PyTree
from jaxlab.core.validation import check_in_range, check_int, check_positive
from jaxlab.optim.denoise.denoisers import DenoisedOptState, Denoiser, DenoiseState, ema, find_state
from jaxlab.optim.denoise.papers import DISK, DPSGD

__all__ = ["DPInfo", "clip_and_noise", "dp_denoised_algorithm", "dp_query", "dp_run", "noise_multiplier_for"]


def _check_dp(l2_clip, noise_multiplier):
    return check_positive(l2_clip, "l2_clip"), check_positive(noise_multiplier, "noise_multiplier", strict=False)


@jax.jit
def _aggregate(key, per_example_grads, l2_clip, noise_multiplier):
    tx = optax.contrib.differentially_private_aggregate(l2_clip, noise_multiplier, key)
    return tx.update(per_example_grads, tx.init(None))[0]


@cites(DPSGD)
def clip_and_noise(
    key: Key,
    per_example_grads: PyTree,
    l2_clip: float,
    noise_multiplier: float,
    *,
    expected_batch_size: float | None = None,
) -> PyTree:
    """Sum of per-example gradients clipped to global norm ``l2_clip``, plus :math:`N(0, (\\sigma C)^2 I)`,
    divided by the batch size.

    Args:
      key: PRNG key for the noise.
      per_example_grads: pytree whose leaves have a leading example axis ``n``.
      l2_clip: clip norm :math:`C > 0`.
      noise_multiplier: :math:`\\sigma_{dp} \\ge 0` (noise std over the clip norm).
      expected_batch_size: divide by this instead of ``n`` (Poisson sampling with a padded batch whose
        unused rows are zero: divide by the expected batch size); ``None`` divides by ``n``.

    Returns:
      A pytree like one example's gradient (leaves without the example axis):
      :math:`\\frac1B [\\sum_i \\mathrm{clip}_C(g_i) + N(0, \\sigma_{dp}^2 C^2 I)]`.

    Raises:
      TypeError: a non-float leaf.
      ValueError: ``l2_clip <= 0``, ``noise_multiplier < 0``, ``expected_batch_size <= 0``, or leaves without a
        common leading example axis.
    """
    l2_clip, noise_multiplier = _check_dp(l2_clip, noise_multiplier)
    leaves = jax.tree_util.tree_leaves(per_example_grads)
    for leaf in leaves:
        if not jnp.issubdtype(jnp.result_type(leaf), jnp.floating):
            raise TypeError(f"per_example_grads must have floating dtypes, got a leaf of dtype "
                            f"{jnp.result_type(leaf)}")
    if not leaves or any(jnp.ndim(x) < 1 for x in leaves) or len({x.shape[0] for x in leaves}) != 1:
        raise ValueError("per_example_grads leaves must share a leading example axis, got shapes "
                         f"{[jnp.shape(x) for x in leaves]}")
    out = _aggregate(key, per_example_grads, l2_clip, noise_multiplier)
    if expected_batch_size is not None:
        expected_batch_size = check_positive(expected_batch_size, "expected_batch_size")
        out = optax.tree_utils.tree_scale(leaves[0].shape[0] / expected_batch_size, out)
    return out


@cites(DISK, DPSGD)
def dp_query(
    key: Key,
    per_example_grad: Callable[[PyTree, Any], PyTree],
    denoiser: Denoiser,
    state: DenoiseState,
    params: PyTree,
    batch: Any,
    l2_clip: float,
    noise_multiplier: float,
    *,
    expected_batch_size: float | None = None,
) -> PyTree:
    """Privatized combined observation :math:`q_t` for a denoiser (DP mode).

    Evaluates ``per_example_grad(point, example)`` at each of ``denoiser.query_points(state, params)`` for
    every example of ``batch`` (leading axis), combines per example with ``denoiser.combine`` (``vmap``), then
    clips and noises with :func:`clip_and_noise`. Feed the result to ``optax.chain(denoiser, ...).update``.
    Combining before clipping follows DiSK (arXiv:2410.03883): one Gaussian release per step, as in DP-SGD
    (M. Abadi et al., *Deep Learning with Differential Privacy*, arXiv:1607.00133).

    Args:
      key: PRNG key for the noise.
      per_example_grad: ``(params, example) -> gradient pytree`` for one example.
      denoiser: a :class:`~jaxlab.optim.denoise.denoisers.Denoiser`.
      state: its current :class:`~jaxlab.optim.denoise.denoisers.DenoiseState` (e.g. from ``find_state``).
      params: the current parameters :math:`x_t`.
      batch: pytree of examples with a leading example axis ``B``.
      l2_clip: clip norm :math:`C > 0`.
      noise_multiplier: :math:`\\sigma_{dp} \\ge 0`.
      expected_batch_size: divide by this instead of ``B`` (see :func:`clip_and_noise`).

    Returns:
      The privatized :math:`q_t`, a pytree like ``params``.

    Raises:
      TypeError: ``denoiser`` is not a Denoiser, or non-float gradients.
      ValueError: ``l2_clip <= 0``, ``noise_multiplier < 0`` or ``expected_batch_size <= 0``.
    """
    if not isinstance(denoiser, Denoiser):
        raise TypeError(f"denoiser must be a jaxlab.optim.Denoiser, got {type(denoiser).__name__}")
    l2_clip, noise_multiplier = _check_dp(l2_clip, noise_multiplier)
    points = denoiser.query_points(state, params)
    grads = tuple(jax.vmap(per_example_grad, in_axes=(None, 0))(p, batch) for p in points)
    per_example = jax.vmap(denoiser.combine, in_axes=(None, 0))(state, grads)
    if len(points) == 1:
        # One query: each per-example gradient is the raw vmapped gradient (an outer product per weight matrix),
        # which XLA fuses into both of its consumers (the clipping norm and the clipped sum) and so builds twice,
        # once per shape; as (batch, size) rows it is built once. DP training on the 64-128-10 digits MLP (batch
        # 128): 191 -> 167 ms (a two-query denoiser's combination is built once already; flattening it doubled
        # that step, so it is left alone)
        flat = jax.tree_util.tree_map(lambda g: g.reshape(g.shape[0], -1), per_example)
        out = clip_and_noise(key, flat, l2_clip, noise_multiplier, expected_batch_size=expected_batch_size)
        return jax.tree_util.tree_map(lambda o, g: o.reshape(g.shape[1:]), out, per_example)
    return clip_and_noise(key, per_example, l2_clip, noise_multiplier, expected_batch_size=expected_batch_size)


class DPInfo(NamedTuple):
    """Per-step record of :func:`dp_run` / :func:`dp_denoised_algorithm`.

    Attributes:
      batch_size: 0-d int array, the Poisson batch size drawn (before padding or truncation to ``max_batch``).
    """

    batch_size: Any


@cites(DISK, DPSGD)
def dp_denoised_algorithm(
    per_example_loss: Callable[[PyTree, Any], Any],
    data: Any,
    denoiser: Denoiser,
    inner: optax.GradientTransformation,
    *,
    l2_clip: float,
    noise_multiplier: float,
    sample_rate: float,
    max_batch: int,
) -> Algorithm:
    """DP training with a denoiser as a key-driven :class:`~jaxlab.core.Algorithm`.

    ``init(params0)`` builds :class:`~jaxlab.optim.denoise.denoisers.DenoisedOptState` (parameters and the state
    of ``optax.chain(denoiser, inner)``); ``step(key, state)`` draws a Poisson batch (each of the ``n`` examples
    of ``data`` independently with probability ``sample_rate``, padded to ``max_batch`` zero-weight rows),
    forms the privatized :math:`q_t` with :func:`dp_query` (divided by the expected batch size
    ``sample_rate * n``) and applies the chain; its :class:`DPInfo` records the batch size drawn.

    Args:
      per_example_loss: ``(params, example) -> scalar`` for one example (a slice of ``data``).
      data: pytree whose leaves share a leading example axis ``n``.
      denoiser: a :class:`~jaxlab.optim.denoise.denoisers.Denoiser`.
      inner: the optax optimizer applied after the denoiser.
      l2_clip: clip norm :math:`C > 0`.
      noise_multiplier: :math:`\\sigma_{dp} \\ge 0` (see :func:`noise_multiplier_for`).
      sample_rate: Poisson sampling rate in (0, 1].
      max_batch: rows of the padded batch (larger draws are truncated).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      TypeError: ``denoiser`` is not a Denoiser.
      ValueError: ``l2_clip <= 0``, ``noise_multiplier < 0``, ``sample_rate`` outside (0, 1], ``max_batch < 1``.
    """
    if not isinstance(denoiser, Denoiser):
        raise TypeError(f"denoiser must be a jaxlab.optim.Denoiser, got {type(denoiser).__name__}")
    l2_clip, noise_multiplier = _check_dp(l2_clip, noise_multiplier)
    sample_rate = check_in_range(sample_rate, "sample_rate", 0.0, 1.0, lo_open=True)
    max_batch = check_int(max_batch, "max_batch", min_value=1)
    n = jax.tree_util.tree_leaves(data)[0].shape[0]
    tx = optax.chain(denoiser, inner)

    def weighted_grad(params, example):
        ex, w = example
        return jax.grad(lambda p: w * per_example_loss(p, ex))(params)

    def init_fn(params0: PyTree) -> DenoisedOptState:
        return DenoisedOptState(params0, tx.init(params0))

    def step_fn(key, state: DenoisedOptState) -> tuple[DenoisedOptState, DPInfo]:
        params, opt_state = state
        k_sample, k_noise = jax.random.split(key)
        mask = jax.random.bernoulli(k_sample, sample_rate, (n,))
        idx = jnp.nonzero(mask, size=max_batch, fill_value=0)[0]
        size = jnp.sum(mask)
        valid = (jnp.arange(max_batch) < size).astype(jax.tree_util.tree_leaves(params)[0].dtype)
        batch = (jax.tree_util.tree_map(lambda a: a[idx], data), valid)
        q = dp_query(k_noise, weighted_grad, denoiser, find_state(opt_state), params, batch, l2_clip,
                     noise_multiplier, expected_batch_size=sample_rate * n)
        updates, opt_state = tx.update(q, opt_state, params)
        return DenoisedOptState(optax.apply_updates(params, updates), opt_state), DPInfo(size)

    return Algorithm(init_fn, step_fn)


@cites(DISK, DPSGD)
def dp_run(
    key: Key,
    per_example_loss: Callable[[PyTree, Any], Any],
    params0: PyTree,
    data: Any,
    denoiser: Denoiser,
    inner: optax.GradientTransformation,
    *,
    l2_clip: float,
    noise_multiplier: float,
    sample_rate: float,
    num_steps: int,
    max_batch: int,
) -> tuple[PyTree, DPInfo]:
    """DP training with a denoiser: :func:`dp_denoised_algorithm` driven ``num_steps`` times by
    :func:`jaxlab.core.run` (``lax.scan``).

    Each step draws a Poisson batch (each of the ``n`` examples of ``data`` independently with probability
    ``sample_rate``), padded to ``max_batch`` rows whose padding has zero weight (zero gradient, so it adds
    nothing after clipping); the sum is divided by the expected batch size ``sample_rate * n``. Batches larger
    than ``max_batch`` are truncated, which breaks the Poisson accounting: choose ``max_batch`` a few standard
    deviations above ``sample_rate * n`` and check ``DPInfo.batch_size``.

    Args:
      key: PRNG key (one split per step).
      per_example_loss: ``(params, example) -> scalar`` for one example (a slice of ``data``).
      params0: the starting parameters.
      data: pytree whose leaves share a leading example axis ``n``.
      denoiser: a :class:`~jaxlab.optim.denoise.denoisers.Denoiser`.
      inner: the optax optimizer applied after the denoiser.
      l2_clip: clip norm :math:`C > 0`.
      noise_multiplier: :math:`\\sigma_{dp} \\ge 0` (see :func:`noise_multiplier_for`).
      sample_rate: Poisson sampling rate in (0, 1].
      num_steps: number of steps ``>= 0``.
      max_batch: rows of the padded batch ``>= 1``.

    Returns:
      ``(params_T, DPInfo)``: the final parameters (a pytree like ``params0``) and :class:`DPInfo` with
      ``batch_size`` of shape ``(num_steps,)``.

    Raises:
      TypeError: ``denoiser`` is not a Denoiser, or ``max_batch``/``num_steps`` not an int.
      ValueError: ``l2_clip <= 0``, ``noise_multiplier < 0``, ``sample_rate`` outside (0, 1], ``max_batch < 1``
        or ``num_steps < 0``.

    Example:
      >>> import jax, jax.numpy as jnp, optax
      >>> from jaxlab.optim import dp_run, ema
      >>> data = jax.random.normal(jax.random.key(0), (64, 2)) + 1.0
      >>> loss = lambda p, x: jnp.sum((p - x) ** 2)
      >>> params, info = dp_run(jax.random.key(1), loss, jnp.zeros(2), data, ema(0.5), optax.sgd(0.1),
      ...                       l2_clip=1.0, noise_multiplier=1.0, sample_rate=0.25, num_steps=20, max_batch=32)
      >>> info.batch_size.shape
      (20,)
    """
    algo = dp_denoised_algorithm(per_example_loss, data, denoiser, inner, l2_clip=l2_clip,
                                 noise_multiplier=noise_multiplier, sample_rate=sample_rate, max_batch=max_batch)
    num_steps = check_int(num_steps, "num_steps", min_value=0)
    final, trace = scan_run(algo.step, algo.init(params0), key, num_steps)
    return final.params, trace.infos


_ORDERS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0, 24.0, 28.0, 32.0, 48.0,
           64.0, 128.0, 256.0)


@cites(DPSGD)
@renamed_kwargs(steps="num_steps")
def noise_multiplier_for(
    eps: float, delta: float, sample_rate: float, num_steps: int, *, orders: tuple[float, ...] | None = _ORDERS
) -> float:
    """Smallest noise multiplier whose Poisson-subsampled Gaussian mechanism, composed ``num_steps`` times, is
    ``(eps, delta)``-DP under the RDP accountant of the optional package ``dp-accounting``
    (``pip install dp-accounting``).

    ``orders`` are the Renyi orders tracked: the default short list (integers, whose subsampled
    Gaussian RDP has a closed form) is fast and gives a valid, marginally conservative bound; ``None`` uses
    dp-accounting's default list (slower). The search is ``dp_accounting.calibrate_dp_mechanism`` (tolerance
    1e-4); the accounting is that of DP-SGD (M. Abadi et al., arXiv:1607.00133) with Renyi DP.

    Args:
      eps: privacy budget :math:`\\varepsilon > 0`.
      delta: :math:`\\delta` in (0, 1).
      sample_rate: Poisson sampling rate in (0, 1].
      num_steps: number of composed steps ``>= 1`` (``steps`` is its deprecated name).
      orders: Renyi orders (a tuple of floats), or ``None`` for dp-accounting's default list.

    Returns:
      The noise multiplier :math:`\\sigma_{dp}` (a Python float).

    Raises:
      ImportError: ``dp-accounting`` is not installed.
      TypeError: ``num_steps`` is not an int.
      ValueError: ``eps <= 0``, ``delta`` outside (0, 1), ``sample_rate`` outside (0, 1], ``num_steps < 1``, or
        no finite multiplier reaches the target.
    """
    check_positive(eps, "eps")
    check_in_range(delta, "delta", 0.0, 1.0, lo_open=True, hi_open=True)
    check_in_range(sample_rate, "sample_rate", 0.0, 1.0, lo_open=True)
    steps = check_int(num_steps, "num_steps", min_value=1)
    try:
        import dp_accounting
        from dp_accounting import rdp
    except ImportError as exc:
        raise ImportError("noise_multiplier_for needs the optional package 'dp-accounting' "
                          "(pip install dp-accounting)") from exc

    def event(sigma):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(sigma)), steps)

    make = rdp.RdpAccountant if orders is None else (lambda: rdp.RdpAccountant(list(orders)))
    sigma = dp_accounting.calibrate_dp_mechanism(
        make, event, float(eps), float(delta),
        dp_accounting.LowerEndpointAndGuess(1e-2, 1.0), tol=1e-4)
    if not math.isfinite(sigma):
        raise ValueError(f"no finite noise multiplier reaches eps={eps}, delta={delta}")
    return float(sigma)


def _dp_example(key):
    data = jax.random.normal(key, (16, 2))
    algo = dp_denoised_algorithm(lambda p, x: jnp.sum((p - x) ** 2), data, ema(0.5), optax.sgd(0.1), l2_clip=1.0,
                                 noise_multiplier=0.5, sample_rate=0.25, max_batch=8)
    return algo, algo.init(jnp.zeros(2)), None


register_algorithm("dp_denoised", dp_denoised_algorithm, _dp_example, area="denoise")
