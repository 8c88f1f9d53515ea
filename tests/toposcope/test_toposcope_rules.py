"""TopoScope rules: exact planted violations, a networkx oracle, the dense JAX counts against verify (jit, vmap
over padded designs), rule and assertion validation, and the functional assertions."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.agents.toposcope import (
    RULES,
    Pattern,
    Rule,
    check_rules,
    encode,
    evaluate_assertions,
    load_parts,
    random_schematic,
    rule_counts,
    rules_from_json,
    toy_schematic,
    verify,
)
from jaxlab.agents.toposcope.claims import TOY_VIOLATIONS, toy_mismatches
from jaxlab.agents.toposcope.rules import check_assertions


def test_toy_has_exactly_the_planted_violations():
    sch = toy_schematic()
    found = {(v.rule_id, v.binding) for v in verify(sch)}
    assert found == TOY_VIOLATIONS
    assert toy_mismatches()[0] == 0
    # fixing the three planted defects leaves a clean design
    sch.connect("U2", "ADDR", "GND")
    sch.disconnect("D1", "A")
    fix = sch.copy()
    from jaxlab.agents.toposcope import Component, Pin

    for r in ("R8", "R9"):
        fix.add_component(Component(r, "resistor", "res", {"1": Pin("1", "passive"), "2": Pin("2", "passive")}))
    fix.create_net("LED_A")
    for ref, net in ((("R8", "1"), "INT"), (("R8", "2"), "LED_A"), (("D1", "A"), "LED_A"), (("R9", "1"), "SCL"),
                     (("R9", "2"), "3V3")):
        fix.connect(*ref, net)
    assert verify(fix) == []


def test_forbidden_short_and_decap_are_found():
    sch = toy_schematic()
    sch.disconnect("C2", "1")  # no output capacitor any more: U1.VOUT and U2.VDD lose their decap
    sch.connect("C2", "1", "VIN")  # C2 now decouples VIN, which already had C1
    ids = sorted(v.rule_id for v in verify(sch))
    assert ids.count("R_decap_out") == 1 and ids.count("R_decap_in") == 1  # U1.VOUT (out) and U2.VDD (in)
    sch.disconnect("J1", "GND")
    sch.connect("J1", "GND", "VIN")  # ground pin on the net of the jack's power output
    assert [v.bound["n"] for v in verify(sch) if v.rule_id == "R_short"] == ["VIN"]


def test_matches_networkx_on_random_schematics():
    pytest.importorskip("networkx")
    from jaxlab.agents.toposcope.networkx_oracle import verify_networkx

    total = 0
    for seed in range(25):
        sch = random_schematic(seed, 4 + seed % 8)
        ours = {(v.rule_id, v.binding) for v in verify(sch)}
        assert ours == verify_networkx(sch), seed
        total += len(ours)
    assert total > 50


def test_dense_counts_equal_verify_under_jit_and_vmap():
    schs = [random_schematic(s, 3 + s % 10) for s in range(12)] + [toy_schematic()]
    ref = np.array([[sum(v.rule_id == r.id for v in verify(s)) for r in RULES] for s in schs])
    assert (ref.sum(0) > 0).all()  # every rule fires somewhere
    dense = [encode(s, 96, 16) for s in schs]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *dense)
    got = jax.jit(jax.vmap(rule_counts))(batch)
    np.testing.assert_array_equal(np.asarray(got), ref)
    np.testing.assert_array_equal(np.asarray(rule_counts(dense[-1])), ref[-1])
    with pytest.raises(ValueError, match="max_pins must be >="):
        encode(toy_schematic(), 8, 16)


def test_restricted_verification():
    sch = toy_schematic()
    assert {v.rule_id for v in verify(sch, restrict_to={"D1"})} == {"R_led_series"}
    assert verify(sch, restrict_to={"J1", "C1"}) == []


def test_rules_round_trip_through_json():
    again = rules_from_json(json.dumps([r.to_dict() for r in RULES]))
    assert again == list(RULES)
    sch = random_schematic(3, 10)
    assert verify(sch, again) == verify(sch, RULES)


def _rule(**over):
    d = RULES[0].to_dict()
    d.update(over)
    return d


@pytest.mark.parametrize(
    ("d", "match"),
    [
        (_rule(kind="sometimes"), "unknown rule kind 'sometimes'"),
        (_rule(anchor={"vars": {"p": {"kind": "pin", "role": ["pwr"]}}}), "unknown pin role 'pwr'"),
        (_rule(anchor={"vars": {"p": {"kind": "wire"}}}), "unknown kind 'wire'"),
        (_rule(anchor={"vars": {"p": {"kind": "pin", "colour": ["red"]}}}), "unknown predicate 'colour'"),
        (_rule(anchor={"vars": {"p": {"kind": "pin"}}, "edges": [["on", "p", "zz"]]}), "unknown variable 'zz'"),
        (_rule(anchor={"vars": {"p": {"kind": "pin"}, "u": {"kind": "comp"}}, "edges": [["on", "p", "u"]]}),
         "needs a pin and a net"),
        (_rule(anchor={"vars": {}}), "at least one variable"),
        ({"kind": "forbidden"}, "missing field 'id'"),
    ],
)
def test_bad_rules_raise(d, match):
    with pytest.raises(ValueError, match=match):
        Rule.from_dict(d)


def test_rules_referring_to_unknown_pins_raise():
    parts = load_parts()
    good = Rule("R_en", "forall_exists",
                Pattern({"u": {"kind": "comp", "part": ["ldo_3v3"]}, "p": {"kind": "pin", "name": ["EN"]}},
                        (("of", "p", "u"),)),
                Pattern({"n": {"kind": "net"}}, (("on", "p", "n"),)), "EN pin {p} floating")
    check_rules([good, *RULES], parts)
    bad = Rule("R_en", "forall_exists",
               Pattern({"u": {"kind": "comp", "part": ["ldo_3v3"]}, "p": {"kind": "pin", "name": ["ENABLE"]}},
                       (("of", "p", "u"),)),
               Pattern({}, ()), "x")
    with pytest.raises(ValueError, match="unknown pin 'ENABLE' of part 'ldo_3v3'"):
        check_rules([bad], parts)
    nopart = Rule("R_x", "forall_exists",
                  Pattern({"u": {"kind": "comp", "part": ["ldo_9v"]}, "p": {"kind": "pin", "name": ["EN"]}},
                          (("of", "p", "u"),)), Pattern({}, ()), "x")
    with pytest.raises(ValueError, match="unknown part 'ldo_9v'"):
        check_rules([nopart], parts)
    # the pin-name rule works: the toy's regulator EN is wired, a disconnected one is flagged
    sch = toy_schematic()
    assert verify(sch, [good]) == []
    sch.disconnect("U1", "EN")
    assert [v.message for v in verify(sch, [good])] == ["EN pin U1.EN floating"]


def test_assertions_on_toy():
    sch = toy_schematic()
    rep = evaluate_assertions(sch, [
        ("same_net", "U2.SDA", "J2.SDA"),  # true
        ("same_net", "U2.SDA", "U2.SCL"),  # false
        ("series_through", "U1.EN", "J1.VIN", "resistor"),  # R1 between EN and VIN
        ("series_through", "U2.INT", "D1.K", "led"),  # D1 between INT and GND
        ("series_through", "U2.SDA", "J2.SDA", "resistor"),  # same net: not through anything
        ("has_between", "SDA", "3V3", "resistor"),  # R2
        ("has_between", "SCL", "3V3", "resistor"),  # missing
        ("no_violation", "R_short"),
        ("no_violation", "R_pullup"),
        ("same_net", "U9.SDA", "U2.SDA"),  # absent pins evaluate to False
    ])
    assert rep.passed == (True, False, True, True, False, True, False, True, False, False)
    assert rep.pass_rate == pytest.approx(0.5) and not rep.all_passed


@pytest.mark.parametrize(
    ("a", "match"),
    [
        (("same_net", "U1.VIN", "U1.NOPE"), "nonexistent pin 'U1.NOPE'"),
        (("same_net", "U7.VIN", "U1.VIN"), "nonexistent pin 'U7.VIN'"),
        (("has_between", "VIN", "12V", "capacitor"), "nonexistent net '12V'"),
        (("no_violation", "R_magic"), "unknown rule 'R_magic'"),
        (("connected", "U1.VIN"), "unknown kind"),
        (("same_net", "U1.VIN"), "takes 2 arguments"),
    ],
)
def test_bad_assertions_raise(a, match):
    sch = toy_schematic()
    with pytest.raises(ValueError, match=match):
        check_assertions([a], sch.components, sch.nets)
