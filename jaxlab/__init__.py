"""jaxlab: the core methods of a set of 2026 research papers as pure, composable JAX functions.

Areas live in subpackages (``jaxlab.kernels``, ``jaxlab.sampling``, ...) and are imported on demand, so
``import jaxlab`` stays light. ``jaxlab.cite(name)`` returns the BibTeX behind any function.

Importing jaxlab sets the LAPACK that JAX's CPU backend calls to one thread (it contends with XLA's own
threads otherwise; see :mod:`jaxlab.core.threads`), and on Linux with glibc keeps freed buffers of up to 256 MiB
in the heap for reuse (a fresh large buffer costs a page fault per 4 KiB page; see :mod:`jaxlab.core.allocator`).
"""

from jaxlab.core import allocator as _allocator
from jaxlab.core import threads as _threads
from jaxlab.core.citations import cite

_threads._apply_default()
_allocator._apply_default()

__version__ = "0.1.0"

__all__ = ["__version__", "cite"]
