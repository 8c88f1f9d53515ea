"""Make the NumPy references (tests/snn/snn_reference.py) importable under --import-mode=importlib."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
