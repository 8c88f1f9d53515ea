"""Routers against NumPy on the same inputs, under jit and vmap; the Co-LLM marginal likelihood and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import expit, log_softmax, logsumexp

from jaxlab.serving.token_router import (
    bernoulli_router,
    colm_gate,
    colm_gate_prob,
    colm_marginal_nll,
    confidence_router,
    init_colm_gate,
    init_r2r,
    r2r_router,
    r2r_score,
)

rng = np.random.default_rng(0)
LOGITS = rng.normal(0, 2, (3, 6, 10))
HIDDEN = rng.normal(0, 1, (3, 6, 5))


def test_bernoulli_rate_and_keys():
    z = bernoulli_router(jax.random.key(0), 20000, 0.2)
    assert z.dtype == jnp.int32 and set(np.unique(z).tolist()) == {0, 1}
    assert abs(float(z.mean()) - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 20000)
    zs = jax.vmap(lambda k: bernoulli_router(k, 8, 0.5))(jax.random.split(jax.random.key(1), 4))
    assert zs.shape == (4, 8) and not np.all(zs == zs[0])
    assert np.array_equal(bernoulli_router(jax.random.key(0), 50, 0.3), bernoulli_router(jax.random.key(0), 50, 0.3))


def test_confidence_router_matches_numpy_under_jit_and_vmap():
    ref = (np.exp(log_softmax(LOGITS, -1)).max(-1) < 0.4).astype(int)
    got = jax.jit(jax.vmap(lambda lg: confidence_router(lg, 0.4)))(jnp.asarray(LOGITS))
    np.testing.assert_array_equal(got, ref)
    assert 0 < ref.mean() < 1  # the threshold splits this input


def test_colm_gate_matches_numpy():
    gate = init_colm_gate(jax.random.key(2), 5, bias=0.1)
    p = expit(HIDDEN @ np.asarray(gate.w) + 0.1)
    np.testing.assert_allclose(jax.vmap(lambda h: colm_gate_prob(gate, h))(jnp.asarray(HIDDEN)), p, rtol=1e-12)
    got = jax.jit(jax.vmap(lambda h: colm_gate(gate, h, 0.5)))(jnp.asarray(HIDDEN))
    np.testing.assert_array_equal(got, (p > 0.5).astype(int))


def test_colm_marginal_nll_and_gradient():
    gate = init_colm_gate(jax.random.key(3), 5)
    h = jnp.asarray(HIDDEN[0])
    ls, ll = jnp.asarray(rng.normal(-2, 1, 6)), jnp.asarray(rng.normal(-1, 1, 6))
    s = HIDDEN[0] @ np.asarray(gate.w)
    ref = -np.mean(logsumexp(np.stack([np.log(expit(-s)) + ls, np.log(expit(s)) + ll]), axis=0))
    np.testing.assert_allclose(colm_marginal_nll(gate, h, ls, ll), ref, rtol=1e-12)
    g = jax.grad(colm_marginal_nll)(gate, h, ls, ll)
    eps = 1e-6
    fd = (colm_marginal_nll(gate._replace(c=gate.c + eps), h, ls, ll)
          - colm_marginal_nll(gate._replace(c=gate.c - eps), h, ls, ll)) / (2 * eps)
    np.testing.assert_allclose(g.c, fd, rtol=1e-6)
    # when L explains every token better, descending the NLL raises the deferral probability
    up = jax.tree_util.tree_map(lambda p, d: p - 0.5 * d, gate, jax.grad(colm_marginal_nll)(gate, h, ls, ls + 1.0))
    assert float(colm_gate_prob(up, h).mean()) > float(colm_gate_prob(gate, h).mean())


def test_r2r_router_matches_numpy():
    mlp = init_r2r(jax.random.key(4), 5, width=7)
    w1, b1, w2, b2 = (np.asarray(a) for a in mlp)
    lp = log_softmax(LOGITS, -1)
    feats = np.concatenate([HIDDEN, lp.max(-1, keepdims=True), -(np.exp(lp) * lp).sum(-1, keepdims=True)], -1)
    z = feats @ w1 + b1
    gelu = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    score = expit(gelu @ w2 + b2)
    got = jax.vmap(lambda h, lg: r2r_score(mlp, h, lg))(jnp.asarray(HIDDEN), jnp.asarray(LOGITS))
    np.testing.assert_allclose(got, score, rtol=1e-10)
    thr = float(np.median(score))
    routed = jax.jit(jax.vmap(lambda h, lg: r2r_router(mlp, h, lg, thr)))(jnp.asarray(HIDDEN), jnp.asarray(LOGITS))
    np.testing.assert_array_equal(routed, (score > thr).astype(int))


def test_bad_inputs():
    gate, mlp = init_colm_gate(jax.random.key(0), 5), init_r2r(jax.random.key(0), 5)
    with pytest.raises(ValueError, match="small_logits"):
        confidence_router(jnp.zeros(10), 0.5)
    with pytest.raises(ValueError, match="small_logits"):
        r2r_router(mlp, jnp.zeros((2, 5)), jnp.zeros((2, 3, 10)), 0.5)
    with pytest.raises(ValueError, match="hidden size"):
        colm_gate(gate, jnp.zeros((2, 4)), 0.5)
    with pytest.raises(ValueError, match="hidden size"):
        r2r_router(mlp, jnp.zeros((2, 6)), jnp.zeros((2, 10)), 0.5)
    with pytest.raises(ValueError, match="rows"):
        r2r_router(mlp, jnp.zeros((2, 5)), jnp.zeros((3, 10)), 0.5)
    with pytest.raises(ValueError, match="q_large"):
        bernoulli_router(jax.random.key(0), 4, 1.5)
    with pytest.raises(ValueError, match="tau"):
        confidence_router(jnp.zeros((2, 10)), -0.1)
    with pytest.raises(ValueError, match="eta"):
        colm_gate(gate, jnp.zeros((2, 5)), 2.0)
