"""BibTeX entries of the papers behind TopoScope (registered once, on import).

The target paper's text could not be retrieved; its entry records only what the abstract states. Keys carry an
``ag_`` prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

TOPOSCOPE = "ag_toposcope2026"
PCBSCHEMAGEN = "ag_pcbschemagen2026"

register_paper(TOPOSCOPE, """
@misc{toposcope2026,
  title = {TopoScope: Topology-Guided Context Scoping and Pattern-Based Rule Verification for PCB Schematic Generation},
  note = {2026; training-free LLM agent for PCB schematic design; title paraphrased from the abstract, authors and
          arXiv id not retrieved (abstract only); the method is reconstructed from the abstract},
  year = {2026},
}""")

register_paper(PCBSCHEMAGEN, """
@article{zou2026pcbschemagen,
  title = {PCBSchemaGen: Constraint-Guided Schematic Design via LLM for Printed Circuit Boards},
  author = {Zou and Han and Nazerian and Huang},
  journal = {arXiv preprint arXiv:2602.00510},
  note = {closest prior work: knowledge graph and subgraph-isomorphism verification},
  year = {2026},
}""")
