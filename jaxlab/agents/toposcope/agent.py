r"""TopoScope's training-free agent loop: topology-guided context scoping, pluggable generators (a rule-based
reference and a noisy corruption of it), reference validation, and repair rounds driven by rule verification.

Scoped context for a decision on component ``c`` with radius ``k`` (the scope
composition is **[chosen]**, the paper's text was not retrieved)::

  Nbr_k(c) = {c' : d_H(c, c') <= k}                      (k-hop reach of the component graph, JAX)
  scope(c) = ( Nbr_k(c) + planned-but-unwired neighbours of c in Pi (+ the components named by the violations
               fed back in a repair round), their pins (role, note, current net),
               non-rail nets on those pins (with members), rail nets as labels only,
               rules whose anchor can bind in the scope, open violations touching the scope,
               the design's statements (intended nets) touching the scope )
  |scope(c)| = #components + #pins + #nets + #rails + #rules

Agent loop: order components by BFS over ``Pi`` from the power-entry components (a ``power_out`` pin and no
``power_in`` pin; ties by refdes); for each ``c``: ``actions = generator(scope(c), [])``; every action is
validated (unknown component / pin / net / part -> rejected and counted as an invalid reference; a pin already
on another net or a duplicate refdes -> rejected); apply; verify the rules on the decision's components
(``Nbr_k(c)`` already processed, plus the parts the decision added); on violations call
``generator(scope'(c), violations)``, at most ``max_repairs`` rounds. Finally verify globally and evaluate the
functional assertions. Generators are plain Python callables ``(ScopedContext, violations) -> [Action]``; an
LLM is any ``str -> str`` function wrapped by the user into one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from jaxlab.agents.toposcope.designs import DesignSpec
from jaxlab.agents.toposcope.graph import (
    Component,
    InvalidReference,
    Pin,
    PinRef,
    Schematic,
    check_schematic,
    reach_sets,
)
from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN, TOPOSCOPE
from jaxlab.agents.toposcope.rules import (
    IC_TYPES,
    RULES,
    AssertionReport,
    Rule,
    Violation,
    evaluate_assertions,
    node_ok,
    verify,
)
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_in_range, check_int

__all__ = [
    "PATTERN_LIBRARY",
    "Action",
    "AgentResult",
    "Generator",
    "PinView",
    "ScopedContext",
    "bfs_order",
    "full_context",
    "noisy_generator",
    "rule_based_generator",
    "run_agent",
    "scope",
]


class Action(NamedTuple):
    """One edit a generator proposes: ``connect(refdes.pin, net)``, ``disconnect(refdes.pin)``,
    ``create_net(net)`` or ``add_component(refdes, part)``; fields an operation does not use stay ``""``.

    Attributes:
      op: ``"connect"``, ``"disconnect"``, ``"create_net"`` or ``"add_component"`` (anything else is rejected as
        an invalid reference by :func:`run_agent`).
      refdes: the component (``connect``, ``disconnect``, ``add_component``).
      pin: the pin name (``connect``, ``disconnect``).
      net: the net name (``connect``, ``create_net``).
      part: the library part to place (``add_component``).
    """

    op: str
    refdes: str = ""
    pin: str = ""
    net: str = ""
    part: str = ""


class PinView(NamedTuple):
    """A pin as a :class:`ScopedContext` shows it.

    Attributes:
      role: the pin role ``rho(p)`` (one of :data:`~jaxlab.agents.toposcope.graph.ROLES`).
      note: the datasheet note (``""`` if none).
      net: the pin's current net, ``None`` when unconnected.
    """

    role: str
    note: str
    net: str | None


@dataclass(frozen=True)
class ScopedContext:
    """What a generator sees for one decision, ``scope(c)`` of the module docstring.

    ``size`` = ``|scope(c)|`` = #components + #pins + #nets + #rails + #rules.

    Attributes:
      center: the refdes ``c`` being decided.
      k: the scoping radius, ``None`` for the unscoped :func:`full_context`.
      neighbours: ``Nbr_k(c)`` plus the components named by the violations fed back (refdes).
      planned: neighbours of ``c`` in the plan graph ``Pi`` outside ``Nbr_k(c)``.
      components: the scoped components, ``refdes -> Component``.
      pins: ``(refdes, pin) -> PinView`` for every pin of the scoped components.
      nets: the non-rail nets on those pins, ``net -> ((refdes, pin), ...)`` (all members).
      rails: the rail nets on those pins (labels only, members not listed).
      rules: the rules whose anchor pin and component variables can all bind in the scope.
      violations: the fed-back violations that name a scoped component.
      intent: the intended nets with a member among the scoped components.
      ground: the ground net name.
      parts: the parts library available to ``add_component``.
      taken: every refdes of the schematic (so added parts get fresh names).
      existing_nets: every net name of the schematic.
    """

    center: str
    k: int | None
    neighbours: frozenset[str]
    planned: tuple[str, ...]
    components: Mapping[str, Component]
    pins: Mapping[PinRef, PinView]
    nets: Mapping[str, tuple[PinRef, ...]]
    rails: tuple[str, ...]
    rules: tuple[Rule, ...]
    violations: tuple[Violation, ...]
    intent: Mapping[str, tuple[PinRef, ...]] = field(default_factory=dict)
    ground: str = "GND"
    parts: Mapping[str, Component] = field(default_factory=dict)
    taken: frozenset[str] = frozenset()
    existing_nets: frozenset[str] = frozenset()

    @property
    def size(self) -> int:
        return len(self.components) + len(self.pins) + len(self.nets) + len(self.rails) + len(self.rules)


Generator = Callable[[ScopedContext, list[Violation]], list[Action]]


def _rule_applies(rule: Rule, comps: Mapping[str, Component]) -> bool:
    """Some scoped pin / component can bind each pin / component variable of the rule's anchor."""
    for spec in rule.anchor.vars.values():
        if spec["kind"] == "pin":
            ok = any(node_ok("pin", spec, {"role": p.role, "name": p.name}) for c in comps.values()
                     for p in c.pins.values())
        elif spec["kind"] == "comp":
            ok = any(node_ok("comp", spec, {"ctype": c.ctype, "part": c.part}) for c in comps.values())
        else:
            continue
        if not ok:
            return False
    return True


def _context(sch: Schematic, center: str, k: int | None, members: set[str], planned: Sequence[str],
             rules: Sequence[Rule], violations: Sequence[Violation], intent, ground, parts) -> ScopedContext:
    names = sorted(members | set(planned))
    comps = {r: sch.components[r] for r in names}
    net_of = {p: n for n, m in sch.nets.items() for p in m}
    pins = {(r, p): PinView(pin.role, pin.note, net_of.get((r, p))) for r in names for p, pin in comps[r].pins.items()}
    rails = sch.rail_nets()
    touched = {v.net for v in pins.values() if v.net is not None}
    nets = {n: tuple(sorted(sch.nets[n])) for n in sorted(touched - rails)}
    scoped = set(names)
    return ScopedContext(
        center=center, k=k, neighbours=frozenset(members), planned=tuple(planned), components=comps, pins=pins,
        nets=nets, rails=tuple(sorted(touched & rails)), rules=tuple(r for r in rules if _rule_applies(r, comps)),
        violations=tuple(v for v in violations if v.components() & scoped),
        intent={n: m for n, m in (intent or {}).items() if any(r in scoped for r, _ in m)},
        ground=ground, parts=parts or {}, taken=frozenset(sch.components), existing_nets=frozenset(sch.nets),
    )


def _plan_neighbours(plan, refdes: str) -> list[str]:
    return sorted({b if a == refdes else a for a, b in (plan or ()) if refdes in (a, b)} - {refdes})


@cites(TOPOSCOPE)
def scope(sch: Schematic, refdes: str, k: int = 1, plan: Sequence[tuple[str, str]] | None = None,
          rules: Sequence[Rule] = RULES, violations: Sequence[Violation] = (), *,
          intent: Mapping[str, Sequence[PinRef]] | None = None, ground: str = "GND",
          parts: Mapping[str, Component] | None = None) -> ScopedContext:
    """The scoped context ``scope(c)`` of a decision on component ``c = refdes`` (**[chosen]** composition).

    ``scope(c)`` holds ``Nbr_k(c)`` (:func:`~jaxlab.agents.toposcope.graph.reach_sets`), the planned-but-unwired
    neighbours of ``c`` in ``Pi`` and the components named by ``violations``; their pins (role, note, current
    net); the non-rail nets on those pins with their members; the rail nets as labels; the rules whose anchor
    can bind in the scope; the violations and intended nets touching the scope. Topology-guided scoping is
    reconstructed from the TopoScope abstract (the paper's text was not retrieved).

    Args:
      sch: the current :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      refdes: the component ``c`` being decided.
      k: scoping radius, an int ``>= 0`` (default 1).
      plan: the plan graph ``Pi`` as ``(refdes, refdes)`` pairs, or ``None``.
      rules: the rule library (default :data:`~jaxlab.agents.toposcope.rules.RULES`).
      violations: violations fed back in a repair round; the components they name join the scope.
      intent: intended nets ``net -> ((refdes, pin), ...)`` (e.g. ``DesignSpec.intent``), or ``None``.
      ground: the ground net name.
      parts: the parts library offered to the generator, or ``None``.

    Returns:
      The :class:`ScopedContext`.

    Raises:
      TypeError: ``sch`` is not a :class:`~jaxlab.agents.toposcope.graph.Schematic`, or ``k`` is not an int.
      ValueError: ``k < 0``.
      InvalidReference: ``refdes`` is not a component of ``sch``.

    Example:
      >>> from jaxlab.agents.toposcope import scope, toy_schematic
      >>> ctx = scope(toy_schematic(), "U2", k=1)
      >>> sorted(ctx.components), ctx.size
      (['D1', 'J2', 'R2', 'U2'], 28)
    """
    check_schematic(sch, "sch")
    check_int(k, "k", min_value=0)
    if refdes not in sch.components:
        raise InvalidReference(f"unknown component {refdes!r}")
    nbr = reach_sets(sch, k)[refdes]
    named = {r for v in violations for r in v.components() if r in sch.components}
    planned = [r for r in _plan_neighbours(plan, refdes) if r not in nbr and r in sch.components]
    return _context(sch, refdes, k, nbr | named, planned, rules, violations, intent, ground, parts)


@cites(TOPOSCOPE)
def full_context(sch: Schematic, refdes: str, rules: Sequence[Rule] = RULES, violations: Sequence[Violation] = (),
                 *, intent=None, ground: str = "GND", parts=None) -> ScopedContext:
    """The unscoped baseline: the whole design in the context (every component, pin, net, applicable rule and
    violation), with ``k = None``.

    Args:
      sch: the current :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      refdes: the component being decided (the context's ``center``).
      rules: the rule library (default :data:`~jaxlab.agents.toposcope.rules.RULES`).
      violations: violations fed back in a repair round.
      intent: intended nets ``net -> ((refdes, pin), ...)``, or ``None``.
      ground: the ground net name.
      parts: the parts library offered to the generator, or ``None``.

    Returns:
      The :class:`ScopedContext` of the whole design.

    Raises:
      TypeError: ``sch`` is not a :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      InvalidReference: ``refdes`` is not a component of ``sch``.
    """
    check_schematic(sch, "sch")
    if refdes not in sch.components:
        raise InvalidReference(f"unknown component {refdes!r}")
    return _context(sch, refdes, None, set(sch.components), (), rules, violations, intent, ground, parts)


# ---------------------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------------------

#: How the reference generator satisfies a rule by adding a part: rule id -> (part, name prefix, second pin goes
#: to the ground net or to a power rail). Decoupling capacitors are named ``CD_<refdes>_<pin>``, pull-ups
#: ``RPU_<net>``.
PATTERN_LIBRARY: dict[str, tuple[str, str, str]] = {
    "R_decap_in": ("cap", "CD", "ground"),
    "R_decap_out": ("cap", "CD", "ground"),
    "R_pullup": ("res", "RPU", "power"),
}


@cites(TOPOSCOPE, PCBSCHEMAGEN)
def rule_based_generator(pattern_library: Mapping[str, tuple[str, str, str]] = PATTERN_LIBRARY) -> Generator:
    """The deterministic reference generator (**[chosen]** stand-in for an LLM).

    Without feedback it wires the centre component: every pin of the centre and every member of the centre's
    non-rail intended nets is moved to its intended net (disconnect, create the net if missing, connect), and
    the parts that ``pattern_library`` demands are added (a decoupling capacitor per IC ``power_in`` and
    regulator ``power_out`` pin, a pull-up per I2C net). With feedback it does the same for the components that
    the violations name, and re-wires (or adds) the demanded part of each decap / pull-up violation.

    Args:
      pattern_library: ``rule id -> (part, name prefix, second-pin target)`` (default :data:`PATTERN_LIBRARY`):
        the part added to satisfy the rule; prefix ``"CD"`` marks decoupling rules, and the pull-up is used
        only when the library has ``"R_pullup"``.

    Returns:
      The generator, ``gen(ctx: ScopedContext, feedback: list[Violation]) -> list[Action]``.
    """
    lib = dict(pattern_library)
    decap_rules = {r for r, (_, pre, _) in lib.items() if pre == "CD"}

    def gen(ctx: ScopedContext, feedback: list[Violation]) -> list[Action]:
        want_of = {p: n for n, m in ctx.intent.items() for p in m}

        def pullup_rail(net: str) -> str | None:
            for (r, p), v in sorted(ctx.pins.items()):
                if v.role in ("i2c_sda", "i2c_scl") and want_of.get((r, p)) == net:
                    for q, pin in ctx.components[r].pins.items():
                        if pin.role == "power_in" and want_of.get((r, q)):
                            return want_of[(r, q)]
            return next((n for n in ctx.rails if n != ctx.ground), None)

        def want(ref: PinRef) -> str | None:
            r, p = ref
            if r.startswith("CD_"):
                _, owner, opin = r.split("_", 2)
                return want_of.get((owner, opin)) if p == "1" else ctx.ground
            if r.startswith("RPU_"):
                net = r.split("_", 1)[1]
                return net if p == "1" else pullup_rail(net)
            return want_of.get(ref)

        actions: list[Action] = []
        nets, taken = set(ctx.existing_nets), set(ctx.taken)
        current = {p: v.net for p, v in ctx.pins.items()}

        def place(ref: PinRef, net: str | None, known: bool = True) -> None:
            if known and current.get(ref) == net:
                return
            if not known or current.get(ref) is not None:
                actions.append(Action("disconnect", ref[0], ref[1]))
            if net is None:
                return
            if net not in nets:
                actions.append(Action("create_net", net=net))
                nets.add(net)
            actions.append(Action("connect", ref[0], ref[1], net))
            current[ref] = net

        def add_part(rule_id: str, name: str, rewire: bool) -> None:
            part, _, _ = lib[rule_id]
            exists = name in taken
            if exists and not rewire:
                return
            if not exists:
                actions.append(Action("add_component", name, part=part))
                taken.add(name)
            for pin in ("1", "2"):
                place((name, pin), want((name, pin)), known=False)

        targets = {ctx.center} if not feedback else {r for v in feedback for r in v.components()}
        targets &= set(ctx.components) | {r for r in targets if r.startswith(("CD_", "RPU_"))}
        pins = {(r, p) for r in targets if r in ctx.components for p in ctx.components[r].pins}
        pins |= {q for ref in list(pins) if (n := want_of.get(ref)) and n not in ctx.rails and n != ctx.ground
                 for q in ctx.intent.get(n, ()) if q in ctx.pins}
        for ref in sorted(pins):
            place(ref, want(ref))
        for r in sorted(targets):
            comp = ctx.components.get(r)
            if comp is None:
                continue
            for p, pin in comp.pins.items():
                net = want((r, p))
                if net is None:
                    continue
                is_decap = (comp.ctype in IC_TYPES and pin.role == "power_in") or (
                    comp.ctype == "regulator" and pin.role == "power_out")
                if is_decap and decap_rules:
                    add_part(sorted(decap_rules)[0], f"CD_{r}_{p}", rewire=False)
                if pin.role in ("i2c_sda", "i2c_scl") and "R_pullup" in lib:
                    add_part("R_pullup", f"RPU_{net}", rewire=False)
        for v in feedback:
            b = v.bound
            if v.rule_id in decap_rules and "u" in b:
                add_part(v.rule_id, f"CD_{b['p'][0]}_{b['p'][1]}", rewire=True)
            elif v.rule_id == "R_pullup" and "R_pullup" in lib and (net := want(b["p"])):
                add_part("R_pullup", f"RPU_{net}", rewire=True)
        return actions

    return gen


@cites(TOPOSCOPE)
def noisy_generator(base: Generator, eps: float, seed: int, *, size_ref: float | None = None) -> Generator:
    """``base`` corrupted with probability ``eps`` per action (**[chosen]** noise model, a stand-in for LLM
    errors):

    * ``add_component`` is dropped (a missing decap / pull-up; its connections are dropped too);
    * ``connect`` becomes, uniformly, a wrong pin (another pin of the same component), a wrong net (another net
      or rail of the context) or an invalid reference (a pin or net name that does not exist);
    * ``create_net`` and ``disconnect`` pass through.

    With ``size_ref`` the per-action error grows with the context size (a **[chosen]** stand-in for an LLM's
    long-context degradation): ``eps_eff = 1 - (1 - eps)^(|ctx| / size_ref)``. Stateful (one NumPy generator
    seeded by ``seed``), deterministic for a fixed call sequence.

    Args:
      base: the generator to corrupt (e.g. :func:`rule_based_generator`'s).
      eps: per-action corruption probability, in ``[0, 1]``.
      seed: int ``>= 0``, seed of the generator's NumPy random stream.
      size_ref: optional positive context size at which the error rate is ``eps``; ``None`` keeps ``eps`` fixed.

    Returns:
      The corrupted generator, ``gen(ctx, feedback) -> list[Action]``.

    Raises:
      ValueError: ``eps`` outside ``[0, 1]``, ``seed < 0`` or ``size_ref <= 0``.
      TypeError: ``seed`` is not an int.
    """
    check_in_range(eps, "eps", 0.0, 1.0)
    check_int(seed, "seed", min_value=0)
    if size_ref is not None and not size_ref > 0:
        raise ValueError(f"size_ref must be > 0, got {size_ref!r}")
    rng = np.random.default_rng(seed)

    def gen(ctx: ScopedContext, feedback: list[Violation]) -> list[Action]:
        e = eps if size_ref is None else 1.0 - (1.0 - eps) ** (ctx.size / size_ref)
        out: list[Action] = []
        dropped: set[str] = set()
        for a in base(ctx, feedback):
            if a.op == "add_component":
                if rng.random() < e:
                    dropped.add(a.refdes)
                else:
                    out.append(a)
                continue
            if a.refdes in dropped:
                continue
            if a.op != "connect" or rng.random() >= e:
                out.append(a)
                continue
            err = rng.integers(3)
            comp = ctx.components.get(a.refdes)
            others = [p for p in (comp.pins if comp else ()) if p != a.pin]
            nets = [n for n in (*ctx.nets, *ctx.rails) if n != a.net]
            if err == 0 and others:
                out.append(a._replace(pin=others[int(rng.integers(len(others)))]))
            elif err == 1 and nets:
                out.append(a._replace(net=nets[int(rng.integers(len(nets)))]))
            elif rng.random() < 0.5:
                out.append(a._replace(pin=a.pin + "?"))
            else:
                out.append(a._replace(net=a.net + "?"))
        return out

    return gen


# ---------------------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------------------


class AgentResult(NamedTuple):
    """Outcome of :func:`run_agent`; ``invalid_rate`` is ``n_invalid / n_actions`` (0 without actions).

    Attributes:
      schematic: the final :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      report: the :class:`~jaxlab.agents.toposcope.rules.AssertionReport` of the design's functional assertions.
      violations: the violations of a final global :func:`~jaxlab.agents.toposcope.rules.verify`.
      n_actions: actions proposed by the generator (all calls).
      n_invalid: actions rejected as invalid references (unknown component, pin, net, part or operation).
      n_rejected: actions rejected otherwise (pin already on another net, duplicate refdes or net).
      n_repairs: repair rounds run (generator calls with feedback that returned actions).
      context_sizes: ``|scope|`` of every generator call, in call order.
    """

    schematic: Schematic
    report: AssertionReport
    violations: tuple[Violation, ...]
    n_actions: int
    n_invalid: int
    n_rejected: int
    n_repairs: int
    context_sizes: tuple[int, ...]

    @property
    def invalid_rate(self) -> float:
        return self.n_invalid / self.n_actions if self.n_actions else 0.0


@cites(TOPOSCOPE)
def bfs_order(spec: DesignSpec) -> list[str]:
    """The agent's decision order: BFS over the plan graph ``Pi`` from the power-entry components.

    Power entries have a ``power_out`` pin and no ``power_in`` pin; BFS starts from them in refdes order, then
    from every component not yet reached (refdes order); neighbours are visited in refdes order.

    Args:
      spec: the :class:`~jaxlab.agents.toposcope.designs.DesignSpec` (``spec.bom`` and ``spec.plan`` are used).

    Returns:
      Every refdes of ``spec.bom`` once, in decision order.
    """
    adj: dict[str, set[str]] = {r: set() for r in spec.bom}
    for a, b in spec.plan:
        adj[a].add(b)
        adj[b].add(a)

    def is_entry(c: Component) -> bool:
        roles = {p.role for p in c.pins.values()}
        return "power_out" in roles and "power_in" not in roles

    order: list[str] = []
    seen: set[str] = set()
    starts = [r for r in sorted(spec.bom) if is_entry(spec.bom[r])] + sorted(spec.bom)
    for s in starts:
        if s in seen:
            continue
        seen.add(s)
        queue = deque([s])
        while queue:
            r = queue.popleft()
            order.append(r)
            for n in sorted(adj[r] - seen):
                seen.add(n)
                queue.append(n)
    return order


def _apply(sch: Schematic, a: Action, parts: Mapping[str, Component]) -> None:
    if a.op == "connect":
        sch.connect(a.refdes, a.pin, a.net)
    elif a.op == "disconnect":
        sch.disconnect(a.refdes, a.pin)
    elif a.op == "create_net":
        sch.create_net(a.net)
    elif a.op == "add_component":
        if a.part not in parts:
            raise InvalidReference(f"unknown part {a.part!r}")
        tpl = parts[a.part]
        pins = {p: Pin(p, q.role, q.note) for p, q in tpl.pins.items()}
        sch.add_component(Component(a.refdes, tpl.ctype, a.part, pins))
    else:
        raise InvalidReference(f"unknown action {a.op!r}")


@cites(TOPOSCOPE)
def run_agent(spec: DesignSpec, generator: Generator, *, k: int = 1, max_repairs: int = 3, use_scoping: bool = True,
              use_verification: bool = True, rules: Sequence[Rule] = RULES) -> AgentResult:
    """Run the TopoScope agent loop on a design (see the module docstring).

    "TopoScope: Topology-Guided Context Scoping and Pattern-Based Rule Verification for PCB Schematic
    Generation" (2026; title paraphrased from the abstract, authors and arXiv id not retrieved): the loop is
    reconstructed from its abstract (scoped component-level wiring decisions, rule verification as in-loop
    feedback) and from PCBSchemaGen (arXiv:2602.00510); the scope composition, the repair budget and the
    generators are **[chosen]**.

    Starting from the unwired BOM (nets: the rails and ground), for each component ``c`` in :func:`bfs_order`:
    call ``generator(scope(c), [])`` and apply its actions, rejecting invalid ones; then, up to ``max_repairs``
    times, verify the rules on the decision (``Nbr_k(c)`` among the processed components plus the parts added
    for ``c``) and, on violations, call ``generator(scope'(c), violations)``. Finally verify globally and
    evaluate the functional assertions.

    Args:
      spec: the design, a :class:`~jaxlab.agents.toposcope.designs.DesignSpec` (load one with
        :func:`~jaxlab.agents.toposcope.designs.load_benchmark` or ``design_from_dict``).
      generator: ``generator(ctx: ScopedContext, violations: list[Violation]) -> list[Action]`` (e.g.
        :func:`rule_based_generator`, :func:`noisy_generator`, or an LLM wrapped into this signature).
      k: scoping radius, an int ``>= 0``.
      max_repairs: repair rounds per component, an int ``>= 0``.
      use_scoping: ``False`` gives the generator the whole design each call (:func:`full_context`).
      use_verification: ``False`` is ``max_repairs = 0``.
      rules: the rule library (default :data:`~jaxlab.agents.toposcope.rules.RULES`).

    Returns:
      The :class:`AgentResult`.

    Raises:
      TypeError: the design is not a :class:`~jaxlab.agents.toposcope.designs.DesignSpec`, or ``k`` or
        ``max_repairs`` is not an int.
      ValueError: ``k < 0`` or ``max_repairs < 0``.

    Example:
      >>> from jaxlab.agents.toposcope import load_benchmark, noisy_generator, rule_based_generator, run_agent
      >>> design = load_benchmark()[0]
      >>> res = run_agent(design, noisy_generator(rule_based_generator(), eps=0.2, seed=0))
      >>> res.report.all_passed, len(res.violations), res.n_invalid
      (True, 0, 2)
    """
    if not isinstance(spec, DesignSpec):
        raise TypeError(f"spec must be a DesignSpec, got {type(spec).__name__}")
    check_int(k, "k", min_value=0)
    check_int(max_repairs, "max_repairs", min_value=0)
    sch = Schematic({r: Component(c.refdes, c.ctype, c.part, dict(c.pins)) for r, c in spec.bom.items()},
                    {n: set() for n in {*spec.rails, spec.ground}}, set(spec.rails))
    kw = {"intent": spec.intent, "ground": spec.ground, "parts": spec.parts}
    n_actions = n_invalid = n_rejected = n_repairs = 0
    sizes: list[int] = []
    processed: set[str] = set()

    def context(c: str, feedback: Sequence[Violation]) -> ScopedContext:
        if use_scoping:
            return scope(sch, c, k, spec.plan, rules, feedback, **kw)
        return full_context(sch, c, rules, feedback, **kw)

    def apply_all(actions: list[Action]) -> set[str]:
        nonlocal n_actions, n_invalid, n_rejected
        added = set()
        for a in actions:
            n_actions += 1
            try:
                _apply(sch, a, spec.parts)
            except InvalidReference:
                n_invalid += 1
            except ValueError:
                n_rejected += 1
            else:
                if a.op == "add_component":
                    added.add(a.refdes)
        return added

    for c in bfs_order(spec):
        processed.add(c)
        ctx = context(c, [])
        sizes.append(ctx.size)
        added = apply_all(generator(ctx, []))
        for _ in range(max_repairs if use_verification else 0):
            decision = (reach_sets(sch, k)[c] & processed) | added
            viol = verify(sch, rules, restrict_to=decision)
            if not viol:
                break
            ctx = context(c, viol)
            sizes.append(ctx.size)
            actions = generator(ctx, viol)
            if not actions:
                break
            n_repairs += 1
            added |= apply_all(actions)
    final = tuple(verify(sch, rules))
    return AgentResult(sch, evaluate_assertions(sch, spec.assertions, rules), final, n_actions, n_invalid,
                       n_rejected, n_repairs, tuple(sizes))
