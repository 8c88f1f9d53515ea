"""BibTeX entries of the papers behind the FACTS suite scores (registered once, on import)."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

FACTS = "cheng2025facts"
GROUNDING = "jacovi2025factsgrounding"
SIMPLEQA = "wei2024simpleqa"

register_paper(
    FACTS,
    """
@article{cheng2025facts,
  title = {The FACTS Leaderboard: A Comprehensive Benchmark for Large Language Model Factuality},
  author = {Cheng, Aileen and Jacovi, Alon and Globerson, Amir and Golan, Ben and Kwong, Charles and Alberti, Chris
            and Tao, Connie and Ben-David, Eyal and Tomar, Gaurav Singh and Haas, Lukas and Bitton, Yonatan and
            others and Das, Dipanjan},
  journal = {arXiv preprint arXiv:2512.10791},
  year = {2025},
}""",
)

register_paper(
    GROUNDING,
    """
@article{jacovi2025facts,
  title = {The FACTS Grounding Leaderboard: Benchmarking LLMs' Ability to Ground Responses to Long-Form Input},
  author = {Jacovi, Alon and Wang, Andrew and Alberti, Chris and Tao, Connie and others},
  journal = {arXiv preprint arXiv:2501.03200},
  year = {2025},
}""",
)

register_paper(
    SIMPLEQA,
    """
@article{wei2024measuring,
  title = {Measuring short-form factuality in large language models},
  author = {Wei, Jason and Karina, Nguyen and Chung, Hyung Won and Jiao, Yunxin Joy and Papay, Spencer and
            Glaese, Amelia and Schulman, John and Fedus, William},
  journal = {arXiv preprint arXiv:2411.04368},
  year = {2024},
}""",
)
