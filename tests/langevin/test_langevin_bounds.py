"""Chained bound and tuning rules (claims `langevin:chained_bound_dominates_exact_w2`,
`langevin:score_bias_raises_w2_by_at_most_eps_over_m`, `langevin:linhart_needs_no_more_steps_than_geffner`) and bad
inputs."""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.sampling import annealed_langevin as al

INIT = (jnp.zeros(2), jnp.eye(2))


@functools.partial(jax.jit, static_argnums=(1, 2))
def _levels(toy, kind, L):
    ts = jnp.linspace(1.0, 1e-3, L)
    means, precs = al.bridging_gaussians(kind, ts, toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov)
    m, M = al.level_constants(precs)
    return means, precs, m, M, al.path_w2(means, precs, *INIT)


@jax.jit
def _exact_final_w2(means, precs, hs, ks):
    ms, Cs = al.ald_gaussian_moments((means, precs), hs, ks, *INIT)
    return al.w2_gaussian(ms[-1], Cs[-1], means[-1], jnp.linalg.inv(precs[-1]))


HS = (0.01, 0.1, 0.9)  # fractions of the smallest stability cap
KS = (1, 5, 40)


@jax.jit
def _exact_and_bound(means, precs, m, M, W, h, k, bias):
    """Exact W2 of ALD with constant (h, k) and score bias ``bias`` to π_{L-1}, the bound and its path term."""
    L = means.shape[0]
    hs, ks = jnp.full((L,), h), jnp.full((L,), k, dtype=jnp.int32)
    # a constant bias b in the score -P(θ - μ) + b moves every level's target mean to μ + P^{-1} b
    shifted = means + jnp.linalg.solve(precs, jnp.broadcast_to(bias, means.shape)[..., None])[..., 0]
    ms, Cs = al.ald_gaussian_moments((shifted, precs), hs, ks, *INIT)
    exact = al.w2_gaussian(ms[-1], Cs[-1], means[-1], jnp.linalg.inv(precs[-1]))
    eps = jnp.linalg.norm(bias)
    return exact, al.ald_w2_bound(W, m, M, hs, ks, 2, eps), al.ald_bound_terms(W, m, M, hs, ks, 2, eps)[0]


_grid_fn = jax.jit(jax.vmap(_exact_and_bound, (None,) * 5 + (0, 0, 0)))


@pytest.fixture(scope="module")
def grid(toy):
    """Exact W2, bound and path term over (kind, L, h, k) with ε = 0 (claim
    `langevin:chained_bound_dominates_exact_w2`): arrays (3, 3) over (h, k)."""
    out = {}
    hh, kk = np.meshgrid(HS, KS, indexing="ij")
    for kind in ("geffner", "linhart"):
        for L in (10, 25):
            lv = _levels(toy, kind, L)
            cap = float(al.stability_cap(lv[2], lv[3]).min())
            res = _grid_fn(*lv, cap * hh.ravel(), kk.ravel().astype(np.int32), np.zeros((9, 2)))
            out[kind, L] = [np.asarray(r).reshape(3, 3) for r in res], cap, lv
    return out


def test_chained_bound_dominates_exact_w2(grid):
    """Claim `langevin:chained_bound_dominates_exact_w2`: bound >= exact W2 in every (kind, L, h, k) case with h below
    the cap."""
    for key, ((exact, bound, _), _, _) in grid.items():
        assert np.all(bound >= exact), key


def test_bound_and_exact_decrease_in_k_and_path_term_decays_geometrically(grid):
    for (exact, bound, path), cap, (_, _, m, _, W) in grid.values():
        assert np.all(np.diff(exact, axis=1) <= 0) and np.all(np.diff(bound, axis=1) <= 0)
        for i, h in enumerate(HS):
            for j, k in enumerate(KS):
                assert path[i, j] <= (1 - float(m.min()) * h * cap) ** k * float(W.sum()) * (1 + 1e-12)


def test_score_error_floor(grid):
    """Claim `langevin:score_bias_raises_w2_by_at_most_eps_over_m`: a bias ε e1 raises the exact W2 by at most ε /
    m_{L-1}; the bound stays above it."""
    eps = np.array([1e-3, 0.1, 0.7])
    bias = np.stack([eps, np.zeros(3)], 1)
    for kind in ("geffner", "linhart"):
        (exact, _, _), cap, lv = grid[kind, 25]
        exact0 = exact[1, 2]  # h = 0.1 cap, k = 40
        m_last = float(lv[2][-1])
        ex, bound, _ = _grid_fn(*lv, np.full(3, 0.1 * cap), np.full(3, 40, dtype=np.int32), bias)
        assert np.all(ex <= exact0 + eps / m_last) and np.all(bound >= ex)
        assert float(ex[-1]) > exact0 + 0.05 * eps[-1] / m_last  # the bias is visible: the test can fail


def test_tuning_rules_meet_the_target_and_linhart_needs_fewer_steps(toy):
    """Claim `langevin:linhart_needs_no_more_steps_than_geffner` (and R1-R2 validity): at equal ε*, Σ k_l(Linhart) <= Σ
    k_l(Geffner); exact W2 <= bound <= ε*."""
    totals = {}
    for kind in ("geffner", "linhart"):
        means, precs, m, M, W = _levels(toy, kind, 25)
        res = al.tune_ald(W, m, M, 2, 0.0, 0.2, n=10)
        assert bool(res.feasible) and float(res.bound) <= 0.2
        assert bool(jnp.all(res.hs <= al.stability_cap(m, M)))
        np.testing.assert_allclose(al.ald_w2_bound(W, m, M, res.hs, res.ks, 2), res.bound, rtol=1e-12)
        assert float(_exact_final_w2(means, precs, res.hs, res.ks)) <= float(res.bound)
        assert int(res.score_evals) == int(res.total_steps) * 11
        totals[kind] = int(res.total_steps)
    assert totals["linhart"] <= totals["geffner"], totals


@pytest.mark.slow
def test_score_floor_makes_target_infeasible_and_tune_picks_levels(toy):
    _, _, m, M, W = _levels(toy, "linhart", 25)
    res = al.tune_ald(W, m, M, 2, 10.0, 0.1)
    assert not bool(res.feasible)
    L, res = al.tune(al.gaussian_problem("linhart", toy.mu_prior, toy.cov_prior, toy.mus, toy.post_cov),
                     2, 0.3, num_levels=10, max_doublings=1)
    assert L in (10, 20) and bool(res.feasible) and res.hs.shape == (L,)


def test_score_error_propagation_formulas():
    np.testing.assert_allclose(al.geffner_score_error(0.1, np.array([0.2, 0.3, 0.4])), 2 * 0.1 + 0.9)
    Lam, Pp, Pj = al.linhart_weights(np.eye(2), 0.5 * np.eye(2), 0.5, n=3)
    # Pp = 2 I, Pj = 3 I, Λ = -2·2 I + 3·3 I = 5 I: error = (1/5)(2·2·ε_λ + 3·3·ε)
    np.testing.assert_allclose(al.linhart_score_error(Lam, Pp, Pj, 0.1, 0.2, 3), (4 * 0.1 + 9 * 0.2) / 5)


# ------------------------------------------------------------------------------------------------ bad inputs
def test_bound_and_tuning_bad_inputs():
    W, m, M = np.ones(3), np.ones(3), 2 * np.ones(3)
    with pytest.raises(ValueError, match=r"hs\[1\] = 0.9 exceeds the stability cap .* at level 1"):
        al.tune_ald(W, m, M, 2, 0.0, 0.1, hs=np.array([0.1, 0.9, 0.1]))
    with pytest.raises(ValueError, match="target must be > 0"):
        al.tune_ald(W, m, M, 2, 0.0, 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = al.ald_w2_bound(W, m, M, np.array([0.1, 0.9, 0.1]), np.ones(3, dtype=np.int32), 2)
    assert np.isinf(float(b)) and any("stability cap" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(float(al.ald_w2_bound(W, m, M, np.full(3, 0.5), np.ones(3, dtype=np.int32), 2)))
    with pytest.raises(ValueError, match=r"M - m must lie in \[0.0, inf\]"):
        al.ald_w2_bound(W, M, m, np.full(3, 0.1), np.ones(3, dtype=np.int32), 2)
