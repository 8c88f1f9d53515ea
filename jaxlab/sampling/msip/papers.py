"""BibTeX of the papers behind the MSIP area, registered once and imported by its modules.

- ``MSIP``: A. Belhadji, D. Sharp, Y. M. Marzouk, *To discretize continually: Mean shift interacting particle
  systems for Bayesian inference*, arXiv:2605.14142 (2026).
- ``QUANTIZATION``: A. Belhadji, D. Sharp, Y. M. Marzouk, *Weighted quantization using MMD: From mean field to
  mean shift via gradient flows*, arXiv:2502.10600 (2025).
- ``KFRFLOW``: A. Maurais, Y. Marzouk, *Sampling in Unit Time with Kernel Fisher-Rao Flow*, ICML 2024 (the 2-D
  benchmark posteriors).
- ``NEAL``: R. M. Neal, *Slice sampling*, Annals of Statistics 2003 (the funnel).
- ``ARISTOFF``: D. Aristoff, W. Bangerth, *A benchmark for the Bayesian inversion of coefficients in partial
  differential equations*, SIAM Review 2023, arXiv:2102.07263.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["ARISTOFF", "KFRFLOW", "MSIP", "NEAL", "QUANTIZATION"]

MSIP = "belhadji2026msip"
QUANTIZATION = "belhadji2025quantization"
KFRFLOW = "maurais2024kfrflow"
NEAL = "neal2003slice"
ARISTOFF = "aristoff2023benchmark"

register_paper(MSIP, """@article{belhadji2026discretize,
  title = {To discretize continually: Mean shift interacting particle systems for Bayesian inference},
  author = {Belhadji, Ayoub and Sharp, Daniel and Marzouk, Youssef M.},
  journal = {arXiv preprint arXiv:2605.14142},
  year = {2026}
}""")
register_paper(QUANTIZATION, """@article{belhadji2025weighted,
  title = {Weighted quantization using {MMD}: From mean field to mean shift via gradient flows},
  author = {Belhadji, Ayoub and Sharp, Daniel and Marzouk, Youssef},
  journal = {arXiv preprint arXiv:2502.10600},
  year = {2025}
}""")
register_paper(NEAL, """@article{neal2003slice,
  title = {Slice sampling},
  author = {Neal, Radford M.},
  journal = {The Annals of Statistics},
  volume = {31},
  number = {3},
  pages = {705--767},
  year = {2003}
}""")
register_paper(KFRFLOW, """@inproceedings{maurais2024sampling,
  title = {Sampling in Unit Time with Kernel {F}isher-{R}ao Flow},
  author = {Maurais, Aimee and Marzouk, Youssef},
  booktitle = {International Conference on Machine Learning},
  year = {2024}
}""")
register_paper(ARISTOFF, """@article{aristoff2023benchmark,
  title = {A benchmark for the {B}ayesian inversion of coefficients in partial differential equations},
  author = {Aristoff, David and Bangerth, Wolfgang},
  journal = {SIAM Review},
  volume = {65},
  number = {4},
  pages = {1074--1105},
  year = {2023},
  note = {arXiv:2102.07263}
}""")
