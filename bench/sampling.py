"""Benchmarks of the sampling package: MSIP quadrature (issue 3) and annealed Langevin (issue 4).

Runs ``bench/_sampling_msip.py`` and ``bench/_sampling_langevin.py`` one after the other, each in its own
process (so that each times its own compilations), and relays their JSON lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in ("_sampling_msip.py", "_sampling_langevin.py"):
        status |= subprocess.run([sys.executable, str(HERE / script)], check=False).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())
