"""TopoScope's small design benchmark: a parts library with datasheet pin tables, seven synthetic designs
(tiers easy / medium / hard; domains power, LED, MCU core, I2C sensor, USB interface, motor driver) with BOM,
intended nets, plan graph and functional assertions, the held-out toy schematic, and random schematics.

The paper's 20-design benchmark was not retrieved: these designs are **[chosen]** small stand-ins (JSON in
``jaxlab/agents/toposcope/data/designs.json``). Everything is validated at load time: unknown parts, pins, nets, plan
components or assertion pins raise ``ValueError`` naming them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from jaxlab.agents.toposcope.graph import Component, PinRef, Schematic, component_from_dict, parse_pin_ref
from jaxlab.agents.toposcope.papers import TOPOSCOPE
from jaxlab.agents.toposcope.rules import RULES, Rule, check_assertions
from jaxlab.core.citations import cites
from jaxlab.core.validation import check_in_range, check_int

__all__ = [
    "DATA_PATH",
    "DesignSpec",
    "design_from_dict",
    "load_benchmark",
    "load_parts",
    "random_schematic",
    "toy_schematic",
]

DATA_PATH = Path(__file__).resolve().parent / "data" / "designs.json"


@dataclass(frozen=True)
class DesignSpec:
    """A design task, as :func:`design_from_dict` builds it from the benchmark JSON.

    Attributes:
      name: design name (``"ldo_power"``, ...).
      tier: difficulty tier, ``"easy"``, ``"medium"`` or ``"hard"`` (``""`` if not given).
      domain: application domain (power, LED, MCU core, ...; ``""`` if not given).
      text: the natural-language design request.
      bom: bill of materials, ``refdes -> Component`` with datasheet pin tables (no-connect pins have role
        ``"nc"``).
      rails: the listed rail nets (e.g. ``("3V3",)``).
      ground: the ground net name (default ``"GND"``).
      intent: the intended nets, ``net name -> ((refdes, pin), ...)``: what the design text asks for, the target
        the reference generator wires.
      plan: the plan graph ``Pi``, pairs ``(refdes, refdes)`` of components that must interact.
      assertions: functional assertions as validated tuples (see
        :func:`~jaxlab.agents.toposcope.rules.evaluate_assertions`).
      parts: the parts library ``part name -> Component`` (templates for the passives a generator adds).
    """

    name: str
    tier: str
    domain: str
    text: str
    bom: Mapping[str, Component]
    rails: tuple[str, ...]
    ground: str
    intent: Mapping[str, tuple[PinRef, ...]]
    plan: tuple[tuple[str, str], ...]
    assertions: tuple[tuple[Any, ...], ...]
    parts: Mapping[str, Component]


def _data() -> dict[str, Any]:
    return json.loads(DATA_PATH.read_text())


@cache
def _parts_cached() -> dict[str, Component]:
    return {name: component_from_dict(name, d | {"part": name}) for name, d in _data()["parts"].items()}


def load_parts() -> dict[str, Component]:
    """The shipped parts library (**[chosen]** datasheet pin tables, from ``data/designs.json``).

    Returns:
      ``part name -> template Component`` (its refdes is the part name); a fresh deep copy on every call.
    """
    return copy.deepcopy(_parts_cached())


def _place(refdes: str, part: str, parts: Mapping[str, Component], nc: Sequence[str] = ()) -> Component:
    if part not in parts:
        raise ValueError(f"component {refdes!r}: unknown part {part!r}")
    c = copy.deepcopy(parts[part])
    c.refdes = refdes
    for p in nc:
        if p not in c.pins:
            raise ValueError(f"component {refdes!r}: no-connect pin {p!r} is not a pin of part {part!r}")
        c.pins[p].role = "nc"
    return c


#: Keys a design object must have.
_DESIGN_KEYS = ("bom", "nets")


@cites(TOPOSCOPE)
def design_from_dict(d: Mapping[str, Any], parts: Mapping[str, Component] | None = None,
                     rules: Sequence[Rule] = RULES) -> DesignSpec:
    """Build and validate a :class:`DesignSpec` from its JSON object (see the shipped data file).

    Required keys: ``bom`` (``refdes -> part``) and ``nets`` (``name -> ["REFDES.PIN", ...]``); optional ``name``,
    ``tier``, ``domain``, ``text``, ``nc`` (``refdes -> [no-connect pins]``), ``rails``, ``ground`` (default
    ``"GND"``), ``plan`` (``[[refdes, refdes], ...]``), ``assertions``.

    Args:
      d: the design's JSON object (a mapping).
      parts: parts library ``part name -> Component``; default :func:`load_parts`.
      rules: the rules that ``no_violation`` assertions may name (default :data:`~jaxlab.agents.toposcope.rules.RULES`).

    Returns:
      The validated :class:`DesignSpec` (``rails`` and ``ground`` must be among the intended nets).

    Raises:
      TypeError: ``d`` is not a mapping.
      ValueError: a required key is missing (named), or the design names unknown parts, pins, nets or components.
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"design must be a JSON object (a mapping), got {type(d).__name__}")
    parts = load_parts() if parts is None else parts
    name = d.get("name", "?")
    missing = [key for key in _DESIGN_KEYS if key not in d]
    if missing:
        raise ValueError(f"design {name!r}: missing required key {missing[0]!r} (required keys: {list(_DESIGN_KEYS)})")
    for key in _DESIGN_KEYS:
        if not isinstance(d[key], Mapping):
            raise ValueError(f"design {name!r}: {key!r} must be an object, got {type(d[key]).__name__}")
    nc = d.get("nc", {})
    unknown = sorted(set(nc) - set(d.get("bom", {})))
    if unknown:
        raise ValueError(f"design {name!r}: no-connect list names unknown component {unknown[0]!r}")
    bom = {r: _place(r, part, parts, nc.get(r, ())) for r, part in d["bom"].items()}
    intent: dict[str, tuple[PinRef, ...]] = {}
    seen: dict[PinRef, str] = {}
    for net, members in d["nets"].items():
        refs = []
        for ref in members:
            r, p = parse_pin_ref(ref, f"net {net!r} member")
            if r not in bom or p not in bom[r].pins:
                raise ValueError(f"design {name!r}: net {net!r} names nonexistent pin {ref!r}")
            if (r, p) in seen:
                raise ValueError(f"design {name!r}: pin {ref!r} is on nets {seen[(r, p)]!r} and {net!r}")
            seen[(r, p)] = net
            refs.append((r, p))
        intent[net] = tuple(refs)
    rails = tuple(d.get("rails", ()))
    ground = d.get("ground", "GND")
    for n in (*rails, ground):
        if n not in intent:
            raise ValueError(f"design {name!r}: rail {n!r} is not one of the design's nets")
    plan = []
    for a, b in d.get("plan", ()):
        for r in (a, b):
            if r not in bom:
                raise ValueError(f"design {name!r}: plan names unknown component {r!r}")
        plan.append((a, b))
    assertions = check_assertions(d.get("assertions", ()), bom, intent, rules)
    return DesignSpec(name, d.get("tier", ""), d.get("domain", ""), d.get("text", ""), bom, rails, ground, intent,
                      tuple(plan), tuple(assertions), parts)


@cites(TOPOSCOPE)
def load_benchmark(path: str | Path | None = None) -> list[DesignSpec]:
    """The benchmark designs: the seven shipped ones (**[chosen]** stand-ins for the paper's 20 designs, which
    were not retrieved), or those of another JSON file.

    Args:
      path: optional JSON file with a ``parts`` object (``part -> {"ctype", "part", "pins"}``) and a ``designs``
        list (objects as :func:`design_from_dict` reads them); ``None`` loads the shipped file.

    Returns:
      The designs as validated :class:`DesignSpec` objects, in file order.

    Raises:
      ValueError: the file lacks ``parts`` or ``designs``, or a part or design is invalid (named).
      OSError: ``path`` cannot be read.

    Example:
      >>> from jaxlab.agents.toposcope import load_benchmark
      >>> designs = load_benchmark()
      >>> [(d.name, d.tier, len(d.bom)) for d in designs[:2]]
      [('ldo_power', 'easy', 5), ('led_indicator', 'easy', 6)]
    """
    data = _data() if path is None else json.loads(Path(path).read_text())
    missing = [key for key in ("parts", "designs") if not isinstance(data, Mapping) or key not in data]
    if missing:
        raise ValueError(f"benchmark JSON {str(path)!r}: missing required key {missing[0]!r} (required keys: "
                         f"['parts', 'designs'])")
    parts = load_parts() if path is None else {
        n: component_from_dict(n, p | {"part": n}) for n, p in data["parts"].items()}
    return [design_from_dict(d, parts) for d in data["designs"]]


@cites(TOPOSCOPE)
def toy_schematic() -> Schematic:
    """The held-out toy schematic (**[chosen]**): a 3.3 V LDO board with an I2C sensor, header and LED.

    It carries exactly three planted violations: ``U2.ADDR`` floating (``R_floating``), LED ``D1`` without a
    series resistor (``R_led_series``) and no pull-up on ``U2.SCL`` (``R_pullup``).

    Returns:
      A fresh :class:`Schematic` (9 components, 7 nets, rail ``3V3``).
    """
    d = _data()["toy"]
    parts = _parts_cached()
    comps = {r: _place(r, part, parts) for r, part in d["components"].items()}
    nets = {n: {parse_pin_ref(x) for x in m} for n, m in d["nets"].items()}
    return Schematic(comps, nets, set(d["rails"]))


@cites(TOPOSCOPE)
def random_schematic(seed: int, n_components: int = 8, *, p_connect: float = 0.8) -> Schematic:
    """A random schematic of library parts, used to cross-check the rule matchers (**[chosen]** generator).

    Parts are drawn with weight 3 for capacitors and resistors and 1 otherwise (the MCU only as component 0,
    with probability 0.3 when ``n_components >= 6``). Nets: ``GND``, ``3V3`` (a listed rail) and
    ``N0 .. N(m-1)``, ``m`` uniform in ``[2, max(2, 1 + n_components // 2)]``. Each pin is connected with probability
    ``p_connect``: a ground pin to ``GND`` with probability 0.8, a power pin to ``3V3`` with probability 0.6,
    otherwise to a uniformly drawn net.

    Args:
      seed: int ``>= 0``, seed of the NumPy generator.
      n_components: int ``>= 1``, the number of components (refdes ``X0, X1, ...``).
      p_connect: float in ``[0, 1]``, the probability that a pin is connected.

    Returns:
      The :class:`Schematic`.

    Raises:
      TypeError: ``seed`` or ``n_components`` is not an int.
      ValueError: ``seed < 0``, ``n_components < 1`` or ``p_connect`` outside ``[0, 1]``.
    """
    check_int(seed, "seed", min_value=0)
    check_int(n_components, "n_components", min_value=1)
    p_connect = float(check_in_range(p_connect, "p_connect", 0.0, 1.0))
    rng = np.random.default_rng(seed)
    parts = _parts_cached()
    names = sorted(p for p in parts if p != "mcu")
    weights = np.array([3.0 if parts[p].ctype in ("capacitor", "resistor") else 1.0 for p in names])
    chosen = [str(x) for x in rng.choice(names, size=n_components, p=weights / weights.sum())]
    if n_components >= 6 and rng.random() < 0.3:
        chosen[0] = "mcu"
    comps = {f"X{i}": _place(f"X{i}", part, parts) for i, part in enumerate(chosen)}
    n_nets = int(rng.integers(2, max(3, 2 + n_components // 2)))  # 2 nets at least, also for 1 component
    nets: dict[str, set[PinRef]] = {n: set() for n in ["GND", "3V3", *(f"N{j}" for j in range(n_nets))]}
    pool = sorted(nets)
    for r, c in comps.items():
        for p, pin in c.pins.items():
            if rng.random() > p_connect:
                continue
            if pin.role == "ground" and rng.random() < 0.8:
                net = "GND"
            elif pin.role in ("power_in", "power_out") and rng.random() < 0.6:
                net = "3V3"
            else:
                net = pool[int(rng.integers(len(pool)))]
            nets[net].add((r, p))
    return Schematic(comps, nets, {"3V3"})
