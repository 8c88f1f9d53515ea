"""RodInsert2D: closed-form grasp/insert geometry, agreement with the NumPy reference under jit and
vmap, bad actions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.agents import rodinsert as ri

P = ri.RodInsertParams()


def make_state(p, rod, held=False, delta=0.0):
    return ri.EnvState(jnp.asarray(p, float), jnp.asarray(rod, float), jnp.asarray(held), jnp.asarray(delta, float),
                       jnp.asarray(False), jnp.asarray(0, jnp.int32))


STEP = jax.jit(lambda s, a: ri.rodinsert_step(jax.random.key(0), s, a, P))


def drive(state, actions):
    step = STEP
    out = []
    for a in actions:
        _, state, r, d, _ = step(state, jnp.asarray(a, float))
        out.append((state, float(r), bool(d)))
    return out


def test_reset_ranges_and_determinism():
    obs, s = jax.vmap(ri.rodinsert_reset)(jax.random.split(jax.random.key(0), 512))
    assert obs.shape == (512, ri.OBS_DIM)
    assert float(jnp.abs(s.p).max()) <= P.start_range and float(jnp.abs(s.rod[:, 0]).max()) <= P.rod_x_range
    assert float(jnp.abs(s.rod[:, 1]).max()) <= P.rod_y_range and not bool(s.held.any())
    np.testing.assert_array_equal(obs, ri.rodinsert_obs(s))
    o2, _ = ri.rodinsert_reset(jax.random.key(7))
    o3, _ = ri.rodinsert_reset(jax.random.key(7))
    np.testing.assert_array_equal(o2, o3)


def test_grasp_left_of_centre_inserts_at_the_predicted_step():
    # rod centre x = 0.01, grasp at p_x = -0.2: delta = -0.21; insertion needs p_x - delta + 0.3 >= 1.35,
    # i.e. p_x >= 0.84, reached after ceil((0.84 + 0.2) / 0.05) = 21 pushes to the right (closing took 1 step)
    s0 = make_state([-0.2, 0.0], [0.01, 0.0])
    trace = drive(s0, [[0, 0, 1]] + [[1, 0, 1]] * 25)
    s1 = trace[0][0]
    assert bool(s1.held) and float(s1.delta) == pytest.approx(-0.21, abs=1e-12)
    inserted_at = next(i for i, (s, _, _) in enumerate(trace) if bool(s.inserted))
    assert inserted_at == 21
    assert [r for _, r, _ in trace].count(1.0) == 1 and trace[21][1] == 1.0 and trace[21][2]
    # the rod followed the gripper
    s = trace[10][0]
    np.testing.assert_allclose(s.rod, s.p - jnp.asarray([-0.21, 0.0]), atol=1e-12)


def test_centre_grasp_cannot_insert_and_release_drops_the_rod():
    trace = drive(make_state([0.1, 0.3], [0.1, 0.3]), [[0, 0, 1]] + [[1, -1, 1]] * 60)
    assert all(not bool(s.inserted) for s, _, _ in trace)
    last = trace[-1][0]
    assert float(last.p[0]) == 1.0 and float(last.p[1]) == -1.0  # clipped to the workspace
    assert float(last.delta) == pytest.approx(0.0, abs=1e-12)
    rel = drive(last, [[-1, 0, -1], [-1, 0, -1]])
    assert not bool(rel[0][0].held)
    np.testing.assert_allclose(rel[1][0].rod, rel[0][0].rod)  # released rod stays put
    # closing off the rod grasps nothing
    off = drive(make_state([0.5, 0.5], [0.0, 0.0]), [[0, 0, 1]])
    assert not bool(off[0][0].held)


def test_jit_vmap_step_equals_numpy_reference():
    n, steps = 64, 40
    _, s = jax.vmap(ri.rodinsert_reset)(jax.random.split(jax.random.key(1), n))
    rng = np.random.default_rng(0)
    # put half the grippers on their rods so that grasps, carries and insertions all happen
    p0 = np.where(np.arange(n)[:, None] < n // 2, np.asarray(s.rod) + np.asarray([[-0.25, 0.0]]), np.asarray(s.p))
    s = s._replace(p=jnp.asarray(p0))
    step = jax.jit(jax.vmap(lambda st, a: ri.rodinsert_step(jax.random.key(0), st, a, P)))
    ref = [p0, np.asarray(s.rod), np.zeros(n, bool), np.zeros(n), np.zeros(n, bool), np.zeros(n, int)]
    n_ins = 0
    for t in range(steps):
        a = rng.uniform(-1.5, 1.5, (n, 3))
        a[: n // 2, 0] = np.abs(a[: n // 2, 0]) + 0.5 * (t > 0)
        a[: n // 2, 1] = -np.asarray(s.p[: n // 2, 1]) / 0.05
        a[: n // 2, 2] = 1.0
        _, s, r, d, _ = step(s, jnp.asarray(a))
        *ref, r_ref, d_ref = ri.rodinsert_step_numpy(*ref, a, P)
        for got, want in zip((s.p, s.rod, s.held, s.delta, s.inserted, s.t), ref, strict=True):
            np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
        np.testing.assert_array_equal(np.asarray(r), r_ref)
        np.testing.assert_array_equal(np.asarray(d), d_ref)
        n_ins += int(r_ref.sum())
    assert n_ins > 0 and ref[2].any()


def test_scripted_skills_closed_form():
    obs, s = ri.rodinsert_reset(jax.random.key(3))
    pick = ri.scripted_skills()["Pick"]
    step = STEP
    for goal, use in ((-0.2, 1.0), (0.25, 1.0), (0.25, 0.0)):
        st, ob = s, obs
        g, m = jnp.asarray([goal, 0.0]), pick.spec.space_mask * use
        for _ in range(40):
            ob, st, *_ = step(st, pick.act(ob, g, m))
            if bool(st.held):
                break
        assert bool(st.held)
        assert float(st.delta) == pytest.approx(goal * use, abs=1e-9)


def test_bad_actions():
    _, s = ri.rodinsert_reset(jax.random.key(0))
    with pytest.raises(ValueError, match=r"action must have shape \(3\)"):
        ri.rodinsert_step(jax.random.key(0), s, jnp.zeros(2))
    with pytest.raises(ValueError, match="action must be finite"):
        ri.rodinsert_step(jax.random.key(0), s, jnp.asarray([0.0, jnp.nan, 1.0]), debug=True)
    jitted = jax.jit(lambda a: ri.rodinsert_step(jax.random.key(0), s, a, debug=True)[0])
    with pytest.raises(Exception, match="action must be finite"):
        jitted(jnp.asarray([0.0, jnp.nan, 1.0])).block_until_ready()
    # without debug a NaN action is not checked (cheap path), and finite actions pass in debug mode
    jitted(jnp.asarray([0.0, 0.5, 1.0])).block_until_ready()
