"""BibTeX entries of the papers behind Tree-of-Skill (registered once, on import).

The target paper's text could not be retrieved; its entry records only what the abstract states. Keys carry an
``ag_`` prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

TOS = "ag_treeofskill2026"
BT_EXPANSION = "ag_cai2021btexpansion"
PPO = "ag_schulman2017ppo"

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

register_paper(PPO, """
@article{schulman2017ppo,
  title = {Proximal Policy Optimization Algorithms},
  author = {Schulman, John and Wolski, Filip and Dhariwal, Prafulla and Radford, Alec and Klimov, Oleg},
  journal = {arXiv preprint arXiv:1707.06347},
  year = {2017},
}""")
