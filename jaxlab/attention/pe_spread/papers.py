"""BibTeX entries of the papers behind ``jaxlab.attention.pe_spread`` (registered once, on import).

The target paper's full text, title, authors and arXiv id could not be retrieved; its entry records only what
the abstract states. The keys carry a ``pe_`` prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["ALIBI", "NOPE", "ROPE", "SPREAD", "VASWANI"]

SPREAD = "pe_spread2026"
VASWANI = "pe_vaswani2017attention"
ALIBI = "pe_press2022alibi"
ROPE = "pe_su2021roformer"
NOPE = "pe_kazemnejad2023nope"

register_paper(SPREAD, """
@misc{pe_spread2026,
  title = {Positional spread of additive positional encodings},
  note = {2026 paper on the positional spread S(E) = ||E - 1 mean(E)^T||_F^2 of additive positional encodings;
          title, authors and arXiv id not retrieved (only the abstract was available)},
  year = {2026},
}""")

register_paper(VASWANI, """
@inproceedings{vaswani2017attention,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and Jones, Llion and
            Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:1706.03762},
  year = {2017},
}""")

register_paper(ALIBI, """
@inproceedings{press2022train,
  title = {Train Short, Test Long: Attention with Linear Biases Enables Input Length Extrapolation},
  author = {Press, Ofir and Smith, Noah A. and Lewis, Mike},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2108.12409},
  year = {2022},
}""")

register_paper(ROPE, """
@article{su2021roformer,
  title = {RoFormer: Enhanced Transformer with Rotary Position Embedding},
  author = {Su, Jianlin and Lu, Yu and Pan, Shengfeng and Murtadha, Ahmed and Wen, Bo and Liu, Yunfeng},
  journal = {arXiv preprint arXiv:2104.09864},
  year = {2021},
}""")

register_paper(NOPE, """
@inproceedings{kazemnejad2023impact,
  title = {The Impact of Positional Encoding on Length Generalization in Transformers},
  author = {Kazemnejad, Amirhossein and Padhi, Inkit and Natesan Ramamurthy, Karthikeyan and Das, Payel and
            Reddy, Siva},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:2305.19466},
  year = {2023},
}""")
