"""jaxlab: the core methods of a set of 2026 research papers as pure, composable JAX functions.

Areas live in subpackages (``jaxlab.kernels``, ``jaxlab.sampling``, ...) and are imported on demand, so
``import jaxlab`` stays light. ``jaxlab.cite(name)`` returns the BibTeX behind any function.
"""

from jaxlab.core.citations import cite

__version__ = "0.1.0"

__all__ = ["__version__", "cite"]
