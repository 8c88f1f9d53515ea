"""float32 against float64: the KL terms of the frontier and of the proxy gap keep their relative accuracy when the
two policies are close (large β, small reward error), where ``Σ p ln(p/q)`` loses every digit to cancellation."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.alignment import frontier_point, proxy_gaps


def _instance(seed=0, V=30):
    rng = np.random.default_rng(seed)
    log_pi0 = np.log(rng.dirichlet(np.ones(V))).astype(np.float32)
    return log_pi0, rng.standard_normal(V).astype(np.float32), rng.standard_normal(V).astype(np.float32)


@pytest.mark.parametrize("scale", [1e-3, 1e-2, 1e-1])
@pytest.mark.parametrize("beta", [0.5, 5.0])
def test_float32_proxy_objective_gap_matches_float64(scale, beta):
    log_pi0, r, e = _instance()
    e = (scale * e).astype(np.float32)
    g32 = proxy_gaps(log_pi0, r, e, np.float32(beta))
    g64 = proxy_gaps(np.float64(log_pi0), np.float64(r), np.float64(e), beta)
    assert g32.objective_gap.dtype == jnp.float32
    # the gap is ~ Var(e)/(2β) (down to ~1e-8 here); the old Σ p ln(p/q) was off by ~1e-7 absolute
    assert float(g64.objective_gap) > 0
    assert abs(float(g32.objective_gap) / float(g64.objective_gap) - 1) <= 1e-3


@pytest.mark.parametrize("beta", [2.0, 20.0, 200.0])
def test_float32_frontier_kl_matches_float64(beta):
    log_pi0, r, _ = _instance(1)
    p32 = frontier_point(log_pi0, r, np.float32(beta))
    p64 = frontier_point(np.float64(log_pi0), np.float64(r), beta)
    for k in ("kl", "reverse_kl"):
        a, b = float(getattr(p32, k)), float(getattr(p64, k))
        assert getattr(p32, k).dtype == jnp.float32
        assert abs(a / b - 1) <= 1e-4, (k, a, b)
