"""SemanticFlow: read-only probes, response maps on the simplex, energy terms against hand
computations, exact reduction to the unguided sampler, energy descent, NaN handling, toy data and metrics, and
the bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.generative import rectified_flow as rf
from jaxlab.generative import semantic_flow as sf
from jaxlab.generative.semantic_flow import shapes

CFG = sf.SemanticFlowConfig(blocks=(0,))


@pytest.fixture(scope="module")
def setup():
    model = rf.TinyMMDiT(jax.random.key(0), width=16, heads=2, depth=2, zero_init=False)
    data = sf.make_shapes_batch(jax.random.key(1), 4, p_second=1.0)
    probes = jax.jit(jax.vmap(lambda t, r: sf.make_probes(model, t, (0, 1, 3), r)))(data["tokens"], data["ref"])
    return model, data, probes


def _one(tree, i=0):
    return jax.tree.map(lambda a: a[i], tree)


def test_probes_are_read_only_and_responses_are_distributions(setup):
    model, data, probes = setup
    x = jax.random.normal(jax.random.key(2), (4, 16, 16, 3))
    f = jax.jit(jax.vmap(lambda x, t, r, p: sf.forward_with_probes(model, x, 0.6, t, r, p)))
    v, resp = f(x, data["tokens"], data["ref"], probes)
    v0 = jax.jit(jax.vmap(lambda x, t, r: model(x, 0.6, (t, r))))(x, data["tokens"], data["ref"])
    assert float(jnp.max(jnp.abs(v - v0))) <= 1e-6
    assert resp.shape == (4, 2, 2, 4, 16)
    assert float(jnp.min(resp)) >= 0
    np.testing.assert_allclose(resp.sum(-1), 1.0, atol=1e-5)
    R = jax.vmap(lambda r: sf.aggregate_responses(r, (4, 4), True))(resp)
    np.testing.assert_allclose(R.sum(-1), 1.0, atol=1e-5)
    # probes do react to the prompt: different prompts give different response maps
    assert float(jnp.max(jnp.abs(R[0] - R[1]))) > 1e-4


def test_aggregate_smoothing_matches_numpy():
    r = jax.random.uniform(jax.random.key(3), (2, 3, 2, 16))
    r = r / r.sum(-1, keepdims=True)
    got = sf.aggregate_responses(r, (4, 4), smooth=True)
    g = np.exp(-np.arange(-1, 2) ** 2 / 0.5)
    k = np.outer(g, g) / np.outer(g, g).sum()
    m = np.asarray(r).mean((0, 1)).reshape(2, 4, 4)
    pad = np.pad(m, ((0, 0), (1, 1), (1, 1)))
    sm = np.stack([[[np.sum(pad[p, i:i + 3, j:j + 3] * k) for j in range(4)] for i in range(4)] for p in range(2)])
    sm = sm.reshape(2, 16) / sm.reshape(2, 16).sum(-1, keepdims=True)
    np.testing.assert_allclose(got, sm, atol=1e-12)
    np.testing.assert_allclose(sf.aggregate_responses(r, (4, 4), smooth=False), np.asarray(r).mean((0, 1)))


def test_soft_mask_values_and_no_gradient():
    R = jnp.array([[0.1, 0.2, 0.3, 0.4]])
    m = sf.soft_mask(R, 10.0, 0.5)
    lin = (np.array([0.1, 0.2, 0.3, 0.4]) - 0.1) / 0.3
    np.testing.assert_allclose(m[0], 1 / (1 + np.exp(-10 * (lin - 0.5))), atol=1e-12)
    assert float(jnp.max(jnp.abs(jax.grad(lambda r: jnp.sum(sf.soft_mask(r)))(R)))) == 0.0


def test_energy_terms_by_hand():
    roles = jnp.array([sf.ROLE_SUBJECT, sf.ROLE_CONTEXT, sf.ROLE_VISUAL])
    subj = jnp.array([0.7, 0.1, 0.1, 0.1])
    ctx = jnp.array([0.1, 0.1, 0.1, 0.7])
    vis = jnp.array([0.4, 0.2, 0.2, 0.2])
    R = jnp.stack([subj, ctx, vis])
    cfg = sf.SemanticFlowConfig(lam_align=1.0, lam_excite=0.5, lam_leak=0.5, mask_kappa=10.0, mask_tau=0.5)
    E, t = sf.semantic_energy(R, roles, cfg)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    ms = sig(10 * (np.array([1.0, 0, 0, 0]) - 0.5))
    mc = sig(10 * (np.array([0, 0, 0, 1.0]) - 0.5))
    v = np.asarray(vis)
    align = (1 - np.sum(v * ms) / v.sum()) ** 2
    s, c = np.asarray(subj), np.asarray(ctx)
    excite = (1 - np.max(s / (s + c))) ** 2 + (1 - np.max(c / (s + c))) ** 2
    leak = np.sum(v * mc)
    np.testing.assert_allclose([t["align"], t["excite"], t["leak"]], [align, excite, leak], rtol=1e-12)
    np.testing.assert_allclose(E, align + 0.5 * excite + 0.5 * leak, rtol=1e-12)
    # a visual response inside the subject region and away from the context lowers every visual term
    _, t2 = sf.semantic_energy(jnp.stack([subj, ctx, subj]), roles, cfg)
    assert float(t2["align"]) < float(t["align"]) and float(t2["leak"]) < float(t["leak"])


def test_guidance_off_reproduces_unguided_sampler_and_nan_energy_stops(setup):
    """eta0 = 0 runs the whole rectification path (energy, gradient, zero step) and must change nothing; the
    second prompt's probes hold a NaN: its rectification stops (reported), its image stays finite and equal to
    the unguided one."""
    model, data, probes = setup
    sig = rf.make_sigmas(4)
    x0 = jax.random.normal(jax.random.key(4), (2, 16, 16, 3))
    tok, ref = data["tokens"][:2], data["ref"][:2]
    p2 = jax.tree.map(lambda a: a[:2], probes)
    p2 = p2._replace(emb=p2.emb.at[1, 0, 0].set(jnp.nan))
    plain = jax.jit(jax.vmap(lambda x, t, r: rf.euler_sample(model, x, sig, (t, r))))(x0, tok, ref)
    out, info = jax.jit(jax.vmap(lambda x, t, r, p: sf.semanticflow_sample(model, x, sig, t, r, p,
                                                                           CFG._replace(eta0=0.0))))(x0, tok, ref, p2)
    assert float(jnp.max(jnp.abs(out - plain))) == 0.0
    np.testing.assert_array_equal(info.n_rectified, [2, 0])
    np.testing.assert_array_equal(info.stopped, [False, True])
    assert bool(jnp.all(info.energies[0] > 0)) and bool(jnp.all(jnp.isfinite(out)))


@pytest.mark.slow
def test_rectification_lowers_energy_stops_on_nan_and_stays_early(setup):
    """n_inner = 2: three early steps of two updates each. The last prompt's probes hold a NaN: its
    rectification must stop and its image equal the unguided one."""
    model, data, probes = setup
    bad = probes._replace(emb=probes.emb.at[3, 0, 0].set(jnp.nan))
    sig = rf.make_sigmas(10)
    cfg = CFG._replace(eta0=1e-3, n_inner=2)
    x0 = jax.random.normal(jax.random.key(6), (4, 16, 16, 3))
    out, info = jax.jit(jax.vmap(lambda x, t, r, p: sf.semanticflow_sample(model, x, sig, t, r, p, cfg)))(
        x0, data["tokens"], data["ref"], bad)
    assert info.energies.shape == (4, 3, 2)
    np.testing.assert_array_equal(info.stopped, [False, False, False, True])
    np.testing.assert_array_equal(info.n_rectified, [6, 6, 6, 0])
    assert bool(jnp.all(jnp.isfinite(info.energies[:3])))
    assert bool(jnp.all(jnp.isfinite(out)))
    unguided = jax.jit(lambda x, t, r: rf.euler_sample(model, x, sig, (t, r)))
    np.testing.assert_allclose(out[3], unguided(x0[3], data["tokens"][3], data["ref"][3]), atol=1e-6)
    assert float(jnp.max(jnp.abs(out[0] - unguided(x0[0], data["tokens"][0], data["ref"][0])))) > 1e-6


@pytest.mark.slow
def test_rectify_step_descends_the_differentiated_energy(setup):
    """With the masks of the step held fixed (they are stop-gradient constants), a small normalised gradient
    step lowers the energy: E_after <= E_before for every prompt and noise level."""
    model, data, probes = setup
    cfg = CFG._replace(eta0=1e-3)
    f = jax.jit(jax.vmap(lambda x, s, t, r, p: sf.rectify_step(model, x, s, t, r, p, cfg), (0, None, 0, 0, 0)))
    x = jax.random.normal(jax.random.key(5), (4, 16, 16, 3))
    for s in (0.9, 0.6):
        x_new, e0, e1 = f(x, s, data["tokens"], data["ref"], probes)
        assert bool(jnp.all(jnp.isfinite(x_new))) and bool(jnp.all(e1 <= e0))
        # the normalised step has rms eta0 * sigma
        rms = jnp.sqrt(jnp.mean((x_new - x) ** 2, axis=(1, 2, 3)))
        np.testing.assert_allclose(rms, 1e-3 * s, rtol=1e-5)


def test_toy_data_and_metrics_on_ground_truth():
    d = sf.make_shapes_batch(jax.random.key(8), 4, p_second=1.0)
    wins = sf.anchor_windows(d["images"])
    idx = jnp.arange(4)
    np.testing.assert_allclose(wins[idx, d["pos"]], d["meta"]["texture"])
    np.testing.assert_allclose(sf.anchor_windows(d["ref"])[:, 4], d["meta"]["texture"])
    assert d["tokens"][0, 0] == shapes.CONCEPT and int(d["tokens"][0, 1]) == shapes.POS0 + int(d["pos"][0])
    np.testing.assert_allclose(sf.prompt_alignment(d["images"], d["meta"]), 1.0)
    np.testing.assert_allclose(sf.concept_fidelity(d["images"], d["ref"], d["pos"]), 1.0)
    np.testing.assert_allclose(sf.concept_fidelity(d["images"], d["ref"], d["pos"], metric="cosine"), 1.0, atol=1e-6)
    # a blank image has fidelity 1 - mean(texture^2)/4 and fails the alignment
    blank = jnp.zeros_like(d["images"])
    np.testing.assert_allclose(sf.concept_fidelity(blank, d["ref"], d["pos"]),
                               1 - jnp.mean(d["meta"]["texture"].reshape(4, -1) ** 2, 1) / 4, atol=1e-6)
    np.testing.assert_array_equal(sf.prompt_alignment(blank, d["meta"]), 0.0)
    # the anchor token cells: 2x2 tokens each, the centre one is tokens 5, 6, 9, 10
    np.testing.assert_array_equal(np.flatnonzero(sf.anchor_token_mask(4)), [5, 6, 9, 10])
    np.testing.assert_array_equal(np.flatnonzero(sf.anchor_token_mask(0)), [0, 1, 4, 5])
    # the second-object clause alone: swap its colour
    wrong = {**d["meta"], "color2": (d["meta"]["color2"] + 1) % 6}
    np.testing.assert_allclose(sf.prompt_alignment(d["images"], wrong), 0.0)
    nc = sf.make_shapes_batch(jax.random.key(9), 4, concept=False)
    assert float(jnp.max(jnp.abs(nc["ref"]))) == 0.0 and bool(jnp.all(nc["tokens"][:, 0] >= shapes.COLOR0))


def test_bad_inputs(setup):
    model, data, probes = setup
    p = _one(probes)
    t, r = data["tokens"][0], data["ref"][0]
    x = jnp.zeros((16, 16, 3))
    sig = rf.make_sigmas(2)
    for field, value in (("rho", 1.5), ("eta0", -0.1), ("n_inner", -1), ("blocks", ()), ("blocks", (2,))):
        with pytest.raises(ValueError, match=field):
            sf.semanticflow_sample(model, x, sig, t, r, p, CFG._replace(**{field: value}))
    with pytest.raises(ValueError, match="width"):
        sf.rectify_step(model, x, 0.5, t, r, p._replace(emb=jnp.zeros((4, 8))), CFG)
    with pytest.raises(ValueError, match="subject"):
        sf.semantic_energy(jnp.full((2, 16), 1 / 16), jnp.array([sf.ROLE_CONTEXT, sf.ROLE_VISUAL]))
    with pytest.raises(ValueError, match="ref"):
        sf.make_probes(model, t, (0,), jnp.zeros((15, 48)))
    with pytest.raises(ValueError, match="divisible"):
        rf.patchify(jnp.zeros((18, 18, 3)), 4)
    with pytest.raises(ValueError, match="word_positions"):
        sf.make_probes(model, t, (9,), r)
    with pytest.raises(ValueError, match="key_or_x_init"):
        sf.semanticflow_sample(model, jnp.zeros((8, 8, 3)), sig, t, r, p, CFG)


def test_cfg_scale_uses_the_guided_velocity(setup):
    """rho = 0 (no rectification) with cfg_scale = 2: Euler on v_u + 2 (v_c - v_u), v_u from the empty prompt
    and the blank reference."""
    model, data, probes = setup
    sig = rf.make_sigmas(3)
    x0 = jax.random.normal(jax.random.key(9), (16, 16, 3))
    t, r = data["tokens"][0], data["ref"][0]
    out, _ = jax.jit(lambda x: sf.semanticflow_sample(model, x, sig, t, r, _one(probes), CFG._replace(rho=0.0),
                                                      cfg_scale=2.0))(x0)
    f = jax.jit(lambda x, s, t, r: model(x, s, (t, r)))
    x = x0
    for i in range(3):
        v = rf.cfg_velocity(f(x, sig[i], t, r), f(x, sig[i], jnp.zeros_like(t), jnp.zeros_like(r)), 2.0)
        x = x + (sig[i + 1] - sig[i]) * v
    np.testing.assert_allclose(out, x, atol=1e-6)
