"""A networkx implementation of TopoScope rule verification (the peer and correctness oracle).

The schematic becomes a graph with one node per component, pin and net (attributes: role / name, ctype / part,
ground / power) and edges pin-component and pin-net; each rule's anchor and ``anchor + body`` patterns become
small graphs, and ``networkx.algorithms.isomorphism.GraphMatcher(...).subgraph_monomorphisms_iter()`` enumerates
their injective matches. Violations: anchor matches (projected) that no full match extends (``forall_exists``)
or that some full match extends (``forbidden``). networkx is an optional dependency, imported on first call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxlab.agents.toposcope.graph import Schematic
from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN
from jaxlab.agents.toposcope.rules import RULES, Pattern, Rule, node_ok
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


def _matches(host, pattern: Pattern, anchor_vars: Sequence[str]) -> set[tuple[tuple[str, Any], ...]]:
    from networkx.algorithms.isomorphism import GraphMatcher

    def node_match(h, p):
        return h["kind"] == p["kind"] and node_ok(p["kind"], p["spec"], h)

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
