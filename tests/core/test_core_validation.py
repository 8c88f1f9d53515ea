import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import validation as v


def test_as_array_promotes_python_numbers_and_checks_kind():
    a = v.as_array([1, 2, 3], "x")
    assert jnp.issubdtype(a.dtype, jnp.floating)
    with pytest.raises(TypeError, match=r"x must have a float dtype, got array of shape \(3,\) and dtype int"):
        v.as_array(np.arange(3), "x")
    with pytest.raises(TypeError, match="must be an array"):
        v.as_array("abc", "x")
    assert v.as_array(np.arange(3), "i", kind="int").dtype.kind == "i"


def test_rank_and_shape_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"Y0 must be 2-dimensional, got array of shape \(3,\)"):
        v.as_array(jnp.ones(3), "Y0", ndim=2)
    with pytest.raises(ValueError, match=r"w must have shape \(4\), got shape \(3,\)"):
        v.as_array(jnp.ones(3), "w", shape=(4,))
    v.check_shape(jnp.ones((2, 5)), "X", (None, 5))
    with pytest.raises(ValueError, match=r"X must have shape \(\*, 4\)"):
        v.check_shape(jnp.ones((2, 5)), "X", (None, 4))


def test_finite_positive_range():
    with pytest.raises(ValueError, match="Y0 must be finite"):
        v.as_array(jnp.array([1.0, jnp.nan]), "Y0", finite=True)
    with pytest.raises(ValueError, match=r"lengthscale must be > 0 and finite, got -1.0"):
        v.check_positive(-1.0, "lengthscale")
    with pytest.raises(ValueError, match="lengthscale must be > 0"):
        v.check_positive(float("inf"), "lengthscale")
    v.check_positive(0.0, "jitter", strict=False)
    with pytest.raises(ValueError, match=r"lr must lie in \(0, 1\], got 0.0"):
        v.check_in_range(0.0, "lr", 0, 1, lo_open=True)
    with pytest.raises(ValueError, match="q must lie in"):
        v.check_in_range(float("nan"), "q", 0, 1)
    with pytest.raises(ValueError, match="must be a scalar"):
        v.check_positive(jnp.ones(2), "lengthscale")


def test_int_checks():
    assert v.check_int(np.int64(3), "n_steps", min_value=0) == 3
    with pytest.raises(TypeError, match="n_steps must be a Python int"):
        v.check_int(3.0, "n_steps")
    with pytest.raises(TypeError):
        v.check_int(True, "n_steps")
    with pytest.raises(ValueError, match="n_quad must be >= 1, got 0"):
        v.check_int(0, "n_quad", min_value=1)


def test_simplex_symmetric_psd():
    v.check_simplex(jnp.array([0.2, 0.8]), "w")
    with pytest.raises(ValueError, match="w must sum to 1"):
        v.check_simplex(jnp.array([0.2, 0.7]), "w")
    with pytest.raises(ValueError, match="w must be nonnegative"):
        v.check_simplex(jnp.array([-0.2, 1.2]), "w")
    with pytest.raises(ValueError, match="S must be symmetric"):
        v.check_symmetric(jnp.array([[1.0, 2.0], [0.0, 1.0]]), "S")
    with pytest.raises(ValueError, match="S must be square"):
        v.check_symmetric(jnp.ones((2, 3)), "S")
    v.check_psd(jnp.array([[1.0, 1.0], [1.0, 1.0]]), "S")
    with pytest.raises(ValueError, match="S must be positive definite"):
        v.check_psd(jnp.array([[1.0, 1.0], [1.0, 1.0]]), "S", strict=True)
    with pytest.raises(ValueError, match="positive semidefinite, got smallest eigenvalue -1"):
        v.check_psd(jnp.array([[0.0, 1.0], [1.0, 0.0]]), "S")


def test_quadrature_rule_checks():
    nodes, _ = v.check_quadrature(jnp.zeros((3, 2)), jnp.full(3, 1 / 3), 2)
    assert nodes.shape == (3, 2)
    with pytest.raises(ValueError, match=r"quadrature nodes must have shape \(\*, 2\)"):
        v.check_quadrature(jnp.zeros((3, 1)), jnp.full(3, 1 / 3), 2)
    with pytest.raises(ValueError, match="quadrature weights must sum to 1"):
        v.check_quadrature(jnp.zeros((3, 2)), jnp.full(3, 0.3), 2)


def test_value_checks_are_skipped_on_tracers_and_error_if_survives_jit():
    @jax.jit
    def f(x):
        v.check_positive(x, "x")  # tracer: skipped at trace time
        return v.error_if(x, x < 0, "x must be >= 0")

    assert float(f(2.0)) == 2.0
    with pytest.raises(Exception, match="x must be >= 0"):
        f(-1.0).block_until_ready()


def test_value_checks_on_concrete_closures_work_inside_jit():
    w = jnp.ones(3)

    @jax.jit
    def f(x):
        v.as_array(w, "w", finite=True)  # concrete, captured by the traced function
        return x * w

    assert float(f(2.0).sum()) == 6.0


def test_float32_quadrature_rules_pass_the_sum_check():
    w = jnp.full(7, 1 / 7, dtype=jnp.float32)
    v.check_quadrature(jnp.zeros((7, 1), jnp.float32), w, 1)
