"""Claims of the FACTS Leaderboard scoring (area ``facts``): metric identities
and the SimpleQA grader's math, vmap over models = a Python loop, grounding eligibility, split combination, the
suite average against a plain-Python group-by, and the bootstrap's half-width and coverage."""

from __future__ import annotations

from collections import defaultdict

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.core.verification import by_precision
from jaxlab.eval.facts import metrics as facts
from jaxlab.eval.facts import table as facts_table
from jaxlab.eval.facts.papers import FACTS, GROUNDING, SIMPLEQA

TITLE = "FACTS Leaderboard scoring: short-form/multimodal/grounding metrics, splits, suite score, bootstrap"
MODULES = ("jaxlab.eval.facts", "jaxlab.eval.facts.metrics", "jaxlab.eval.facts.table")

_AREA = "facts"
_EPS32 = 2.0**-23  # float32 unit roundoff eps32; u = eps32 / 2 bounds one correctly rounded operation


def _simpleqa(v: np.ndarray) -> dict[str, float]:
    n = len(v)
    c, i, a = (np.sum(v == k) / n for k in range(3))
    att = c / (c + i) if c + i > 0 else 0.0
    return {
        "accuracy": c,
        "attempted": c + i,
        "hedging": a,
        "attempted_accuracy": att,
        "f1": 2 * att * c / (att + c) if att + c > 0 else 0.0,
    }


@claim(area=_AREA, paper=SIMPLEQA)
def shortform_metrics_match_simpleqa_grader() -> ClaimResult:
    """D.3-1: accuracy, attempted, hedging, attempted-accuracy and F1 equal the SimpleQA grader's formulas on 20
    random verdict vectors (1 to 300 items), and attempted + hedging = 1, accuracy = attempted x
    attempted-accuracy; measured = max |error|."""
    rng = np.random.default_rng(0)
    err = 0.0
    metrics = jax.jit(facts.shortform_metrics)
    for _ in range(20):
        # one padded shape (no recompilation): the first n items are real
        v = rng.choice(3, size=300, p=rng.dirichlet(np.ones(3)))
        n = int(rng.integers(1, 301))
        m = {k: float(x) for k, x in metrics(v, (np.arange(300) < n).astype(float)).items()}
        ref = _simpleqa(v[:n])
        err = max(
            err,
            *(abs(m[k] - ref[k]) for k in ref),
            abs(m["attempted"] + m["hedging"] - 1),
            abs(m["accuracy"] - m["attempted"] * m["attempted_accuracy"]),
        )
    # counts are exact integers (< 2^24); each metric is <= 4 rounded operations on values <= 1 (<= 4u) and an
    # identity combines two of them (<= 8u): error <= 4 eps32 ~ 4.8e-7 in float32
    return ClaimResult.at_most(err, by_precision(1e-12, 4 * _EPS32))


@claim(area=_AREA, paper=FACTS)
def vmap_over_50_models_equals_loop() -> ClaimResult:
    """D.4: short-form and multimodal metrics vmapped over 50 synthetic models with padded, masked item axes equal
    a Python loop over the unpadded models; measured = max |difference|."""
    rng = np.random.default_rng(1)
    n_models, n_max = 50, 200
    lengths = rng.integers(20, n_max + 1, n_models)
    mask = (np.arange(n_max)[None] < lengths[:, None]).astype(float)
    v = rng.integers(0, 3, (n_models, n_max))
    cov, nc = rng.integers(0, 2, (2, n_models, n_max))
    sf = jax.jit(jax.vmap(facts.shortform_metrics))(jnp.asarray(v), jnp.asarray(mask))
    mm = jax.jit(jax.vmap(facts.multimodal_metrics))(jnp.asarray(cov), jnp.asarray(nc), jnp.asarray(mask))
    err = 0.0
    for k in range(n_models):
        sl = slice(0, int(lengths[k]))
        ref = _simpleqa(v[k, sl])
        err = max(err, *(abs(float(sf[name][k]) - ref[name]) for name in ref))
        err = max(err, abs(float(mm["accuracy"][k]) - float(np.mean(cov[k, sl] * nc[k, sl]))))
    # exact masked counts, then <= 4 rounded operations on values <= 1 (F1 is the longest): <= 4u = 2 eps32 ~ 2.4e-7
    return ClaimResult.at_most(err, by_precision(1e-12, 2 * _EPS32))


@claim(area=_AREA, paper=GROUNDING)
def ineligible_responses_count_as_inaccurate() -> ClaimResult:
    """D.3-3: grounding score = (1/J) sum_j mean_i e_ij g_ij (per_judge) and with e_i = min_j e_ij (any_judge),
    against explicit loops over 3 judges x 500 items; measured = max |error|."""
    rng = np.random.default_rng(2)
    e, g = (rng.random((2, 3, 500)) < 0.8).astype(int)
    per = np.mean([np.mean([e[j, i] * g[j, i] for i in range(500)]) for j in range(3)])
    anyj = np.mean([np.mean([min(e[:, i]) * g[j, i] for i in range(500)]) for j in range(3)])
    err = max(
        abs(float(facts.grounding_score(e, g)) - per), abs(float(facts.grounding_score(e, g, "any_judge")) - anyj)
    )
    # exact counts / n (1 rounding), then the mean of J = 3 judges (2 additions, 1 division): <= 4u = 2 eps32 ~ 2.4e-7
    return ClaimResult.at_most(err, by_precision(1e-12, 2 * _EPS32),
                               details=f"per_judge {per:.4f}, any_judge {anyj:.4f} (<= per_judge)")


@claim(area=_AREA, paper=FACTS)
def pooled_split_combination_equals_pooled_items() -> ClaimResult:
    """D.3-4: combine_splits(mode="pooled") with the item counts equals the accuracy of the concatenated items, and
    mode="mean" the unweighted split mean; measured = max |error|."""
    rng = np.random.default_rng(3)
    pub, priv = rng.integers(0, 3, 137), rng.integers(0, 3, 411)
    acc = lambda v: float(facts.shortform_metrics(v)["accuracy"])  # noqa: E731
    pooled = float(facts.combine_splits(acc(pub), acc(priv), 137, 411, mode="pooled"))
    mean = float(facts.combine_splits(acc(pub), acc(priv)))
    err = max(abs(pooled - acc(np.concatenate([pub, priv]))), abs(mean - (np.mean(pub == 0) + np.mean(priv == 0)) / 2))
    # two split accuracies (1 rounding each), two products, a sum and a division, against a third accuracy
    # (1 rounding), all values <= 1: <= 8u = 4 eps32 ~ 4.8e-7
    return ClaimResult.at_most(err, by_precision(1e-12, 4 * _EPS32))


@claim(area=_AREA, paper=FACTS)
def suite_score_is_the_average_of_four() -> ClaimResult:
    """D.3-5: the leaderboard's FACTS score of 4 synthetic models (2 grounding judges) equals a plain-Python
    group-by (judge mean, split mean, then the mean of the four sub-benchmarks); measured = max |error|."""
    skills = {
        f"model-{k}": dict(zip(facts.SUBBENCHMARKS, (0.47, 0.76, 0.84, 0.69)[k:] + (0.5,) * k, strict=True))
        for k in range(4)
    }
    table = facts_table.synthetic_verdicts(0, skills, n_items=40)
    acc = defaultdict(list)
    for r in table.rows:
        ok = r.values[0] == 0 if r.benchmark in ("parametric", "search") else r.values == (1, 1)
        acc[r.model, r.benchmark, r.split, r.judge].append(ok)
    split = defaultdict(list)
    for (m, b, s, _), v in acc.items():
        split[m, b, s].append(np.mean(v))
    err = 0.0
    for row in facts_table.leaderboard(table):
        ref = np.mean(
            [
                (np.mean(split[row.model, b, "public"]) + np.mean(split[row.model, b, "private"])) / 2
                for b in facts.SUBBENCHMARKS
            ]
        )
        err = max(err, abs(row.facts - ref))
    # per leaf: count / n (1 rounding), mean of 2 judges (2), mean of 2 splits (2), mean of 4 benchmarks (4), values
    # <= 1: <= 9u = 4.5 eps32 ~ 5.4e-7
    return ClaimResult.at_most(err, by_precision(1e-12, 4.5 * _EPS32))


@claim(area=_AREA, paper=FACTS)
def bootstrap_half_width_for_p_06_n_1000() -> ClaimResult:
    """D.4: the 95 % percentile-bootstrap interval of an accuracy with p = 0.6, n = 1000 has half-width about
    1.96 sqrt(0.24 / 1000) = 0.03036. Measured: the mean half-width over 64 independent data sets (B = 1000
    resamples each); it lies within 4 standard errors (SE from the spread of the 64 half-widths, about 0.4 %) of
    the exact limit B -> infinity, E[(q_0.975 - q_0.025) / 2n] with q the quantiles of Binomial(n, p_hat) and
    p_hat ~ Binomial(n, p) / n (scipy's binom.ppf, summed over p_hat: 0.030244; the lattice of p_hat* moves it
    0.4 % below the normal formula, reported in the details)."""
    n, p, sets = 1000, 0.6, 64
    keys = jax.random.split(jax.random.key(0), sets)
    data = jax.vmap(lambda k: jax.random.bernoulli(k, p, (n,)).astype(float))(keys)
    # lax.map over the data sets, 8 at a time: a vmap over all 64 would hold 64 x 1000 x 1000 resampled items
    # (about 1 GB in float64) at once; each set's interval is the same either way
    lo, hi = jax.jit(lambda ks, xs: jax.lax.map(lambda a: facts.bootstrap_ci(*a), (ks, xs), batch_size=8))(
        jax.random.split(jax.random.key(1), sets), data)
    mean, se = mean_and_se(np.asarray(hi - lo, dtype=np.float64) / 2)
    k = np.arange(n + 1)
    p_hat = k / n
    limit = float(np.sum(stats.binom.pmf(k, n, p)
                         * (stats.binom.ppf(0.975, n, p_hat) - stats.binom.ppf(0.025, n, p_hat)) / (2 * n)))
    normal = 1.96 * np.sqrt(p * (1 - p) / n)
    # float32: the resampled means are sums of 1000 zeros and ones (exact in float32) divided by 1000 (one rounding,
    # 6e-8 relative), 10^4 times below the SE: no allowance
    return ClaimResult.within_se(mean, limit, se, k=4.0,
                                 details=f"{sets} data sets, B = 1000; normal formula 1.96 sqrt(pq/n) = {normal:.5f}")


@claim(area=_AREA, paper=FACTS)
def bootstrap_coverage_is_nominal() -> ClaimResult:
    """D.3-6: over 300 samples (p = 0.6, n = 200, B = 400) the 95 % percentile interval covers p in 95 % of the
    samples (+- 0.04, about 3 standard errors); measured = coverage."""
    keys = jax.random.split(jax.random.key(2), 300)
    data = jax.vmap(lambda k: jax.random.bernoulli(k, 0.6, (200,)).astype(float))(keys)
    boot = jax.jit(lambda ks, xs: jax.lax.map(lambda a: facts.bootstrap_ci(*a, n_boot=400), (ks, xs), batch_size=50))
    lo, hi = boot(jax.random.split(jax.random.key(3), 300), data)  # 50 samples at a time: bounded memory
    return ClaimResult.close(jnp.mean((lo <= 0.6) & (0.6 <= hi)), 0.95, atol=0.04)
