"""Papers behind :mod:`jaxlab.scaling` (registered on import) and their citation keys.

Hoffmann et al. (arXiv:2203.15556) and Besiroglu et al. (arXiv:2404.10102) are registered with the data they
describe, :mod:`jaxlab.data.chinchilla`; their keys are re-exported here.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper
from jaxlab.data.chinchilla import BESIROGLU, HOFFMANN

__all__ = ["BESIROGLU", "FARSEER", "HOFFMANN", "KAPLAN", "KRICHELI", "MUENNIGHOFF", "TRANSTRUM"]

KRICHELI = "kricheli2026tpp"
KAPLAN = "kaplan2020scaling"
MUENNIGHOFF = "muennighoff2023data"
FARSEER = "li2025farseer"
TRANSTRUM = "transtrum2010sloppy"

register_paper(KRICHELI, """
@article{kricheli2026tpp,
  title = {Tokens-per-Parameter Coverage Is Critical for Robust LLM Scaling Law Extrapolation},
  author = {Kricheli, Joshua Shay and Reid, Alexander Lawrence and Sarkar, Soumajyoti and Gandikota, Venkata
            and Shakarian, Paulo},
  journal = {arXiv preprint arXiv:2605.08541},
  year = {2026}
}""")
register_paper(KAPLAN, """
@article{kaplan2020scaling,
  title = {Scaling Laws for Neural Language Models},
  author = {Kaplan, Jared and McCandlish, Sam and Henighan, Tom and others},
  journal = {arXiv preprint arXiv:2001.08361},
  year = {2020}
}""")
register_paper(MUENNIGHOFF, """
@inproceedings{muennighoff2023data,
  title = {Scaling Data-Constrained Language Models},
  author = {Muennighoff, Niklas and Rush, Alexander M. and Barak, Boaz and others},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:2305.16264},
  year = {2023}
}""")
register_paper(FARSEER, """
@article{li2025farseer,
  title = {Farseer: A Refined Scaling Law in Large Language Models},
  author = {Li, Houyi and others},
  journal = {arXiv preprint arXiv:2506.10972},
  year = {2025}
}""")
register_paper(TRANSTRUM, """
@article{transtrum2010sloppy,
  title = {Why are Nonlinear Fits to Data so Challenging?},
  author = {Transtrum, Mark K. and Machta, Benjamin B. and Sethna, James P.},
  journal = {Physical Review Letters},
  volume = {104},
  pages = {060201},
  year = {2010}
}""")
