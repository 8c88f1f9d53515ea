"""Target loss, Chow's rule, surrogate formulas and links, and their bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.losses import cwr

RNG = np.random.default_rng(0)


# ------------------------------------------------------------------------------------------------ C1: Chow


@pytest.mark.parametrize("c", [0.1, 0.3, 0.5])
def test_chow_rule_minimises_the_conditional_target_risk(c):
    K = 5
    ps = RNG.dirichlet(np.full(K, 0.5), size=200)
    ts = jnp.arange(-1, K)
    # l_c(t; p) = sum_y p_y l_c(t, y), brute force over every decision t
    L = cwr.cwr_target_loss(ts[:, None], jnp.arange(K)[None, :], c)  # (K + 1, K)
    risks = np.asarray(ps @ np.asarray(L).T)  # (n, K + 1)
    dec = np.asarray(cwr.bayes_decision(ps, c))
    np.testing.assert_allclose(risks[np.arange(len(ps)), dec + 1], risks.min(1), atol=1e-15)
    np.testing.assert_allclose(np.asarray(cwr.bayes_risk(ps, c)), risks.min(1), atol=1e-15)
    np.testing.assert_allclose(np.asarray(cwr.bayes_risk(ps, c)), np.minimum(c, 1 - ps.max(1)))


def test_chow_rule_at_the_threshold_and_ties():
    c = 0.25
    assert int(cwr.bayes_decision(jnp.array([0.75, 0.25, 0.0]), c)) == 0  # max p = 1 - c: accept
    assert int(cwr.bayes_decision(jnp.array([0.74, 0.26, 0.0]), c)) == cwr.REJECT
    assert int(cwr.bayes_decision(jnp.array([0.5, 0.5]), 0.5)) == 0  # tie: lowest index
    assert float(cwr.cwr_target_loss(-1, 2, c)) == c
    assert float(cwr.cwr_target_loss(2, 2, c)) == 0.0
    assert float(cwr.cwr_target_loss(1, 2, c)) == 1.0


# ------------------------------------------------------------------------------------------------ formulas


def _np_losses(name, u, y, K, c):
    """Independent NumPy transcriptions of the surrogates' formulas."""
    if name == "ce":
        return np.log(np.exp(u).sum()) - u[y]
    if name == "ova":
        return sum((1 - u[i]) * (1 - u[i] > 0) if i == y else max(0, 1 + u[i]) for i in range(K))
    if name == "cs":
        return max(0.0, 1 + max(u[j] for j in range(K) if j != y) - u[y])
    if name == "bep":
        d = int(np.ceil(np.log2(K)))
        B = [1.0 if (y >> j) & 1 else -1.0 for j in range(d)]
        return max(0.0, 1 + max(B[j] * u[j] for j in range(d)))
    if name == "cwr2d":
        a = c / (1 - 2 * c)
        D = abs(u[0] - (y + 1))
        return a * D + max(0.0, D - u[1]) + c * u[1]
    if name == "hinge2":
        z = (2 * y - 1) * u[0]
        return max(0.0, 1 - z, 1 - (1 - c) / c * z)
    raise AssertionError(name)


@pytest.mark.parametrize("name,K,c", [("ce", 5, 0.3), ("ova", 5, 0.5), ("cs", 5, 0.5), ("bep", 6, 0.5),
                                      ("cwr2d", 7, 0.2), ("hinge2", 2, 0.3)])
def test_losses_match_numpy_formulas_and_batch(name, K, c):
    s = cwr.surrogate(name, K, c)
    U = RNG.normal(size=(30, s.dim)) * 2
    Y = RNG.integers(0, K, size=30)
    got = np.asarray(s.loss(jnp.asarray(U), jnp.asarray(Y)))
    ref = np.array([_np_losses(name, u, int(y), K, c) for u, y in zip(U, Y, strict=True)])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # jit and vmap give the same numbers as the broadcast call
    jv = jax.jit(jax.vmap(s.loss))(jnp.asarray(U), jnp.asarray(Y))
    np.testing.assert_allclose(np.asarray(jv), got, rtol=1e-12)


@pytest.mark.parametrize("name,K,kw", [("cs", 5, {}), ("ova", 4, {}), ("bep", 5, {}), ("ref2d", 4, {"c": 0.2}),
                                       ("cwr2d", 6, {"c": 0.3}), ("hinge2", 2, {"c": 0.2})])
def test_polyhedral_pieces_reproduce_the_losses(name, K, kw):
    s = cwr.surrogate(name, K, kw.get("c", 0.5))
    A, b, valid = cwr.polyhedral_pieces(name, K, **kw)
    assert valid.all()
    U = RNG.normal(size=(40, s.dim)) * 3
    for y in range(K):
        ref = np.max(np.einsum("rd,nd->nr", A[y], U) + b[y], axis=1)
        np.testing.assert_allclose(np.asarray(s.loss(jnp.asarray(U), y)), ref, rtol=1e-12, atol=1e-12)


def test_ref2d_embeds_the_abstain_loss_under_the_fan_condition():
    K, c = 4, 0.2
    ang = 2 * np.pi * np.arange(K) / K
    n = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    got = np.asarray(cwr.ref2d_loss(jnp.asarray(n)[:, None, :], jnp.arange(K)[None, :], K, c))  # (k, y)
    want = np.asarray(cwr.cwr_target_loss(jnp.arange(K)[:, None], jnp.arange(K)[None, :], c)) - c
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(np.asarray(cwr.ref2d_loss(jnp.zeros(2), jnp.arange(K), K, c)), 0.0, atol=1e-12)
    assert cwr.ref2d_valid(5, 0.27) and not cwr.ref2d_valid(5, 0.28) and not cwr.ref2d_valid(6, 0.01)


def test_bep_code_bits():
    code = np.asarray(cwr.bep_code(5))
    assert code.shape == (5, 3)
    np.testing.assert_array_equal(code[0], [-1, -1, -1])
    np.testing.assert_array_equal(code[4], [-1, -1, 1])  # label 4 = 0b100, LSB first
    np.testing.assert_array_equal(code[3], [1, 1, -1])
    assert cwr.bep_code(2).shape == (2, 1) and cwr.bep_code(17).shape == (17, 5)


def test_links_on_hand_picked_scores():
    assert int(cwr.cs_link(jnp.array([2.0, 0.5, 0.0]))) == 0
    assert int(cwr.cs_link(jnp.array([1.0, 0.8, 0.0]))) == cwr.REJECT
    assert int(cwr.ova_link(jnp.array([-0.5, 0.3, 0.1]))) == 1
    assert int(cwr.ova_link(jnp.array([-0.5, -0.3, -0.1]))) == cwr.REJECT
    code = cwr.bep_code(5)
    assert int(cwr.bep_link(-code[3], code)) == 3
    assert int(cwr.bep_link(-jnp.array([1.0, 1.0, 1.0]), code)) == cwr.REJECT  # 0b111 = 7 is no codeword
    assert int(cwr.bep_link(jnp.array([1.0, -0.4, 1.0]), code)) == cwr.REJECT  # inside a slab
    assert int(cwr.ce_chow_link(jnp.log(jnp.array([0.71, 0.19, 0.1])), 0.3)) == 0
    assert int(cwr.ce_chow_link(jnp.log(jnp.array([0.69, 0.21, 0.1])), 0.3)) == cwr.REJECT
    u = jnp.array([[2.4, 0.2], [2.5, 0.1], [2.0, 0.3], [0.4, 0.0], [5.6, 0.0], [5.4, -1.0]])
    np.testing.assert_array_equal(np.asarray(cwr.cwr2d_link(u, 5)), [1, -1, -1, -1, -1, 4])
    assert int(cwr.ref2d_link(jnp.array([0.0, 0.9]), 4)) == 1
    assert int(cwr.ref2d_link(jnp.array([0.0, 0.4]), 4)) == cwr.REJECT
    np.testing.assert_array_equal(np.asarray(cwr.generalized_hinge_link(jnp.array([[0.6], [-0.6], [0.2]]))),
                                  [1, 0, -1])


def test_cwr2d_gradient_matches_finite_differences():
    f = jax.jit(lambda u: cwr.conditional_risk(lambda v, y: cwr.cwr2d_loss(v, y, 0.2), u,
                                               jnp.array([0.1, 0.6, 0.3])))
    u = jnp.array([2.3, 0.37])  # away from every kink
    g = jax.grad(f)(u)
    h = 1e-6
    fd = [(f(u + h * e) - f(u - h * e)) / (2 * h) for e in jnp.eye(2)]
    np.testing.assert_allclose(np.asarray(g), np.asarray(fd), atol=1e-7)


# ------------------------------------------------------------------------------------------------ bad inputs


def test_bad_costs_raise():
    for name in ("cs", "ova", "bep"):
        with pytest.raises(ValueError, match=f"c must equal 1/2 for the {name} surrogate"):
            cwr.surrogate(name, 5, 0.3)
    with pytest.raises(ValueError, match=r"c must lie in \(0.0, 0.5\) for the cwr2d surrogate .*midpoint"):
        cwr.cwr2d_loss(jnp.zeros(2), 0, 0.5)
    with pytest.raises(ValueError, match="midpoint"):
        cwr.surrogate("cwr2d", 5, 0.5)
    with pytest.raises(ValueError, match="c must lie in"):
        cwr.ref2d_loss(jnp.zeros(2), 0, 4, 0.5)
    with pytest.raises(ValueError, match="c must lie in"):
        cwr.ce_chow_link(jnp.zeros(3), 1.0)
    with pytest.raises(ValueError, match="c must lie in"):
        cwr.cwr2d_loss(jnp.zeros(2), 0, -0.1)


def test_bad_K_and_fan_condition_raise():
    with pytest.raises(ValueError, match="K must be >= 2"):
        cwr.bep_code(1)
    with pytest.raises(ValueError, match="K must be >= 2"):
        cwr.surrogate("cwr2d", 1, 0.2)
    with pytest.raises(ValueError, match="K must be >= 3"):
        cwr.ref2d_loss(jnp.zeros(2), 0, 2, 0.2)
    with pytest.raises(ValueError, match="fan condition"):
        cwr.ref2d_loss(jnp.zeros(2), 0, 6, 0.2)
    with pytest.raises(ValueError, match="fan condition"):
        cwr.polyhedral_pieces("ref2d", 5, c=0.3)
    with pytest.raises(ValueError, match="K must be 2"):
        cwr.surrogate("hinge2", 3, 0.2)


def test_bad_scores_and_labels_raise():
    with pytest.raises(ValueError, match=r"u must have last dimension 2 .*got shape \(3,\)"):
        cwr.cwr2d_loss(jnp.zeros(3), 0, 0.2)
    with pytest.raises(ValueError, match="u must have last dimension 3"):
        cwr.bep_loss(jnp.zeros(2), 0, cwr.bep_code(5))
    with pytest.raises(TypeError, match="y must have a int dtype"):
        cwr.cs_loss(jnp.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"y must lie in \[0, 2\]"):
        cwr.cs_loss(jnp.zeros(3), 3)
    with pytest.raises(ValueError, match="y must lie in"):
        cwr.cwr2d_loss(jnp.zeros(2), -1, 0.2)
    with pytest.raises(ValueError, match="u must be finite"):
        cwr.cs_loss(jnp.array([0.0, jnp.nan, 1.0]), 0)
    with pytest.raises(ValueError, match="u must be finite"):
        cwr.cwr2d_link(jnp.array([jnp.inf, 0.0]), 4)


def test_bad_codes_and_thresholds_raise():
    with pytest.raises(ValueError, match="code must be injective"):
        cwr.bep_loss(jnp.zeros(2), 0, jnp.array([[1.0, 1.0], [1.0, 1.0], [-1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"code must have entries in \{-1, \+1\}"):
        cwr.bep_link(jnp.zeros(2), jnp.array([[1.0, 0.5], [-1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"tau must lie in \(0.0, 1.0\)"):
        cwr.cs_link(jnp.zeros(3), tau=1.5)
    with pytest.raises(ValueError, match=r"tau must lie in \(-1.0, 1.0\)"):
        cwr.ova_link(jnp.zeros(3), tau=-1.0)
    with pytest.raises(ValueError, match=r"theta must lie in \(0.0, 0.5\)"):
        cwr.cwr2d_link(jnp.zeros(2), 4, theta=0.5)
    with pytest.raises(ValueError, match="name must be one of"):
        cwr.surrogate("cwr4d", 20, 0.5)
    with pytest.raises(ValueError, match="p must sum to 1"):
        cwr.conditional_risk(cwr.cs_loss, jnp.zeros(3), jnp.array([0.5, 0.2, 0.2]))


# ------------------------------------------------------------------------------ K-dimensional losses under jit


def _reference_losses(u, y):
    """The three K-dimensional losses written as plainly as possible, for autodiff to differentiate."""
    K = u.shape[-1]
    pick = jnp.take_along_axis(u, y[:, None], axis=-1)[:, 0]
    is_y = jax.nn.one_hot(y, K, dtype=bool)
    return {
        "ce": jax.nn.logsumexp(u, axis=-1) - pick,
        "ova": jnp.sum(jnp.where(is_y, jax.nn.relu(1 - u), jax.nn.relu(1 + u)), axis=-1),
        "cs": jax.nn.relu(1 + jnp.max(jnp.where(is_y, -jnp.inf, u), axis=-1) - pick),
    }


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
@pytest.mark.parametrize("name", ["ce", "ova", "cs"])
def test_k_dimensional_losses_and_gradients_equal_autodiff_of_the_formula(name, dtype):
    """Values and gradients (jitted) against autodiff of the plain formula, with ties among the maxima (cs shares
    its gradient equally among them, as jnp.max's does), a tie with the label's score, inactive hinges and
    hinges at exactly 0."""
    K, B = 7, 64
    rng = np.random.default_rng(1)
    u = rng.standard_normal((B, K))
    u[:8, :3], u[:8, 3:] = 1.5, np.minimum(u[:8, 3:], 1.0)  # three-way ties of the maximum
    u[8:12] = 0.0  # every score tied: cs hinge at 1, ova hinges at exactly 1
    u[12, :] = [3.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # cs with y = 0: 1 + 2 - 3 = 0, a hinge exactly at its kink
    u = jnp.asarray(u, dtype)
    y = jnp.asarray(rng.integers(0, K, B)).at[12].set(0).at[:8].set(jnp.arange(8) % 4)
    fn = {"ce": cwr.ce_chow_loss, "ova": cwr.ova_hinge_loss, "cs": cwr.cs_loss}[name]

    def ours(u, y):
        return jnp.sum(jnp.cos(jnp.arange(B)) * fn(u, y))  # a non-uniform cotangent per sample

    def ref(u, y):
        return jnp.sum(jnp.cos(jnp.arange(B)) * _reference_losses(u, y)[name])

    v, g = jax.jit(jax.value_and_grad(ours))(u, y)
    v_ref, g_ref = jax.jit(jax.value_and_grad(ref))(u, y)
    assert g.dtype == dtype
    eps = float(jnp.finfo(dtype).eps)
    np.testing.assert_allclose(np.asarray(fn(u, y)), np.asarray(_reference_losses(u, y)[name]), rtol=4 * eps,
                               atol=4 * eps)
    np.testing.assert_allclose(float(v), float(v_ref), rtol=16 * eps)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=4 * eps, atol=4 * eps)
    t = jnp.asarray(rng.standard_normal(u.shape), dtype)  # forward mode agrees with reverse mode
    _, jv = jax.jvp(lambda u: ours(u, y), (u,), (t,))
    np.testing.assert_allclose(float(jv), float(jnp.sum(g * t)), rtol=64 * eps, atol=64 * eps)
    if name == "cs":  # the tied rows share +w among the maxima j != y: 3 ties, or 2 when y is one of them
        row = np.asarray(g)[0]  # y = 0 is among the three maxima 0, 1, 2
        assert row[1] == row[2] != 0.0 and row[0] < 0


@pytest.mark.parametrize("name", ["ce", "ova", "cs"])
def test_k_dimensional_losses_check_scores_and_labels_under_jit(name):
    """The loss vouches for its inputs under jit: any non-finite score (at the label or elsewhere: a hinge or a
    max alone would hide -inf or NaN) and any label out of range raise, in the loss and in its gradient; finite
    scores whose loss overflows do not."""
    fn = {"ce": cwr.ce_chow_loss, "ova": cwr.ova_hinge_loss, "cs": cwr.cs_loss}[name]
    u, y = jnp.ones((4, 8)).at[0, 1].set(2.0), jnp.arange(4)
    value = jax.jit(fn)
    grad = jax.jit(jax.grad(lambda u, y: jnp.sum(fn(u, y))))
    for bad in (jnp.nan, jnp.inf, -jnp.inf):
        for at in ((1, 5), (1, 1)):
            for f in (value, grad):
                with pytest.raises(Exception, match="u must be finite"):
                    jax.block_until_ready(f(u.at[at].set(bad), y))
    for labels in (jnp.array([0, 1, 2, 8]), jnp.array([0, -1, 2, 3])):
        with pytest.raises(Exception, match=r"y must lie in \[0, 7\]"):
            jax.block_until_ready(value(u, labels))
        with pytest.raises(ValueError, match=r"y must lie in \[0, 7\]"):
            fn(u, labels)
    big = jnp.zeros((2, 4), jnp.float32).at[0, 0].set(-3e38).at[0, 1].set(3e38)
    out = value(big, jnp.array([0, 1]))  # overflow of finite scores: inf, no error
    assert np.isinf(float(out[0])) and np.isfinite(float(out[1]))
