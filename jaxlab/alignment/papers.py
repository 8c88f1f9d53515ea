"""BibTeX entries of the papers behind ``jaxlab.alignment`` (registered once, on import), and their keys."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["BEIRAMI", "GAO", "MONTEIRO_PAES", "MROUEH", "YANG"]

MONTEIRO_PAES = "monteiropaes2026limits"
BEIRAMI = "beirami2024bon"
YANG = "yang2024asymptotics"
GAO = "gao2023overoptimization"
MROUEH = "mroueh2024alignment"

register_paper(MONTEIRO_PAES, """@article{monteiropaes2026limits,
  title = {Theoretical Limits of Language Model Alignment},
  author = {Monteiro Paes, Lucas and Mackraz, Natalie and Theobald, Barry-John and Danieli, Federico},
  journal = {arXiv preprint arXiv:2605.07105},
  year = {2026}
}""")
register_paper(BEIRAMI, """@inproceedings{beirami2024bon,
  title = {Theoretical Guarantees on the Best-of-n Alignment Policy},
  author = {Beirami, Ahmad and Agarwal, Alekh and Berant, Jonathan and D'Amour, Alexander
            and Eisenstein, Jacob and Nagpal, Chirag and Suresh, Ananda Theertha},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:2401.01879},
  year = {2025}
}""")
register_paper(YANG, """@article{yang2024asymptotics,
  title = {Asymptotics of Language Model Alignment},
  author = {Yang, Joy Qiping and Salamatian, Salman and Sun, Ziteng and Suresh, Ananda Theertha
            and Beirami, Ahmad},
  journal = {arXiv preprint arXiv:2404.01730},
  year = {2024}
}""")
register_paper(GAO, """@inproceedings{gao2023overoptimization,
  title = {Scaling Laws for Reward Model Overoptimization},
  author = {Gao, Leo and Schulman, John and Hilton, Jacob},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:2210.10760},
  year = {2023}
}""")
register_paper(MROUEH, """@article{mroueh2024alignment,
  title = {Information Theoretic Guarantees For Policy Alignment In Large Language Models},
  author = {Mroueh, Youssef},
  journal = {arXiv preprint arXiv:2406.05883},
  year = {2024}
}""")
