"""FACTS metrics: closed forms, the SimpleQA grader's math, masks and vmap over models, splits, the suite score,
bootstrap intervals, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.eval import (
    SUBBENCHMARKS,
    bootstrap_ci,
    combine_splits,
    facts_score,
    facts_score_ci,
    grounding_score,
    multimodal_metrics,
    shortform_metrics,
)


def simpleqa_reference(verdicts):
    """The simple-evals SimpleQA aggregate (is_correct, is_incorrect, is_not_attempted rates and F-score)."""
    v = list(np.asarray(verdicts))
    n = len(v)
    c, i, a = v.count(0) / n, v.count(1) / n, v.count(2) / n
    acc_att = c / (c + i) if c + i > 0 else 0.0
    f1 = 2 * acc_att * c / (acc_att + c) if acc_att + c > 0 else 0.0
    return {"accuracy": c, "attempted": c + i, "hedging": a, "attempted_accuracy": acc_att, "f1": f1}


def test_shortform_closed_form():
    m = shortform_metrics(jnp.array([0, 0, 0, 1, 2, 2, 0, 1]))  # C = 4, I = 2, A = 2
    assert float(m["accuracy"]) == 0.5 and float(m["attempted"]) == 0.75 and float(m["hedging"]) == 0.25
    assert float(m["attempted_accuracy"]) == pytest.approx(4 / 6, abs=1e-15)
    assert float(m["f1"]) == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_shortform_matches_simpleqa_reference_and_identities(seed):
    rng = np.random.default_rng(seed)
    v = rng.choice(3, size=200, p=rng.dirichlet(np.ones(3)))
    m = {k: float(x) for k, x in shortform_metrics(v).items()}
    ref = simpleqa_reference(v)
    for k in ref:
        assert m[k] == pytest.approx(ref[k], abs=1e-14)
    assert m["attempted"] + m["hedging"] == pytest.approx(1.0, abs=1e-14)
    assert m["accuracy"] == pytest.approx(m["attempted"] * m["attempted_accuracy"], abs=1e-14)


def test_shortform_nothing_attempted_gives_zero_not_nan():
    m = shortform_metrics(jnp.array([2, 2, 2]))
    assert float(m["attempted_accuracy"]) == 0.0 and float(m["f1"]) == 0.0 and float(m["hedging"]) == 1.0


def test_several_judges_average_per_judge_metrics():
    v = jnp.array([[0, 1, 2, 0], [0, 0, 0, 1]])
    m = shortform_metrics(v)
    for k in m:
        per = [simpleqa_reference(row)[k] for row in np.asarray(v)]
        assert float(m[k]) == pytest.approx(np.mean(per), abs=1e-14)


def test_mask_equals_subset_and_vmap_over_models_equals_loop():
    rng = np.random.default_rng(5)
    n_models, n_max = 50, 40
    lengths = rng.integers(5, n_max + 1, n_models)
    v = rng.integers(0, 3, (n_models, n_max))
    mask = (np.arange(n_max)[None, :] < lengths[:, None]).astype(float)
    batched = jax.jit(jax.vmap(shortform_metrics))(jnp.asarray(v), jnp.asarray(mask))
    for k in range(n_models):
        ref = simpleqa_reference(v[k, : lengths[k]])
        for name in ref:
            assert float(batched[name][k]) == pytest.approx(ref[name], abs=1e-13)
    cov, nc = rng.integers(0, 2, (2, n_models, n_max))
    mm = jax.vmap(multimodal_metrics)(jnp.asarray(cov), jnp.asarray(nc), jnp.asarray(mask))
    for k in range(n_models):
        sl = slice(0, lengths[k])
        assert float(mm["accuracy"][k]) == pytest.approx(np.mean(cov[k, sl] * nc[k, sl]), abs=1e-14)


def test_multimodal_closed_form():
    m = multimodal_metrics(jnp.array([1, 1, 0, 1]), jnp.array([1, 0, 1, 1]))
    assert float(m["accuracy"]) == 0.5 and float(m["coverage"]) == 0.75 and float(m["no_contradiction"]) == 0.75


def test_grounding_per_judge_and_any_judge():
    e = jnp.array([[1, 0, 1, 1], [1, 1, 1, 0]])
    g = jnp.array([[1, 1, 0, 1], [1, 1, 1, 1]])
    # judge 1: e*g = 1,0,0,1 -> 0.5; judge 2: 1,1,1,0 -> 0.75
    assert float(grounding_score(e, g)) == pytest.approx(0.625, abs=1e-15)
    # any_judge: e = 1,0,1,0 -> judge 1: 1,0,0,0 -> 0.25; judge 2: 1,0,1,0 -> 0.5
    assert float(grounding_score(e, g, "any_judge")) == pytest.approx(0.375, abs=1e-15)
    assert float(jax.jit(grounding_score, static_argnums=2)(e, g, "any_judge")) == pytest.approx(0.375)


def test_combine_splits_and_suite_average():
    assert float(combine_splits(0.4, 0.8)) == pytest.approx(0.6)
    assert float(combine_splits(0.4, 0.8, 100, 300, mode="pooled")) == pytest.approx(0.7)
    assert float(combine_splits(0.4, 0.8, 50, 50, mode="pooled")) == pytest.approx(0.6)
    s = facts_score({"multimodal": 0.469, "parametric": 0.764, "search": 0.838, "grounding": 0.681})
    assert float(s) == pytest.approx((0.469 + 0.764 + 0.838 + 0.681) / 4, abs=1e-15)
    batched = facts_score({b: jnp.linspace(0, 1, 5) for b in SUBBENCHMARKS})
    np.testing.assert_allclose(batched, np.linspace(0, 1, 5), atol=1e-15)


def _bernoulli_cis(seed, p, n, n_sets, n_boot):
    keys = jax.random.split(jax.random.key(seed), n_sets)
    data = jax.vmap(lambda k: jax.random.bernoulli(k, p, (n,)).astype(jnp.float64))(keys)
    boot_keys = jax.random.split(jax.random.key(seed + 1), n_sets)
    lo, hi = jax.jit(jax.vmap(lambda k, x: bootstrap_ci(k, x, n_boot=n_boot)))(boot_keys, data)
    return np.asarray(lo), np.asarray(hi)


def test_bootstrap_half_width_matches_normal_approximation():
    p, n = 0.6, 1000
    lo, hi = _bernoulli_cis(0, p, n, 8, 1000)
    assert float(np.mean(hi - lo) / 2) == pytest.approx(1.96 * np.sqrt(p * (1 - p) / n), abs=0.004)


def test_bootstrap_coverage_is_nominal():
    p = 0.6
    lo, hi = _bernoulli_cis(2, p, 100, 200, 300)
    coverage = float(np.mean((lo <= p) & (p <= hi)))
    assert 0.90 <= coverage <= 0.99  # 0.95 +- 3 standard errors of 200 intervals


def test_bootstrap_with_a_custom_statistic():
    x = jnp.asarray(np.random.default_rng(0).normal(size=400))
    lo, hi = jax.jit(lambda k, x: bootstrap_ci(k, x, jnp.median, n_boot=500, level=0.9))(jax.random.key(2), x)
    assert float(lo) < float(jnp.median(x)) < float(hi)


def test_facts_score_ci_contains_score_and_shrinks_with_n():
    rng = np.random.default_rng(3)

    def items(n):
        return {b: ((rng.random(n) < 0.7) * 1.0, (rng.random(n) < 0.7) * 1.0) for b in SUBBENCHMARKS}

    s, lo, hi = facts_score_ci(jax.random.key(0), items(100), n_boot=400)
    s2, lo2, hi2 = facts_score_ci(jax.random.key(0), items(900), n_boot=400)
    assert float(lo) <= float(s) <= float(hi) and float(lo2) <= float(s2) <= float(hi2)
    # width ~ 1 / sqrt(n): 9x the items, about a third of the width
    assert 0.2 < float(hi2 - lo2) / float(hi - lo) < 0.5


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: shortform_metrics(jnp.array([0, 3])), ValueError, "verdicts must take values in"),
        (lambda: shortform_metrics(jnp.array([0.5, 1.0])), TypeError, "integer codes"),
        (lambda: shortform_metrics(jnp.zeros((0,), jnp.int32)), ValueError, "n >= 1"),
        (lambda: shortform_metrics(jnp.zeros((0, 3), jnp.int32)), ValueError, "J >= 1"),
        (lambda: shortform_metrics(jnp.array([0, 1]), mask=jnp.zeros(2)), ValueError, "mask must select"),
        (lambda: shortform_metrics(jnp.array([0, 1]), mask=jnp.array([1, 2])), ValueError, "mask must take"),
        (lambda: multimodal_metrics(jnp.array([0, 2]), jnp.array([1, 1])), ValueError, "coverage must take"),
        (lambda: multimodal_metrics(jnp.array([0, 1]), jnp.array([1, 1, 0])), ValueError, "same shape"),
        (lambda: grounding_score(jnp.ones((2, 3), int), jnp.ones((2, 4), int)), ValueError, "same shape"),
        (lambda: grounding_score(jnp.ones((3,), int), jnp.ones((3,), int)), ValueError, r"\(J, n\)"),
        (lambda: grounding_score(jnp.ones((0, 3), int), jnp.ones((0, 3), int)), ValueError, "J >= 1"),
        (lambda: grounding_score(jnp.ones((2, 0), int), jnp.ones((2, 0), int)), ValueError, "n >= 1"),
        (lambda: grounding_score(jnp.ones((1, 2), int), jnp.ones((1, 2), int), "majority"), ValueError, "eligib"),
        (lambda: grounding_score(2 * jnp.ones((1, 2), int), jnp.ones((1, 2), int)), ValueError, "eligible must"),
        (lambda: combine_splits(0.5, 0.5, mode="pooled"), ValueError, "needs n_public"),
        (lambda: combine_splits(0.5, 1.5), ValueError, "private must lie in"),
        (lambda: combine_splits(0.5, 0.5, mode="max"), ValueError, "mode must be"),
        (lambda: facts_score({"parametric": 0.5, "search": 0.5, "grounding": 0.5}), ValueError, "missing"),
        (lambda: facts_score({**{b: 0.5 for b in SUBBENCHMARKS}, "video": 0.5}), ValueError, "extra"),
        (lambda: facts_score([0.5] * 4), TypeError, "must be a dict"),
        (lambda: bootstrap_ci(jax.random.key(0), jnp.zeros(0)), ValueError, "at least one item"),
        (lambda: bootstrap_ci(jax.random.key(0), jnp.ones(3), level=1.0), ValueError, "level must lie"),
        (lambda: bootstrap_ci(jax.random.key(0), jnp.ones(3), n_boot=1), ValueError, "n_boot must be >= 2"),
    ],
)
def test_bad_inputs_raise(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
