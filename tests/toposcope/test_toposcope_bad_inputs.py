"""Issue-24 bad inputs of TopoScope: wrong types, a design without ``bom``, component types outside the rule
library's vocabulary; and the claims' independent verifier without networkx."""

import copy
import json

import pytest

from jaxlab.agents import toposcope as ts
from jaxlab.agents.toposcope import claims
from jaxlab.agents.toposcope.designs import DATA_PATH


@pytest.mark.parametrize("fn", [ts.verify, lambda s: ts.reach_sets(s, 1), ts.component_adjacency, ts.save_schematic,
                                lambda s: ts.scope(s, "U1"), lambda s: ts.encode(s, 8, 8),
                                lambda s: ts.evaluate_assertions(s, ())])
@pytest.mark.parametrize("bad", ["x", {"components": {}}, None])
def test_schematic_arguments_must_be_schematics(fn, bad):
    with pytest.raises(TypeError, match="sch must be a Schematic"):
        fn(bad)


def test_verify_string_names_the_argument_and_points_to_the_loader():
    with pytest.raises(TypeError, match=r"sch must be a Schematic, got str .*load_schematic"):
        ts.verify("x")


def test_verify_rejects_rules_that_are_not_rules():
    with pytest.raises(TypeError, match="rules must"):
        ts.verify(ts.toy_schematic(), "R_short")
    with pytest.raises(TypeError, match="rules must hold Rule objects"):
        ts.verify(ts.toy_schematic(), ["R_short"])


@pytest.mark.parametrize("key", ["bom", "nets"])
def test_design_without_required_key_names_it(key):
    d = copy.deepcopy(json.loads(DATA_PATH.read_text())["designs"][0])
    del d[key]
    with pytest.raises(ValueError, match=f"missing required key '{key}'"):
        ts.design_from_dict(d)


def test_design_that_is_not_an_object():
    with pytest.raises(TypeError, match="design must be a JSON object"):
        ts.design_from_dict(["bom"])


def test_benchmark_file_without_designs(tmp_path):
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"parts": {}}))
    with pytest.raises(ValueError, match="missing required key 'designs'"):
        ts.load_benchmark(p)


def test_unknown_component_type_is_rejected_with_the_known_types():
    """An ``ldo`` would escape every regulator rule (R_decap_in / R_decap_out name ``regulator``): rejected."""
    with pytest.raises(ValueError, match=r"unknown component type \(ctype\) 'ldo'.*'regulator'"):
        ts.Component("U9", "ldo", "x", {"VIN": ts.Pin("VIN", "power_in")})
    data = {"components": {"U9": {"ctype": "ldo", "part": "x", "pins": {"VIN": "power_in"}}}}
    with pytest.raises(ValueError, match=r"U9.*unknown component type"):
        ts.load_schematic(json.dumps(data))


def test_regulator_type_is_what_the_rules_check():
    """The same LDO declared ``regulator`` is seen by both decoupling rules (an undecoupled input and output)."""
    u = ts.Component("U9", "regulator", "x", {"VIN": ts.Pin("VIN", "power_in"), "VOUT": ts.Pin("VOUT", "power_out"),
                                               "GND": ts.Pin("GND", "ground")})
    j = ts.Component("J1", "connector", "j", {"V": ts.Pin("V", "power_out"), "G": ts.Pin("G", "ground")})
    sch = ts.Schematic({"U9": u, "J1": j}, {"VIN": {("U9", "VIN"), ("J1", "V")}, "GND": {("U9", "GND"), ("J1", "G")},
                                           "OUT": {("U9", "VOUT")}}, set())
    assert {v.rule_id for v in ts.verify(sch)} >= {"R_decap_in", "R_decap_out"}


def test_rule_with_unknown_component_type_is_rejected():
    d = ts.RULES[0].to_dict()
    d["anchor"]["vars"]["u"]["ctype"] = ["ldo"]
    with pytest.raises(ValueError, match="unknown component type 'ldo'"):
        ts.Rule.from_dict(d)


def test_independent_verifier_without_networkx(monkeypatch):
    """Without networkx the claim checks the matcher against the dense JAX counts (and still counts violations)."""
    monkeypatch.setattr(claims, "_oracle_violations", lambda: None)
    bad, counts = claims.networkx_mismatches(n=12)
    assert bad == 0 and counts.sum() > 0
