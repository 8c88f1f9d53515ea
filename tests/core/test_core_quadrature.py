import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core.quadrature import gauss_hermite, gaussian_rule


@pytest.mark.parametrize("n", [1, 3, 8])
def test_gauss_hermite_moments_are_exact(n):
    z, w = gauss_hermite(n, 1)
    assert float(jnp.sum(w)) == pytest.approx(1.0, abs=1e-14)
    # E z^{2k} = (2k - 1)!!, exact for degree <= 2n - 1
    for k in range(n):
        exact = float(np.prod(np.arange(2 * k - 1, 0, -2))) if k else 1.0
        assert float(w @ z[:, 0] ** (2 * k)) == pytest.approx(exact, rel=1e-12)
        assert abs(float(w @ z[:, 0] ** (2 * k + 1))) <= 1e-13 * float(w @ jnp.abs(z[:, 0]) ** (2 * k + 1))


def test_gaussian_rule_reproduces_mean_and_covariance():
    m = jnp.array([1.0, -2.0])
    S = jnp.array([[2.0, 0.3], [0.3, 0.5]])
    X, w = gaussian_rule(m, S, 5)
    np.testing.assert_allclose(w @ X, m, atol=1e-13)
    np.testing.assert_allclose((X - m).T @ ((X - m) * w[:, None]), S, atol=1e-13)
    with pytest.raises(ValueError, match="cov must be positive definite"):
        gaussian_rule(m, jnp.zeros((2, 2)), 3)
    with pytest.raises(ValueError, match="too many"):
        gauss_hermite(100, 4)
