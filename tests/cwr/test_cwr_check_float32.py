"""The exact checkers solve their LPs in float64 (scipy's HiGHS) whatever JAX's default float: with x64 off they
must use the caller's float64 distributions, not their float32 rounding (which moved the LP minimum by ~4e-8 and
can move a distribution across Chow's threshold)."""

import jax
import numpy as np

from jaxlab.losses.cwr import check as ck


def test_lp_checker_keeps_float64_distributions_with_x64_off():
    ps = ck.threshold_distributions(4, 4, 0.5, 6)
    ref = ck.calibration_report("cs", 4, 0.5, ps)
    with jax.enable_x64(False):
        got = ck.calibration_report("cs", 4, 0.5, ps)
    np.testing.assert_allclose(got.min_risk, ref.min_risk, rtol=0, atol=1e-15)
    # C3's closed form, min_u R(u; p) = min(1, 2 (1 - max p)), on the caller's p
    np.testing.assert_allclose(got.min_risk, np.minimum(1, 2 * (1 - ps.max(1))), rtol=0, atol=1e-12)
    assert got.link_errors == ref.link_errors == 0


def test_bayes_set_uses_the_callers_values_with_x64_off():
    # max p = 1 - c + 1e-9: above Chow's threshold in float64, but 1e-9 is below float32's resolution at 0.5
    p = np.array([0.5 + 1e-9, 0.3, 0.2 - 1e-9])
    assert ck.bayes_set(p, 0.5) == {0}
    with jax.enable_x64(False):
        assert ck.bayes_set(p, 0.5) == {0}
