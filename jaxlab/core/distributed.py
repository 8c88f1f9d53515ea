"""Run jaxlab across several processes (hosts): start-up, gathering results, and the main-process test.

JAX runs one program per process (SPMD). After :func:`initialize`, ``jax.devices()`` lists the devices of every
process, so :func:`jaxlab.core.batch_mesh` (and every ``shard=`` option and :func:`jaxlab.core.sharded_vmap`)
lays a batch axis over all of them: each process computes the rows that live on its own devices. Results come
back as global arrays whose rows partly live on other processes; :func:`gather` turns them into the same host
NumPy array on every process.

The three things a multi-process run needs, which this module does for the caller:

1. **Initialise first.** ``jax.distributed.initialize`` must run before anything touches a JAX backend (before
   ``jax.devices()``, any array creation or computation). Importing jaxlab never initialises a backend, so
   ``import jaxlab`` may precede :func:`initialize`.
2. **Collectives on CPU.** Cross-process reductions between CPU devices need a collectives library; this
   module selects gloo (over TCP, no extra install), which is what a cluster of CPU nodes, or several processes
   on one machine, uses. On GPUs and TPUs the platform's own collectives (NCCL, ICI) are used and the setting
   has no effect.
3. **Gather what is not addressable.** ``np.asarray`` of an array sharded across processes raises; use
   :func:`gather`.

Launching (``N`` processes; ``ADDR:PORT`` is process 0's host and a free port)::

    # one host, two processes (each may also simulate devices with
    # XLA_FLAGS=--xla_force_host_platform_device_count=K)
    JAX_COORDINATOR_ADDRESS=localhost:12345 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=0 python run.py &
    JAX_COORDINATOR_ADDRESS=localhost:12345 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 python run.py

    # several hosts: the same, with ADDR the coordinator host's address, one process (or one per GPU) per host
    # SLURM: `srun python run.py`; initialize() reads SLURM's variables, no arguments needed

where ``run.py`` calls ``jaxlab.core.distributed.initialize()`` before its first JAX computation.
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from jaxlab.core.validation import check_int

__all__ = ["gather", "initialize", "is_main_process"]

# name of the argument -> environment variables read (first set wins) when the argument is omitted
_ENV = {
    "coordinator_address": ("JAX_COORDINATOR_ADDRESS",),
    "num_processes": ("JAX_NUM_PROCESSES", "WORLD_SIZE"),
    "process_id": ("JAX_PROCESS_ID", "RANK"),
}


def _from_env(name: str) -> str | None:
    for var in _ENV[name]:
        value = os.environ.get(var)
        if value:
            return value
    if name == "coordinator_address" and os.environ.get("MASTER_ADDR") and os.environ.get("MASTER_PORT"):
        return f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"  # torchrun's convention
    return None


def _as_count(value: Any, name: str, minimum: int) -> int | None:
    """An optional count, given as an int or (from the environment) as a decimal string."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    return check_int(value, name, min_value=minimum)


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    local_device_ids: int | list[int] | None = None,
    cpu_collectives: str = "gloo",
    initialization_timeout: int = 300,
) -> None:
    """Join this process to a multi-process JAX run (a thin wrapper of ``jax.distributed.initialize``).

    Call it once per process, before any JAX computation. Omitted arguments are read from the environment, in
    this order:

    - ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``;
    - torchrun's ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE``, ``RANK``;
    - what JAX detects itself: SLURM (``srun``), Open MPI (``mpirun``) and Cloud TPU.

    CPU devices use ``cpu_collectives`` (gloo by default) for cross-process reductions.

    Args:
      coordinator_address: ``"host:port"`` of process 0, reachable from every process; ``None`` reads the
        environment.
      num_processes: int >= 1, the number of processes; ``None`` reads the environment.
      process_id: int in ``[0, num_processes)``, this process's rank; ``None`` reads the environment.
      local_device_ids: restrict this process to these local devices (e.g. one GPU per process); ``None`` lets
        JAX choose.
      cpu_collectives: ``"gloo"`` or ``"mpi"``, the cross-process collectives of CPU devices.
      initialization_timeout: seconds to wait for every process to join.

    Raises:
      RuntimeError: a JAX backend is already initialised in this process (something computed, or called
        ``jax.devices()``, first), or the distributed system is already initialised.
      ValueError: ``num_processes`` < 1, ``process_id`` outside ``[0, num_processes)``, an unknown
        ``cpu_collectives``, or no coordinator address could be found.
      TypeError: ``num_processes`` or ``process_id`` is not an int.

    Example:
      Every process runs the same script, whose first JAX-related line after the imports is
      ``jaxlab.core.distributed.initialize()``; launch it as ``JAX_COORDINATOR_ADDRESS=localhost:12345
      JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=0 python run.py`` and the same with ``JAX_PROCESS_ID=1`` (it cannot
      run inside an interpreter that has already computed, such as this documentation's example runner).
    """
    if cpu_collectives not in ("gloo", "mpi"):
        raise ValueError(f"cpu_collectives must be 'gloo' or 'mpi', got {cpu_collectives!r}")
    if jax.distributed.is_initialized():
        raise RuntimeError("jaxlab.core.distributed.initialize was called twice: the distributed system is "
                           "already initialised in this process")
    coordinator_address = coordinator_address or _from_env("coordinator_address")
    num_processes = _as_count(
        num_processes if num_processes is not None else _from_env("num_processes"), "num_processes", 1)
    process_id = _as_count(process_id if process_id is not None else _from_env("process_id"), "process_id", 0)
    if num_processes is not None and process_id is not None and process_id >= num_processes:
        raise ValueError(f"process_id must be in [0, num_processes) = [0, {num_processes}), got {process_id}")
    jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id,
                                   local_device_ids=local_device_ids,
                                   initialization_timeout=initialization_timeout)
    except RuntimeError as exc:
        if "before any JAX" not in str(exc):
            raise
        raise RuntimeError(
            "initialize() must run before any JAX computation (and before jax.devices()): a JAX backend is "
            "already initialised in this process. Call it at the top of the program, right after the imports."
        ) from None
    except ValueError as exc:
        if "coordinator_address" in str(exc) or "Number of processes" in str(exc) or "process id" in str(exc):
            raise ValueError(
                f"{exc}: pass coordinator_address, num_processes and process_id, or set JAX_COORDINATOR_ADDRESS, "
                "JAX_NUM_PROCESSES and JAX_PROCESS_ID (or launch under SLURM / mpirun)"
            ) from None
        raise


def is_main_process() -> bool:
    """Whether this is process 0: the one that should print, write files and save checkpoints.

    Returns:
      ``jax.process_index() == 0``; ``True`` in a single-process run.
    """
    return jax.process_index() == 0


def _to_host(x: Any) -> Any:
    if not isinstance(x, jax.Array):
        return x
    if x.is_fully_addressable or x.is_fully_replicated:
        return np.asarray(x)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def gather(tree: Any) -> Any:
    """The host NumPy value of every array in ``tree``, identical on every process.

    An array sharded across processes (e.g. the output of a ``shard=True`` run after :func:`initialize`) is
    all-gathered; arrays that this process can read whole (local or replicated) are copied to the host without
    communication; leaves that are not JAX arrays are returned unchanged. Every process must call it with the
    same tree structure (it is a collective when some leaf is sharded across processes).

    Args:
      tree: a pytree whose leaves are JAX arrays (any shape and dtype) or other values.

    Returns:
      The same pytree with every JAX array replaced by a ``numpy.ndarray`` of its global shape and dtype.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.core.distributed import gather
      >>> gather({"x": jnp.arange(3.0), "n": 3})
      {'n': 3, 'x': array([0., 1., 2.], dtype=float32)}
    """
    return jax.tree_util.tree_map(_to_host, tree)
