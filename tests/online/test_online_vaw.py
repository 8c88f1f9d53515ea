"""VAW forecaster: Sherman-Morrison equals a per-step solve and a batch ridge re-solve, the VAW regret bound
holds at every t (claim `online:vaw_regret_bound_holds_every_round`), float32 picks the stable path, and bad
inputs raise."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.online import lds, regret, usp, vaw

T, D, LAM = 500, 16, 0.7


@pytest.fixture(scope="module")
def stream():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((T, D)) * np.linspace(0.2, 3.0, D)
    theta = rng.standard_normal(D)
    y = a @ theta + 0.3 * rng.standard_normal(T)
    return a, y


def numpy_vaw(a, y, lam, current=True):
    """Reference: re-solve the batch ridge problem at every step (O(T d^3))."""
    A, b, out = lam * np.eye(a.shape[1]), np.zeros(a.shape[1]), []
    for t in range(len(y)):
        G = A + np.outer(a[t], a[t])
        out.append(a[t] @ np.linalg.solve(G if current else A, b))
        A, b = G, b + y[t] * a[t]
    return np.array(out)


@pytest.fixture(scope="module")
def runs(stream):
    a, y = stream
    sm = vaw.run(a, y, LAM, method="sherman_morrison")
    so = vaw.run(a, y, LAM, method="solve")
    return sm, so


def test_sherman_morrison_equals_solve_and_batch_ridge(stream, runs):
    a, y = stream
    (s_sm, i_sm), (s_so, i_so) = runs
    assert isinstance(s_sm, vaw.VAWState) and isinstance(s_so, vaw.VAWGramState)
    assert np.max(np.abs(np.asarray(i_sm.y_hat) - np.asarray(i_so.y_hat))) < 1e-9
    ref = numpy_vaw(a, y, LAM)
    np.testing.assert_allclose(i_sm.y_hat, ref, atol=1e-9)
    np.testing.assert_allclose(i_sm.loss, (ref - y) ** 2, atol=1e-8)
    assert float(i_sm.y_hat[0]) == 0.0  # b_0 = 0
    np.testing.assert_allclose(np.linalg.inv(np.asarray(s_sm.P)), s_so.A, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(s_so.A, LAM * np.eye(D) + a.T @ a, rtol=1e-12)
    np.testing.assert_allclose(s_sm.b[:, 0], a.T @ y, rtol=1e-12)
    assert int(s_sm.t) == T


def test_leverage_is_determinant_ratio(stream, runs):
    a, _ = stream
    lev = np.asarray(runs[0][1].leverage)
    assert np.all((lev >= 0) & (lev < 1))
    logdet = np.asarray(regret.log_det_ratio(a, LAM))
    # h_t = 1 - det A_{t-1} / det A_t  <=>  -ln(1 - h_t) = ln det A_t - ln det A_{t-1}
    np.testing.assert_allclose(np.cumsum(-np.log1p(-lev)), logdet, rtol=1e-10)
    np.testing.assert_allclose(logdet[-1], np.linalg.slogdet(np.eye(D) + a.T @ a / LAM)[1], rtol=1e-12)


def test_vaw_regret_bound_holds_at_every_t(stream, runs):
    a, y = stream
    info = runs[0][1]
    reg = np.asarray(regret.regret_vs_best_fixed(a, y, info.y_hat, LAM))
    Y2 = np.maximum.accumulate(np.abs(y)) ** 2
    lev_bound = Y2 * np.cumsum(np.asarray(info.leverage))
    assert np.all(reg <= lev_bound + 1e-9)
    bound = np.asarray(regret.vaw_regret_bound(a, y, LAM))
    assert np.all(lev_bound <= bound + 1e-9)
    X2 = np.max(np.sum(a**2, 1))
    assert bound[-1] <= Y2[-1] * D * np.log(1 + T * X2 / (LAM * D))
    # the comparator term: batch ridge at a few prefixes (numpy lstsq on the augmented system)
    for t in (1, 37, T):
        aa = np.vstack([a[:t], np.sqrt(LAM) * np.eye(D)])
        yy = np.concatenate([y[:t], np.zeros(D)])
        th = np.linalg.lstsq(aa, yy, rcond=None)[0]
        best = LAM * th @ th + np.sum((a[:t] @ th - y[:t]) ** 2)
        np.testing.assert_allclose(np.cumsum((np.asarray(info.y_hat) - y) ** 2)[t - 1] - reg[t - 1], best, rtol=1e-9)


def test_ridge_ftl_matches_reference(stream):
    a, y = stream
    _, info = vaw.ridge_ftl_run(a, y, LAM)
    np.testing.assert_allclose(info.y_hat, numpy_vaw(a, y, LAM, current=False), atol=1e-9)
    _, info2 = vaw.ridge_ftl_run(a, y, LAM, method="solve")
    np.testing.assert_allclose(info2.y_hat, info.y_hat, atol=1e-9)


def test_vaw_is_shrunk_ftl_and_ftl_regret_identity(stream):
    """y^VAW_t = (1 - h_t) y^FTL_t, and Regret^FTL_t = sum_{s<=t} h_s (y^FTL_s - y_s)^2 for every t (Zhdanov and
    Vovk, arXiv:0910.4683: sum_t (1 - h_t)(y^FTL_t - y_t)^2 = L*_T), the identity behind the claim
    `online:vaw_beats_ridge_ftl_under_heavy_noise`."""
    a, y = stream
    noisy = y + 3.0 * np.random.default_rng(1).standard_normal(T)
    for target in (y, noisy):
        i_vaw = vaw.run(a, target, LAM)[1]
        i_ftl = vaw.ridge_ftl_run(a, target, LAM)[1]
        h = np.asarray(i_vaw.leverage)
        np.testing.assert_allclose(i_ftl.leverage, h, rtol=1e-9)
        np.testing.assert_allclose(i_vaw.y_hat, (1 - h) * np.asarray(i_ftl.y_hat), atol=1e-9)
        reg_ftl = np.asarray(regret.regret_vs_best_fixed(a, target, i_ftl.y_hat, LAM))
        np.testing.assert_allclose(reg_ftl, np.cumsum(h * np.asarray(i_ftl.loss)), rtol=1e-8, atol=1e-8)


def test_multi_output_and_vmap(stream, runs):
    a, y = stream
    Y = np.stack([y, -2 * y + 1], 1)
    _, info = vaw.run(a, Y, LAM)
    np.testing.assert_allclose(info.y_hat[:, 0], runs[0][1].y_hat, atol=1e-10)
    np.testing.assert_allclose(info.y_hat[:, 1], -2 * runs[0][1].y_hat + numpy_vaw(a, np.ones(T), LAM), atol=1e-8)
    batch = jax.jit(jax.vmap(lambda f, t: vaw.run(f, t, LAM)[1].y_hat))(jnp.stack([a, 2 * a]), jnp.stack([y, y]))
    np.testing.assert_allclose(batch[0], runs[0][1].y_hat, atol=1e-10)


@pytest.mark.parametrize("algo", [vaw.run, vaw.ridge_ftl_run])
def test_vmapped_float32_solve_path_matches_sequence_runs_and_float64(algo):
    """float32 under vmap (batched elimination) agrees with one LAPACK run per sequence to float32 rounding and
    is as close to the float64 run as they are; its gradient over lam matches the per-sequence one."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 300, 8)) * np.linspace(0.2, 3.0, 8)
    y = a @ rng.standard_normal(8) + 0.3 * rng.standard_normal((3, 300))
    a32, y32 = a.astype(np.float32), y.astype(np.float32)
    batch = np.asarray(jax.jit(jax.vmap(lambda f, t: algo(f, t, LAM)[1].y_hat))(a32, y32), np.float64)
    single = np.stack([np.asarray(algo(a32[i], y32[i], LAM)[1].y_hat, np.float64) for i in range(3)])
    exact = np.stack([np.asarray(algo(a[i], y[i], LAM, method="solve")[1].y_hat) for i in range(3)])
    np.testing.assert_allclose(batch, single, atol=5e-5)
    assert np.max(np.abs(batch - exact)) <= 2 * np.max(np.abs(single - exact)) + 1e-6
    loss = lambda lam, f, t: algo(f, t, lam)[1].loss.sum()  # noqa: E731
    g_batch = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(np.float32(LAM), a32, y32)
    g_single = [float(jax.grad(loss)(np.float32(LAM), a32[i], y32[i])) for i in range(3)]
    np.testing.assert_allclose(g_batch, g_single, rtol=1e-3)


@pytest.mark.parametrize("T_", [T, 5, 2 * vaw._BLOCK])  # a partial last block, a stream shorter than a block, none
@pytest.mark.parametrize("algo", [vaw.run, vaw.ridge_ftl_run])
def test_block_path_equals_the_per_round_solve(stream, algo, T_):
    """Woodbury over blocks of rounds is the same recursion: float64 predictions, losses, leverages and the final
    Gram agree with one solve per round to rounding, for VAW (current feature in the Gram) and online ridge."""
    a, y = stream
    Y = np.stack([y, -2 * y + 1], 1)[:T_]  # two outputs
    s_b, i_b = algo(a[:T_], Y, LAM, method="block")
    s_s, i_s = algo(a[:T_], Y, LAM, method="solve")
    assert isinstance(s_b, vaw.VAWGramState) and int(s_b.t) == T_
    np.testing.assert_allclose(i_b.y_hat, i_s.y_hat, atol=1e-9)
    np.testing.assert_allclose(i_b.loss, i_s.loss, atol=1e-8)
    np.testing.assert_allclose(i_b.leverage, i_s.leverage, atol=1e-11)
    np.testing.assert_allclose(s_b.A, s_s.A, rtol=1e-12)
    np.testing.assert_allclose(s_b.b, s_s.b, rtol=1e-12, atol=1e-12)
    if algo is vaw.run:  # against the batch ridge re-solve as well
        np.testing.assert_allclose(i_b.y_hat[:, 0], numpy_vaw(a[:T_], y[:T_], LAM), atol=1e-9)


def test_float32_auto_takes_the_block_path_whole_streams_and_the_solve_round_by_round(stream):
    a, y = stream
    a32, y32 = a.astype(np.float32), y.astype(np.float32)
    _, auto = vaw.run(a32, y32, LAM)
    _, block = vaw.run(a32, y32, LAM, method="block")
    np.testing.assert_array_equal(np.asarray(auto.y_hat), np.asarray(block.y_hat))
    assert isinstance(vaw.init(D, LAM, dtype=jnp.float32, method="block"), vaw.VAWGramState)
    # float32 block and float32 per-round solve are about equally close to float64
    exact = np.asarray(vaw.run(a, y, LAM, method="solve")[1].y_hat)
    err_block = np.max(np.abs(np.asarray(block.y_hat, np.float64) - exact))
    err_solve = np.max(np.abs(np.asarray(vaw.run(a32, y32, LAM, method="solve")[1].y_hat, np.float64) - exact))
    assert err_block <= 3 * err_solve + 1e-6, (err_block, err_solve)


def test_step_predict_consistency(stream):
    a, y = stream
    state = vaw.init(D, LAM)
    for t in range(3):
        y_hat, P = vaw.predict(state, a[t])
        state, info = vaw.step(state, a[t], y[t])
        np.testing.assert_allclose(info.y_hat, y_hat)
        np.testing.assert_allclose(state.P, P)
    np.testing.assert_allclose(state.P, np.linalg.inv(LAM * np.eye(D) + a[:3].T @ a[:3]), rtol=1e-10)


def deterministic_lds():
    params, u = lds.deterministic_lds()
    return lds.simulate(jax.random.key(0), params, u)[0][:, 0], u


def test_deterministic_lds_regression_and_float32_path():
    y, u = deterministic_lds()
    feats = usp.arx_features(y, u, 8)
    s64, i64 = vaw.run(feats, y, 1.0)
    assert isinstance(s64, vaw.VAWState)
    np.testing.assert_allclose(float(i64.loss.sum()), 350.6589, atol=1e-3)
    s32, i32 = vaw.run(feats.astype(jnp.float32), y.astype(jnp.float32), 1.0)
    assert isinstance(s32, vaw.VAWGramState) and i32.loss.dtype == jnp.float32
    np.testing.assert_allclose(float(i32.loss.sum()), 350.6589, rtol=0.02)
    f32, y32 = jnp.stack([feats.astype(jnp.float32)] * 2), jnp.stack([y.astype(jnp.float32)] * 2)
    batched = jax.vmap(lambda f, t: vaw.run(f, t, 1.0)[1].loss.sum())(f32, y32)  # the batched elimination
    np.testing.assert_allclose(batched, 350.6589, rtol=0.02)


def test_bad_inputs(stream):
    a, y = stream
    with pytest.raises(ValueError, match="lam must be > 0"):
        vaw.run(a, y, 0.0)
    with pytest.raises(ValueError, match="lam must be > 0"):
        vaw.run(a, y, float("nan"))
    with pytest.raises(ValueError, match="features must be 2-dimensional"):
        vaw.run(a[:, 0], y)
    with pytest.raises(ValueError, match="targets must have the same length as features"):
        vaw.run(a, y[:-1])
    with pytest.raises(ValueError, match=r"at least one row \(T >= 1\)"):
        vaw.run(a[:0], y[:0])
    with pytest.raises(TypeError, match="features must have a float dtype"):
        vaw.run(np.ones((5, 2), dtype=np.int32), np.ones(5))
    with pytest.raises(TypeError, match="targets must have a float dtype"):
        vaw.run(np.ones((5, 2)), np.ones(5) + 1j)
    with pytest.raises(ValueError, match="targets must be finite"):
        vaw.run(np.ones((5, 2)), np.array([1.0, np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match="method must be one of"):
        vaw.run(a, y, method="qr")


def test_grad_over_lam_matches_finite_differences(stream):
    a, y = stream
    a, y = a[:100], y[:100]
    loss = jax.jit(lambda lam: vaw.run(a, y, lam)[1].loss.sum())
    g = float(jax.grad(loss)(LAM))
    h = 1e-5
    np.testing.assert_allclose(g, (float(loss(LAM + h)) - float(loss(LAM - h))) / (2 * h), rtol=1e-6)
