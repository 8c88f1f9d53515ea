"""Rectified flow: closed forms of the Euler sampler and the schedules, joint attention identities,
the tiny MM-DiT under jit/vmap and the bad inputs."""

import chex
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core.train import train_init
from jaxlab.generative import rectified_flow as rf

M, S = 2.0, 0.5


def gaussian_rf_velocity(x, sigma, cond=None):
    """v_RF(x, sigma) = -u*(x, 1 - sigma), u* the marginal-optimal CFM velocity for N(0,1) -> N(M, S^2)."""
    t = 1.0 - sigma
    a = (t * S**2 - (1 - t)) / ((1 - t) ** 2 + t**2 * S**2)
    return -(M + a * (x - t * M))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("n,expected", [(1, 2.0), (4, 2.34054), (100, 2.49265)])
def test_euler_gaussian_closed_form(dtype, n, expected):
    x = rf.euler_sample(gaussian_rf_velocity, jnp.asarray(1.0, dtype), rf.make_sigmas(n, dtype=dtype))
    assert abs(float(x) - expected) < 1e-5


def test_euler_error_is_first_order():
    errs = [2.5 - float(rf.euler_sample(gaussian_rf_velocity, jnp.asarray(1.0), rf.make_sigmas(n)))
            for n in (50, 100, 200)]
    c = [e * n for e, n in zip(errs, (50, 100, 200), strict=True)]
    np.testing.assert_allclose(c, 0.73, rtol=0.03)


def test_diffrax_matches_exact_flow_and_euler_converges_to_it():
    xs = jnp.linspace(-2.0, 2.0, 5)
    ode = jax.vmap(lambda x: rf.diffrax_sample(gaussian_rf_velocity, x, rtol=1e-8, atol=1e-8))(xs)
    np.testing.assert_allclose(ode, M + S * xs, atol=1e-5)
    e = [float(jnp.max(jnp.abs(jax.vmap(lambda x, n=n: rf.euler_sample(gaussian_rf_velocity, x, rf.make_sigmas(n)))(xs)
                               - ode))) for n in (10, 40)]
    assert e[1] < e[0] / 3


def test_schedules_closed_forms():
    assert float(rf.shift_sigmas(0.5, 3.0)) == pytest.approx(0.75, abs=1e-7)
    mu = rf.flux_mu(1024)
    assert mu == pytest.approx(0.63, abs=1e-9)
    assert float(rf.time_shift_exponential(0.5, mu)) == pytest.approx(0.65249, abs=1e-5)
    s = rf.make_sigmas(28, shift=3.0)
    assert s.shape == (29,) and float(s[0]) == 1.0 and float(s[-1]) == 0.0 and bool(jnp.all(jnp.diff(s) < 0))
    sf = rf.make_sigmas(4, mu=mu)
    np.testing.assert_allclose(sf, [1.0] + [float(rf.time_shift_exponential(1 - i / 4, mu)) for i in (1, 2, 3)] + [0],
                               atol=1e-12)
    np.testing.assert_allclose(rf.make_sigmas(5), 1 - np.arange(6) / 5, atol=1e-12)


def test_interpolate_target_and_loss_with_oracle():
    kx, ke = jax.random.split(jax.random.key(0))
    x, e = jax.random.normal(kx, (4, 3)), jax.random.normal(ke, (4, 3))
    sig = jnp.array([0.0, 0.25, 0.5, 1.0])
    xs = rf.rf_interpolate(x, e, sig)
    np.testing.assert_allclose(xs[0], x[0]) and np.testing.assert_allclose(xs[3], e[3])
    np.testing.assert_allclose(xs[1], 0.75 * x[1] + 0.25 * e[1], atol=1e-12)
    np.testing.assert_allclose(rf.rf_target(x, e), e - x)
    # a model returning 0 has loss E||eps - x||^2 / dim = 1 + var(x) = 2 for standard normal data
    loss = rf.rf_loss(lambda a, s, c: jnp.zeros_like(a), jax.random.key(1), jax.random.normal(kx, (4096, 2)))
    assert float(loss) == pytest.approx(2.0, rel=0.05)


def test_sample_sigmas_logit_normal_median_and_range():
    s = rf.sample_sigmas(jax.random.key(0), (20000,))
    assert float(jnp.min(s)) > 0 and float(jnp.max(s)) < 1
    assert float(jnp.median(s)) == pytest.approx(0.5, abs=0.02)
    u = rf.sample_sigmas(jax.random.key(0), (20000,), kind="uniform")
    assert float(jnp.mean(u)) == pytest.approx(0.5, abs=0.02)


def test_cfg_velocity():
    vc, vu = jnp.array([1.0, 2.0]), jnp.array([0.0, 1.0])
    np.testing.assert_allclose(rf.cfg_velocity(vc, vu, 1.0), vc)
    np.testing.assert_allclose(rf.cfg_velocity(vc, vu, 0.0), vu)
    np.testing.assert_allclose(rf.cfg_velocity(vc, vu, 3.0), [3.0, 4.0])


def _qkv(key, n, h=2, dh=4):
    return tuple(jax.random.normal(k, (n, h, dh)) for k in jax.random.split(key, 3))


def test_joint_attention_nc0_is_self_attention_and_probs_are_distributions():
    q, k, v = _qkv(jax.random.key(0), 5)
    e = jnp.zeros((0, 2, 4))
    oc, ox, p = rf.joint_attention(e, e, e, q, k, v)
    ref = jax.nn.softmax(jnp.einsum("qhd,khd->hqk", q, k) / 2.0, axis=-1)
    np.testing.assert_allclose(ox, jnp.einsum("hqk,khd->qhd", ref, v), atol=1e-12)
    assert oc.shape == (0, 2, 4)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)


def test_joint_attention_permutation_equivariance_and_mask():
    qc, kc, vc = _qkv(jax.random.key(1), 3)
    qx, kx, vx = _qkv(jax.random.key(2), 6)
    oc, ox, _ = rf.joint_attention(qc, kc, vc, qx, kx, vx)
    pc, px = jnp.array([2, 0, 1]), jnp.array([5, 3, 1, 0, 2, 4])
    oc2, ox2, _ = rf.joint_attention(qc[pc], kc[pc], vc[pc], qx[px], kx[px], vx[px])
    np.testing.assert_allclose(oc2, oc[pc], atol=1e-12)
    np.testing.assert_allclose(ox2, ox[px], atol=1e-12)
    # hiding the text keys from everyone = image self-attention for the image queries
    mask = jnp.concatenate([jnp.zeros(3, bool), jnp.ones(6, bool)])
    _, oxm, _ = rf.joint_attention(qc, kc, vc, qx, kx, vx, key_mask=mask)
    e = jnp.zeros((0, 2, 4))
    np.testing.assert_allclose(oxm, rf.joint_attention(e, e, e, qx, kx, vx)[1], atol=1e-12)


@pytest.fixture(scope="module")
def tiny():
    return rf.TinyMMDiT(jax.random.key(0), width=16, heads=2, depth=1, zero_init=False)


@pytest.mark.slow
def test_tiny_mmdit_jit_vmap_and_batch_sampling(tiny):
    x = jax.random.normal(jax.random.key(2), (3, 16, 16, 3))
    tok = jnp.tile(jnp.arange(1, 9), (3, 1))
    ref = jax.random.normal(jax.random.key(3), (3, 16, 16, 3))
    f = jax.jit(jax.vmap(tiny, in_axes=(0, None, 0)))
    sig = rf.make_sigmas(3)
    samp = jax.jit(jax.vmap(lambda x0, c: rf.euler_sample(tiny, x0, sig, c)))
    out = samp(x, (tok, ref))
    chex.assert_shape(out, (3, 16, 16, 3))
    manual = x
    for i in range(3):
        manual = manual + (sig[i + 1] - sig[i]) * f(manual, sig[i], (tok, ref))
    np.testing.assert_allclose(out, manual, atol=1e-10)
    # the prompt and the reference both change the velocity
    v = f(x, 0.5, (tok, ref))
    assert float(jnp.max(jnp.abs(f(x, 0.5, (tok[:, ::-1], ref)) - v))) > 1e-3
    assert float(jnp.max(jnp.abs(f(x, 0.5, (tok, ref * 0)) - v))) > 1e-3


def test_token_matmul_primitive_equals_plain_matmul_under_every_transformation():
    """The token projection primitive (weight cotangent (x^T g)^T) against plain ``x @ w.T``: grad of vmap and
    vmap of grad (per-example weight gradients), batched weights, jvp / jacfwd / hessian, remat, nested vmap."""
    from jaxlab.generative.semantic_flow.mmdit import _token_matmul

    w = jax.random.normal(jax.random.key(0), (5, 3))
    x = jax.random.normal(jax.random.key(1), (8, 4, 3))
    ww = jax.random.normal(jax.random.key(3), (8, 5, 3))
    plain = lambda a, b: a @ b.T  # noqa: E731

    def loss(w, mm):
        return jnp.sum(jnp.sin(jax.vmap(lambda a: mm(a, w))(x)))

    checks = {
        "value": lambda mm: mm(x, w),
        "grad of vmap": lambda mm: jax.grad(loss)(w, mm),
        "reverse over reverse": lambda mm: jax.grad(lambda w: jnp.sum(jax.grad(loss)(w, mm) ** 2))(w),
        "vmap of grad (inputs)": lambda mm: jax.vmap(jax.grad(lambda a: jnp.sum(jnp.sin(mm(a, w)))))(x),
        "per-example weight grads": lambda mm: jax.vmap(jax.grad(lambda w, a: jnp.sum(jnp.sin(mm(a, w)))),
                                                        in_axes=(None, 0))(w, x),
        "batched weights": lambda mm: jax.grad(lambda ww: jnp.sum(jnp.sin(jax.vmap(mm)(x, ww))))(ww),
        "batched weights, shared x": lambda mm: jax.grad(
            lambda ww: jnp.sum(jnp.sin(jax.vmap(mm, in_axes=(None, 0))(x[0], ww))))(ww),
        "jvp": lambda mm: jax.jvp(lambda a, b: jnp.sin(mm(a, b)), (x, w), (jnp.cos(x), jnp.sin(w))),
        "hessian": lambda mm: jax.hessian(lambda b: jnp.sum(jnp.sin(mm(x[0], b))))(w),
        "remat": lambda mm: jax.grad(lambda b: jnp.sum(jax.checkpoint(lambda b: jnp.sin(mm(x, b)))(b)))(w),
        "jit of nested vmap": lambda mm: jax.jit(jax.grad(
            lambda b: jnp.sum(jnp.sin(jax.vmap(jax.vmap(lambda a: mm(a, b)))(x[:, :, None])))))(w),
    }
    for name, f in checks.items():
        for got, want in zip(jax.tree.leaves(f(_token_matmul)), jax.tree.leaves(f(plain)), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
    assert _token_matmul(x.astype(jnp.float32), w.astype(jnp.float32)).dtype == jnp.float32


def test_tiny_mmdit_gradients_equal_plain_autodiff(tiny, monkeypatch):
    """RF-loss gradients of the whole network (vmapped over a batch) with the token primitive equal those of
    plain ``x @ W.T`` layers, to float64 rounding."""
    from jaxlab.generative.semantic_flow import mmdit as _mmdit

    x = jax.random.normal(jax.random.key(2), (3, 16, 16, 3))
    cond = (jnp.tile(jnp.arange(1, 9), (3, 1)), jax.random.normal(jax.random.key(3), (3, 16, 16, 3)))
    params, static = eqx.partition(tiny, eqx.is_inexact_array)

    def grads():
        return jax.grad(lambda p: rf.rf_loss(eqx.combine(p, static), jax.random.key(4), x, cond))(params)

    got = grads()
    monkeypatch.setattr(_mmdit, "_token_matmul", lambda a, w: a @ w.T)
    want = grads()
    for g, h in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-13)


class _MLPVelocity(eqx.Module):
    mlp: eqx.nn.MLP

    def __call__(self, x, sigma, cond):
        return self.mlp(jnp.concatenate([x, jnp.atleast_1d(sigma)]))


def test_rf_train_step_lowers_loss_to_near_the_gaussian_optimum():
    """1-D N(2, 0.5^2) data: the loss of the exact velocity is the conditional variance of eps - x; training
    an MLP with the package's step must bring the loss down towards it (from ~5 at init)."""
    model = _MLPVelocity(eqx.nn.MLP(2, 1, 32, 2, activation=jax.nn.silu, key=jax.random.key(0)))
    params, static = eqx.partition(model, eqx.is_inexact_array)
    opt = rf.rf_optimizer(1e-2)
    step = jax.jit(rf.rf_train_step(opt, static, lambda m, k, b: rf.rf_loss(m, k, b, sigma_kind="uniform")))

    def data(k):
        return M + S * jax.random.normal(k, (128, 1))

    st = train_init(params, opt)
    st, info = jax.lax.scan(lambda st, k: step(k, st, data(k)), st, jax.random.split(jax.random.key(1), 200))
    losses = info.loss
    oracle = rf.rf_loss(lambda x, s, c: gaussian_rf_velocity(x, s), jax.random.key(2), data(jax.random.key(3)))
    assert float(losses[0]) > 3.0
    assert float(jnp.mean(losses[-30:])) < float(oracle) * 1.25 + 0.05


def test_bad_inputs():
    with pytest.raises(ValueError, match="sigma"):
        rf.rf_interpolate(jnp.zeros(3), jnp.zeros(3), 1.5)
    with pytest.raises(ValueError, match="sigma"):
        rf.shift_sigmas(-0.1, 3.0)
    with pytest.raises(ValueError, match="shift"):
        rf.shift_sigmas(0.5, 0.0)
    with pytest.raises(ValueError, match="num_steps"):
        rf.make_sigmas(0)
    with pytest.raises(ValueError, match="n_img_tokens"):
        rf.flux_mu(0)
    with pytest.raises(ValueError, match="x"):
        rf.rf_interpolate(jnp.zeros(3, jnp.int32), jnp.zeros(3), 0.5)
    with pytest.raises(ValueError, match="noise"):
        rf.rf_interpolate(jnp.zeros(3), jnp.zeros(4), 0.5)
    with pytest.raises(ValueError, match="sigmas"):
        rf.euler_sample(gaussian_rf_velocity, jnp.zeros(()), jnp.array([1.0, 0.5, -0.2]))
    q = jnp.zeros((2, 2, 4))
    with pytest.raises(ValueError, match="head"):
        rf.joint_attention(q, q, q, jnp.zeros((3, 2, 8)), jnp.zeros((3, 2, 8)), jnp.zeros((3, 2, 8)))
    with pytest.raises(ValueError, match="kind"):
        rf.sample_sigmas(jax.random.key(0), (3,), kind="cosine")
    with pytest.raises(ValueError, match="side"):
        rf.TinyMMDiT(jax.random.key(0), side=15)
