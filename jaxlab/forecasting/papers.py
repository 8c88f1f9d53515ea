"""The papers behind ``jaxlab.forecasting`` (registered once, on import) and their citation keys.

- ``EF``: J. Ma, S. Mu, R. Tang, H. Ma, Q. Huang, Z. Zhou, P. Wang, B. Wang, Y. Wang, "To See Far, Look Close:
  Evolutionary Forecasting for Long-term Time Series", arXiv:2601.23114 (2026);
- ``DLINEAR``: A. Zeng, M. Chen, L. Zhang, Q. Xu, "Are Transformers Effective for Time Series Forecasting?",
  arXiv:2205.13504 (AAAI 2023);
- ``PATCHTST``: Y. Nie, N. H. Nguyen, P. Sinthong, J. Kalagnanam, "A Time Series is Worth 64 Words",
  arXiv:2211.14730 (ICLR 2023);
- ``ITRANSFORMER``: Y. Liu et al., "iTransformer", arXiv:2310.06625 (ICLR 2024);
- ``REVIN``: T. Kim et al., "Reversible Instance Normalization for Accurate Time-Series Forecasting against
  Distribution Shift" (ICLR 2022);
- ``ETT``: the ETT data sets of H. Zhou et al., "Informer", arXiv:2012.07436 (AAAI 2021), registered with the
  loader in :mod:`jaxlab.data.ett`.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper
from jaxlab.data.ett import ETT

__all__ = ["DLINEAR", "EF", "ETT", "ITRANSFORMER", "PATCHTST", "REVIN"]

EF = "gen_ma2026evolutionary"
DLINEAR = "gen_zeng2023dlinear"
PATCHTST = "gen_nie2023patchtst"
ITRANSFORMER = "gen_liu2024itransformer"
REVIN = "gen_kim2022revin"

register_paper(EF, """
@article{ma2026evolutionary,
  title = {To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series},
  author = {Ma and others},
  journal = {arXiv preprint arXiv:2601.23114},
  note = {only the abstract and introduction were readable; jaxlab reconstructs the rest from them},
  year = {2026},
}""")

register_paper(DLINEAR, """
@inproceedings{zeng2023transformers,
  title = {Are Transformers Effective for Time Series Forecasting?},
  author = {Zeng, Ailing and Chen, Muxi and Zhang, Lei and Xu, Qiang},
  booktitle = {AAAI Conference on Artificial Intelligence},
  note = {arXiv:2205.13504},
  year = {2023},
}""")

register_paper(PATCHTST, """
@inproceedings{nie2023time,
  title = {A Time Series is Worth 64 Words: Long-term Forecasting with Transformers},
  author = {Nie, Yuqi and Nguyen, Nam H. and Sinthong, Phanwadee and Kalagnanam, Jayant},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2211.14730},
  year = {2023},
}""")

register_paper(ITRANSFORMER, """
@inproceedings{liu2024itransformer,
  title = {iTransformer: Inverted Transformers Are Effective for Time Series Forecasting},
  author = {Liu, Yong and Hu, Tengge and Zhang, Haoran and Wu, Haixu and Wang, Shiyu and Ma, Lintao and
            Long, Mingsheng},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2310.06625},
  year = {2024},
}""")

register_paper(REVIN, """
@inproceedings{kim2022reversible,
  title = {Reversible Instance Normalization for Accurate Time-Series Forecasting against Distribution Shift},
  author = {Kim, Taesung and Kim, Jinhee and Tae, Yunwon and Park, Cheonbok and Choi, Jang-Ho and Choo, Jaegul},
  booktitle = {International Conference on Learning Representations},
  year = {2022},
}""")
