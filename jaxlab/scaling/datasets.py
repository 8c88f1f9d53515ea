"""The Chinchilla Figure 4 runs: the loader lives in :mod:`jaxlab.data.chinchilla`; re-exported here."""

from jaxlab.data.chinchilla import CHINCHILLA_FILE, ScalingData, load_chinchilla

__all__ = ["CHINCHILLA_FILE", "ScalingData", "load_chinchilla"]
