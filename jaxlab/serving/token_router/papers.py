"""BibTeX entries of the papers behind token-level routed serving (registered once, on import).

TokenRouter's text could not be retrieved; its entry records only what the abstract states. Keys carry an ``srv_``
prefix so that they cannot clash with other areas' entries.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

TOKEN_ROUTER = "srv_tokenrouter2026"
COLLM = "srv_shen2024colllm"
R2R = "srv_fu2025r2r"
EDGE_ROUTING = "srv_she2025edge"

register_paper(TOKEN_ROUTER, """
@misc{tokenrouter2026,
  title = {TokenRouter: Efficient Serving of Token-Level Routed LLM Inference},
  note = {2026; model-centric serving with per-model subservers and delayed batching; title paraphrased from the
          abstract, authors and arXiv id not retrieved (abstract only); the method is reconstructed from the abstract},
  year = {2026},
}""")

register_paper(COLLM, """
@inproceedings{shen2024learning,
  title = {Learning to Decode Collaboratively with Multiple Language Models},
  author = {Shen, Zejiang and Lang, Hunter and Wang, Bailin and Kim, Yoon and Sontag, David},
  booktitle = {Annual Meeting of the Association for Computational Linguistics},
  note = {Co-LLM; arXiv:2403.03870},
  year = {2024},
}""")

register_paper(R2R, """
@misc{fu2025r2r,
  title = {R2R: Efficiently Navigating Divergent Reasoning Paths with Small-Large Model Token Routing},
  author = {Fu, Tianyu and others},
  note = {arXiv:2505.21600},
  year = {2025},
}""")

register_paper(EDGE_ROUTING, """
@misc{she2025tokenlevel,
  title = {Token Level Routing Inference System for Edge Devices},
  author = {She, Jianshu and Zheng, Wenhao and Liu, Zhengzhong and Wang, Hongyi and Xing, Eric and Yao, Huaxiu
            and Ho, Qirong},
  note = {arXiv:2504.07878},
  year = {2025},
}""")
