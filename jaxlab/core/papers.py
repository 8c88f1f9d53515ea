"""Papers behind the shared primitives (area ``core``): the kernel two-sample test (MMD), the kernelized Stein
discrepancy, the IMQ kernel, energy statistics and the Förstner metric."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["FORSTNER", "GORHAM", "GRETTON", "LIU", "SZEKELY"]

GRETTON = "gretton2012mmd"
LIU = "liu2016ksd"
GORHAM = "gorham2017imq"
SZEKELY = "szekely2013energy"
FORSTNER = "forstner2003metric"

register_paper(GRETTON, """@article{gretton2012kernel,
  title = {A Kernel Two-Sample Test},
  author = {Gretton, Arthur and Borgwardt, Karsten M. and Rasch, Malte J. and
            Sch{\\"o}lkopf, Bernhard and Smola, Alexander},
  journal = {Journal of Machine Learning Research},
  volume = {13},
  pages = {723--773},
  year = {2012}
}""")
register_paper(LIU, """@inproceedings{liu2016kernelized,
  title = {A Kernelized Stein Discrepancy for Goodness-of-fit Tests},
  author = {Liu, Qiang and Lee, Jason D. and Jordan, Michael I.},
  booktitle = {International Conference on Machine Learning},
  pages = {276--284},
  year = {2016}
}""")
register_paper(GORHAM, """@inproceedings{gorham2017measuring,
  title = {Measuring Sample Quality with Kernels},
  author = {Gorham, Jackson and Mackey, Lester},
  booktitle = {International Conference on Machine Learning},
  pages = {1292--1301},
  year = {2017}
}""")
register_paper(SZEKELY, """@article{szekely2013energy,
  title = {Energy statistics: A class of statistics based on distances},
  author = {Sz{\\'e}kely, G{\\'a}bor J. and Rizzo, Maria L.},
  journal = {Journal of Statistical Planning and Inference},
  volume = {143},
  number = {8},
  pages = {1249--1272},
  year = {2013}
}""")
register_paper(FORSTNER, """@incollection{forstner2003metric,
  title = {A Metric for Covariance Matrices},
  author = {F{\\"o}rstner, Wolfgang and Moonen, Boudewijn},
  booktitle = {Geodesy -- The Challenge of the 3rd Millennium},
  pages = {299--309},
  publisher = {Springer},
  year = {2003}
}""")
