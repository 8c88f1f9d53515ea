"""ClaimResult.within_se and mean_and_se: the z-score, a planted bias fails, k > 5 is refused, and the batch-means
SE of i.i.d. draws agrees with sigma / sqrt(n)."""

import math

import numpy as np
import pytest

from jaxlab.core import ClaimResult, mean_and_se


def test_z_score_and_verdict():
    r = ClaimResult.within_se(1.003, 1.0, se=0.002, k=4)
    assert r.passed
    assert r.measured == 1.003 and r.expected == 1.0
    assert r.tolerance == pytest.approx(0.008)
    assert r.details.startswith("z = +1.50 (SE 0.002, k = 4)")
    r = ClaimResult.within_se(0.99, 1.0, se=0.002, k=4, details="n = 40")
    assert not r.passed
    assert r.details == "z = -5.00 (SE 0.002, k = 4); n = 40"


def test_planted_three_percent_bias_fails_with_a_small_se():
    rng = np.random.default_rng(0)
    x = 1.03 * (2.0 + rng.standard_normal((40, 10_000)).mean(1))  # 40 seeds of a 3 % biased estimator of 2.0
    mean, se = mean_and_se(x)
    assert se == pytest.approx(1.03 / math.sqrt(400_000), rel=0.3)
    assert not ClaimResult.within_se(mean, 2.0, se, k=5).passed
    assert ClaimResult.within_se(mean / 1.03, 2.0, se / 1.03, k=4).passed  # the unbiased one passes


def test_arrays_report_the_largest_z():
    r = ClaimResult.within_se([1.0, 2.02, 3.0], [1.0, 2.0, 3.0], se=[0.01, 0.01, 0.02], k=4)
    assert r.passed and r.measured == 2.02 and r.expected == 2.0
    assert r.details.startswith("z = [+0.00, +2.00, +0.00] (largest |z| at index 1")
    assert not ClaimResult.within_se([1.0, 2.05], [1.0, 2.0], se=0.01, k=4).passed


def test_atol_widens_by_a_fixed_amount_and_nan_fails():
    assert not ClaimResult.within_se(1.05, 1.0, se=0.01, k=4).passed
    r = ClaimResult.within_se(1.05, 1.0, se=0.01, k=4, atol=0.02)
    assert r.passed and r.tolerance == pytest.approx(0.06) and "atol 0.02" in r.details
    assert not ClaimResult.within_se(float("nan"), 1.0, se=0.01).passed


@pytest.mark.parametrize("k", [5.01, 10.0, 0.0, -1.0])
def test_k_outside_0_5_is_refused(k):
    with pytest.raises(ValueError, match="k must be in"):
        ClaimResult.within_se(1.0, 1.0, se=0.1, k=k)


@pytest.mark.parametrize("se", [0.0, -0.1, float("nan"), float("inf")])
def test_se_must_be_positive_and_finite(se):
    with pytest.raises(ValueError, match="se must be"):
        ClaimResult.within_se(1.0, 1.0, se=se)


def test_other_bad_arguments_are_named():
    with pytest.raises(ValueError, match="atol"):
        ClaimResult.within_se(1.0, 1.0, se=0.1, atol=-1.0)
    with pytest.raises(ValueError, match="predicted must be finite"):
        ClaimResult.within_se(1.0, float("inf"), se=0.1)
    with pytest.raises(ValueError, match="broadcast"):
        ClaimResult.within_se([1.0, 2.0], [1.0, 2.0, 3.0], se=0.1)


def test_replicate_mean_and_se_match_numpy():
    x = np.array([1.0, 2.0, 3.0, 4.0, 7.0])
    mean, se = mean_and_se(x)
    assert mean == pytest.approx(3.4)
    assert se == pytest.approx(np.std(x, ddof=1) / math.sqrt(5))
    means, ses = mean_and_se(np.stack([x, 2 * x], axis=1))
    np.testing.assert_allclose(means, [3.4, 6.8])
    np.testing.assert_allclose(ses, [se, 2 * se])


def test_batch_means_se_of_iid_normals_is_sigma_over_sqrt_n():
    sigma, n, b = 3.0, 200_000, 50
    x = 1.0 + sigma * np.random.default_rng(1).standard_normal(n)
    mean, se = mean_and_se(x, batches=b)
    # the SE estimate from b batch means has relative SE 1/sqrt(2 (b - 1)) = 0.10: 4 of them is 40 %
    assert se == pytest.approx(sigma / math.sqrt(n), rel=0.4)
    assert abs(mean - 1.0) <= 4 * sigma / math.sqrt(n)


def test_batch_means_see_autocorrelation():
    rng = np.random.default_rng(2)
    n, rho = 100_000, 0.9
    x = np.empty(n)
    x[0] = 0.0
    eps = rng.standard_normal(n)
    for t in range(1, n):
        x[t] = rho * x[t - 1] + eps[t]
    # AR(1): Var(mean) ~ sigma_x^2 (1 + rho)/(1 - rho) / n, 19x the naive i.i.d. value
    true_se = math.sqrt(1 / (1 - rho**2) * (1 + rho) / (1 - rho) / n)
    _, se_batches = mean_and_se(x, batches=40)
    _, se_naive = mean_and_se(x)
    assert se_batches == pytest.approx(true_se, rel=0.35)
    assert se_naive < 0.4 * true_se


def test_mean_and_se_validates_its_arguments():
    with pytest.raises(ValueError, match="samples must have a replicate axis"):
        mean_and_se(np.float64(1.0))
    with pytest.raises(ValueError, match="samples must be finite"):
        mean_and_se([1.0, np.nan])
    with pytest.raises(ValueError, match="at least 2 replicates"):
        mean_and_se([1.0])
    with pytest.raises(ValueError, match="batches must be an int >= 2"):
        mean_and_se(np.ones(10), batches=1)
    with pytest.raises(ValueError, match="batches must be an int >= 2"):
        mean_and_se(np.ones(10), batches=2.0)
    with pytest.raises(ValueError, match="must divide"):
        mean_and_se(np.ones(10), batches=3)
