r"""TopoScope: topology-guided context scoping and pattern-based rule verification for PCB schematic design.

Paper: "TopoScope" (2026; training-free LLM agent for PCB schematic design; title, authors and arXiv id not
retrieved, abstract only). Closest prior work: Zou, Han, Nazerian, Huang, "PCBSchemaGen: Constraint-Guided
Schematic Design via LLM for Printed Circuit Boards", arXiv:2602.00510 (knowledge graph of datasheet pin roles,
subgraph-isomorphism verification). The paper's text was not located: everything here is a reconstruction from
its abstract and PCBSchemaGen, and the parts marked **[chosen]** in the submodules (rule syntax, scope
composition, noise model, benchmark designs) are this port's choices.

Math. Schematic graph: components ``C``, pins ``P`` with roles ``rho(p)``, nets ``N``, incidence
``E subset P x N`` (each pin on <= 1 net); rails ``R`` = ground nets + listed rails. Component graph ``H``:
``c ~ c'`` iff they share a non-rail net; dense ``A = [B B^T > 0] - I``, ``reach_k = ((I + A)^k > 0)``;
``Nbr_k(c) = {c' : reach_k[c, c']}``. A rule is ``(id, kind, anchor, body)``: ``forall_exists`` -- every anchor
match extends to a body match; ``forbidden`` -- no anchor match extends. The agent wires one component at a time
from ``scope(c)``, validates every action's references, verifies the rules on the decision's neighbourhood and
feeds violations back for up to ``R = 3`` repair rounds.

The code is split by idea; this package gathers the public API:

* :mod:`~jaxlab.agents.toposcope.graph`: :class:`Pin`, :class:`Component`, :class:`Schematic`,
  :class:`InvalidReference`, JSON load/save, :func:`component_adjacency`, :func:`k_hop_reach` (JAX);
* :mod:`~jaxlab.agents.toposcope.rules`: :class:`Rule`, :data:`RULES`, :func:`verify`, :class:`Violation`,
  :func:`evaluate_assertions`, the dense JAX kernel :func:`rule_counts`;
* :mod:`~jaxlab.agents.toposcope.agent`: :func:`scope`, :class:`ScopedContext`, :func:`rule_based_generator`,
  :func:`noisy_generator`, :func:`run_agent`;
* :mod:`~jaxlab.agents.toposcope.designs`: :class:`DesignSpec`, :func:`load_benchmark` (seven designs),
  :func:`toy_schematic`, :func:`random_schematic`;
* :mod:`~jaxlab.agents.toposcope.networkx_oracle` (not imported here; needs the optional networkx):
  :func:`~jaxlab.agents.toposcope.networkx_oracle.verify_networkx`, an independent verifier by subgraph
  monomorphism, used by the claims, tests and benchmark.

Symbolic / graph code is plain Python + NumPy; the numeric kernels (adjacency, k-hop reach, rule counting over
padded designs) are JAX, jit- and vmap-compatible.
"""

from __future__ import annotations

from jaxlab.agents.toposcope.agent import (
    PATTERN_LIBRARY,
    Action,
    AgentResult,
    Generator,
    PinView,
    ScopedContext,
    bfs_order,
    full_context,
    noisy_generator,
    rule_based_generator,
    run_agent,
    scope,
)
from jaxlab.agents.toposcope.designs import (
    DesignSpec,
    design_from_dict,
    load_benchmark,
    load_parts,
    random_schematic,
    toy_schematic,
)
from jaxlab.agents.toposcope.graph import (
    CTYPES,
    ROLES,
    Component,
    InvalidReference,
    Pin,
    Schematic,
    adjacency_from_incidence,
    check_schematic,
    component_adjacency,
    k_hop_reach,
    load_schematic,
    reach_sets,
    save_schematic,
)
from jaxlab.agents.toposcope.rules import (
    RULES,
    AssertionReport,
    DenseSchematic,
    Pattern,
    Rule,
    Violation,
    check_rules,
    encode,
    evaluate_assertions,
    rule_counts,
    rules_from_json,
    verify,
)

__all__ = [
    "CTYPES",
    "PATTERN_LIBRARY",
    "ROLES",
    "RULES",
    "Action",
    "AgentResult",
    "AssertionReport",
    "Component",
    "DenseSchematic",
    "DesignSpec",
    "Generator",
    "InvalidReference",
    "Pattern",
    "Pin",
    "PinView",
    "Rule",
    "Schematic",
    "ScopedContext",
    "Violation",
    "adjacency_from_incidence",
    "bfs_order",
    "check_rules",
    "check_schematic",
    "component_adjacency",
    "design_from_dict",
    "encode",
    "evaluate_assertions",
    "full_context",
    "k_hop_reach",
    "load_benchmark",
    "load_parts",
    "load_schematic",
    "noisy_generator",
    "random_schematic",
    "reach_sets",
    "rule_based_generator",
    "rule_counts",
    "rules_from_json",
    "run_agent",
    "save_schematic",
    "scope",
    "toy_schematic",
    "verify",
]
