"""Scaling-law fitting and the conditioning of fixed tokens-per-parameter designs (Kricheli et al.,
arXiv:2605.08541; Hoffmann et al., arXiv:2203.15556; Besiroglu et al., arXiv:2404.10102).

Submodules: :mod:`~jaxlab.scaling.laws` (L1 Chinchilla, L2 Kaplan, L3 Muennighoff, L4 Farseer),
:mod:`~jaxlab.scaling.fit` (Huber objective, L-BFGS, Levenberg-Marquardt, multistart, covariance, bootstrap),
:mod:`~jaxlab.scaling.conditioning` (equilibrated condition numbers, TPP-diversity threshold),
:mod:`~jaxlab.scaling.designs` (designs and the extrapolation experiment),
:mod:`~jaxlab.scaling.datasets` (the Chinchilla Figure 4 runs).
"""

from jaxlab.scaling import conditioning, datasets, designs, fit, laws

__all__ = ["conditioning", "datasets", "designs", "fit", "laws"]
