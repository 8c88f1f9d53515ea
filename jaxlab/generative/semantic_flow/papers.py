"""BibTeX entries of the papers behind ``jaxlab.generative.semantic_flow`` (registered once, on import).

Rectified flow (Liu, Gong, Liu, arXiv:2209.03003), Stable Diffusion 3 / MM-DiT (Esser et al., arXiv:2403.03206)
and SemanticFlow (2026, known only through its abstract). Keys carry a ``gen_`` prefix so that they cannot clash
with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

RECTIFIED_FLOW = "gen_liu2023rectified"
SD3 = "gen_esser2024sd3"
SEMANTICFLOW = "gen_semanticflow2026"

register_paper(RECTIFIED_FLOW, """
@inproceedings{liu2023flow,
  title = {Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified Flow},
  author = {Liu, Xingchao and Gong, Chengyue and Liu, Qiang},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2209.03003},
  year = {2023},
}""")

register_paper(SD3, """
@inproceedings{esser2024scaling,
  title = {Scaling Rectified Flow Transformers for High-Resolution Image Synthesis},
  author = {Esser, Patrick and Kulal, Sumith and Blattmann, Andreas and Entezari, Rahim and M{\\"u}ller, Jonas and
            Saini, Harry and Levi, Yam and Lorenz, Dominik and Sauer, Axel and Boesel, Frederic and others},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:2403.03206; MM-DiT},
  year = {2024},
}""")

register_paper(SEMANTICFLOW, """
@misc{semanticflow2026,
  title = {SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification},
  note = {2026; known only through its abstract (authors, arXiv id and code not located); jaxlab reconstructs the
          method from the abstract and prior training-free guidance work},
  year = {2026},
}""")
