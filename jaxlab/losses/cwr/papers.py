"""BibTeX entries of the papers behind classification with rejection (area ``cwr``), registered on import.

The target paper (low-dimensional convex calibrated surrogates for classification with rejection, 2026) was
known by its abstract only: its title, authors and arXiv id were not retrieved, and jaxlab's 2-d surrogate
``cwr2d`` is jaxlab's own construction, not the paper's formula.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["BARTLETT", "CHOW", "CWR2026", "FINOCCHIARO", "RAMASWAMY"]

CHOW = "chow1970reject"
RAMASWAMY = "ramaswamy2018abstain"
BARTLETT = "bartlett2008reject"
FINOCCHIARO = "finocchiaro2024embedding"
CWR2026 = "cwr2026lowdim"

register_paper(CHOW, """@article{chow1970reject,
  title = {On optimum recognition error and reject tradeoff},
  author = {Chow, C. K.},
  journal = {IEEE Transactions on Information Theory},
  volume = {16}, number = {1}, pages = {41--46}, year = {1970}
}""")
register_paper(RAMASWAMY, """@article{ramaswamy2018abstain,
  title = {Consistent algorithms for multiclass classification with an abstain option},
  author = {Ramaswamy, Harish G. and Tewari, Ambuj and Agarwal, Shivani},
  journal = {Electronic Journal of Statistics}, volume = {12}, pages = {530--554}, year = {2018},
  eprint = {1505.04137}, archivePrefix = {arXiv}
}""")
register_paper(BARTLETT, """@article{bartlett2008reject,
  title = {Classification with a reject option using a hinge loss},
  author = {Bartlett, Peter L. and Wegkamp, Marten H.},
  journal = {Journal of Machine Learning Research}, volume = {9}, pages = {1823--1840}, year = {2008}
}""")
register_paper(FINOCCHIARO, """@article{finocchiaro2024embedding,
  title = {An embedding framework for the design and analysis of consistent polyhedral surrogates},
  author = {Finocchiaro, Jessie and Frongillo, Rafael M. and Waggoner, Bo},
  journal = {Journal of Machine Learning Research}, year = {2024},
  eprint = {1907.07330}, archivePrefix = {arXiv}
}""")
register_paper(CWR2026, """@misc{cwr2026lowdim,
  title = {Low-dimensional convex calibrated surrogates for classification with rejection},
  year = {2026},
  note = {Descriptive title: the paper's title, authors and arXiv id were not retrieved.
          jaxlab's cwr2d loss is a construction made for jaxlab, not the paper's formula.}
}""")
