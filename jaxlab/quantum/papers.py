"""Papers behind :mod:`jaxlab.quantum` (registered once, on import) and their citation keys."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["ADJOINT", "DUFFY", "NTK", "QNTK", "RAHAMAN", "SAP", "SCHULD", "TANCIK"]

SAP = "xu2024spectral"
SCHULD = "schuld2021encoding"
QNTK = "liu2022qntk"
NTK = "jacot2018ntk"
RAHAMAN = "rahaman2019spectral"
TANCIK = "tancik2020fourier"
DUFFY = "duffy2025spectralbias"
ADJOINT = "jones2020adjoint"

register_paper(
    SAP,
    """
@article{xu2024spectral,
  title = {The Spectral Amplitude Principle for Dynamics of Quantum Neural Networks},
  author = {Xu, Yi-hang and Zhang, Dan-Bo and Yan, Junchi},
  journal = {arXiv preprint arXiv:2409.06682},
  note = {v3; v1 titled "Frequency principle for quantum machine learning via Fourier analysis"},
  year = {2024},
}""",
)

register_paper(
    SCHULD,
    """
@article{schuld2021effect,
  title = {Effect of data encoding on the expressive power of variational quantum machine learning models},
  author = {Schuld, Maria and Sweke, Ryan and Meyer, Johannes Jakob},
  journal = {Physical Review A},
  volume = {103},
  pages = {032430},
  note = {arXiv:2008.08605},
  year = {2021},
}""",
)

register_paper(
    QNTK,
    """
@article{liu2022representation,
  title = {Representation learning via quantum neural tangent kernels},
  author = {Liu, Junyu and Tacchino, Francesco and Glick, Jennifer R. and Jiang, Liang and Mezzacapo, Antonio},
  journal = {PRX Quantum},
  volume = {3},
  pages = {030323},
  note = {arXiv:2111.04225; see also Shirai et al., Quantum tangent kernel, arXiv:2111.02951},
  year = {2022},
}""",
)

register_paper(
    NTK,
    """
@inproceedings{jacot2018neural,
  title = {Neural Tangent Kernel: Convergence and Generalization in Neural Networks},
  author = {Jacot, Arthur and Gabriel, Franck and Hongler, Cl{\\'e}ment},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:1806.07572},
  year = {2018},
}""",
)

register_paper(
    RAHAMAN,
    """
@inproceedings{rahaman2019spectral,
  title = {On the Spectral Bias of Neural Networks},
  author = {Rahaman, Nasim and Baratin, Aristide and Arpit, Devansh and Draxler, Felix and Lin, Min and
            Hamprecht, Fred and Bengio, Yoshua and Courville, Aaron},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:1806.08734},
  year = {2019},
}""",
)

register_paper(
    TANCIK,
    """
@inproceedings{tancik2020fourier,
  title = {Fourier Features Let Networks Learn High Frequency Functions in Low Dimensional Domains},
  author = {Tancik, Matthew and Srinivasan, Pratul P. and Mildenhall, Ben and Fridovich-Keil, Sara and
            Raghavan, Nithin and Singhal, Utkarsh and Ramamoorthi, Ravi and Barron, Jonathan T. and Ng, Ren},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:2006.10739},
  year = {2020},
}""",
)

register_paper(
    DUFFY,
    """
@article{duffy2025spectral,
  title = {Spectral bias in variational quantum machine learning},
  author = {Duffy, Callum and Jastrzebski, Marcin},
  journal = {arXiv preprint arXiv:2506.22555},
  year = {2025},
}""",
)

register_paper(
    ADJOINT,
    """
@article{jones2020adjoint,
  title = {Efficient calculation of gradients in classical simulations of variational quantum algorithms},
  author = {Jones, Tyson and Gacon, Julien},
  journal = {arXiv preprint arXiv:2009.02823},
  year = {2020},
}""",
)
