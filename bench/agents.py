"""Benchmarks of the agents and serving packages: TokenRouter decode throughput and RodInsert2D steps (issue 15).

Runs each ``bench/_agents_*.py`` script in its own process (so that each times its own compilations) and
relays their JSON lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("_agents_*.py")):
        status |= subprocess.run([sys.executable, str(script)], check=False).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())
