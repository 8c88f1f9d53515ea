"""Scene memory, simulated generation, reliability-aware fusion and utilities (claims
`active_scene:visible_entropy_of_unknown_cells`, `active_scene:three_hit_fusion_arithmetic`): the
three-hit log-odds arithmetic, the reliability-weighted colour average, conflict down-weighting, the visible
entropy of a ray through unknown cells, the generator's noise-free limit and reliability formula, and the
utility normalisation."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.generative import active_scene as A

G = 16
CFG = A.ActiveConfig(pano_h=8, pano_w=16)
L_OCC = math.log(0.7 / 0.3)
L_FREE = math.log(0.4 / 0.6)


@pytest.fixture(scope="module")
def scene():
    return A.make_room_scene(jax.random.key(3), G=G, n_boxes=3)


@pytest.fixture(scope="module")
def pose(scene):
    c, v = A.candidate_lattice(scene, CFG)
    return c[np.flatnonzero(np.asarray(v))[0]]


def one_ray(depth, r, color):
    return dict(dirs=jnp.array([[1.0, 0.0, 0.0]]), depth=jnp.array([depth]), color=jnp.array([color]),
                reliability=jnp.array([r]))


def test_three_hits_give_the_spec_logodds_and_weighted_colour():
    m = A.init_memory(G)
    origin = jnp.array([2.5, 8.5, 8.5])
    cols = [[0.9, 0.1, 0.2], [0.3, 0.6, 0.0], [0.1, 0.1, 1.0]]
    rs = [1.0, 0.5, 0.25]
    for r, c in zip(rs, cols, strict=True):
        m = A.fuse_rays(m, origin, cfg=CFG, **one_ray(8.25, r, c))  # hit sample t = 8.25 -> x = 10.75, cell 10
    assert abs(float(m.logodds[10, 8, 8]) - 1.75 * L_OCC) < 1e-12
    assert abs(1.75 * L_OCC - 1.4828) < 1e-4
    assert abs(float(jax.nn.sigmoid(m.logodds[10, 8, 8])) - 0.81499) < 1e-4
    np.testing.assert_allclose(m.color[10, 8, 8], np.average(cols, axis=0, weights=rs), rtol=1e-12)
    assert float(m.weight[10, 8, 8]) == 1.75 and float(m.count[10, 8, 8]) == 3
    # the cells in front (x = 2.75 .. 10.25 minus h/2) are free once per ray: cells 3..9 (t < 7.75)
    np.testing.assert_allclose(m.logodds[3:10, 8, 8], 1.75 * L_FREE, rtol=1e-12)
    assert float(m.logodds[2, 8, 8]) == 1.75 * L_FREE  # the camera's cell is crossed by the first sample
    assert np.all(np.asarray(m.weight[11:, 8, 8]) == 0)  # nothing behind the hit
    assert int(jnp.sum(m.weight > 0)) == 9


def test_conflict_down_weighting_and_uniform_reliability_ablation():
    origin = jnp.array([2.5, 8.5, 8.5])
    m = A.init_memory(G)
    m = m._replace(logodds=m.logodds.at[6, 8, 8].set(-3.0), weight=m.weight.at[6, 8, 8].set(6.0))
    kappa = float(A.confidence(m, CFG)[6, 8, 8])
    assert kappa > 0.5  # a confident free cell
    hit = one_ray(4.25, 0.8, [0.5, 0.5, 0.5])  # hits cell 6
    out = A.fuse_rays(m, origin, cfg=CFG, **hit)
    assert abs(float(out.logodds[6, 8, 8]) - (-3.0 + 0.8 * (1 - kappa) * L_OCC)) < 1e-12
    plain = A.fuse_rays(m, origin, cfg=CFG._replace(reliability_aware=False), **hit)
    assert abs(float(plain.logodds[6, 8, 8]) - (-3.0 + L_OCC)) < 1e-12
    # clamping at the log-odds bounds
    many = A.fuse_rays(A.init_memory(G), origin, dirs=jnp.tile(jnp.array([[1.0, 0, 0]]), (9, 1)),
                       depth=jnp.full(9, 8.25), color=jnp.full((9, 3), 0.5), reliability=jnp.ones(9), cfg=CFG)
    assert float(many.logodds[10, 8, 8]) == 4.0 and abs(float(many.logodds[5, 8, 8]) - 9 * L_FREE) < 1e-12
    # zero reliability changes nothing
    none = A.fuse_rays(m, origin, cfg=CFG, **one_ray(4.25, 0.0, [0.5, 0.5, 0.5]))
    for a, b in zip(none, m, strict=True):
        np.testing.assert_array_equal(a, b)


def test_visible_entropy_of_a_ray_through_unknown_cells():
    m = A.init_memory(10)
    for n in (1, 4, 10):
        mm = m._replace(weight=m.weight.at[n:].set(1.0), logodds=m.logodds.at[n:].set(-40.0))
        e, rep, info = A.ray_utility_terms(mm, jnp.array([0.25, 5.5, 5.5]), jnp.array([[1.0, 0, 0]]), step=1.0,
                                           n_samples=12, cfg=CFG)
        expected = math.log(2) * (2 - 2 ** (1 - n))
        assert abs(float(info[0]) - expected) < 1e-12
        assert abs(float(e[0]) - (2 - 2 ** (1 - n))) < 1e-12  # sum_{i<n} 0.5^i unknown cells
        assert abs(float(rep[0]) - 0.5 * (2 - 2 ** (1 - n))) < 1e-9  # alpha = 0.5, kappa = 0
    assert abs(math.log(2) * (2 - 2**-9) - 1.38494) < 1e-5


def test_noise_free_generation_is_ground_truth_and_reliability_formula(scene, pose):
    cfg = CFG._replace(sigma_d=0.0, sigma_c=0.0, q_hall=0.0)
    obs = A.simulate_generation(jax.random.key(0), scene, A.init_memory(G), pose, cfg)
    gt = A.render_gt(scene, pose, cfg)
    assert not bool(obs.routed_mask.any())
    np.testing.assert_allclose(obs.depth, gt.depth, rtol=1e-12)
    np.testing.assert_allclose(obs.color, gt.color, rtol=1e-12)
    # reliability = rho_gen exp(-D / 2G) max(|cos psi|, 0.1), psi from the hit voxel's normal (NumPy check)
    dirs = np.asarray(A.pano_directions(8, 16))
    t = (np.arange(CFG.samples(G)) + 0.5) * CFG.step
    occ, nrm = np.asarray(scene.occ), np.asarray(scene.normal)
    for r, c in [(0, 0), (3, 5), (4, 11), (7, 15)]:
        pts = np.floor(np.asarray(pose) + dirs[r, c] * t[:, None]).astype(int)
        first = next(p for p in pts if occ[tuple(p)])
        cos = abs(dirs[r, c] @ nrm[tuple(first)])
        want = 0.6 * np.exp(-float(gt.depth[r, c]) / (2 * G)) * max(cos, 0.1)
        assert abs(float(obs.reliability[r, c]) - want) < 1e-12


def test_routing_after_fusing_a_clean_view(scene, pose):
    cfg = CFG._replace(sigma_d=0.0, sigma_c=0.0, q_hall=0.0, reliability_aware=False)
    m = A.init_memory(G)
    for k in range(3):
        m = A.fuse(m, A.simulate_generation(jax.random.key(k), scene, m, pose, cfg), pose, cfg)
    obs = A.simulate_generation(jax.random.key(9), scene, m, pose, cfg)
    gt = A.render_gt(scene, pose, cfg)
    frac = float(obs.routed_mask.mean())
    assert frac > 0.8
    rel_err = np.abs(np.asarray(obs.depth - gt.depth))[np.asarray(obs.routed_mask)] / np.asarray(gt.depth)[
        np.asarray(obs.routed_mask)]
    assert np.median(rel_err) < 0.05
    assert np.all(np.asarray(obs.reliability)[np.asarray(obs.routed_mask)] >= 0)


def test_hallucinations_come_in_blocks(scene, pose):
    cfg = CFG._replace(sigma_d=0.0, q_hall=0.5)
    obs = A.simulate_generation(jax.random.key(1), scene, A.init_memory(G), pose, cfg)
    gt = A.render_gt(scene, pose, cfg)
    ratio = np.asarray(obs.depth / gt.depth)
    blocks = ratio.reshape(2, 4, 4, 4)  # (block row, row in block, block column, column in block)
    np.testing.assert_allclose(blocks, np.broadcast_to(blocks[:, :1, :, :1], blocks.shape), rtol=1e-12)
    assert np.all(np.abs(ratio - 1) <= 0.2 + 1e-12) and np.any(ratio != 1)


def test_utility_normalisation_and_selection(scene, pose):
    m = A.fuse(A.init_memory(G), A.simulate_generation(jax.random.key(0), scene, A.init_memory(G), pose, CFG),
               pose, CFG)
    c, v = A.candidate_lattice(scene, CFG)
    terms = jax.jit(A.utility_terms, static_argnames="cfg")(m, c, pose, cfg=CFG)
    np.testing.assert_allclose(terms["cost"], np.linalg.norm(np.asarray(c - pose), axis=-1) / G, rtol=1e-12)
    assert all(np.all(np.asarray(x) >= 0) for x in terms.values())
    for mode, w in ((0, CFG.w_expansion), (1, CFG.w_refinement)):
        idx, score = A.select_next_view(m, c, pose, jnp.asarray(mode), CFG, v)
        valid = np.asarray(v)
        norm = {k: np.asarray(x) / np.max(np.asarray(x)[valid]) for k, x in terms.items()}
        want = w[0] * norm["exp"] + w[1] * norm["rep"] + w[2] * norm["info"] - w[3] * norm["cost"]
        np.testing.assert_allclose(np.asarray(score)[valid], want[valid], rtol=1e-10)
        assert np.all(np.isneginf(np.asarray(score)[~valid]))
        assert int(idx) == int(np.argmax(np.where(valid, want, -np.inf)))


def test_fusion_bad_inputs(pose):
    m = A.init_memory(G)
    good = dict(dirs=jnp.ones((2, 3)), depth=jnp.ones(2), color=jnp.full((2, 3), 0.5), reliability=jnp.ones(2))
    bad = [
        ({"reliability": jnp.array([0.5, 1.5])}, "reliability"),
        ({"reliability": jnp.array([-0.1, 0.5])}, "reliability"),
        ({"depth": jnp.array([1.0, jnp.nan])}, "depth"),
        ({"depth": jnp.array([1.0, jnp.inf])}, "depth"),
        ({"color": jnp.full((2, 3), 1.5)}, "color"),
        ({"color": jnp.full((2, 4), 0.5)}, "color"),
    ]
    for change, match in bad:
        with pytest.raises(ValueError, match=match):
            A.fuse_rays(m, pose, cfg=CFG, **{**good, **change})
    obs = A.Observation(jnp.ones((8, 16)), jnp.full((8, 16, 3), 0.5), jnp.ones((8, 16)), jnp.zeros((8, 16), bool))
    with pytest.raises(ValueError, match=r"obs\.color"):
        A.fuse(m, obs._replace(color=jnp.full((8, 16, 2), 0.5)), pose, CFG)
    with pytest.raises(ValueError, match=r"obs\.reliability"):
        A.fuse(m, obs._replace(reliability=jnp.full((8, 16), 2.0)), pose, CFG)
    with pytest.raises(ValueError, match="origin"):
        A.fuse(m, obs, jnp.array([1.0, 2.0, 16.5]), CFG)
    with pytest.raises(ValueError, match="G"):
        A.init_memory(3)
