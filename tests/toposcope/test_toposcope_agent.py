"""TopoScope agent: scoped contexts, the benchmark designs and their load-time validation, the reference and noisy
generators, the repair loop and its counters."""

import copy
import json

import numpy as np
import pytest

from jaxlab.agents.toposcope import (
    RULES,
    Action,
    InvalidReference,
    bfs_order,
    design_from_dict,
    full_context,
    load_benchmark,
    noisy_generator,
    rule_based_generator,
    run_agent,
    scope,
    toy_schematic,
    verify,
)
from jaxlab.agents.toposcope.claims import scope_ratios
from jaxlab.agents.toposcope.designs import DATA_PATH


@pytest.fixture(scope="module")
def designs():
    return load_benchmark()


def test_scope_of_toy():
    sch = toy_schematic()
    viol = verify(sch)
    ctx = scope(sch, "D1", 1, plan=[("D1", "J1")], violations=viol)
    assert set(ctx.components) == {"D1", "U2", "J1"} and ctx.planned == ("J1",)
    assert ctx.neighbours == frozenset({"D1", "U2"})
    assert set(ctx.nets) == {"INT", "SDA", "SCL"}  # non-rail nets, expanded
    assert set(ctx.rails) == {"GND", "3V3", "VIN"}  # rails as labels only
    assert ctx.nets["INT"] == (("D1", "A"), ("U2", "INT"))
    # no regulator in scope: R_decap_out is left out; R_short's anchor is a net, so it always applies
    assert {r.id for r in ctx.rules} == {"R_decap_in", "R_floating", "R_led_series", "R_pullup", "R_short"}
    assert len(ctx.violations) == 3
    n_pins = 2 + 6 + 2
    assert ctx.size == 3 + n_pins + 3 + 3 + 5
    full = full_context(sch, "D1")
    assert full.size == 9 + sum(len(c.pins) for c in sch.components.values()) + 4 + 3 + 6
    # C1 alone: its 2 pins, the VIN and GND labels, R_floating and R_short
    assert scope(sch, "C1", 0).size == 1 + 2 + 0 + 2 + 2
    with pytest.raises(ValueError, match="k must be >= 0"):
        scope(sch, "D1", -1)
    with pytest.raises(InvalidReference, match="unknown component 'Q1'"):
        scope(sch, "Q1")


def test_benchmark_shape(designs):
    assert len(designs) == 7
    assert {d.tier for d in designs} == {"easy", "medium", "hard"}
    assert len({d.domain for d in designs}) == 6
    assert all(3 <= len(d.assertions) <= 8 for d in designs)
    order = bfs_order(next(d for d in designs if d.name == "mcu_core"))
    assert order == ["J1", "U1", "R1", "U2", "J2", "R2", "R3", "D1"]


def test_reference_generator_passes_every_design(designs):
    for d in designs:
        r = run_agent(d, rule_based_generator())
        assert r.report.all_passed, (d.name, r.report)
        assert r.violations == () and r.n_invalid == 0 and r.n_rejected == 0, d.name
        # the same with the whole design in the context
        assert run_agent(d, rule_based_generator(), use_scoping=False).report.all_passed


def test_scoping_shrinks_context_on_hard_design():
    ratios, n = scope_ratios()
    assert n >= 30
    assert ratios.mean() <= 0.35 and ratios.min() < 0.1 and ratios.max() <= 1.0


def test_noisy_generator_zero_eps_is_the_reference(designs):
    d = designs[2]
    a = run_agent(d, rule_based_generator())
    b = run_agent(d, noisy_generator(rule_based_generator(), 0.0, 0))
    assert a.schematic.to_dict() == b.schematic.to_dict() and a.n_actions == b.n_actions


def test_noisy_generator_deterministic_and_corrupting(designs):
    d = designs[-1]
    runs = [run_agent(d, noisy_generator(rule_based_generator(), 0.3, 5), max_repairs=0) for _ in range(2)]
    assert runs[0].schematic.to_dict() == runs[1].schematic.to_dict()
    assert runs[0].n_invalid > 0  # invalid references are attempted, counted, and rejected
    pins = set(runs[0].schematic.all_pins())
    assert all(ref in pins for m in runs[0].schematic.nets.values() for ref in m)


def test_feedback_raises_pass_rate(designs):
    rates = {}
    for repairs in (0, 3):
        gens = [(d, noisy_generator(rule_based_generator(), 0.25, 10 * s + i)) for s in range(3)
                for i, d in enumerate(designs)]
        rates[repairs] = np.mean([run_agent(d, g, max_repairs=repairs).report.all_passed for d, g in gens])
    assert rates[3] >= rates[0] + 0.2, rates


def test_invalid_actions_are_counted_not_fatal(designs):
    def bad(ctx, feedback):
        return [Action("connect", ctx.center, "NOPE", ctx.ground), Action("connect", "ZZ9", "1", ctx.ground),
                Action("add_component", "Q1", part="unobtainium"), Action("create_net", net=ctx.ground)]

    r = run_agent(designs[1], bad, max_repairs=1)
    n = len(designs[1].bom)
    assert r.n_invalid == 3 * n * 2 and r.n_rejected == n * 2  # each decision + one repair round
    assert not r.report.all_passed


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["bom"].update(U9="flux_capacitor"), "component 'U9': unknown part 'flux_capacitor'"),
        (lambda d: d["nets"]["EN"].append("U1.ENX"), "net 'EN' names nonexistent pin 'U1.ENX'"),
        (lambda d: d["nets"]["EN"].append("U1.VIN"), "pin 'U1.VIN' is on nets 'VIN' and 'EN'"),
        (lambda d: d["plan"].append(["U1", "U8"]), "plan names unknown component 'U8'"),
        (lambda d: d["assertions"].append(["same_net", "U1.VIN", "D1.X"]), "nonexistent pin 'D1.X'"),
        (lambda d: d["assertions"].append(["has_between", "5V", "GND", "capacitor"]), "nonexistent net '5V'"),
        (lambda d: d["rails"].append("12V"), "rail '12V' is not one of the design's nets"),
        (lambda d: d.update(nc={"U1": ["FOO"]}), "no-connect pin 'FOO'"),
    ],
)
def test_bad_designs_raise_at_load_time(edit, match):
    d = copy.deepcopy(json.loads(DATA_PATH.read_text())["designs"][0])
    edit(d)
    with pytest.raises(ValueError, match=match):
        design_from_dict(d)


def test_bad_agent_arguments_raise(designs):
    with pytest.raises(ValueError, match="eps must lie in"):
        noisy_generator(rule_based_generator(), 1.5, 0)
    with pytest.raises(ValueError, match="size_ref must be > 0"):
        noisy_generator(rule_based_generator(), 0.1, 0, size_ref=0)
    with pytest.raises(ValueError, match="max_repairs must be >= 0"):
        run_agent(designs[0], rule_based_generator(), max_repairs=-1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        run_agent(designs[0], rule_based_generator(), k=-1)
    assert len(RULES) == 6
