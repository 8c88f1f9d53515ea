"""import jaxlab bounds the LAPACK behind JAX's CPU linear algebra to one thread (its spinning workers contend
with XLA's thread pool: the MSIP step went from 14 ms to 687 ms with the other core busy); users can change it
with set_lapack_threads or JAXLAB_LAPACK_THREADS, and NumPy's own BLAS is left alone."""

import os
import subprocess
import sys

import pytest

from jaxlab.core import lapack_threads, set_lapack_threads, usable_cores

_PROBE = (
    "import jaxlab\nfrom jaxlab.core import lapack_threads\nfrom threadpoolctl import threadpool_info\n"
    "numpy_blas = [i['num_threads'] for i in threadpool_info() if 'numpy' in i['filepath']]\n"
    "print(lapack_threads(), numpy_blas[0] if numpy_blas else None)\n"
)


def _probe(**env: str) -> tuple[str, str]:
    full = {k: v for k, v in os.environ.items() if k not in ("JAXLAB_LAPACK_THREADS", "OPENBLAS_NUM_THREADS")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, capture_output=True, text=True, timeout=120)
    return out.stdout.strip(), out.stderr


def test_import_sets_one_thread_and_leaves_numpy_alone():
    out, err = _probe()
    lapack, numpy_blas = out.split()
    assert lapack == "1", err
    if os.cpu_count() and os.cpu_count() > 1 and numpy_blas != "None":
        assert int(numpy_blas) > 1  # NumPy's own OpenBLAS keeps its default (one thread per core)


def test_environment_variable_overrides_the_default():
    assert _probe(JAXLAB_LAPACK_THREADS="2")[0].split()[0] == "2"
    off = _probe(JAXLAB_LAPACK_THREADS="off")[0].split()[0]
    assert off == str(os.cpu_count()) or int(off) > 1  # the library's own default


@pytest.mark.parametrize("bad", ["0", "two"])
def test_bad_environment_value_is_named(bad):
    _, err = _probe(JAXLAB_LAPACK_THREADS=bad)
    assert "JAXLAB_LAPACK_THREADS must be a positive integer or 'off'" in err


def test_set_lapack_threads_returns_the_previous_count():
    assert lapack_threads() == 1
    assert set_lapack_threads(3) == 1
    try:
        assert lapack_threads() == 3
    finally:
        assert set_lapack_threads(1) == 3


@pytest.mark.parametrize(("n", "exc"), [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_set_lapack_threads_rejects_bad_counts(n, exc):
    with pytest.raises(exc, match="n must be"):
        set_lapack_threads(n)


def test_usable_cores_is_the_affinity_mask():
    n = usable_cores()
    assert isinstance(n, int) and 1 <= n <= (os.cpu_count() or n)
    if hasattr(os, "sched_getaffinity"):
        assert n == len(os.sched_getaffinity(0))
