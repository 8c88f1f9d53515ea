"""Claims for the tests of ``jaxlab verify``'s worker processes (imported by name in the spawned workers)."""

import os

from jaxlab.core import verification as C

AREA = "_parallel_fixture"


@C.claim(area=AREA, paper="gretton2012mmd")
def passes():
    return C.ClaimResult.at_most(0.0, 1.0, details=f"pid={os.getpid()} precision={C.precision()}")


@C.claim(area=AREA, paper="gretton2012mmd")
def fails():
    return C.ClaimResult.at_most(2.0, 1.0, details=f"pid={os.getpid()} precision={C.precision()}")


@C.claim(area=AREA, paper="gretton2012mmd", expected="not reproduced")
def negative_result_holds():
    """A documented negative result whose check (the measured opposite) holds."""
    return C.ClaimResult.at_most(0.0, 1.0, details=f"pid={os.getpid()} precision={C.precision()}")


@C.claim(area=AREA, paper="gretton2012mmd")
def raises():
    raise RuntimeError("boom in a worker")


@C.claim(area=AREA, paper="gretton2012mmd")
def kills_its_worker():
    os._exit(3)


@C.claim(area=AREA, paper="gretton2012mmd")
def runs_after_the_crash():
    return C.ClaimResult.at_most(0.0, 1.0, details=f"pid={os.getpid()} precision={C.precision()}")


def dies_at_start(dtype, cache, conn):
    """Stands in for the worker's entry point: a worker process that exits before asking for work."""
    os._exit(5)
