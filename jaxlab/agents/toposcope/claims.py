"""Claims of TopoScope (area ``toposcope``): exact violations and
neighbourhoods on the held-out toy schematic, agreement with a networkx subgraph-monomorphism verifier on 200
random schematics, context shrinkage by scoping on the hard design, and the gain of verification feedback for a
noisy generator over the seven-design benchmark."""

from __future__ import annotations

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents import toposcope as ts
from jaxlab.agents.toposcope.networkx_oracle import verify_networkx
from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN, TOPOSCOPE
from jaxlab.core import ClaimResult, claim

TITLE = "TopoScope: pattern-rule verification, k-hop context scoping and verification feedback for PCB schematics"
MODULES = ("jaxlab.agents.toposcope", "jaxlab.agents.toposcope.graph", "jaxlab.agents.toposcope.rules",
           "jaxlab.agents.toposcope.agent", "jaxlab.agents.toposcope.designs",
           "jaxlab.agents.toposcope.networkx_oracle")

_AREA = "toposcope"

#: The toy schematic's planted violations and its k-hop neighbourhoods (worked out by hand from the JSON).
TOY_VIOLATIONS = {
    ("R_floating", (("p", ("U2", "ADDR")),)),
    ("R_led_series", (("l", "D1"),)),
    ("R_pullup", (("n", "SCL"), ("p", ("U2", "SCL")))),
}
TOY_SCOPES = {
    ("U2", 1): {"U2", "J2", "R2", "D1"},
    ("D1", 1): {"D1", "U2"},
    ("D1", 2): {"D1", "U2", "J2", "R2"},
    ("U1", 1): {"U1", "R1"},
    ("J1", 3): {"J1"},
    ("C2", 0): {"C2"},
}


def toy_mismatches() -> tuple[int, str]:
    """Mismatches between the toy schematic's measured violations / neighbourhoods and the hand-derived ones."""
    sch = ts.toy_schematic()
    found = {(v.rule_id, v.binding) for v in ts.verify(sch)}
    bad = len(found ^ TOY_VIOLATIONS)
    for (c, k), want in TOY_SCOPES.items():
        bad += ts.reach_sets(sch, k)[c] != want
    # restricted verification: D1's neighbourhood touches all three, the regulator's none
    bad += len(ts.verify(sch, restrict_to={"D1", "U2"})) != 3
    bad += len(ts.verify(sch, restrict_to={"U1", "R1"})) != 0
    return bad, f"violations found: {sorted(v.message for v in ts.verify(sch))}"


@claim(area=_AREA, paper=TOPOSCOPE)
def toy_design_exact_violations_and_scopes() -> ClaimResult:
    """on the held-out toy schematic, verification finds exactly the 3 planted violations, the k-hop
    neighbourhoods (k = 0..3) are the hand-derived ones and restricted verification sees exactly the violations
    of a neighbourhood; measured = number of mismatches."""
    bad, details = toy_mismatches()
    return ClaimResult.at_most(bad, 0, details=details)


def _oracle_violations():
    """The independent verifier: networkx subgraph monomorphism when networkx is installed, else ``None``."""
    return None if importlib.util.find_spec("networkx") is None else verify_networkx


def networkx_mismatches(n: int = 200, seed0: int = 0) -> tuple[int, np.ndarray]:
    """Random schematics (3-12 components) on which :func:`verify` and an independent verifier disagree, and the
    violation counts per built-in rule.

    The independent verifier is the networkx one (:func:`~jaxlab.agents.toposcope.networkx_oracle.verify_networkx`,
    the same violation set) when networkx is installed; without it (a plain ``pip install``), the dense JAX
    incidence-algebra kernel :func:`~jaxlab.agents.toposcope.rules.rule_counts` (the same counts per rule).
    """
    oracle = _oracle_violations()
    ids = [r.id for r in ts.RULES]
    schs = [ts.random_schematic(s, int(np.random.default_rng(s).integers(3, 13))) for s in range(seed0, seed0 + n)]
    ours = [{(v.rule_id, v.binding) for v in ts.verify(sch)} for sch in schs]
    mine = np.zeros((n, len(ts.RULES)), dtype=int)
    for i, found in enumerate(ours):
        for rid, _ in found:
            mine[i, ids.index(rid)] += 1
    if oracle is not None:
        bad = sum(found != oracle(sch) for found, sch in zip(ours, schs, strict=True))
    else:
        pins, nets = max(len(x.all_pins()) for x in schs), max(len(x.nets) for x in schs)
        dense = jax.tree.map(lambda *a: jnp.stack(a), *(ts.encode(x, pins, nets) for x in schs))
        bad = int(np.sum(np.any(np.asarray(jax.jit(jax.vmap(ts.rule_counts))(dense)) != mine, axis=1)))
    return bad, mine.sum(0)


@claim(area=_AREA, paper=PCBSCHEMAGEN)
def networkx_agrees_on_200_random_schematics() -> ClaimResult:
    """For every built-in rule, the jaxlab matcher and a networkx GraphMatcher (subgraph monomorphism) give the
    same violation set on 200 random schematics of at most 12 components; measured = disagreeing schematics.
    Without networkx installed, the independent check is the dense JAX kernel's count per rule."""
    bad, counts = networkx_mismatches()
    per_rule = {r.id: int(c) for r, c in zip(ts.RULES, counts, strict=True)}
    oracle = "networkx" if _oracle_violations() is not None else "rule_counts (networkx not installed)"
    return ClaimResult.at_most(bad, 0, details=f"oracle {oracle}; violations per rule {per_rule}")


def scope_ratios(k: int = 1) -> tuple[np.ndarray, int]:
    """``|scope(c)| / |full|`` for every component of the hard design's reference schematic, and its size."""
    spec = next(d for d in ts.load_benchmark() if d.name == "sensor_hub")
    sch = ts.run_agent(spec, ts.rule_based_generator()).schematic
    ratios = []
    for c in sorted(sch.components):
        full = ts.full_context(sch, c).size
        ratios.append(ts.scope(sch, c, k).size / full)
    return np.array(ratios), len(sch.components)


@claim(area=_AREA, paper=TOPOSCOPE)
def scoping_shrinks_context() -> ClaimResult:
    """on the hard-tier design (31 components after the reference generator adds decaps and pull-ups),
    the mean of |scope(c)| / |full design| over components is <= 0.35 for k = 1."""
    ratios, n = scope_ratios()
    return ClaimResult.at_most(float(ratios.mean()), 0.35,
                               details=f"{n} components; max ratio {ratios.max():.3f} (the MCU on the I2C bus)")


def feedback_pass_rates(eps: float, seeds: int = 20, *, use_scoping: bool = True,
                        size_ref: float | None = None) -> dict[str, float]:
    """Design pass rate of the noisy generator without (R = 0) and with (R = 3) verification feedback over
    ``seeds`` x the seven benchmark designs, attempted invalid references, and dangling references left in the
    final schematics (must be 0: validation rejects them)."""
    designs = ts.load_benchmark()
    base = ts.rule_based_generator()
    out: dict[str, float] = {"invalid_attempted": 0.0, "dangling": 0.0}
    for repairs in (0, 3):
        passed = []
        for seed in range(seeds):
            for i, d in enumerate(designs):
                gen = ts.noisy_generator(base, eps, 1000 * seed + i, size_ref=size_ref)
                r = ts.run_agent(d, gen, max_repairs=repairs, use_scoping=use_scoping)
                passed.append(r.report.all_passed)
                out["invalid_attempted"] += r.n_invalid
                pins = set(r.schematic.all_pins())
                out["dangling"] += sum(ref not in pins for m in r.schematic.nets.values() for ref in m)
        out[f"R{repairs}"] = float(np.mean(passed))
    return out


@claim(area=_AREA, paper=TOPOSCOPE, quick=False)
def verification_feedback_helps_noisy_generator() -> ClaimResult:
    """a rule-based generator corrupted with error probability eps per action reaches a higher design
    pass rate with verification feedback (R = 3) than without (R = 0), over 20 seeds x 7 designs, for eps in
    {0.1, 0.2, 0.3}; measured = the gap at eps = 0.2 (expected >= 0.2), and no invalid reference survives
    validation (a dangling reference fails the claim)."""
    rows = {eps: feedback_pass_rates(eps) for eps in (0.1, 0.2, 0.3)}
    gap = rows[0.2]["R3"] - rows[0.2]["R0"]
    ok_all = all(r["R3"] > r["R0"] for r in rows.values()) and all(r["dangling"] == 0 for r in rows.values())
    details = "; ".join(f"eps={e}: R0 {r['R0']:.3f}, R3 {r['R3']:.3f}, invalid refs attempted "
                        f"{int(r['invalid_attempted'])}, dangling {int(r['dangling'])}" for e, r in rows.items())
    return ClaimResult.at_least(gap if ok_all else -1.0, 0.2, details=details)
