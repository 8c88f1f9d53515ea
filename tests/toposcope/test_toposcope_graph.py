"""TopoScope schematic graph: pin-level references, JSON I/O and its errors, adjacency and k-hop reach (JAX)
against plain-Python BFS, under jit and vmap."""

import json
from collections import deque

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.agents.toposcope import (
    Component,
    InvalidReference,
    Pin,
    Schematic,
    component_adjacency,
    k_hop_reach,
    load_schematic,
    random_schematic,
    reach_sets,
    save_schematic,
    toy_schematic,
)


def _two_parts():
    u = Component("U1", "ic", "mcu", {"VDD": Pin("VDD", "power_in"), "GND": Pin("GND", "ground"),
                                      "PA0": Pin("PA0", "bidir")})
    r = Component("R1", "resistor", "res", {"1": Pin("1", "passive"), "2": Pin("2", "passive")})
    return Schematic({"U1": u, "R1": r}, {"N1": set(), "GND": set()}, set())


def test_connect_and_net_of():
    sch = _two_parts()
    sch.connect("U1", "PA0", "N1")
    sch.connect("R1", "1", "N1")
    assert sch.net_of("U1", "PA0") == "N1" and sch.net_of("R1", "2") is None
    assert sch.nets["N1"] == {("U1", "PA0"), ("R1", "1")}
    sch.disconnect("U1", "PA0")
    assert sch.net_of("U1", "PA0") is None and sch.nets["N1"] == {("R1", "1")}


@pytest.mark.parametrize(
    ("args", "match"),
    [(("U9", "PA0", "N1"), "unknown component 'U9'"), (("U1", "PA9", "N1"), "has no pin 'PA9'"),
     (("U1", "PA0", "N9"), "unknown net 'N9'")],
)
def test_invalid_references_raise(args, match):
    with pytest.raises(InvalidReference, match=match):
        _two_parts().connect(*args)


def test_pin_on_two_nets_duplicate_refdes_and_role_raise():
    sch = _two_parts()
    sch.connect("U1", "PA0", "N1")
    with pytest.raises(ValueError, match="already on net 'N1'"):
        sch.connect("U1", "PA0", "GND")
    with pytest.raises(ValueError, match="duplicate refdes 'U1'"):
        sch.add_component(Component("U1", "ic", "x", {}))
    with pytest.raises(ValueError, match="unknown pin role 'powr_in'"):
        Pin("VDD", "powr_in")
    with pytest.raises(ValueError, match="net 'N1' already exists"):
        sch.create_net("N1")


def test_json_round_trip(tmp_path):
    sch = toy_schematic()
    path = tmp_path / "toy.json"
    text = save_schematic(sch, path)
    back = load_schematic(path)
    assert back.to_dict() == sch.to_dict() == load_schematic(text).to_dict()
    assert back.nets["SDA"] == {("U2", "SDA"), ("J2", "SDA"), ("R2", "1")}
    assert back.components["U1"].pins["VOUT"].note.startswith("1 uF")


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["components"]["U2"].pop("pins"), "component 'U2': missing field 'pins'"),
        (lambda d: d["components"]["U2"]["pins"].update(SDA="i2c_data"), "component 'U2'.*unknown pin role"),
        (lambda d: d["components"]["U2"]["pins"].update(SDA=3), "component 'U2': pin 'SDA' must be"),
        (lambda d: d["nets"]["SDA"].append("U7.SDA"), "net 'SDA'.*unknown component 'U7'"),
        (lambda d: d["nets"]["SDA"].append("U2.SDX"), "net 'SDA'.*no pin 'SDX'"),
        (lambda d: d["nets"]["SDA"].append("U2INT"), "net 'SDA' member must look like"),
        (lambda d: d["nets"]["SCL"].append("U2.SDA"), "net 'S[CD][LA]': pin U2.SDA is already on net"),
        (lambda d: d["rails"].append("5V"), "rail '5V' is not a net"),
        (lambda d: d.pop("components"), "'components' object"),
        (lambda d: d["nets"].update(X="U2.SDA"), "net 'X': members must be a list"),
    ],
)
def test_malformed_json_names_component_or_net(edit, match):
    d = toy_schematic().to_dict()
    edit(d)
    with pytest.raises(ValueError, match=match):
        load_schematic(json.dumps(d))
    with pytest.raises(ValueError, match="not valid JSON"):
        load_schematic("{not json")


def _plain_adjacency(sch):
    names = sorted(sch.components)
    rails = sch.rail_nets()
    a = np.zeros((len(names), len(names)), dtype=bool)
    for n, members in sch.nets.items():
        if n in rails:
            continue
        comps = {r for r, _ in members}
        for x in comps:
            for y in comps:
                if x != y:
                    a[names.index(x), names.index(y)] = True
    return a


def _bfs_reach(a, k):
    n = len(a)
    out = np.zeros_like(a)
    for s in range(n):
        dist = {s: 0}
        q = deque([s])
        while q:
            u = q.popleft()
            for v in np.flatnonzero(a[u]):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        for v, d in dist.items():
            out[s, v] = d <= k
    return out


def test_adjacency_and_reach_match_plain_bfs():
    for seed in range(6):
        sch = random_schematic(seed, 10)
        adj, names = component_adjacency(sch)
        assert names == sorted(sch.components)
        np.testing.assert_array_equal(np.asarray(adj), _plain_adjacency(sch))
        for k in (0, 1, 2, 5):
            np.testing.assert_array_equal(np.asarray(k_hop_reach(adj, k)), _bfs_reach(np.asarray(adj), k))
        sets = reach_sets(sch, 2)
        ref = _bfs_reach(np.asarray(adj), 2)
        assert all(sets[r] == {names[j] for j in np.flatnonzero(ref[i])} for i, r in enumerate(names))


def test_rails_do_not_join_components():
    sch = toy_schematic()
    adj, names = component_adjacency(sch)
    # C1 and C2 sit only on VIN / 3V3 / GND rails: isolated in H
    for r in ("C1", "C2", "J1"):
        assert not np.asarray(adj)[names.index(r)].any()


def test_reach_jit_and_vmap_over_designs_and_k():
    mats, refs = [], []
    for seed in range(4):
        a = np.asarray(component_adjacency(random_schematic(seed, 9))[0])
        pad = np.zeros((12, 12), dtype=bool)
        pad[: len(a), : len(a)] = a
        mats.append(pad)
        refs.append(_bfs_reach(pad, 2))
    batch = jax.jit(jax.vmap(lambda a: k_hop_reach(a, 2)))(jnp.asarray(np.stack(mats)))
    np.testing.assert_array_equal(np.asarray(batch), np.stack(refs))
    over_k = jax.vmap(lambda k: k_hop_reach(jnp.asarray(mats[0]), k))(jnp.arange(4))
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(over_k[k]), _bfs_reach(mats[0], k))


def test_negative_k_and_bad_adjacency_raise():
    adj = jnp.zeros((3, 3), dtype=bool)
    with pytest.raises(ValueError, match="k must be >= 0"):
        k_hop_reach(adj, -1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        k_hop_reach(adj, jnp.asarray(-2))
    with pytest.raises(ValueError, match="adj must be square"):
        k_hop_reach(jnp.zeros((3, 4), dtype=bool), 1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        reach_sets(toy_schematic(), -1)
