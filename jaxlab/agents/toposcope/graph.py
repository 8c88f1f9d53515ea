r"""TopoScope's schematic graph: components with pin tables, nets, rails, JSON I/O, and the JAX kernels of the
component graph (adjacency and k-hop reach).

Model (the paper's text was not retrieved, the model is a
reconstruction from the abstract and PCBSchemaGen): components ``C`` (refdes, type, part, pins), pins ``P``
with a role ``rho(p)`` in :data:`ROLES`, nets ``N`` and the bipartite incidence ``E`` of pins on nets (each pin
on at most one net). Rail nets ``R``: nets holding a ground-role pin plus the nets listed in ``rails``. The
component graph ``H`` joins two components when they share a non-rail net; its dense form is

.. math::  A_{cc'} = [c \ne c'] \, [\exists n \notin R:\ c, c' \text{ have pins on } n]
           = [c \ne c'] \, [(B B^\top)_{cc'} > 0],

with ``B`` the component-by-non-rail-net incidence, and the k-hop reach is
``reach_k = ((I + A)^k > 0)``, computed by ``k`` boolean matrix products (jit, vmap over designs padded to one
size, or over ``k``).

Graph bookkeeping is plain Python; the kernels :func:`adjacency_from_incidence` and :func:`k_hop_reach` are JAX.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents.toposcope.papers import PCBSCHEMAGEN, TOPOSCOPE
from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Bool
from jaxlab.core.validation import check_int, check_ndim, is_concrete

__all__ = [
    "CTYPES",
    "ROLES",
    "Component",
    "InvalidReference",
    "Pin",
    "PinRef",
    "Schematic",
    "adjacency_from_incidence",
    "check_schematic",
    "component_adjacency",
    "k_hop_reach",
    "load_schematic",
    "parse_pin_ref",
    "save_schematic",
]

#: Pin roles (datasheet pin functions). ``nc`` = not connected by design.
ROLES = frozenset(
    {"power_in", "power_out", "ground", "input", "output", "bidir", "passive", "nc", "i2c_sda", "i2c_scl",
     "open_drain"}
)

#: Component types: the vocabulary the rule library is written in (``ic`` and ``regulator`` carry the decoupling
#: rules, ``capacitor`` / ``resistor`` the parts that satisfy them, ``led`` the series-resistor rule). A type outside
#: it would silently escape every rule that names a type, so :class:`Component` rejects it; ``other`` is the
#: explicit escape for parts no rule concerns.
CTYPES = ("ic", "regulator", "capacitor", "resistor", "led", "connector", "inductor", "diode", "crystal", "motor",
          "switch", "other")

PinRef = tuple[str, str]  # (refdes, pin name)


class InvalidReference(ValueError):
    """An action or a file refers to a component, pin, net or part that does not exist."""


@dataclass
class Pin:
    """A datasheet pin: its name, its role ``rho(p)`` and an optional datasheet note.

    Attributes:
      name: the pin name as the datasheet writes it (``"VDD"``, ``"1"``).
      role: the pin role ``rho(p)``, one of :data:`ROLES` (``"power_in"``, ``"ground"``, ``"i2c_sda"``, ...).
      note: free-text datasheet note shown to generators (default ``""``).

    Raises:
      ValueError: ``role`` is not in :data:`ROLES`.
    """

    name: str
    role: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"pin {self.name!r}: unknown pin role {self.role!r}; known roles: {sorted(ROLES)}")


@dataclass
class Component:
    """A placed part ``c in C``: reference designator, component type, part name and pin table.

    Attributes:
      refdes: reference designator (``"U1"``, ``"C3"``); non-empty, without ``"."`` (pins are written
        ``"REFDES.PIN"``).
      ctype: component type, one of :data:`CTYPES` (``"ic"``, ``"regulator"``, ``"capacitor"``, ...); the rules
        are written in this vocabulary.
      part: part name in the parts library (``"ldo"``, ``"cap"``, ...).
      pins: pin table ``{pin name: Pin}``; each key equals its pin's ``name``.

    Raises:
      ValueError: an empty or dotted ``refdes``, a ``ctype`` outside :data:`CTYPES`, or a pin-table key that
        differs from its pin's name.
    """

    refdes: str
    ctype: str
    part: str
    pins: dict[str, Pin] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.refdes, str) or not self.refdes or "." in self.refdes:
            raise ValueError(f"component refdes must be a non-empty string without '.', got {self.refdes!r}")
        if self.ctype not in CTYPES:
            raise ValueError(f"component {self.refdes}: unknown component type (ctype) {self.ctype!r}; known types: "
                             f"{list(CTYPES)} (an LDO or a switching regulator is 'regulator', a microcontroller "
                             f"'ic'; 'other' for parts no rule concerns)")
        for name, pin in self.pins.items():
            if name != pin.name:
                raise ValueError(f"component {self.refdes}: pin table key {name!r} != pin name {pin.name!r}")


def check_schematic(sch: Any, name: str = "sch") -> Schematic:
    """Check that ``sch`` is a :class:`Schematic` (a path or JSON text goes through :func:`load_schematic` first).

    Args:
      sch: the object to check.
      name: the argument name used in the error message.

    Returns:
      ``sch`` itself.

    Raises:
      TypeError: ``sch`` is not a :class:`Schematic` (the message names ``name`` and, for a path or a string,
        points to :func:`load_schematic`).
    """
    if not isinstance(sch, Schematic):
        hint = "; load a path or JSON text with load_schematic()" if isinstance(sch, (str, Path)) else ""
        raise TypeError(f"{name} must be a Schematic, got {type(sch).__name__} {sch!r:.60}{hint}")
    return sch


def parse_pin_ref(ref: str | PinRef, what: str = "pin reference") -> PinRef:
    """``"U1.VDD"`` or ``("U1", "VDD")`` -> ``("U1", "VDD")`` (split at the first dot)."""
    if isinstance(ref, tuple) and len(ref) == 2 and all(isinstance(s, str) for s in ref):
        return ref
    if isinstance(ref, str) and "." in ref:
        r, p = ref.split(".", 1)
        if r and p:
            return r, p
    raise ValueError(f"{what} must look like 'REFDES.PIN', got {ref!r}")


@dataclass
class Schematic:
    """A schematic graph: components ``C``, nets ``N`` with their pin members (the incidence ``E``), listed rails.

    Each pin is on at most one net. Rail nets ``R`` (:meth:`rail_nets`) are the nets holding a ground-role pin
    plus the listed ``rails``. Every mutation validates its references: an unknown component, pin or net raises
    :class:`InvalidReference`; a pin already on another net, a duplicate refdes or net raise ``ValueError``.

    Attributes:
      components: ``refdes -> Component``; each key equals its component's ``refdes``.
      nets: ``net name -> {(refdes, pin)}``, the pins on each net.
      rails: names of the user-listed rail nets (power rails such as ``"3V3"``).

    Raises:
      ValueError: a ``components`` key differs from its refdes, or a pin is listed on two nets.
      InvalidReference: a net names an unknown component or pin.
    """

    components: dict[str, Component] = field(default_factory=dict)
    nets: dict[str, set[PinRef]] = field(default_factory=dict)
    rails: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._net_of: dict[PinRef, str] = {}
        for name, c in self.components.items():
            if name != c.refdes:
                raise ValueError(f"components key {name!r} != component refdes {c.refdes!r}")
        members = {n: set(m) for n, m in self.nets.items()}
        self.nets = {n: set() for n in members}
        for n, m in members.items():
            for r, p in sorted(m):
                self.connect(r, p, n)
        self.rails = set(self.rails)

    # -- queries -------------------------------------------------------------------------------------------
    def pin(self, refdes: str, pin: str) -> Pin:
        """The :class:`Pin` ``refdes.pin``; raises :class:`InvalidReference` if either is unknown."""
        if refdes not in self.components:
            raise InvalidReference(f"unknown component {refdes!r}")
        c = self.components[refdes]
        if pin not in c.pins:
            raise InvalidReference(f"component {refdes!r} ({c.part}) has no pin {pin!r}; pins: {sorted(c.pins)}")
        return c.pins[pin]

    def net_of(self, refdes: str, pin: str) -> str | None:
        """The net of ``refdes.pin``, or ``None`` if the pin is unconnected."""
        self.pin(refdes, pin)
        return self._net_of.get((refdes, pin))

    def all_pins(self) -> list[PinRef]:
        return [(r, p) for r in sorted(self.components) for p in self.components[r].pins]

    def ground_nets(self) -> set[str]:
        """Nets holding a ground-role pin."""
        return {n for n, m in self.nets.items() if any(self.components[r].pins[p].role == "ground" for r, p in m)}

    def power_nets(self) -> set[str]:
        """Non-ground nets that hold a ``power_out`` pin or are listed in ``rails``."""
        gnd = self.ground_nets()
        out = {n for n, m in self.nets.items() if any(self.components[r].pins[p].role == "power_out" for r, p in m)}
        return ((out | (self.rails & set(self.nets))) - gnd)

    def rail_nets(self) -> set[str]:
        """``R``: ground nets plus the listed rails (that exist)."""
        return self.ground_nets() | (self.rails & set(self.nets))

    # -- mutations ------------------------------------------------------------------------------------------
    def add_component(self, component: Component) -> None:
        if component.refdes in self.components:
            raise ValueError(f"duplicate refdes {component.refdes!r}")
        self.components[component.refdes] = component

    def create_net(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"net name must be a non-empty string, got {name!r}")
        if name in self.nets:
            raise ValueError(f"net {name!r} already exists")
        self.nets[name] = set()

    def connect(self, refdes: str, pin: str, net: str) -> None:
        """Put ``refdes.pin`` on ``net``; unknown references raise :class:`InvalidReference`, a pin already on
        another net raises ``ValueError`` (each pin is on at most one net)."""
        self.pin(refdes, pin)
        if net not in self.nets:
            raise InvalidReference(f"unknown net {net!r} (connecting {refdes}.{pin})")
        old = self._net_of.get((refdes, pin))
        if old is not None and old != net:
            raise ValueError(f"pin {refdes}.{pin} is already on net {old!r}; cannot also connect it to {net!r}")
        self.nets[net].add((refdes, pin))
        self._net_of[(refdes, pin)] = net

    def disconnect(self, refdes: str, pin: str) -> None:
        self.pin(refdes, pin)
        net = self._net_of.pop((refdes, pin), None)
        if net is not None:
            self.nets[net].discard((refdes, pin))

    def copy(self) -> Schematic:
        return Schematic(copy.deepcopy(self.components), {n: set(m) for n, m in self.nets.items()}, set(self.rails))

    # -- JSON -------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "components": {
                r: {"ctype": c.ctype, "part": c.part,
                    "pins": {p.name: [p.role, p.note] if p.note else p.role for p in c.pins.values()}}
                for r, c in sorted(self.components.items())
            },
            "nets": {n: sorted(f"{r}.{p}" for r, p in m) for n, m in sorted(self.nets.items())},
            "rails": sorted(self.rails),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schematic:
        """Inverse of :meth:`to_dict`; malformed input raises ``ValueError`` naming the component or net."""
        if not isinstance(data, Mapping) or not isinstance(data.get("components"), Mapping):
            raise ValueError("schematic JSON must be an object with a 'components' object")
        comps = {r: component_from_dict(r, c) for r, c in data["components"].items()}
        sch = cls(comps, {}, set())
        nets = data.get("nets", {})
        if not isinstance(nets, Mapping):
            raise ValueError(f"schematic JSON 'nets' must be an object, got {type(nets).__name__}")
        for n, members in nets.items():
            if not isinstance(members, list):
                raise ValueError(f"net {n!r}: members must be a list of 'REFDES.PIN', got {members!r}")
            sch.create_net(n)
            for ref in members:
                r, p = parse_pin_ref(ref, f"net {n!r} member")
                try:
                    sch.connect(r, p, n)
                except ValueError as e:
                    raise type(e)(f"net {n!r}: {e}") from None
        rails = data.get("rails", [])
        if not isinstance(rails, list) or not all(isinstance(x, str) for x in rails):
            raise ValueError(f"schematic JSON 'rails' must be a list of net names, got {rails!r}")
        unknown = sorted(set(rails) - set(sch.nets))
        if unknown:
            raise ValueError(f"rail {unknown[0]!r} is not a net of the schematic")
        sch.rails = set(rails)
        return sch


def component_from_dict(refdes: str, data: Any) -> Component:
    """``{"ctype", "part", "pins": {name: role | [role, note]}}`` -> :class:`Component` (errors name ``refdes``)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"component {refdes!r}: expected an object, got {type(data).__name__}")
    missing = [k for k in ("ctype", "part", "pins") if k not in data]
    if missing:
        raise ValueError(f"component {refdes!r}: missing field {missing[0]!r}")
    if not isinstance(data["pins"], Mapping) or not data["pins"]:
        raise ValueError(f"component {refdes!r}: 'pins' must be a non-empty object")
    pins = {}
    for name, spec in data["pins"].items():
        if isinstance(spec, str):
            role, note = spec, ""
        elif isinstance(spec, list) and 1 <= len(spec) <= 2:
            role, note = spec[0], (spec[1] if len(spec) == 2 else "")
        else:
            raise ValueError(f"component {refdes!r}: pin {name!r} must be 'role' or ['role', 'note'], got {spec!r}")
        try:
            pins[name] = Pin(name, role, note)
        except ValueError as e:
            raise ValueError(f"component {refdes!r}: {e}") from None
    try:
        return Component(refdes, str(data["ctype"]), str(data["part"]), pins)
    except ValueError as e:
        raise ValueError(f"component {refdes!r}: {e}") from None


@cites(TOPOSCOPE)
def load_schematic(path_or_text: str | Path) -> Schematic:
    """Load a schematic from a JSON file path or a JSON string (see :meth:`Schematic.to_dict` for the format).

    Args:
      path_or_text: a path to a JSON file, or the JSON text itself (a string starting with ``{``).

    Returns:
      The :class:`Schematic`, every reference validated.

    Raises:
      ValueError: the text is not valid JSON, or the object is malformed (a missing ``components`` object, a
        bad pin table, a pin on two nets, a rail that is not a net); :class:`InvalidReference` (a ``ValueError``)
        when a net names an unknown component or pin.
      OSError: ``path_or_text`` is a path that cannot be read.
    """
    text = str(path_or_text)
    if not text.lstrip().startswith("{"):
        text = Path(path_or_text).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"schematic JSON is not valid JSON: {e}") from None
    return Schematic.from_dict(data)


@cites(TOPOSCOPE)
def save_schematic(sch: Schematic, path: str | Path | None = None) -> str:
    """Serialise ``sch`` to JSON (sorted keys and members, so the text is stable); write it to ``path`` if given.

    Args:
      sch: the :class:`Schematic` to save.
      path: optional file to write; ``None`` only returns the text.

    Returns:
      The JSON text (the inverse of :func:`load_schematic`).

    Raises:
      TypeError: ``sch`` is not a :class:`Schematic`.
    """
    check_schematic(sch, "sch")
    text = json.dumps(sch.to_dict(), indent=1, sort_keys=True)
    if path is not None:
        Path(path).write_text(text)
    return text


# ---------------------------------------------------------------------------------------------------------
# JAX kernels of the component graph
# ---------------------------------------------------------------------------------------------------------


@jax.jit
def adjacency_from_incidence(incidence: Bool[Array, "c n"]) -> Bool[Array, "c c"]:
    """Component-graph adjacency ``A = [B B^T > 0] and not I`` from a component-by-net incidence ``B`` (jit, vmap).

    Args:
      incidence: ``(c, n)`` bool (or 0/1 integer) array ``B``, ``B[i, j]`` true when component ``i`` has a pin on
        non-rail net ``j``.

    Returns:
      ``(c, c)`` bool array ``A``: ``A[i, j]`` true when ``i != j`` share a net.
    """
    b = incidence.astype(jnp.int32)
    share = (b @ b.T) > 0
    return share & ~jnp.eye(b.shape[0], dtype=bool)


def _incidence(sch: Schematic, pad: bool = False) -> tuple[np.ndarray, list[str]]:
    """Component-by-non-rail-net incidence ``B`` (padded to powers of two when ``pad``: fewer compilations)."""
    names = sorted(sch.components)
    idx = {r: i for i, r in enumerate(names)}
    rails = sch.rail_nets()
    nets = sorted(n for n in sch.nets if n not in rails)
    shape = (len(names), max(len(nets), 1))
    if pad:
        shape = tuple(max(16, 1 << (s - 1).bit_length()) for s in shape)
    b = np.zeros(shape, dtype=bool)
    for j, n in enumerate(nets):
        for r, _ in sch.nets[n]:
            b[idx[r], j] = True
    return b, names


@cites(TOPOSCOPE)
def component_adjacency(sch: Schematic) -> tuple[Bool[Array, "c c"], list[str]]:
    """Adjacency of the component graph ``H``: ``A = [B B^T > 0] - I`` over the non-rail nets.

    Rails ``R`` (ground nets and listed rails) are excluded from ``B``, so power and ground do not join every
    component.

    Args:
      sch: the :class:`Schematic`.

    Returns:
      A tuple ``(adj, names)``: ``adj`` the ``(c, c)`` bool JAX array of :func:`adjacency_from_incidence`, and
      ``names`` the ``c`` refdes in sorted order (row ``i`` of ``adj`` is ``names[i]``).

    Raises:
      TypeError: ``sch`` is not a :class:`Schematic`.
    """
    check_schematic(sch, "sch")
    b, names = _incidence(sch)
    return adjacency_from_incidence(jnp.asarray(b)), names


@cites(TOPOSCOPE, PCBSCHEMAGEN)
def k_hop_reach(adj: Bool[Array, "c c"], k: int | jax.Array) -> Bool[Array, "c c"]:
    """k-hop reach of the component graph, ``reach_k = ((I + A)^k > 0)``, so ``Nbr_k(c_i) = {c_j : reach[i, j]}``.

    Computed by ``k`` boolean matrix products in a ``lax.fori_loop``. ``k`` may be traced (vmap over ``k``) and
    ``adj`` batched (vmap over designs padded to one size: padded rows and columns stay isolated). The
    neighbourhood ``Nbr_k`` follows PCBSchemaGen's knowledge-graph view (Zou, Han, Nazerian, Huang,
    "PCBSchemaGen: Constraint-Guided Schematic Design via LLM for Printed Circuit Boards", arXiv:2602.00510);
    its use for context scoping is reconstructed from the TopoScope abstract.

    Args:
      adj: ``(c, c)`` bool adjacency ``A`` (e.g. from :func:`component_adjacency`); cast to bool.
      k: number of hops, an int ``>= 0`` or an int 0-d array (may be traced).

    Returns:
      ``(c, c)`` bool array: ``reach[i, j]`` true when ``j`` is within ``k`` hops of ``i`` (``reach_0 = I``).

    Raises:
      ValueError: ``adj`` is not 2-d or not square, or a concrete ``k < 0``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.agents.toposcope import k_hop_reach
      >>> path = jnp.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)  # a - b - c
      >>> k_hop_reach(path, 1)[0].tolist(), k_hop_reach(path, 2)[0].tolist()
      ([True, True, False], [True, True, True])
    """
    check_ndim(adj, "adj", 2)
    if adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be square, got shape {tuple(adj.shape)}")
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        check_int(k, "k", min_value=0)
    elif is_concrete(k) and int(np.asarray(k)) < 0:
        raise ValueError(f"k must be >= 0, got {int(np.asarray(k))}")
    return _reach(jnp.asarray(adj, dtype=bool), jnp.asarray(k, dtype=jnp.int32))


@jax.jit
def _reach(adj: jax.Array, k: jax.Array) -> jax.Array:
    step = (adj | jnp.eye(adj.shape[-1], dtype=bool)).astype(jnp.int32)
    eye = jnp.eye(adj.shape[-1], dtype=jnp.int32)
    out = jax.lax.fori_loop(0, k, lambda _, r: jnp.minimum(r @ step, 1), eye)
    return out > 0


def reach_sets(sch: Schematic, k: int) -> dict[str, set[str]]:
    """``Nbr_k(c) = {c' : d_H(c, c') <= k}`` for every component, from :func:`k_hop_reach`.

    The incidence is padded to powers of two (at least 16) so that designs of similar size share one compiled
    kernel.

    Args:
      sch: the :class:`Schematic`.
      k: number of hops, an int ``>= 0``.

    Returns:
      ``refdes -> set of refdes`` within ``k`` hops (``c`` itself included).

    Raises:
      TypeError: ``sch`` is not a :class:`Schematic`, or ``k`` is not an int.
      ValueError: ``k < 0``.
    """
    check_schematic(sch, "sch")
    check_int(k, "k", min_value=0)
    b, names = _incidence(sch, pad=True)
    reach = np.asarray(k_hop_reach(adjacency_from_incidence(jnp.asarray(b)), k))
    return {r: {names[j] for j in np.flatnonzero(reach[i])} for i, r in enumerate(names)}


def pins_of(components: Iterable[Component]) -> list[PinRef]:
    return [(c.refdes, p) for c in components for p in c.pins]
