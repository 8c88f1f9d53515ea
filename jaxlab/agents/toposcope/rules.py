r"""TopoScope's pattern rules (datasheet constraints), their verification, functional assertions, and the dense
JAX counting of the built-in rules over padded designs.

A rule is ``(id, kind, anchor, body, message)`` (the rule syntax is
**[chosen]**: the paper's text was not retrieved, PCBSchemaGen's subgraph-isomorphism verification is the
model). A pattern declares typed variables (``pin``, ``comp``, ``net``) with predicates and edges
``("on", pin, net)`` (pin on net) and ``("of", pin, comp)`` (pin of component). Matches are injective within a
kind (subgraph monomorphism: two pin variables never bind the same pin). For every distinct anchor binding
``a``:

* ``forall_exists``: violation when no extension of ``a`` matches ``anchor + body``;
* ``forbidden``: violation when some extension matches ``anchor + body``.

Built-in library :data:`RULES` (one pattern each)::

  R_decap_in   for all IC/regulator pins p, rho(p) = power_in, on net n:  exists capacitor pins a != b,
               a on n, b on a ground net g != n
  R_decap_out  the same for regulator pins with rho = power_out
  R_floating   for all pins p with rho != nc:  exists net n and pin q != p, p and q on n
  R_led_series for all LEDs l:  exists pin of l on a net n holding a resistor pin
  R_pullup     for all pins p with rho in {i2c_sda, i2c_scl} on n:  exists resistor pins a != b, a on n,
               b on a power net m != n
  R_short      forbidden: a net n holding a ground pin and a power_out pin

Net predicates: ``ground`` (holds a ground-role pin) and ``power`` (holds a ``power_out`` pin or is a listed
rail, and is not ground). The matcher is plain Python (backtracking with candidates from bound neighbours);
:func:`rule_counts` is the JAX kernel: the six built-in rules as incidence algebra on a padded
:class:`DenseSchematic`, jit- and vmap-compatible over designs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents.toposcope.graph import CTYPES, ROLES, Schematic, check_schematic, parse_pin_ref
from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN, TOPOSCOPE
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool, Int

__all__ = [
    "ASSERTION_KINDS",
    "CTYPES",
    "IC_TYPES",
    "RULES",
    "RULE_KINDS",
    "AssertionReport",
    "DenseSchematic",
    "Pattern",
    "Rule",
    "Violation",
    "check_assertions",
    "check_rules",
    "encode",
    "evaluate_assertions",
    "match",
    "rule_counts",
    "rules_from_json",
    "verify",
]

RULE_KINDS = ("forall_exists", "forbidden")
VAR_KINDS = ("pin", "comp", "net")
IC_TYPES = ("ic", "regulator")
_PRED_KEYS = {"pin": {"role", "not_role", "name"}, "comp": {"ctype", "part"}, "net": {"ground", "power"}}


@dataclass(frozen=True)
class Pattern:
    """A graph pattern: typed variables with predicates, and edges between them (**[chosen]** rule syntax).

    Predicates: pins ``role`` / ``not_role`` (lists of roles), ``name`` (list of pin names); components
    ``ctype`` / ``part`` (lists); nets ``ground`` / ``power`` (booleans).

    Attributes:
      vars: ``variable name -> {"kind": "pin" | "comp" | "net", predicate: value, ...}``.
      edges: tuple of ``("on", pin_var, net_var)`` (pin on net) and ``("of", pin_var, comp_var)`` (pin of
        component).
    """

    vars: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    edges: tuple[tuple[str, str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"vars": {k: dict(v) for k, v in self.vars.items()}, "edges": [list(e) for e in self.edges]}


@dataclass(frozen=True)
class Rule:
    """A datasheet constraint ``(id, kind, anchor, body, message)``, checked by :func:`verify`.

    For every distinct anchor binding ``a``: ``forall_exists`` is violated when no extension of ``a`` matches
    ``anchor + body``; ``forbidden`` when some extension does.

    Attributes:
      id: rule identifier (``"R_decap_in"``, ...).
      kind: ``"forall_exists"`` or ``"forbidden"`` (:data:`RULE_KINDS`).
      anchor: the :class:`Pattern` quantified over (at least one variable).
      body: the :class:`Pattern` that must (or must not) extend the anchor; it may use the anchor's variables.
      message: violation message, formatted with the anchor binding (``{p}``, ``{n}``, ...).

    Raises:
      ValueError: an unknown ``kind``, variable kind, predicate, pin role or component type; a body variable
        that repeats an anchor variable; an empty anchor; an edge that is malformed, names an unknown variable or
        joins the wrong kinds.
    """

    id: str
    kind: str
    anchor: Pattern
    body: Pattern
    message: str

    def __post_init__(self) -> None:
        _check_rule(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rule:
        try:
            rid = d["id"]
            return cls(rid, d["kind"], _pattern(d.get("anchor", {})), _pattern(d.get("body", {})),
                       d.get("message", rid))
        except KeyError as e:
            raise ValueError(f"rule {d.get('id', '?')!r}: missing field {e.args[0]!r}") from None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "anchor": self.anchor.to_dict(), "body": self.body.to_dict(),
                "message": self.message}


def _pattern(d: Mapping[str, Any]) -> Pattern:
    return Pattern({k: dict(v) for k, v in d.get("vars", {}).items()},
                   tuple(tuple(e) for e in d.get("edges", ())))


def _check_rule(rule: Rule) -> None:
    where = f"rule {rule.id!r}"
    if rule.kind not in RULE_KINDS:
        raise ValueError(f"{where}: unknown rule kind {rule.kind!r}; expected one of {RULE_KINDS}")
    both = {**rule.anchor.vars}
    for name, spec in rule.body.vars.items():
        if name in both:
            raise ValueError(f"{where}: body variable {name!r} is already an anchor variable")
        both[name] = spec
    if not rule.anchor.vars:
        raise ValueError(f"{where}: the anchor pattern needs at least one variable")
    for name, spec in both.items():
        kind = spec.get("kind")
        if kind not in VAR_KINDS:
            raise ValueError(f"{where}: variable {name!r} has unknown kind {kind!r}; expected one of {VAR_KINDS}")
        extra = set(spec) - {"kind"} - _PRED_KEYS[kind]
        if extra:
            raise ValueError(f"{where}: variable {name!r} ({kind}) has unknown predicate {sorted(extra)[0]!r}")
        for key in ("role", "not_role"):
            bad = [r for r in spec.get(key, ()) if r not in ROLES]
            if bad:
                raise ValueError(f"{where}: variable {name!r} uses unknown pin role {bad[0]!r}")
        bad = [t for t in spec.get("ctype", ()) if t not in CTYPES]
        if bad:
            raise ValueError(f"{where}: variable {name!r} uses unknown component type {bad[0]!r}; known types: "
                             f"{list(CTYPES)}")
    for pat, scope in ((rule.anchor, rule.anchor.vars), (rule.body, both)):
        for e in pat.edges:
            if len(e) != 3 or e[0] not in ("on", "of"):
                raise ValueError(f"{where}: edge {e!r} must be ('on', pin, net) or ('of', pin, comp)")
            rel, a, b = e
            for v in (a, b):
                if v not in scope:
                    raise ValueError(f"{where}: edge {e!r} refers to unknown variable {v!r}")
            want = ("pin", "net") if rel == "on" else ("pin", "comp")
            if (scope[a]["kind"], scope[b]["kind"]) != want:
                raise ValueError(f"{where}: edge {e!r} needs a {want[0]} and a {want[1]} variable")


@cites(TOPOSCOPE)
def check_rules(rules: Sequence[Rule], parts: Mapping[str, Any]) -> None:
    """Check rules against a parts library: a pin-name predicate on a pin of a component variable restricted to
    named parts must name pins those parts have, and those parts must exist.

    Args:
      rules: the :class:`Rule` objects to check.
      parts: parts library, ``part name -> Component`` or ``part name -> {"pins": ...}``.

    Raises:
      ValueError: a rule names an unknown part, or a pin the part does not have (both named).
    """
    for rule in rules:
        for pat in (rule.anchor, rule.body):
            for name, spec in pat.vars.items():
                if spec["kind"] != "pin" or "name" not in spec:
                    continue
                comps = [b for rel, a, b in (*rule.anchor.edges, *rule.body.edges) if rel == "of" and a == name]
                named = [p for c in comps for p in {**rule.anchor.vars, **rule.body.vars}[c].get("part", ())]
                for part in named:
                    if part not in parts:
                        raise ValueError(f"rule {rule.id!r}: unknown part {part!r}")
                    pins = parts[part].pins if hasattr(parts[part], "pins") else parts[part]["pins"]
                    bad = [p for p in spec["name"] if p not in pins]
                    if bad:
                        raise ValueError(f"rule {rule.id!r}: variable {name!r} refers to unknown pin {bad[0]!r} of "
                                         f"part {part!r}; pins: {sorted(pins)}")


def rules_from_json(text: str) -> list[Rule]:
    """Rules from a JSON list of rule objects (the format of :meth:`Rule.to_dict`).

    Args:
      text: JSON text, a list of objects with ``id``, ``kind``, ``anchor``, ``body`` and optional ``message``.

    Returns:
      The validated :class:`Rule` objects, in order.

    Raises:
      ValueError: invalid JSON (``json.JSONDecodeError``), a top level that is not a list, a missing field, or an
        invalid rule (see :class:`Rule`).
    """
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("rules JSON must be a list of rule objects")
    return [Rule.from_dict(d) for d in data]


def _rule(rid, kind, anchor_vars, anchor_edges, body_vars, body_edges, message) -> Rule:
    return Rule(rid, kind, Pattern(anchor_vars, tuple(anchor_edges)), Pattern(body_vars, tuple(body_edges)), message)


def _decap(rid: str, ctypes: Sequence[str], role: str) -> Rule:
    return _rule(
        rid, "forall_exists",
        {"u": {"kind": "comp", "ctype": list(ctypes)}, "p": {"kind": "pin", "role": [role]}, "n": {"kind": "net"}},
        [("of", "p", "u"), ("on", "p", "n")],
        {"c": {"kind": "comp", "ctype": ["capacitor"]}, "a": {"kind": "pin"}, "b": {"kind": "pin"},
         "g": {"kind": "net", "ground": True}},
        [("of", "a", "c"), ("of", "b", "c"), ("on", "a", "n"), ("on", "b", "g")],
        f"{role} pin {{p}} on net {{n}} has no decoupling capacitor to ground",
    )


#: The built-in datasheet rule library.
RULES: tuple[Rule, ...] = (
    _decap("R_decap_in", IC_TYPES, "power_in"),
    _decap("R_decap_out", ("regulator",), "power_out"),
    _rule("R_floating", "forall_exists", {"p": {"kind": "pin", "not_role": ["nc"]}}, [],
          {"n": {"kind": "net"}, "q": {"kind": "pin"}}, [("on", "p", "n"), ("on", "q", "n")],
          "pin {p} is floating (not on a net with another pin)"),
    _rule("R_led_series", "forall_exists", {"l": {"kind": "comp", "ctype": ["led"]}}, [],
          {"a": {"kind": "pin"}, "n": {"kind": "net"}, "r": {"kind": "comp", "ctype": ["resistor"]},
           "b": {"kind": "pin"}},
          [("of", "a", "l"), ("on", "a", "n"), ("of", "b", "r"), ("on", "b", "n")],
          "LED {l} has no series resistor on its anode or cathode net"),
    _rule("R_pullup", "forall_exists",
          {"p": {"kind": "pin", "role": ["i2c_sda", "i2c_scl"]}, "n": {"kind": "net"}}, [("on", "p", "n")],
          {"r": {"kind": "comp", "ctype": ["resistor"]}, "a": {"kind": "pin"}, "b": {"kind": "pin"},
           "m": {"kind": "net", "power": True}},
          [("of", "a", "r"), ("of", "b", "r"), ("on", "a", "n"), ("on", "b", "m")],
          "I2C pin {p} on net {n} has no pull-up resistor to a power net"),
    _rule("R_short", "forbidden", {"n": {"kind": "net"}}, [],
          {"g": {"kind": "pin", "role": ["ground"]}, "q": {"kind": "pin", "role": ["power_out"]}},
          [("on", "g", "n"), ("on", "q", "n")],
          "net {n} shorts a ground pin to a power output"),
)


class Violation(NamedTuple):
    """A rule violation found by :func:`verify`.

    Attributes:
      rule_id: the violated rule's ``id``.
      binding: the anchor binding as sorted ``(variable, value)`` pairs; a value is a pin ``(refdes, pin)``, a
        refdes or a net name.
      message: the rule's message formatted with the binding.
      owners: the components the binding names (refdes of bound pins and bound component variables).
    """

    rule_id: str
    binding: tuple[tuple[str, Any], ...]
    message: str
    owners: frozenset[str] = frozenset()

    @property
    def bound(self) -> dict[str, Any]:
        return dict(self.binding)

    def components(self) -> set[str]:
        """Components the binding names (the refdes of bound pins and the bound component variables)."""
        return set(self.owners)


# ---------------------------------------------------------------------------------------------------------
# Matching (plain Python)
# ---------------------------------------------------------------------------------------------------------


class _Index:
    """Per-call lookup tables of a schematic (pins of a component, members of a net, net predicates)."""

    def __init__(self, sch: Schematic):
        self.sch = sch
        self.pins = sch.all_pins()
        self.comps = sorted(sch.components)
        self.nets = sorted(sch.nets)
        self.members = {n: sorted(m) for n, m in sch.nets.items()}
        self.net_of = {p: n for n, m in sch.nets.items() for p in m}
        self.ground = sch.ground_nets()
        self.power = sch.power_nets()

    def ok(self, kind: str, spec: Mapping[str, Any], value: Any) -> bool:
        return node_ok(kind, spec, self.attrs(kind, value))

    def attrs(self, kind: str, value: Any) -> dict[str, Any]:
        sch = self.sch
        if kind == "pin":
            pin = sch.components[value[0]].pins[value[1]]
            return {"role": pin.role, "name": pin.name}
        if kind == "comp":
            c = sch.components[value]
            return {"ctype": c.ctype, "part": c.part}
        return {"ground": value in self.ground, "power": value in self.power}


def node_ok(kind: str, spec: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    """Whether a graph element with attributes ``attrs`` satisfies a pattern variable's predicates."""
    if kind == "pin":
        return (("role" not in spec or attrs["role"] in spec["role"])
                and attrs["role"] not in spec.get("not_role", ())
                and ("name" not in spec or attrs["name"] in spec["name"]))
    if kind == "comp":
        return ("ctype" not in spec or attrs["ctype"] in spec["ctype"]) and (
            "part" not in spec or attrs["part"] in spec["part"])
    return all(bool(attrs[key]) == bool(spec[key]) for key in ("ground", "power") if key in spec)


def _candidates(idx: _Index, var: str, kind: str, edges, binding) -> Iterable[Any]:
    for rel, a, b in edges:
        if a == var and b in binding:
            if rel == "on":
                return idx.members.get(binding[b], ())
            return [(binding[b], p) for p in idx.sch.components[binding[b]].pins]
        if b == var and a in binding:
            if rel == "on":
                n = idx.net_of.get(binding[a])
                return () if n is None else (n,)
            return (binding[a][0],)
    return {"pin": idx.pins, "comp": idx.comps, "net": idx.nets}[kind]


def _holds(idx: _Index, rel: str, a: Any, b: Any) -> bool:
    return idx.net_of.get(a) == b if rel == "on" else a[0] == b


def _search(idx: _Index, order, specs, edges, binding) -> Iterator[dict[str, Any]]:
    if not order:
        yield dict(binding)
        return
    var, rest = order[0], order[1:]
    kind = specs[var]["kind"]
    used = {binding[v] for v in binding if specs[v]["kind"] == kind}
    mine = [e for e in edges if var in e[1:]]
    for cand in _candidates(idx, var, kind, mine, binding):
        if cand in used or not idx.ok(kind, specs[var], cand):
            continue
        binding[var] = cand
        if all(_holds(idx, rel, binding[a], binding[b]) for rel, a, b in mine if a in binding and b in binding):
            yield from _search(idx, rest, specs, edges, binding)
        del binding[var]


def match(sch: Schematic, pattern: Pattern, binding: Mapping[str, Any] | None = None,
          *, _index: _Index | None = None, _specs=None) -> Iterator[dict[str, Any]]:
    """All injective matches of ``pattern`` in ``sch`` extending ``binding`` (variables -> elements)."""
    idx = _index or _Index(sch)
    specs = _specs or pattern.vars
    b = dict(binding or {})
    order = [v for v in pattern.vars if v not in b]
    return _search(idx, order, specs, pattern.edges, b)


def _touches(idx: _Index, binding: Mapping[str, Any], specs, comps: set[str]) -> bool:
    """An anchor binding touches ``comps`` through its pins and components; through its nets only when it binds
    no pin or component (so a rail does not pull every component on it into a decision)."""
    owners = {v[0] if specs[k]["kind"] == "pin" else v for k, v in binding.items() if specs[k]["kind"] != "net"}
    if owners:
        return bool(owners & comps)
    return any(r in comps for k, v in binding.items() for r, _ in idx.members.get(v, ()))


def _fmt(v: Any) -> str:
    return f"{v[0]}.{v[1]}" if isinstance(v, tuple) else str(v)


def _check_rule_list(rules: Any, name: str = "rules") -> tuple[Rule, ...]:
    if isinstance(rules, (str, Rule)) or not isinstance(rules, Iterable):
        raise TypeError(f"{name} must be a sequence of Rule objects, got {type(rules).__name__}")
    rules = tuple(rules)
    bad = [r for r in rules if not isinstance(r, Rule)]
    if bad:
        raise TypeError(f"{name} must hold Rule objects, got {type(bad[0]).__name__}")
    return rules


@cites(TOPOSCOPE, PCBSCHEMAGEN)
def verify(sch: Schematic, rules: Sequence[Rule] = RULES, restrict_to: Iterable[str] | None = None) -> list[Violation]:
    """Verify pattern rules on a schematic by injective subgraph matching (plain-Python backtracking).

    For each rule and each distinct anchor match ``a`` (variables bound injectively within a kind):
    ``forall_exists`` reports ``a`` when no extension matches ``anchor + body``; ``forbidden`` when one does.
    This is the subgraph-isomorphism verification of PCBSchemaGen (Zou, Han, Nazerian, Huang, "PCBSchemaGen:
    Constraint-Guided Schematic Design via LLM for Printed Circuit Boards", arXiv:2602.00510), in the
    **[chosen]** rule syntax reconstructed from the TopoScope abstract.

    Args:
      sch: the :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      rules: the :class:`Rule` objects to check (default :data:`RULES`).
      restrict_to: optional refdes; only anchor bindings touching those components are checked (a bound pin or
        component among them; for net-only anchors, a bound net holding one of their pins). Bodies are always
        matched on the whole design.

    Returns:
      The :class:`Violation` list, sorted by rule order, then binding.

    Raises:
      TypeError: ``sch`` is not a :class:`~jaxlab.agents.toposcope.graph.Schematic` or ``rules`` holds something
        other than :class:`Rule` objects.

    Example:
      >>> from jaxlab.agents.toposcope import toy_schematic, verify
      >>> [v.message for v in verify(toy_schematic())]
      ['pin U2.ADDR is floating (not on a net with another pin)',
       'LED D1 has no series resistor on its anode or cathode net',
       'I2C pin U2.SCL on net SCL has no pull-up resistor to a power net']
    """
    check_schematic(sch, "sch")
    rules = _check_rule_list(rules)
    idx = _Index(sch)
    comps = None if restrict_to is None else set(restrict_to)
    out: list[Violation] = []
    for rule in rules:
        specs = {**rule.anchor.vars, **rule.body.vars}
        full = Pattern(specs, rule.anchor.edges + rule.body.edges)
        seen = set()
        found = []
        for a in match(sch, rule.anchor, _index=idx):
            key = tuple(sorted(a.items()))
            if key in seen or (comps is not None and not _touches(idx, a, specs, comps)):
                continue
            seen.add(key)
            exists = next(match(sch, full, a, _index=idx, _specs=specs), None) is not None
            if exists == (rule.kind == "forbidden"):
                owners = frozenset(v[0] if specs[k]["kind"] == "pin" else v for k, v in a.items()
                                   if specs[k]["kind"] != "net")
                found.append(Violation(rule.id, key, rule.message.format(**{k: _fmt(v) for k, v in a.items()}),
                                       owners))
        out.extend(sorted(found))
    return out


# ---------------------------------------------------------------------------------------------------------
# Functional assertions
# ---------------------------------------------------------------------------------------------------------

ASSERTION_KINDS = {"same_net": 2, "series_through": 3, "has_between": 3, "no_violation": 1}


class AssertionReport(NamedTuple):
    """Outcome of :func:`evaluate_assertions`; ``pass_rate`` is the fraction passed (1 with no assertions) and
    ``all_passed`` whether the design passes.

    Attributes:
      assertions: the evaluated assertions, as tuples.
      passed: one bool per assertion.
    """

    assertions: tuple[tuple[Any, ...], ...]
    passed: tuple[bool, ...]

    @property
    def pass_rate(self) -> float:
        return float(np.mean(self.passed)) if self.passed else 1.0

    @property
    def all_passed(self) -> bool:
        return all(self.passed)


def check_assertions(assertions: Sequence[Sequence[Any]], components: Mapping[str, Any], nets: Iterable[str],
                     rules: Sequence[Rule] = RULES) -> list[tuple[Any, ...]]:
    """Validate assertions against a BOM (``refdes -> Component``), the known net names and the rule ids:
    unknown kinds, wrong arity, unknown pins, nets or rules raise ``ValueError``. Returns them as tuples."""
    nets = set(nets)
    rule_ids = {r.id for r in rules}
    out = []
    for a in assertions:
        a = tuple(a)
        if not a or a[0] not in ASSERTION_KINDS:
            raise ValueError(f"assertion {a!r}: unknown kind; expected one of {sorted(ASSERTION_KINDS)}")
        if len(a) - 1 != ASSERTION_KINDS[a[0]]:
            raise ValueError(f"assertion {a!r}: {a[0]} takes {ASSERTION_KINDS[a[0]]} arguments")
        pins = a[1:3] if a[0] in ("same_net", "series_through") else ()
        for ref in pins:
            r, p = parse_pin_ref(ref, f"assertion {a[0]} pin")
            if r not in components or p not in components[r].pins:
                raise ValueError(f"assertion {a!r} names nonexistent pin {ref!r}")
        if a[0] == "has_between":
            for n in a[1:3]:
                if n not in nets:
                    raise ValueError(f"assertion {a!r} names nonexistent net {n!r}")
        if a[0] == "no_violation" and a[1] not in rule_ids:
            raise ValueError(f"assertion {a!r} names unknown rule {a[1]!r}")
        out.append(a)
    return out


def _bridges(sch: Schematic, na: str | None, nb: str | None, ctype: str) -> bool:
    """Some component of ``ctype`` has one pin on ``na`` and another on ``nb`` (``na != nb``)."""
    if na is None or nb is None or na == nb:
        return False
    for c in sch.components.values():
        if c.ctype != ctype:
            continue
        nets = [sch.net_of(c.refdes, p) for p in c.pins]
        if any(x == na for x in nets) and any(x == nb for x in nets):
            return True
    return False


@cites(TOPOSCOPE)
def evaluate_assertions(sch: Schematic, assertions: Sequence[Sequence[Any]],
                        rules: Sequence[Rule] = RULES) -> AssertionReport:
    """Evaluate functional assertions on the final graph (**[chosen]** assertion vocabulary):

    * ``("same_net", p1, p2)``: both pins on one net;
    * ``("series_through", p1, p2, type)``: ``p1``, ``p2`` on different nets joined by a component of ``type``;
    * ``("has_between", net_a, rail, type)``: a component of ``type`` with pins on ``net_a`` and on ``rail``;
    * ``("no_violation", rule_id)``: :func:`verify` finds no violation of that rule.

    Assertions naming pins, components or nets absent from ``sch`` evaluate to ``False``. The assertions are
    expected to be validated already (:func:`~jaxlab.agents.toposcope.designs.design_from_dict` does it).

    Args:
      sch: the :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      assertions: sequence of assertion tuples as above (pins written ``"REFDES.PIN"``).
      rules: the rules that ``no_violation`` assertions name (default :data:`RULES`).

    Returns:
      The :class:`AssertionReport`.

    Raises:
      TypeError: ``sch`` is not a :class:`~jaxlab.agents.toposcope.graph.Schematic`.
    """
    check_schematic(sch, "sch")
    rules_by_id = {r.id: r for r in rules}
    passed = []
    for a in assertions:
        kind = a[0]
        if kind == "no_violation":
            passed.append(not verify(sch, [rules_by_id[a[1]]]))
            continue
        if kind == "has_between":
            passed.append(_bridges(sch, a[1] if a[1] in sch.nets else None, a[2] if a[2] in sch.nets else None,
                                   a[3]))
            continue
        try:
            n1, n2 = (sch.net_of(*parse_pin_ref(x)) for x in a[1:3])
        except ValueError:
            passed.append(False)
            continue
        if kind == "same_net":
            passed.append(n1 is not None and n1 == n2)
        else:
            passed.append(_bridges(sch, n1, n2, a[3]))
    return AssertionReport(tuple(tuple(a) for a in assertions), tuple(passed))


# ---------------------------------------------------------------------------------------------------------
# Dense JAX counting of the built-in rules
# ---------------------------------------------------------------------------------------------------------

_ROLE_IDS = {r: i for i, r in enumerate(sorted(ROLES))}
_CTYPE_IDS = {t: i for i, t in enumerate(CTYPES)}


class DenseSchematic(NamedTuple):
    """A schematic padded to ``P`` pins and ``N`` nets, the input of :func:`rule_counts` (built by :func:`encode`).

    Pins are in :meth:`~jaxlab.agents.toposcope.graph.Schematic.all_pins` order, components and nets in sorted
    order; padding pins have ``pin_mask`` false.

    Attributes:
      pin_comp: ``(P,)`` int32 component index of each pin.
      pin_role: ``(P,)`` int32 role id (index in the sorted :data:`~jaxlab.agents.toposcope.graph.ROLES`).
      pin_ctype: ``(P,)`` int32 component-type id (index in :data:`~jaxlab.agents.toposcope.graph.CTYPES`).
      pin_net: ``(P,)`` int32 net index, ``-1`` for an unconnected pin.
      pin_mask: ``(P,)`` bool, true for real pins.
      net_listed: ``(N,)`` bool, true for the listed rails.
    """

    pin_comp: Int[Array, " P"]
    pin_role: Int[Array, " P"]
    pin_ctype: Int[Array, " P"]
    pin_net: Int[Array, " P"]
    pin_mask: Bool[Array, " P"]
    net_listed: Bool[Array, " N"]


@cites(TOPOSCOPE)
def encode(sch: Schematic, max_pins: int, max_nets: int) -> DenseSchematic:
    """Encode ``sch`` as a :class:`DenseSchematic` padded to ``max_pins`` pins and ``max_nets`` nets (NumPy).

    Designs padded to one size stack into a batch for ``jax.vmap(rule_counts)``.

    Args:
      sch: the :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      max_pins: ``P``, at least the schematic's number of pins.
      max_nets: ``N``, at least the schematic's number of nets.

    Returns:
      The :class:`DenseSchematic` (JAX arrays).

    Raises:
      TypeError: ``sch`` is not a :class:`~jaxlab.agents.toposcope.graph.Schematic`.
      ValueError: the schematic has more pins than ``max_pins`` or more nets than ``max_nets``.
    """
    check_schematic(sch, "sch")
    pins = sch.all_pins()
    nets = sorted(sch.nets)
    if len(pins) > max_pins:
        raise ValueError(f"max_pins must be >= the schematic's {len(pins)} pins, got {max_pins}")
    if len(nets) > max_nets:
        raise ValueError(f"max_nets must be >= the schematic's {len(nets)} nets, got {max_nets}")
    comp_id = {r: i for i, r in enumerate(sorted(sch.components))}
    net_id = {n: i for i, n in enumerate(nets)}
    arr = np.zeros((4, max_pins), dtype=np.int32)
    arr[3] = -1
    for i, (r, p) in enumerate(pins):
        c = sch.components[r]
        n = sch.net_of(r, p)
        arr[:, i] = (comp_id[r], _ROLE_IDS[c.pins[p].role], _CTYPE_IDS[c.ctype],
                     -1 if n is None else net_id[n])
    mask = np.arange(max_pins) < len(pins)
    listed = np.array([i < len(nets) and nets[i] in sch.rails for i in range(max_nets)])
    return DenseSchematic(*(jnp.asarray(a) for a in arr), jnp.asarray(mask), jnp.asarray(listed))


@cites(TOPOSCOPE, PCBSCHEMAGEN)
def rule_counts(d: DenseSchematic) -> Int[Array, " 6"]:
    """Violation counts of the six built-in rules, in :data:`RULES` order, as incidence algebra (jit, vmap).

    With ``X[p, n] = [p on n]``, ``G[n]`` ground nets, ``W[n]`` power nets and the pair matrix
    ``M^t[a, b] = [a != b, same component of type t]``, a capacitor covers net ``n`` when
    ``sum_{a,b} X[a,n] M^cap[a,b] G[net b] (1 - X[b,n]) > 0`` (same for resistors with ``W``). Equals
    ``[count of verify(sch, [rule]) for rule in RULES]`` on the unpadded schematic (the rule counts of
    PCBSchemaGen-style verification, arXiv:2602.00510, for the **[chosen]** built-in library).

    Args:
      d: the :class:`DenseSchematic` (from :func:`encode`); ``jax.vmap`` maps it over stacked designs padded
        to one size.

    Returns:
      ``(6,)`` int32 counts: ``R_decap_in``, ``R_decap_out``, ``R_floating``, ``R_led_series``, ``R_pullup``,
      ``R_short``.

    Example:
      >>> from jaxlab.agents.toposcope import encode, rule_counts, toy_schematic
      >>> rule_counts(encode(toy_schematic(), max_pins=32, max_nets=8)).tolist()
      [0, 0, 1, 1, 1, 0]
    """
    return _rule_counts(d)


@jax.jit
def _rule_counts(d: DenseSchematic) -> jax.Array:
    role, ctype = d.pin_role, d.pin_ctype
    n_nets = d.net_listed.shape[0]
    on = (d.pin_net[:, None] == jnp.arange(n_nets)[None]) & d.pin_mask[:, None]  # X[p, n]
    x = on.astype(jnp.int32)
    connected = d.pin_mask & (d.pin_net >= 0)

    def has_role(r):
        return (x * ((role == _ROLE_IDS[r]) & d.pin_mask)[:, None]).sum(0) > 0

    ground = has_role("ground")
    power = (has_role("power_out") | d.net_listed) & ~ground
    same = (d.pin_comp[:, None] == d.pin_comp[None]) & ~jnp.eye(role.shape[0], dtype=bool)
    same = same & d.pin_mask[:, None] & d.pin_mask[None]

    def covered(t, target):
        m = (same & (ctype == _CTYPE_IDS[t])[:, None]).astype(jnp.int32)
        tb = (x @ target.astype(jnp.int32)) * connected  # pin b sits on a target net
        return jnp.einsum("an,ab,b,bn->n", x, m, tb, 1 - x) > 0

    def on_bad_net(pins, ok_net):
        return jnp.sum(pins & connected & ~(x @ ok_net.astype(jnp.int32) > 0))

    is_ic = (ctype == _CTYPE_IDS["ic"]) | (ctype == _CTYPE_IDS["regulator"])
    cap = covered("capacitor", ground)
    decap_in = on_bad_net(is_ic & (role == _ROLE_IDS["power_in"]) & d.pin_mask, cap)
    decap_out = on_bad_net((ctype == _CTYPE_IDS["regulator"]) & (role == _ROLE_IDS["power_out"]) & d.pin_mask, cap)
    size = x.sum(0)
    own_size = jnp.where(connected, size[jnp.clip(d.pin_net, 0)], 0)
    floating = jnp.sum(d.pin_mask & (role != _ROLE_IDS["nc"]) & (own_size < 2))
    has_res = (x * (ctype == _CTYPE_IDS["resistor"])[:, None]).sum(0) > 0
    led_pin = (ctype == _CTYPE_IDS["led"]) & d.pin_mask
    led_ok_pin = led_pin & connected & (x @ has_res.astype(jnp.int32) > 0)
    n_comp = role.shape[0]
    led_comp = jax.ops.segment_max(led_pin.astype(jnp.int32), d.pin_comp, num_segments=n_comp)
    led_ok = jax.ops.segment_max(led_ok_pin.astype(jnp.int32), d.pin_comp, num_segments=n_comp)
    leds = jnp.sum((led_comp > 0) & (led_ok <= 0))
    i2c = ((role == _ROLE_IDS["i2c_sda"]) | (role == _ROLE_IDS["i2c_scl"])) & d.pin_mask
    pullup = on_bad_net(i2c, covered("resistor", power))
    short = jnp.sum(ground & has_role("power_out"))
    return jnp.stack([decap_in, decap_out, floating, leds, pullup, short]).astype(jnp.int32)
