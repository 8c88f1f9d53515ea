"""BibTeX entry of the confidence-threshold token router (edge token routing), used by
:func:`jaxlab.serving.token_router.confidence_router`; not in the shared serving registry."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

EDGE_ROUTING = "srv_she2025edge"

register_paper(EDGE_ROUTING, """
@misc{she2025tokenlevel,
  title = {Token Level Routing Inference System for Edge Devices},
  author = {She, Jianshu and Zheng, Wenhao and Liu, Zhengzhong and Wang, Hongyi and Xing, Eric and Yao, Huaxiu
            and Ho, Qirong},
  note = {arXiv:2504.07878},
  year = {2025},
}""")
