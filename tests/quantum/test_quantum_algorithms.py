"""QNN training as a jaxlab.core.Algorithm on the one trainer (same iterates as train_step and fit, under jit),
renamed keywords, and value checks that hold eagerly and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jaxlab_testing import raises_eager_and_jit

from jaxlab.core import Algorithm, TrainState
from jaxlab.quantum import (
    QNNConfig,
    check_unitary,
    expval_op,
    fit,
    fit_algorithm,
    grid,
    grid_coefficients,
    init_qnn_params,
    linearized_residual,
    train_init,
    train_step,
    zero_state,
)


def _setup():
    cfg = QNNConfig(1, 2)
    x = grid(12)
    y = 0.4 * jnp.cos(x) + 0.3 * jnp.cos(2 * x)
    return cfg, x, y, init_qnn_params(jax.random.key(0), cfg)


def test_fit_algorithm_is_the_train_step_and_fit_runs_it():
    cfg, x, y, p = _setup()
    opt = optax.adam(0.05)
    algo = fit_algorithm(x, y, cfg, opt, freqs=(1, 2))
    assert isinstance(algo, Algorithm)
    s = algo.init(p)
    assert isinstance(s, TrainState) and int(s.step) == 0
    ref = train_init(p, opt)
    step = jax.jit(algo.step)
    ref_step = jax.jit(lambda st: train_step(st, x, y, cfg, opt, (1, 2)))
    for _ in range(5):
        s, info = step(None, s)
        ref, ref_info = ref_step(ref)
        np.testing.assert_array_equal(np.asarray(s.params), np.asarray(ref.params))
        np.testing.assert_array_equal(np.asarray(info.r_hat), np.asarray(ref_info.r_hat))
        assert float(info.loss) == float(ref_info.loss)
    final, traj = jax.jit(lambda p0: fit(train_init(p0, opt), x, y, cfg, opt, 5, 5, freqs=(1, 2)))(p)
    np.testing.assert_allclose(np.asarray(final.params), np.asarray(s.params), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(traj.r_hat[-1]), np.asarray(info.r_hat), rtol=1e-12, atol=1e-14)
    assert int(final.step) == 5


def test_renamed_keywords_warn_and_give_the_same_numbers():
    cfg, x, y, p = _setup()
    opt = optax.sgd(0.1)
    new = fit(train_init(p, opt), x, y, cfg, opt, num_steps=2)
    with pytest.warns(DeprecationWarning, match="n_steps"):
        old = fit(train_init(p, opt), x, y, cfg, opt, n_steps=2)
    np.testing.assert_array_equal(np.asarray(new[0].params), np.asarray(old[0].params))
    G = jnp.eye(3, dtype=jnp.complex128)
    r0 = jnp.ones(3, jnp.complex128)
    with pytest.warns(DeprecationWarning, match="eta"):
        a = linearized_residual(G, r0, eta=0.5, t=1.0)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(linearized_residual(G, r0, learning_rate=0.5, t=1.0)))


def test_value_checks_hold_eagerly_and_under_jit():
    rng = np.random.default_rng(0)
    A = jnp.asarray(rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)))
    r0 = jnp.ones(4, jnp.complex128)
    raises_eager_and_jit(lambda g: linearized_residual(g, r0, 0.1, 1.0), A, match="G must be Hermitian")
    raises_eager_and_jit(lambda g: linearized_residual(g, r0, 0.1, 1.0), -(A @ A.conj().T),
                         match="G must be positive semidefinite")
    raises_eager_and_jit(lambda u: check_unitary(u, "U"), jnp.array([[1.0, 1.0], [0.0, 1.0]], jnp.complex128),
                         match="U must be unitary")
    psi = zero_state(2, jnp.complex128)
    raises_eager_and_jit(lambda o: expval_op(psi, o, 0), jnp.array([[0.0, 1.0], [0.0, 0.0]]),
                         match="O must be Hermitian")
    raises_eager_and_jit(lambda xg: grid_coefficients(jnp.cos(xg), xg), jnp.linspace(0.0, 1.0, 9) ** 2,
                         match="x_grid must be equispaced")
    raises_eager_and_jit(lambda s: init_qnn_params(jax.random.key(0), QNNConfig(1, 1), s), -1.0,
                         match="scale must be > 0")


def test_checks_pass_good_inputs_under_jit():
    x = grid(9)
    c = jax.jit(lambda xg: grid_coefficients(jnp.cos(xg), xg, 2))(x)
    np.testing.assert_allclose(np.asarray(c), [0, 0.5, 0, 0.5, 0], atol=1e-12)
    U = jnp.array([[0.0, 1.0], [1.0, 0.0]], jnp.complex128)
    np.testing.assert_array_equal(np.asarray(jax.jit(check_unitary)(U)), np.asarray(U))
