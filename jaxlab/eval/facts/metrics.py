r"""FACTS Leaderboard scoring: short-form, multimodal and grounding metrics, split combination, the suite score
and bootstrap confidence intervals.

Paper: Cheng, Jacovi, Globerson, Golan, Kwong, Alberti, Tao, Ben-David, Tomar, Haas, Bitton, et al., Das, "The
FACTS Leaderboard: A Comprehensive Benchmark for Large Language Model Factuality", arXiv:2512.10791 (2025); the
grounding rules follow FACTS Grounding v1 (Jacovi et al., arXiv:2501.03200) and the short-form grading SimpleQA
(Wei et al., arXiv:2411.04368). No official scoring code was located: the formulas are this port's reading
of the paper's front matter and announcement, "reconstructed" where noted.

Short-form (Parametric, Search), verdicts ``y_i`` in {correct = 0, incorrect = 1, not_attempted = 2}, counts
``C, I, A``, ``n = C + I + A``::

    accuracy = C / n,  attempted = (C + I) / n,  hedging = A / n,
    attempted_accuracy = C / (C + I)  (0 if C + I = 0),
    F1 = 2 acc att_acc / (acc + att_acc)  (0 if both are 0)

Multimodal: coverage ``kappa_i`` and no-contradiction ``nu_i`` in {0, 1}, ``accuracy = mean_i kappa_i nu_i``.
Grounding (judges ``j = 1..J``): eligibility ``e_ij`` and grounding ``g_ij`` in {0, 1}; ineligible answers stay in
the denominator::

    s_j = (1/n) sum_i e_ij g_ij,   score = (1/J) sum_j s_j,
    eligibility="any_judge":  e_ij <- min_j' e_ij'  (disqualified if any judge says ineligible)

Several judges on a short-form or multimodal benchmark: every metric per judge, then the mean over judges.
Splits (reconstructed default): ``score_b = (score_b^public + score_b^private) / 2``; ``mode="pooled"`` weights by
the item counts. Suite: ``FACTS = (1/4) sum_{b in {multimodal, parametric, search, grounding}} score_b``.
Uncertainty: percentile bootstrap over items (B = 1000, 95 %); the suite's interval resamples every benchmark and
split independently (joint bootstrap).

Every metric is ``jnp``, jit- and vmap-compatible (vmap over models); a ``mask`` (1 = real item) lets padded
item axes share one shape, and metrics are computed over ``mask == 1`` only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float, Int, Key
from jaxlab.core.validation import as_array, check_in_range, check_int, is_concrete, value_check
from jaxlab.eval.facts.papers import FACTS, GROUNDING, SIMPLEQA

__all__ = [
    "SUBBENCHMARKS",
    "VERDICT",
    "bootstrap_ci",
    "combine_splits",
    "facts_score",
    "facts_score_ci",
    "grounding_score",
    "multimodal_metrics",
    "shortform_metrics",
]

VERDICT = {"correct": 0, "incorrect": 1, "not_attempted": 2}
"""Integer codes of the short-form verdicts."""

SUBBENCHMARKS = ("multimodal", "parametric", "search", "grounding")
"""The four sub-leaderboards averaged by the FACTS score."""


def _check_values(x: Array, name: str, allowed: tuple[int, ...]) -> Array:
    """``x``, checked to hold only codes in ``allowed`` (eagerly, and under ``jit`` at run time)."""
    codes = np.asarray(allowed)
    return value_check(x, lambda a: ~jnp.isin(a, codes), f"{name} must take values in {set(allowed)}")


def _codes(x: Any, name: str, allowed: tuple[int, ...]) -> Array:
    """Integer or boolean item codes of rank 1 (n,) or 2 (J, n), checked against ``allowed``."""
    arr = as_array(x, name, kind="number", ndim=(1, 2))
    if jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.complexfloating):
        if not is_concrete(arr) or not np.all(np.mod(np.asarray(arr), 1) == 0):
            raise TypeError(f"{name} must hold integer codes (an int or bool array), got dtype {arr.dtype}")
    arr = _check_values(arr, name, allowed)
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one item (n >= 1), got shape {tuple(arr.shape)}")
    if arr.ndim == 2 and arr.shape[0] == 0:
        raise ValueError(f"{name} must have at least one judge (J >= 1), got shape {tuple(arr.shape)}")
    return arr


def _mask(mask: Any, n: int) -> Array:
    if mask is None:
        return jnp.ones((n,), jnp.result_type(float))
    m = as_array(mask, "mask", kind="number", ndim=1, shape=(n,))
    m = _check_values(m, "mask", (0, 1))
    m = value_check(m, lambda a: ~jnp.any(a != 0), "mask must select at least one item, got all zeros")
    return m.astype(m.dtype if jnp.issubdtype(m.dtype, jnp.floating) else jnp.result_type(float))  # a float mask's


def _per_judge(fn: Callable[[Array], dict[str, Array]], arr: Array) -> dict[str, Array]:
    if arr.ndim == 1:
        return fn(arr)
    return {k: v.mean(0) for k, v in jax.vmap(fn)(arr).items()}


def _safe_div(a: Array, b: Array) -> Array:
    return jnp.where(b > 0, a / jnp.where(b > 0, b, 1), 0.0)


@cites(FACTS, SIMPLEQA)
def shortform_metrics(verdicts: Int[Array, "*J n"], mask: Float[Array, " n"] | None = None) -> dict[str, Array]:
    """SimpleQA-style metrics of short-form verdicts (the Parametric and Search benchmarks of FACTS).

    Verdict codes :data:`VERDICT` (correct 0, incorrect 1, not_attempted 2), counts ``C, I, A`` over ``mask == 1``,
    ``n = C + I + A``: ``accuracy = C/n``, ``attempted = (C + I)/n``, ``hedging = A/n``,
    ``attempted_accuracy = C/(C + I)`` (0 if ``C + I = 0``) and ``F1 = 2 acc att_acc/(acc + att_acc)`` (0 if both are
    0), the grader of Wei et al., "Measuring short-form factuality in large language models", arXiv:2411.04368, as used
    by Cheng et al., "The FACTS Leaderboard: A Comprehensive Benchmark for Large Language Model Factuality",
    arXiv:2512.10791. With ``J`` judges every metric is computed per judge, then averaged.

    Args:
      verdicts: int or bool array of codes, ``(n,)`` or ``(J, n)`` (float arrays holding whole numbers are
        accepted when concrete).
      mask: optional ``(n,)`` array of 0/1 (int, bool or float), 1 for the real items; ``None`` keeps every item.

    Returns:
      dict with 0-d float arrays ``"accuracy"``, ``"attempted"``, ``"hedging"``, ``"attempted_accuracy"``, ``"f1"``.

    Raises:
      TypeError: ``verdicts`` not numeric, or floating with non-integer (or traced) values.
      ValueError: ``verdicts`` not 1-d or 2-d, empty, or with codes outside {0, 1, 2}; ``mask`` not ``(n,)``,
        not 0/1 or all zeros (under ``jit``, value checks raise at run time).

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.eval.facts import shortform_metrics
      >>> m = shortform_metrics(jnp.array([0, 0, 1, 2]))   # correct, correct, incorrect, not attempted
      >>> float(m["accuracy"]), float(m["attempted_accuracy"])
      (0.5, 0.6666666865348816)
    """
    v = _codes(verdicts, "verdicts", tuple(VERDICT.values()))
    w = _mask(mask, v.shape[-1])

    def one(vj):
        c, i, a = (jnp.sum(w * (vj == code)) for code in (0, 1, 2))
        n = c + i + a
        acc, att_acc = c / n, _safe_div(c, c + i)
        return {
            "accuracy": acc,
            "attempted": (c + i) / n,
            "hedging": a / n,
            "attempted_accuracy": att_acc,
            "f1": _safe_div(2 * acc * att_acc, acc + att_acc),
        }

    return _per_judge(one, v)


@cites(FACTS)
def multimodal_metrics(
    coverage: Int[Array, "*J n"], no_contradiction: Int[Array, "*J n"], mask: Float[Array, " n"] | None = None
) -> dict[str, Array]:
    """Multimodal metrics: accuracy ``mean_i κ_i ν_i``, and the coverage and no-contradiction rates.

    The coverage rate is ``mean_i κ_i`` and the no-contradiction rate ``mean_i ν_i``. Coverage ``κ_i`` and
    no-contradiction ``ν_i`` are in {0, 1} and the means run over ``mask == 1`` (Cheng et al., "The FACTS Leaderboard: A
    Comprehensive Benchmark for Large Language Model Factuality", arXiv:2512.10791). With ``J`` judges every metric is
    computed per judge, then averaged.

    Args:
      coverage: int or bool array of 0/1, ``(n,)`` or ``(J, n)``.
      no_contradiction: int or bool array of 0/1 of the shape of ``coverage``.
      mask: optional ``(n,)`` array of 0/1 (int, bool or float), 1 for the real items; ``None`` keeps every item.

    Returns:
      dict with 0-d float arrays ``"accuracy"``, ``"coverage"``, ``"no_contradiction"``.

    Raises:
      TypeError: an input not numeric, or floating with non-integer (or traced) values.
      ValueError: an input not 1-d or 2-d, empty, or not 0/1; the two shapes differ; a bad ``mask`` as in
        :func:`shortform_metrics`.
    """
    kappa = _codes(coverage, "coverage", (0, 1))
    nu = _codes(no_contradiction, "no_contradiction", (0, 1))
    if kappa.shape != nu.shape:
        raise ValueError(f"coverage and no_contradiction must have the same shape, got {kappa.shape} and {nu.shape}")
    w = _mask(mask, kappa.shape[-1])

    def one(kn):
        k, c = kn[0], kn[1]
        n = jnp.sum(w)
        return {
            "accuracy": jnp.sum(w * k * c) / n,
            "coverage": jnp.sum(w * k) / n,
            "no_contradiction": jnp.sum(w * c) / n,
        }

    if kappa.ndim == 1:
        return one(jnp.stack([kappa, nu]))
    return {k: v.mean(0) for k, v in jax.vmap(one)(jnp.stack([kappa, nu], 1)).items()}


@cites(FACTS, GROUNDING)
def grounding_score(
    eligible: Int[Array, "J n"],
    grounded: Int[Array, "J n"],
    eligibility: str = "per_judge",
    mask: Float[Array, " n"] | None = None,
) -> Float[Array, ""]:
    """Grounding sub-score ``(1/J) Σ_j (1/n) Σ_i e_ij g_ij``: ineligible answers count as inaccurate.

    Eligibility ``e_ij`` and grounding ``g_ij`` in {0, 1} from ``J`` judges; the item mean runs over ``mask == 1`` and
    ineligible answers stay in the denominator. ``eligibility="any_judge"`` uses ``min_j e_ij`` for every judge
    (disqualified if any judge says ineligible). Rules of FACTS Grounding (Jacovi et al., "The FACTS Grounding
    Leaderboard", arXiv:2501.03200) as combined in Cheng et al., "The FACTS Leaderboard: A Comprehensive Benchmark for
    Large Language Model Factuality", arXiv:2512.10791; no official scoring code was located, so the combination is
    reconstructed from the papers' text.

    Args:
      eligible: ``(J, n)`` int or bool array of 0/1 eligibility verdicts.
      grounded: ``(J, n)`` int or bool array of 0/1 grounding verdicts.
      eligibility: ``"per_judge"`` (each judge's own eligibility) or ``"any_judge"``.
      mask: optional ``(n,)`` array of 0/1 (int, bool or float), 1 for the real items; ``None`` keeps every item.

    Returns:
      0-d float array in ``[0, 1]``.

    Raises:
      TypeError: an input not numeric, or floating with non-integer (or traced) values.
      ValueError: an input not ``(J, n)``, empty or not 0/1; the shapes differ; an unknown ``eligibility``; a bad
        ``mask`` as in :func:`shortform_metrics`.
    """
    e = _codes(eligible, "eligible", (0, 1))
    g = _codes(grounded, "grounded", (0, 1))
    if e.ndim != 2 or g.ndim != 2:
        raise ValueError(f"eligible and grounded must be (J, n), got shapes {tuple(e.shape)} and {tuple(g.shape)}")
    if e.shape != g.shape:
        raise ValueError(f"eligible and grounded must have the same shape (J, n), got {e.shape} and {g.shape}")
    if eligibility not in ("per_judge", "any_judge"):
        raise ValueError(f"eligibility must be 'per_judge' or 'any_judge', got {eligibility!r}")
    w = _mask(mask, e.shape[1])
    if eligibility == "any_judge":
        e = jnp.broadcast_to(jnp.min(e, 0), e.shape)
    per_judge = jnp.sum(w * e * g, 1) / jnp.sum(w)
    return jnp.mean(per_judge)


@cites(FACTS)
def combine_splits(
    public: Any, private: Any, n_public: Any = None, n_private: Any = None, mode: str = "mean"
) -> Float[Array, "..."]:
    """Combine a benchmark's public and private split scores.

    ``mode="mean"``: ``(s_pub + s_priv)/2`` (the default, reconstructed: no official scoring code was located);
    ``mode="pooled"``: the item-weighted pool ``(n_pub s_pub + n_priv s_priv)/(n_pub + n_priv)``.

    Args:
      public: float array (any shape) of public-split scores in ``[0, 1]``.
      private: float array of private-split scores in ``[0, 1]``, broadcastable with ``public``.
      n_public: item count of the public split (``≥ 0``), required by ``mode="pooled"``.
      n_private: item count of the private split (``≥ 0``), required by ``mode="pooled"``.
      mode: ``"mean"`` or ``"pooled"``.

    Returns:
      Float array of the broadcast shape of ``public`` and ``private``.

    Raises:
      TypeError: a score not floating, or a count not numeric.
      ValueError: a score outside ``[0, 1]``; an unknown ``mode``; ``mode="pooled"`` without both counts, with a
        negative count or with ``n_public + n_private = 0`` (under ``jit``, value checks raise at run time).
    """
    public = check_in_range(as_array(public, "public"), "public", 0.0, 1.0)
    private = check_in_range(as_array(private, "private"), "private", 0.0, 1.0)
    if mode == "mean":
        return (public + private) / 2
    if mode != "pooled":
        raise ValueError(f"mode must be 'mean' or 'pooled', got {mode!r}")
    if n_public is None or n_private is None:
        raise ValueError("mode='pooled' needs n_public and n_private (item counts of the two splits)")
    n_pub = check_in_range(as_array(n_public, "n_public", kind="number"), "n_public", 0.0)
    n_priv = check_in_range(as_array(n_private, "n_private", kind="number"), "n_private", 0.0)
    n_pub, n_priv = value_check((n_pub, n_priv), lambda n: n[0] + n[1] <= 0, "n_public + n_private must be > 0")
    return (n_pub * public + n_priv * private) / (n_pub + n_priv)


def _check_keys(subscores: Mapping[str, Any], name: str) -> None:
    if not isinstance(subscores, Mapping):
        raise TypeError(f"{name} must be a dict keyed by {SUBBENCHMARKS}, got {type(subscores).__name__}")
    keys = set(subscores)
    missing, extra = set(SUBBENCHMARKS) - keys, keys - set(SUBBENCHMARKS)
    if missing or extra:
        raise ValueError(
            f"{name} must have exactly the keys {SUBBENCHMARKS}, got missing {sorted(missing)} and "
            f"extra {sorted(extra)}"
        )


@cites(FACTS)
def facts_score(subscores: Mapping[str, Any]) -> Float[Array, "..."]:
    """FACTS score: the mean of the four sub-scores, ``(1/4) Σ_{b ∈ {multimodal, parametric, search, grounding}} s_b``.

    The suite score of Cheng et al., "The FACTS Leaderboard: A Comprehensive Benchmark for Large Language Model
    Factuality", arXiv:2512.10791.

    Args:
      subscores: mapping with exactly the keys :data:`SUBBENCHMARKS`, each a float (or float array, all
        broadcastable) in ``[0, 1]``.

    Returns:
      Float array (0-d for scalar sub-scores).

    Raises:
      TypeError: ``subscores`` is not a mapping, or a value is not floating.
      ValueError: missing or extra keys; a value outside ``[0, 1]``.
    """
    _check_keys(subscores, "subscores")
    vals = [check_in_range(as_array(subscores[b], f"subscores[{b!r}]"), f"subscores[{b!r}]", 0.0, 1.0)
            for b in SUBBENCHMARKS]
    return sum(vals[1:], vals[0]) / 4


def _quantiles(stats: Array, level: float) -> tuple[Array, Array]:
    q = jnp.quantile(stats, jnp.array([(1 - level) / 2, (1 + level) / 2]), axis=0)
    return q[0], q[1]


def _resample(key: Key, n_boot: int, n: int) -> Array:
    # 32 random bits modulo n: a relative bias below n / 2**32, and about twice as fast on CPU as randint under x64
    return (jax.random.bits(key, (n_boot, n), jnp.uint32) % jnp.uint32(n)).astype(jnp.int32)


def _check_boot(n_boot: int, level: float) -> tuple[int, Any]:
    n_boot = check_int(n_boot, "n_boot", min_value=2)
    return n_boot, check_in_range(level, "level", 0.0, 1.0, lo_open=True, hi_open=True)


@cites(FACTS)
def bootstrap_ci(
    key: Key,
    per_item: Float[Array, "n ..."],
    stat_fn: Callable[[Array], Array] = jnp.mean,
    n_boot: int = 1000,
    level: float = 0.95,
) -> tuple[Array, Array]:
    """Percentile bootstrap interval of ``stat_fn(per_item)`` over items.

    ``n_boot`` resamples of the items (axis 0) with replacement, evaluated in one ``vmap``; the interval is the
    ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the resampled statistic.

    Args:
      key: PRNG key of the resampling.
      per_item: ``(n, ...)`` numeric array, the items on axis 0 (``n ≥ 1``).
      stat_fn: statistic of a resampled ``(n, ...)`` array, traceable under ``vmap`` (default ``jnp.mean``).
      n_boot: number of resamples (int ``≥ 2``).
      level: confidence level in ``(0, 1)``.

    Returns:
      A tuple ``(lo, hi)`` of float arrays of the shape of ``stat_fn``'s output.

    Raises:
      TypeError: ``per_item`` not numeric; ``n_boot`` not an int.
      ValueError: ``per_item`` 0-d or without items; ``n_boot < 2``; ``level`` not in ``(0, 1)``.
    """
    per_item = as_array(per_item, "per_item", kind="number")
    if per_item.ndim < 1 or per_item.shape[0] == 0:
        raise ValueError(f"per_item must have at least one item on axis 0, got shape {tuple(per_item.shape)}")
    n_boot, level = _check_boot(n_boot, level)
    n = per_item.shape[0]
    stats = jax.vmap(lambda i: stat_fn(per_item[i]))(_resample(key, n_boot, n))
    return _quantiles(stats, level)


def _suite_of_parts(parts, mode):
    subs = {}
    for k, b in enumerate(SUBBENCHMARKS):
        pub, priv = parts[2 * k], parts[2 * k + 1]
        subs[b] = combine_splits(pub.mean(), priv.mean(), pub.shape[0], priv.shape[0], mode=mode)
    return facts_score(subs)


@functools.partial(jax.jit, static_argnums=2)
def _joint_bootstrap(arrays, idx, mode):
    stats = jax.vmap(lambda *ii: _suite_of_parts([a[i] for a, i in zip(arrays, ii, strict=True)], mode))(*idx)
    return _suite_of_parts(arrays, mode), stats


@cites(FACTS)
def facts_score_ci(
    key: Key,
    items: Mapping[str, tuple[Any, Any]],
    n_boot: int = 1000,
    level: float = 0.95,
    mode: str = "mean",
) -> tuple[Array, Array, Array]:
    """FACTS score and its joint percentile-bootstrap interval.

    ``items[b] = (public, private)`` per-item scores of benchmark ``b`` (a correct indicator for short-form, ``κ ν`` for
    multimodal, the judge mean of ``e g`` for grounding; see :meth:`~jaxlab.eval.facts.table.VerdictTable.item_scores`),
    so that each split score is their mean. The score is :func:`facts_score` of :func:`combine_splits` of the split
    means; every benchmark and split is resampled independently ``n_boot`` times (a joint bootstrap), and the interval
    is the percentile interval of the resampled suite scores. Bootstrap settings (B = 1000, 95 %) follow Cheng et al.,
    "The FACTS Leaderboard: A Comprehensive Benchmark for Large Language Model Factuality", arXiv:2512.10791; the joint
    resampling is reconstructed.

    Args:
      key: PRNG key of the resampling.
      items: mapping with exactly the keys :data:`SUBBENCHMARKS`, each a ``(public, private)`` pair of 1-d float
        arrays of per-item scores in ``[0, 1]``.
      n_boot: number of resamples (int ``≥ 2``).
      level: confidence level in ``(0, 1)``.
      mode: split combination, ``"mean"`` or ``"pooled"`` (see :func:`combine_splits`).

    Returns:
      A tuple ``(score, lo, hi)`` of 0-d float arrays.

    Raises:
      TypeError: ``items`` is not a mapping; a score array not floating; ``n_boot`` not an int.
      ValueError: missing or extra keys; an entry that is not a pair; a split that is not 1-d, empty or outside
        ``[0, 1]``; ``n_boot < 2``; ``level`` not in ``(0, 1)``; an unknown ``mode``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.eval.facts import facts_score_ci
      >>> split = jnp.array([1.0, 0.0, 1.0, 1.0])
      >>> items = {b: (split, split) for b in ("multimodal", "parametric", "search", "grounding")}
      >>> score, lo, hi = facts_score_ci(jax.random.key(0), items, n_boot=200)
      >>> float(score)
      0.75
    """
    _check_keys(items, "items")
    n_boot, level = _check_boot(n_boot, level)
    arrays = []
    for b in SUBBENCHMARKS:
        pair = items[b]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"items[{b!r}] must be a (public, private) pair of per-item scores")
        for split, a in zip(("public", "private"), pair, strict=True):
            arr = as_array(a, f"items[{b!r}] {split}", ndim=1)
            if arr.shape[0] == 0:
                raise ValueError(f"items[{b!r}] {split} must have at least one item")
            arrays.append(check_in_range(arr, f"items[{b!r}] {split}", 0.0, 1.0))

    keys = jax.random.split(key, len(arrays))
    idx = tuple(_resample(k, n_boot, a.shape[0]) for k, a in zip(keys, arrays, strict=True))
    score, stats = _joint_bootstrap(tuple(arrays), idx, mode)
    lo, hi = _quantiles(stats, level)
    return score, lo, hi
