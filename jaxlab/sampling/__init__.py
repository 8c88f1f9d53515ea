"""Particle and Langevin samplers: MSIP quadrature (``jaxlab.sampling.msip``) and annealed Langevin for
compositional score-based inference (``jaxlab.sampling.annealed_langevin``). Import the submodules."""
