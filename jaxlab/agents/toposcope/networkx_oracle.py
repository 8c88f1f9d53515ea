"""A networkx implementation of TopoScope rule verification (the peer and correctness oracle).

The schematic becomes a graph with one node per component, pin and net (attributes: role / name, ctype / part,
ground / power) and edges pin-component and pin-net; each rule's anchor and ``anchor + body`` patterns become
small graphs, and ``networkx.algorithms.isomorphism.GraphMatcher(...).subgraph_monomorphisms_iter()`` enumerates
their injective matches. Violations: anchor matches (projected) that no full match extends (``forall_exists``)
or that some full match extends (``forbidden``). It shares only the rule library (what to check) with jaxlab's
matcher: graph construction, matching and the node predicates are its own. networkx is an optional dependency,
imported on first call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxlab.agents.toposcope.graph import Schematic
from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN
from jaxlab.agents.toposcope.rules import RULES, Pattern, Rule
from jaxlab.core.citations import cites

__all__ = ["schematic_graph", "verify_networkx"]


def schematic_graph(sch: Schematic):
    """The schematic as a ``networkx.Graph`` with ``kind`` and predicate attributes on every node."""
    import networkx as nx

    g = nx.Graph()
    ground, power = sch.ground_nets(), sch.power_nets()
    for n in sch.nets:
        g.add_node(("net", n), kind="net", value=n, ground=n in ground, power=n in power)
    for r, c in sch.components.items():
        g.add_node(("comp", r), kind="comp", value=r, ctype=c.ctype, part=c.part)
        for p, pin in c.pins.items():
            g.add_node(("pin", r, p), kind="pin", value=(r, p), role=pin.role, name=p)
            g.add_edge(("pin", r, p), ("comp", r))
    for n, members in sch.nets.items():
        for r, p in members:
            g.add_edge(("pin", r, p), ("net", n))
    return g


def _pattern_graph(pattern: Pattern):
    import networkx as nx

    g = nx.Graph()
    for v, spec in pattern.vars.items():
        g.add_node(v, kind=spec["kind"], spec=spec)
    for _, a, b in pattern.edges:
        g.add_edge(a, b)
    return g


def _satisfies(spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """A pattern variable's predicates on a host node, written here independently of the matcher's ``node_ok``:
    every key of the variable's predicate mapping is a constraint (``kind`` equal; ``not_role`` excluded roles;
    ``ground`` / ``power`` booleans; any other key a list of allowed values of that node attribute), so an unknown
    key fails loudly."""
    for key, want in spec.items():
        if key == "kind":
            ok = node["kind"] == want
        elif key == "not_role":
            ok = node["role"] not in want
        elif key in ("ground", "power"):
            ok = node[key] == bool(want)
        else:
            ok = node[key] in want
        if not ok:
            return False
    return True


def _matches(host, pattern: Pattern, anchor_vars: Sequence[str]) -> set[tuple[tuple[str, Any], ...]]:
    from networkx.algorithms.isomorphism import GraphMatcher

    def node_match(h, p):
        return _satisfies(p["spec"], h)

    gm = GraphMatcher(host, _pattern_graph(pattern), node_match=node_match)
    out = set()
    for mapping in gm.subgraph_monomorphisms_iter():
        inv = {v: host.nodes[h]["value"] for h, v in mapping.items()}
        out.add(tuple(sorted((v, inv[v]) for v in anchor_vars)))
    return out


@cites(PCBSCHEMAGEN)
def verify_networkx(sch: Schematic, rules: Sequence[Rule] = RULES) -> set[tuple[str, tuple[tuple[str, Any], ...]]]:
    """The violation set ``{(rule_id, binding)}`` computed with networkx subgraph monomorphism."""
    host = schematic_graph(sch)
    out = set()
    for rule in rules:
        anchors = _matches(host, rule.anchor, list(rule.anchor.vars))
        full = Pattern({**rule.anchor.vars, **rule.body.vars}, rule.anchor.edges + rule.body.edges)
        extended = _matches(host, full, list(rule.anchor.vars))
        bad = anchors - extended if rule.kind == "forall_exists" else anchors & extended
        out |= {(rule.id, b) for b in bad}
    return out
