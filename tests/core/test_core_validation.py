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


def test_error_if_survives_jit():
    @jax.jit
    def f(x):
        return v.error_if(x, x < 0, "x must be >= 0")

    assert float(f(2.0)) == 2.0
    with pytest.raises(Exception, match="x must be >= 0"):
        f(-1.0).block_until_ready()


def _cond_shapes(jaxpr) -> list[tuple]:
    """Shapes of every operand and result of every ``cond`` in ``jaxpr`` (nested jaxprs included)."""
    shapes = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "cond":
            shapes += [tuple(a.aval.shape) for a in (*eqn.invars, *eqn.outvars)]
        for p in eqn.params.values():
            for j in (p if isinstance(p, (tuple, list)) else (p,)):
                inner = getattr(j, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    shapes += _cond_shapes(inner)
    return shapes


def test_a_traced_check_does_not_route_the_array_through_its_branch():
    # equinox.error_if(x, ...) passes x through a lax.cond, which XLA materialises (a copy of a large input
    # on every call); the check must guard a scalar and leave x to fuse into its consumers
    x = jnp.ones((64, 48))
    for check in (lambda a: v.check_finite(a, "x"), lambda a: v.check_psd(a[:48], "C"),
                  lambda a: v.error_if({"a": a, "b": 2 * a}, a < 0, "a must be >= 0")):
        shapes = _cond_shapes(jax.make_jaxpr(check)(x).jaxpr)
        assert shapes, "no run-time check was staged"
        assert all(int(np.prod(s)) <= 1 for s in shapes), shapes


@pytest.mark.parametrize("x", [jnp.array([1.5, -0.0, 3.0]), jnp.array([1, -2], jnp.int32),
                               jnp.array([True, False]), jnp.array([1 - 2j, -0.0 + 0j]),
                               jnp.array([1.0, -0.0], jnp.bfloat16)])
def test_a_traced_check_returns_its_input_bitwise(x):
    y = jax.jit(lambda a: v.check_finite(a, "x") if a.dtype != bool else v.error_if(a, ~a.any(), "a"))(x)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(y).view(np.uint8), np.asarray(x).view(np.uint8))
    assert jax.make_jaxpr(lambda t: v.check_finite(t, "t"))(1.0).jaxpr.outvars[0].aval.weak_type
    g = jax.grad(lambda t: jnp.sum(jnp.sin(v.check_finite(t, "t"))))(jnp.arange(3.0))
    np.testing.assert_array_equal(g, jnp.cos(jnp.arange(3.0)))


@pytest.mark.parametrize(
    ("check", "good", "bad", "match"),
    [
        (lambda x: v.check_positive(x, "ell"), 2.0, -1.0, "ell must be > 0"),
        (lambda x: v.check_positive(x, "ell", strict=False), 0.0, jnp.nan, "ell must be >= 0"),
        (lambda x: v.check_finite(x, "X"), jnp.ones(3), jnp.array([1.0, jnp.inf, 0.0]), "X must be finite"),
        (lambda x: v.check_in_range(x, "t", 0.0, 1.0, hi_open=True), jnp.array([0.0, 0.5]), jnp.array([0.5, 1.0]),
         r"t must lie in \[0.0, 1.0\)"),
        (lambda x: v.check_simplex(x, "w"), jnp.array([0.25, 0.75]), jnp.array([0.5, 0.6]), "w must"),
        (lambda x: v.check_symmetric(x, "A"), jnp.eye(2), jnp.array([[1.0, 2.0], [0.0, 1.0]]), "A must be symmetric"),
        (lambda x: v.check_psd(x, "C", strict=True), jnp.eye(2), -jnp.eye(2), "C must be positive definite"),
        (lambda x: v.as_array(x, "Y", finite=True), jnp.zeros(2), jnp.array([jnp.nan, 0.0]), "Y must be finite"),
        (lambda x: v.value_check(x, lambda a: a > 3, "z must be <= 3"), jnp.ones(2), jnp.full(2, 4.0),
         "z must be <= 3"),
    ],
)
def test_value_checks_return_their_input_and_hold_eagerly_under_jit_and_vmap(check, good, bad, match):
    np.testing.assert_array_equal(check(good), good)
    np.testing.assert_array_equal(jax.jit(check)(good), good)
    with pytest.raises(ValueError, match=match):
        check(bad)
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(check)(bad))
    batch = jnp.stack([jnp.asarray(good), jnp.asarray(bad)])
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(jax.vmap(check))(batch))


def test_a_traced_check_inside_scan_fires_at_the_bad_step():
    def body(c, x):
        return c + v.check_positive(x, "increment"), None

    xs = jnp.array([1.0, 2.0, -3.0])
    assert float(jax.lax.scan(body, 0.0, xs[:2])[0]) == 3.0
    with pytest.raises(Exception, match="increment must be > 0"):
        jax.block_until_ready(jax.lax.scan(body, 0.0, xs)[0])


def test_scalar_checks_reject_arrays_at_trace_time():
    with pytest.raises(ValueError, match="ell must be a scalar"):
        jax.jit(lambda x: v.check_positive(x, "ell"))(jnp.ones(2))


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


def test_dtype_errors_describe_what_the_caller_passed():
    # under x64-off a numpy int64 array becomes int32 inside JAX: the message must still say int64
    with jax.enable_x64(False):
        with pytest.raises(TypeError, match=r"X must have a float dtype, got array of shape \(3, 2\) and dtype int64"):
            v.as_array(np.arange(6, dtype=np.int64).reshape(3, 2), "X")


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16, jnp.complex64])
def test_nonfinite_flag_sees_nan_and_both_infinities_and_only_them(dtype):
    x = jnp.ones((7, 5), dtype)
    flag = jax.jit(v.nonfinite_flag)
    assert not bool(flag(x))
    big = jnp.finfo(jnp.float32 if dtype == jnp.complex64 else dtype).max
    assert not bool(flag(jnp.full((7, 5), big, dtype)))  # a sum of huge finite entries would overflow; x * 0 cannot
    for bad in (jnp.nan, jnp.inf, -jnp.inf):
        assert bool(flag(x.at[3, 4].set(bad)))
    assert not bool(flag(jnp.zeros((0, 3), dtype)))
    assert not bool(flag(jnp.arange(5)))  # integers are finite


def test_tie_finite_checks_names_the_input_and_keeps_the_output_bitwise():
    out = jnp.array([1.5, -0.0])

    def f(a, b):
        return v.tie_finite_checks(out * 1, a=a, b=b)

    good = jnp.ones(3)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(good, good)).view(np.uint8), np.asarray(out).view(np.uint8))
    assert v.tie_finite_checks(out, a=jnp.array([jnp.nan])) is out  # concrete inputs are the caller's to check eagerly
    with pytest.raises(Exception, match=r"b must be finite, got non-finite entries in array of shape \(3,\)"):
        jax.block_until_ready(jax.jit(f)(good, good.at[1].set(-jnp.inf)))
    # the check rides on the output: the input is not routed through a select of its size
    shapes = _cond_shapes(jax.make_jaxpr(f)(good, good).jaxpr)
    assert shapes and all(int(np.prod(s)) <= 1 for s in shapes), shapes


def test_tie_finite_checks_with_a_witness_reads_the_inputs_only_when_the_witness_is_not_finite():
    def f(a, w):
        return v.tie_finite_checks(jnp.sum(a), witness=w, a=a)

    a_bad = jnp.ones(4).at[2].set(jnp.nan)
    # a finite witness vouches for the inputs (the caller's guarantee, broken on purpose here: nothing is read);
    # a non-finite one sends the check to the inputs, which decide
    assert np.isnan(float(jax.jit(f)(a_bad, jnp.ones(2))))
    with pytest.raises(Exception, match="a must be finite"):
        jax.block_until_ready(jax.jit(f)(a_bad, jnp.array([0.0, jnp.inf])))
    assert float(jax.jit(f)(jnp.ones(4), jnp.array([0.0, jnp.inf]))) == 4.0  # an overflow of finite inputs: no error


def test_tie_finite_checks_gates_other_checks_on_the_witness():
    def f(a, labels):
        bad = labels < 0
        w = jnp.where(jnp.any(bad), jnp.nan, jnp.sum(a))  # the witness folds the label check in
        return v.tie_finite_checks(w, witness=w, checks=((lambda: bad, "labels must be >= 0"),), a=a)

    assert float(jax.jit(f)(jnp.ones(3), jnp.arange(2))) == 3.0
    with pytest.raises(Exception, match="labels must be >= 0"):
        jax.block_until_ready(jax.jit(f)(jnp.ones(3), jnp.array([0, -1])))
    with pytest.raises(Exception, match="a must be finite"):
        jax.block_until_ready(jax.jit(f)(jnp.ones(3).at[0].set(jnp.inf), jnp.arange(2)))
    # without a witness the checks run unconditionally
    g = jax.jit(lambda x: v.tie_finite_checks(x + 1, checks=((lambda: x > 5, "x must be <= 5"),)))
    assert float(g(1.0)) == 2.0
    with pytest.raises(Exception, match="x must be <= 5"):
        jax.block_until_ready(g(6.0))
