"""TopoScope verification benchmark (CPU): ms per full ``verify`` call of the six built-in rules, jaxlab's
Python pattern matcher vs networkx ``GraphMatcher`` subgraph monomorphism on the same schematics (random designs
of 6 to 48 components, and the reference solution of the 31-component hard design); quality = agreement of the
violation sets. A third case times the dense JAX rule counts (``rule_counts``) vmapped over 64 padded designs
against the Python matcher looping over the same 64.

Run: ``python bench/agents.py`` (all agents benchmarks) or ``python bench/_agents_toposcope.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp

from jaxlab.agents import toposcope as ts
from jaxlab.agents.toposcope.networkx_oracle import verify_networkx
from jaxlab.core.bench import emit, time_fn, time_interleaved

AREA = "toposcope"


def _agree(sch) -> float:
    return float({(v.rule_id, v.binding) for v in ts.verify(sch)} == verify_networkx(sch))


def verify_cases() -> None:
    hard = next(d for d in ts.load_benchmark() if d.name == "sensor_hub")
    cases = {f"random_{n}": ts.random_schematic(7, n) for n in (6, 12, 24, 48)}
    cases["sensor_hub_reference"] = ts.run_agent(hard, ts.rule_based_generator()).schematic
    for name, sch in cases.items():
        t = time_interleaved({"ours": (ts.verify, (sch,)), "networkx": (verify_networkx, (sch,))}, repeats=5)
        emit(AREA, f"verify_{name}", ours_s=t["ours"]["median_s"], peer="networkx GraphMatcher",
             peer_s=t["networkx"]["median_s"], compile_s=0.0,
             quality={"agree": _agree(sch), "violations": len(ts.verify(sch))},
             components=len(sch.components), pins=len(sch.all_pins()), goal_ratio=1.0)


def dense_case() -> None:
    schs = [ts.random_schematic(s, 12) for s in range(64)]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *(ts.encode(s, 128, 16) for s in schs))
    counts = jax.jit(jax.vmap(ts.rule_counts))
    t = time_fn(counts, batch)
    py = time_fn(lambda: [ts.verify(s) for s in schs], repeats=3)
    same = bool((jnp.asarray([[sum(v.rule_id == r.id for v in ts.verify(s)) for r in ts.RULES] for s in schs])
                 == counts(batch)).all())
    emit(AREA, "rule_counts_vmap_64_designs", ours_s=t["median_s"], peer="jaxlab Python matcher (loop)",
         peer_s=py["median_s"], compile_s=t["first_s"] - t["median_s"], quality={"counts_equal": float(same)},
         goal_ratio=1.0)


if __name__ == "__main__":
    verify_cases()
    dense_case()
