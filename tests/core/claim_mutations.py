"""Mutation check of ``jaxlab verify``'s claims: plant a bias in the function a claim tests and run the claim.

A claim that still passes with a 3 % error in the code it checks verifies nothing. Each entry below names a claim,
the function it tests (a dotted path looked up in the claims module's namespace, so that the binding the claim
calls is the one replaced) and the mutation: its output scaled by 1.03 on every float or complex leaf, or one
argument scaled (a wrong constant, where a claim is by design blind to the output's scale), or, for code whose
outputs are not numbers (rule matchers, behaviour trees), a planted bug given as a function of the original. The
script runs every mutated claim once, in float64, restores the function, clears JAX's caches (a traced program may
hold the mutated code) and prints one JSON line per entry; it exits 0. It runs in its own process (see
``test_claim_mutations.py``), so no mutated program can leak into other tests.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np


@dataclass(frozen=True)
class Mutation:
    """``claim`` is ``area:name``; ``target`` a dotted path in the claims module; ``arg`` the index of the argument
    to scale (``None``: scale the output); ``bug``, if given, maps the original function to its mutant instead."""

    claim: str
    target: str
    factor: float = 1.03
    arg: int | None = None
    bug: Callable[[Callable], Callable] | None = None


def _drop_last(fn: Callable) -> Callable:
    """A matcher that misses one match: the last element of its list output is dropped."""
    return lambda *args, **kwargs: fn(*args, **kwargs)[:-1]


def _leaky_goal_mask(fn: Callable) -> Callable:
    """A goal mask that is 0.03 instead of 0 where it should hide the goal (the policy then sees the goal)."""

    def leaky(goal, spec, use_goal):
        masked, mask = fn(goal, spec, use_goal)
        return jax.numpy.where(mask > 0, masked, goal), mask + 0.03 * (1 - mask)

    return leaky


def _wide_nodes(fn: Callable) -> Callable:
    """A quadrature rule whose nodes are 3 % too wide (the weights, which are checked to sum to 1, are kept)."""

    def wide(*args, **kwargs):
        nodes, weights = fn(*args, **kwargs)
        return nodes * 1.03, weights

    return wide


def _ignores_near_r(fn: Callable) -> Callable:
    """A behaviour-tree tick that does not sense one literal, ``Near(R)``."""
    return lambda tree, state: fn(tree, frozenset(state) - {"Near(R)"})


def _step_size_without_log(fn: Callable) -> Callable:
    """Online SGD run at η = c / d instead of the η = c / (d log d) it is given: its weak recovery then takes
    O(d log d) steps instead of O(d log² d), a wrong scaling law the scaling claim must see."""

    def fast(key, ws, cfg, num_steps, schedule, *args, **kwargs):
        return fn(key, ws, cfg, num_steps, schedule * float(np.log(ws.shape[-1])), *args, **kwargs)

    return fast


MUTATIONS = (
    # closed forms and exact identities
    Mutation("alignment:gaussian_frontier_is_sigma_sqrt_2kl", "frontier"),
    Mutation("alignment:discrete_bon_kl_is_below_the_formula", "best_of_n"),
    Mutation("core:mmd_between_gaussians_matches_closed_form", "mmd2"),
    # the Stein identity holds for any scale of the kernel: plant a wrong score instead
    Mutation("core:stein_kernel_has_zero_mean_under_the_target", "stein_gram", arg=1),
    Mutation("cwr:chow_rule_is_bayes", "cwr.bayes_decision", factor=1.2, arg=1),  # a wrong abstention cost c
    Mutation("flow_agent:gronwall_endpoint_deviation", "FM.ode_sample"),
    Mutation("forecasting:exact_recurrence_extrapolates_720_steps", "F.ef_forecast"),
    Mutation("langevin:ula_stationary_variance_is_inflated", "al.ula_gaussian_moments"),
    Mutation("pe_spread:p2_sinusoidal_closed_form", "spread"),
    Mutation("pe_spread:p5_deviation_ratio_is_stable", "invariant_deviation"),  # D(t)/t² against its Taylor series
    Mutation("quantum:single_qubit_closed_form", "fourier_coeffs_of"),
    Mutation("scaling:collinear_kappa_equals_cosine_formula_for_every_k", "C.scale_block_condition_number"),
    Mutation("semantic_flow:euler_gaussian_closed_form", "rf.euler_sample"),
    Mutation("snn:energy_formula", "energy.energy_pj"),
    Mutation("snn:dsn_with_minus_inf_threshold_is_lif", "scan.lif_scan"),
    Mutation("token_router:single_model_limit_is_exact", "throughput_separate"),
    Mutation("active_scene:homogeneous_slab_transmittance", "A.raycast"),
    Mutation("active_scene:cube_room_mean_panoramic_depth", "A.raycast"),
    Mutation("online:chebyshev_sup_norm_is_two_to_one_minus_n", "usp.chebyshev_coeffs"),
    Mutation("online:annihilation_identity", "usp.usp_predictor"),
    Mutation("online:vaw_sherman_morrison_equals_solve", "vaw.run"),
    Mutation("online:deterministic_lds_cumulative_loss", "usp.usp_vaw_run"),
    Mutation("online:etth1_vaw_beats_ogd", "vaw.run"),
    Mutation("online:real_spectrum_residual_decays_like_two_to_minus_n", "_decay_slope"),
    Mutation("online:vaw_beats_ridge_ftl_under_heavy_noise", "vaw.run"),
    Mutation("forecasting:df_equals_ef_with_one_step", "F.ef_forecast"),
    Mutation("facts:bootstrap_half_width_for_p_06_n_1000", "facts.bootstrap_ci"),
    # issue 29: claims that could not fail, now checked against independent references
    Mutation("core:mmd_of_a_weighted_sample_with_itself_is_zero", "mmd2"),
    Mutation("alignment:exponential_bon_is_not_near_optimal", "exponential_bon_gain"),
    Mutation("semantic_flow:response_maps_are_distributions", "sf.aggregate_responses"),
    Mutation("quantum:frozen_kernel_tracks_gradient_descent", "linearized_residual"),
    Mutation("quantum:residual_ode_is_second_order", "mse_loss"),  # a 3 % wrong gradient: e(η) becomes O(η)
    # the QNTK diagonal against an independent dense NumPy computation on the same θ
    Mutation("quantum:qntk_diagonal_decays_through_redundancy", "coefficient_jacobian_of"),
    # Monte-Carlo claims: the tolerance is k standard errors, so a 3 % bias must fail
    Mutation("alignment:gaussian_sample_estimator_within_3_percent", "gain_from_samples"),
    Mutation("denoise:igt_error_follows_one_over_t", "mc_errors"),
    Mutation("denoise:disk_stationary_error_dp_mode", "mc_errors"),
    Mutation("denoise:quadratic_mle_variance_in_1d", "mle_1d_errors"),
    Mutation("alignment:gaussian_bon_gain_matches_monte_carlo", "gaussian_bon_gain"),
    Mutation("flow_agent:cfm_gaussian_loss_floor", "FM.cfm_loss"),
    Mutation("multiscale:population_loss_linear_links", "population_loss_linear"),
    Mutation("multiscale:first_chaos_he12_closed_form_vs_monte_carlo", "first_chaos_mc"),
    Mutation("multiscale:sgd_weak_recovery_time_scales_like_d_log2_d", "run_online_sgd", bug=_step_size_without_log),
    Mutation("langevin:monte_carlo_ald_matches_exact_propagation", "al.ald_gaussian_moments"),
    # areas whose claims were not covered yet
    Mutation("msip:mean_shift_contracts_at_the_closed_form_rate", "M.mean_shift"),
    Mutation("msip:quadrature_estimators_reproduce_the_exact_map", "gauss_hermite", bug=_wide_nodes),
    Mutation("toposcope:toy_design_exact_violations_and_scopes", "ts.verify", bug=_drop_last),
    Mutation("toposcope:networkx_agrees_on_200_random_schematics", "ts.verify", bug=_drop_last),
    Mutation("tree_of_skill:goal_mask_makes_policy_goal_invariant", "tos.masked_goal", bug=_leaky_goal_mask),
    Mutation("tree_of_skill:bt_expansion_and_ticks_match_hand_derivation", "bt_mod.tick", bug=_ignores_near_r),
)


def _scale(x: Any, factor: float) -> Any:
    def one(a):
        if isinstance(a, float):
            return a * factor
        if hasattr(a, "dtype") and np.issubdtype(a.dtype, np.inexact):  # real and complex
            return a * np.asarray(factor, a.dtype)
        return a

    return jax.tree_util.tree_map(one, x)


def mutated(fn: Callable, m: Mutation) -> Callable:
    if m.bug is not None:
        return m.bug(fn)

    def wrapper(*args, **kwargs):
        if m.arg is None:
            return _scale(fn(*args, **kwargs), m.factor)
        args = list(args)
        args[m.arg] = _scale(args[m.arg], m.factor)
        return fn(*args, **kwargs)

    return wrapper


def run(m: Mutation) -> dict:
    from jaxlab.core.verification import discover_areas, load_area

    area, name = m.claim.split(":")
    claim = {c.name: c for c in load_area(area)}[name]
    owner = importlib.import_module(discover_areas()[area])
    *path, attr = m.target.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, attr)
    setattr(owner, attr, mutated(original, m))
    try:
        result = claim.fn()
        row = {"claim": m.claim, "target": m.target, "passed": bool(result.passed), "measured": result.measured,
               "details": result.details[:200]}
    except Exception as exc:  # a mutation that crashes its claim is reported, and not counted as caught
        row = {"claim": m.claim, "target": m.target, "passed": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        setattr(owner, attr, original)
        jax.clear_caches()
    return row


def main(selected: list[str]) -> int:
    from jaxlab.core.verification import set_precision

    set_precision("float64")
    for m in MUTATIONS:
        if not selected or m.claim in selected:
            print(json.dumps(run(m), default=float), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
