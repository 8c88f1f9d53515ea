"""BibTeX of the papers behind the annealed-Langevin area (registered once, imported by its modules)."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["DALALYAN", "GEFFNER", "LINHART", "TOURON"]

TOURON = "touron2026annealed"
GEFFNER = "geffner2023compositional"
LINHART = "linhart2024tall"
DALALYAN = "dalalyan2019inaccurate"

register_paper(TOURON, """@article{touron2026theoretical,
  title = {Theoretical guidelines for annealed Langevin dynamics in compositional simulation-based inference},
  author = {Touron, Camille and Cardoso, Gabriel V. and Arbel, Julyan and Rodrigues, Pedro L. C.},
  journal = {arXiv preprint arXiv:2605.21253},
  year = {2026}
}""")
register_paper(GEFFNER, """@inproceedings{geffner2023compositional,
  title = {Compositional Score Modeling for Simulation-Based Inference},
  author = {Geffner, Tomas and Papamakarios, George and Mnih, Andriy},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:2209.14249},
  year = {2023}
}""")
register_paper(LINHART, """@article{linhart2024diffusion,
  title = {Diffusion posterior sampling for simulation-based inference in tall data settings},
  author = {Linhart, Julia and Cardoso, Gabriel V. and Gramfort, Alexandre and Le Corff, Sylvain
            and Rodrigues, Pedro L. C.},
  journal = {arXiv preprint arXiv:2404.07593},
  year = {2024}
}""")
register_paper(DALALYAN, """@article{dalalyan2019user,
  title = {User-friendly guarantees for the {L}angevin {M}onte {C}arlo with inaccurate gradient},
  author = {Dalalyan, Arnak S. and Karagulyan, Avetik},
  journal = {Stochastic Processes and their Applications},
  volume = {129},
  number = {12},
  pages = {5278--5311},
  year = {2019},
  note = {arXiv:1710.00095}
}""")
