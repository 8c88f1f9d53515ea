"""glibc's malloc thresholds set by ``import jaxlab``: large freed buffers are reused without page faults."""

import os
import platform
import subprocess
import sys

import pytest

from jaxlab.core import keep_large_buffers

_GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# malloc, write and free a 96 MiB block twice; print the minor page faults of the second round
_SCRIPT = r"""
import ctypes, ctypes.util, resource
import jaxlab  # noqa: F401  (the import applies the setting unless JAXLAB_MALLOC=off)

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
size = 96 * 2**20

def touch():
    p = libc.malloc(size)
    ctypes.memset(p, 1, size)
    libc.free(p)

touch()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
touch()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _second_round_faults(malloc_env: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop("JAXLAB_MALLOC", None)
    if malloc_env is not None:
        env["JAXLAB_MALLOC"] = malloc_env
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not _GLIBC, reason="the setting applies to glibc only")
def test_a_freed_large_buffer_is_reused_without_page_faults():
    pages = 96 * 2**20 // 4096  # 24,576 pages of 4 KiB
    kept = _second_round_faults(None)
    fresh = _second_round_faults("off")
    assert fresh > pages // 2, fresh  # glibc's defaults: the buffer is mapped afresh, each page faults
    assert kept < pages // 20, kept  # jaxlab's setting: the heap serves it again


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"mmap_threshold": -1}, ValueError, "mmap_threshold"),
    ({"mmap_threshold": 2**31}, ValueError, "mmap_threshold"),
    ({"mmap_threshold": 1.5}, TypeError, "mmap_threshold"),
    ({"trim_threshold": -5}, ValueError, "trim_threshold"),
    ({"trim_threshold": "1"}, TypeError, "trim_threshold"),
])
def test_bad_thresholds_name_themselves(kwargs, error, match):
    with pytest.raises(error, match=match):
        keep_large_buffers(**kwargs)


def test_keep_large_buffers_reports_whether_it_applied():
    assert keep_large_buffers() is _GLIBC  # the defaults again: harmless to repeat
