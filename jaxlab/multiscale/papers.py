"""Papers behind :mod:`jaxlab.multiscale` (registered on import) and their citation keys."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["BEN_AROUS", "MSIM", "RICHARD_MONTANARI"]

MSIM = "msim2026"
BEN_AROUS = "benarous2021online"
RICHARD_MONTANARI = "richard2014tensorpca"

register_paper(MSIM, """@misc{msim2026,
  title = {Multiscale Single-Index Model},
  year = {2026},
  note = {Full text not available; model and algorithms reconstructed in jaxlab from the abstract}
}""")
register_paper(BEN_AROUS, """@article{benarous2021online,
  title = {Online stochastic gradient descent on non-convex losses from high-dimensional inference},
  author = {Ben Arous, G{\\'e}rard and Gheissari, Reza and Jagannath, Aukosh},
  journal = {Journal of Machine Learning Research},
  volume = {22},
  number = {106},
  pages = {1--51},
  year = {2021}
}""")
register_paper(RICHARD_MONTANARI, """@inproceedings{richard2014statistical,
  title = {A statistical model for tensor {PCA}},
  author = {Richard, Emile and Montanari, Andrea},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2014}
}""")
