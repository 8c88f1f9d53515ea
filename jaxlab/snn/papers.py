"""BibTeX entries of the papers behind ``jaxlab.snn`` (registered once, on import).

The DSN paper's text and arXiv id were not located; its entry records the title of the authors' repository
(github.com/Ruichen0424/DSN), whose reference implementation the neuron follows.
"""

from __future__ import annotations

from jaxlab.core.citations import register_paper

DSN = "dsn2026dormant"
HOROWITZ = "horowitz2014energy"

register_paper(
    DSN,
    """
@misc{dsn2026dormant,
  title = {The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks},
  note = {Reference implementation github.com/Ruichen0424/DSN (MIT); paper text and arXiv id not located},
  year = {2026},
}""",
)

register_paper(
    HOROWITZ,
    """
@inproceedings{horowitz2014computing,
  title = {Computing's energy problem (and what we can do about it)},
  author = {Horowitz, Mark},
  booktitle = {IEEE International Solid-State Circuits Conference (ISSCC)},
  pages = {10--14},
  year = {2014},
}""",
)
