"""BibTeX entries of the papers behind ``jaxlab.agents`` (registered once, on import).

The target papers' texts could not be retrieved; their entries record only what the abstracts state. Keys carry
an ``ag_`` prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

TOPOSCOPE = "ag_toposcope2026"
PCBSCHEMAGEN = "ag_pcbschemagen2026"
TOS = "ag_treeofskill2026"
BT_EXPANSION = "ag_cai2021btexpansion"

register_paper(TOPOSCOPE, """
@misc{toposcope2026,
  title = {TopoScope: Topology-Guided Context Scoping and Pattern-Based Rule Verification for PCB Schematic Generation},
  note = {2026; training-free LLM agent for PCB schematic design; title paraphrased from the abstract, authors and
          arXiv id not retrieved (abstract only); the spec reconstructs the method},
  year = {2026},
}""")

register_paper(PCBSCHEMAGEN, """
@article{zou2026pcbschemagen,
  title = {PCBSchemaGen: Constraint-Guided Schematic Design via LLM for Printed Circuit Boards},
  author = {Zou and Han and Nazerian and Huang},
  journal = {arXiv preprint arXiv:2602.00510},
  note = {closest prior work named by the spec: knowledge graph and subgraph-isomorphism verification},
  year = {2026},
}""")

register_paper(TOS, """
@misc{treeofskill2026,
  title = {Tree-of-Skill: Neural-Symbolic Dynamic Skill Chaining in Behavior-Tree-Driven Reinforcement Learning},
  note = {2026; title paraphrased from the abstract, authors and arXiv id not retrieved (abstract only)},
  year = {2026},
}""")

register_paper(BT_EXPANSION, """
@inproceedings{cai2021bt,
  title = {Bt Expansion: a Sound and Complete Algorithm for Behavior Planning of Intelligent Robots with Behavior
           Trees},
  author = {Cai, Zhongxuan and Li, Minglong and Huang, Wanrong and Yang, Wenjing},
  booktitle = {AAAI Conference on Artificial Intelligence},
  year = {2021},
}""")
