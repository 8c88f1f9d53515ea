"""BibTeX entries of the papers behind ``jaxlab.generative.flow_agent`` (registered once, on import).

Flow matching (Lipman et al., arXiv:2210.02747), minibatch OT-CFM (Tong et al., arXiv:2302.00482) and FlowAgent
(Huang et al., arXiv:2605.07339, abstract only). Keys carry a ``gen_`` prefix so that they cannot clash with other
areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

FLOW_MATCHING = "gen_lipman2023flow"
OT_CFM = "gen_tong2024otcfm"
FLOWAGENT = "gen_huang2026flowagent"

register_paper(FLOW_MATCHING, """
@inproceedings{lipman2023flow,
  title = {Flow Matching for Generative Modeling},
  author = {Lipman, Yaron and Chen, Ricky T. Q. and Ben-Hamu, Heli and Nickel, Maximilian and Le, Matt},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2210.02747},
  year = {2023},
}""")

register_paper(OT_CFM, """
@article{tong2024improving,
  title = {Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal Transport},
  author = {Tong, Alexander and Fatras, Kilian and Malkin, Nikolay and Huguet, Guillaume and Zhang, Yanlei and
            Rector-Brooks, Jarrid and Wolf, Guy and Bengio, Yoshua},
  journal = {Transactions on Machine Learning Research},
  note = {arXiv:2302.00482},
  year = {2024},
}""")

register_paper(FLOWAGENT, """
@article{huang2026tools,
  title = {Tools as Continuous Flow for Evolving Agentic Reasoning},
  author = {Huang, Tairan and Shang, Siyu and Chen, Qiang and Su, Xiu and Chen, Yi},
  journal = {arXiv preprint arXiv:2605.07339},
  note = {abstract and secondary summaries only; author order differs between listings},
  year = {2026},
}""")
