"""The papers behind ``jaxlab.online`` (registered once, on import) and their citation keys.

A. Marsden and E. Hazan, *The Power of Second Order Methods for Sequence Preconditioning* (arXiv:2605.08390) and
*Universal Sequence Preconditioning* (arXiv:2502.06545); V. Vovk (2001); K. Azoury and M. Warmuth (2001);
N. Cesa-Bianchi and G. Lugosi (2006); F. Zhdanov and V. Vovk (arXiv:0910.4683); E. Hazan, K. Singh and C. Zhang
(arXiv:1711.00946); M. Zinkevich (2003).
The ETT data set (H. Zhou et al., arXiv:2012.07436) is registered with its loader, :mod:`jaxlab.data.ett`.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["AZOURY", "CESA_BIANCHI", "HAZAN_SPECTRAL", "MARSDEN_SECOND", "MARSDEN_USP", "VOVK", "ZHDANOV",
           "ZINKEVICH"]

MARSDEN_SECOND = "marsden2026second"
MARSDEN_USP = "marsden2025usp"
VOVK = "vovk2001competitive"
AZOURY = "azoury2001relative"
CESA_BIANCHI = "cesabianchi2006prediction"
HAZAN_SPECTRAL = "hazan2017spectral"
ZINKEVICH = "zinkevich2003online"
ZHDANOV = "zhdanov2009competing"

register_paper("marsden2026second", """
@article{marsden2026second,
  title = {The Power of Second Order Methods for Sequence Preconditioning},
  author = {Marsden, Annie and Hazan, Elad},
  journal = {arXiv preprint arXiv:2605.08390},
  year = {2026},
}""")

register_paper("marsden2025usp", """
@inproceedings{marsden2025usp,
  title = {Universal Sequence Preconditioning},
  author = {Marsden, Annie and Hazan, Elad},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:2502.06545},
  year = {2025},
}""")

register_paper("vovk2001competitive", """
@article{vovk2001competitive,
  title = {Competitive On-line Statistics},
  author = {Vovk, Volodya},
  journal = {International Statistical Review},
  volume = {69},
  number = {2},
  pages = {213--248},
  year = {2001},
}""")

register_paper("azoury2001relative", """
@article{azoury2001relative,
  title = {Relative Loss Bounds for On-line Density Estimation with the Exponential Family of Distributions},
  author = {Azoury, Katy S. and Warmuth, Manfred K.},
  journal = {Machine Learning},
  volume = {43},
  number = {3},
  pages = {211--246},
  year = {2001},
}""")

register_paper("cesabianchi2006prediction", """
@book{cesabianchi2006prediction,
  title = {Prediction, Learning, and Games},
  author = {Cesa-Bianchi, Nicol{\\`o} and Lugosi, G{\\'a}bor},
  publisher = {Cambridge University Press},
  year = {2006},
}""")

register_paper("hazan2017spectral", """
@inproceedings{hazan2017spectral,
  title = {Learning Linear Dynamical Systems via Spectral Filtering},
  author = {Hazan, Elad and Singh, Karan and Zhang, Cyril},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:1711.00946},
  year = {2017},
}""")

register_paper("zinkevich2003online", """
@inproceedings{zinkevich2003online,
  title = {Online Convex Programming and Generalized Infinitesimal Gradient Ascent},
  author = {Zinkevich, Martin},
  booktitle = {Proceedings of the 20th International Conference on Machine Learning},
  pages = {928--936},
  year = {2003},
}""")

register_paper("zhdanov2009competing", """
@article{zhdanov2009competing,
  title = {Competing with Gaussian linear experts},
  author = {Zhdanov, Fedor and Vovk, Vladimir},
  journal = {arXiv preprint arXiv:0910.4683},
  year = {2009},
}""")
