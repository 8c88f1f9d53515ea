"""Benchmarks of the generative package: rectified flow / SemanticFlow and its Attend-and-Excite side-by-side,
conditional flow matching against torchcfm / flow_matching / POT, FlowAgent (issue 13), evolutionary-forecasting
roll-out and panoramic ray casting (issue 14).

Runs each ``bench/_generative_*.py`` script in its own process (so that each times its own compilations) and
relays their JSON lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("_generative_*.py")):
        status |= subprocess.run([sys.executable, str(script)], check=False).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())
