"""BibTeX entries of the papers behind ``jaxlab.generative`` (registered once, on import).

Where a paper's text could not be retrieved the entry records only what its abstract states; keys carry a
``gen_`` prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

EF = "gen_ma2026evolutionary"
DLINEAR = "gen_zeng2023dlinear"
PATCHTST = "gen_nie2023patchtst"
ITRANSFORMER = "gen_liu2024itransformer"
REVIN = "gen_kim2022revin"
ETT = "gen_zhou2021informer"
ACTPANO = "gen_actpano3d2026"
GSPLAT = "gen_kerbl2023gaussian"
RECTIFIED_FLOW = "gen_liu2023rectified"
SD3 = "gen_esser2024sd3"
FLOW_MATCHING = "gen_lipman2023flow"
OT_CFM = "gen_tong2024otcfm"
SEMANTICFLOW = "gen_semanticflow2026"
FLOWAGENT = "gen_huang2026flowagent"

register_paper(EF, """
@article{ma2026evolutionary,
  title = {To See Far, Look Close: Evolutionary Forecasting for Long-term Time Series},
  author = {Ma and others},
  journal = {arXiv preprint arXiv:2601.23114},
  note = {only the opening of the paper was readable; the spec reconstructs the rest},
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

register_paper(ETT, """
@inproceedings{zhou2021informer,
  title = {Informer: Beyond Efficient Transformer for Long Sequence Time-Series Forecasting},
  author = {Zhou, Haoyi and Zhang, Shanghang and Peng, Jieqi and Zhang, Shuai and Li, Jianxin and Xiong, Hui and
            Zhang, Wancai},
  booktitle = {AAAI Conference on Artificial Intelligence},
  note = {introduces the ETT data sets; arXiv:2012.07436},
  year = {2021},
}""")

register_paper(ACTPANO, """
@misc{actpano3d2026,
  title = {ActPano3D: Active Text-to-3D Scene Generation with Memory-Guided Panoramic Exploration},
  note = {2026; paper text, authors and arXiv id not retrieved (abstract only); the spec reconstructs the method},
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

register_paper(FLOW_MATCHING, """
@inproceedings{lipman2023flow,
  title = {Flow Matching for Generative Modeling},
  author = {Lipman, Yaron and Chen, Ricky T. Q. and Ben-Hamu, Heli and Nickel, Maximilian and Le, Matt},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2210.02747},
  year = {2023},
}""")

register_paper(OT_CFM, """
@article{tong2024improving,
  title = {Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal Transport},
  author = {Tong, Alexander and Fatras, Kilian and Malkin, Nikolay and Huguet, Guillaume and Zhang, Yanlei and
            Rector-Brooks, Jarrid and Wolf, Guy and Bengio, Yoshua},
  journal = {Transactions on Machine Learning Research},
  note = {arXiv:2302.00482},
  year = {2024},
}""")

register_paper(SEMANTICFLOW, """
@misc{semanticflow2026,
  title = {SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification},
  note = {2026; known only through its abstract (authors, arXiv id and code not located); the spec reconstructs the
          method from the abstract and prior training-free guidance work},
  year = {2026},
}""")

register_paper(FLOWAGENT, """
@article{huang2026tools,
  title = {Tools as Continuous Flow for Evolving Agentic Reasoning},
  author = {Huang, Tairan and Shang, Siyu and Chen, Qiang and Su, Xiu and Chen, Yi},
  journal = {arXiv preprint arXiv:2605.07339},
  note = {abstract and secondary summaries only; author order differs between listings},
  year = {2026},
}""")
