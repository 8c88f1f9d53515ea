"""BibTeX entries of the papers behind ``jaxlab.generative.active_scene`` (registered once, on import).

ActPano3D (2026, abstract only) and 3D Gaussian splatting (Kerbl et al., arXiv:2308.04079). Keys carry a ``gen_``
prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

ACTPANO = "gen_actpano3d2026"
GSPLAT = "gen_kerbl2023gaussian"

register_paper(ACTPANO, """
@misc{actpano3d2026,
  title = {ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration},
  note = {2026; paper text, authors and arXiv id not retrieved (abstract only); jaxlab reconstructs the method},
  year = {2026},
}""")

register_paper(GSPLAT, """
@article{kerbl20233d,
  title = {3D Gaussian Splatting for Real-Time Radiance Field Rendering},
  author = {Kerbl, Bernhard and Kopanas, Georgios and Leimk{\\"u}hler, Thomas and Drettakis, George},
  journal = {ACM Transactions on Graphics},
  volume = {42},
  number = {4},
  year = {2023},
}""")
