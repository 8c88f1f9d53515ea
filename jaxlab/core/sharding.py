"""Scale a leading batch axis (particles, chains, starts, seeds) across devices with :mod:`jax.sharding`.

This is how jaxlab runs past one device and past one host: the batch axis of the inputs is laid out over a
1-d device mesh named ``"batch"``, and XLA's SPMD partitioner splits the vmapped computation accordingly
(each device computes its slice; nothing is gathered until the caller asks). On several hosts, build the mesh
over ``jax.devices()`` after ``jax.distributed.initialize()``; the functions here are unchanged.

On a CPU-only machine, ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (set before importing jax)
simulates 8 devices, which is how the tests check that sharded and unsharded results agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["BATCH_AXIS", "batch_mesh", "batch_sharding", "shard_batch", "sharded_vmap"]

BATCH_AXIS = "batch"


def _place(x: Any, sharding: NamedSharding) -> jax.Array:
    """``x`` laid out with ``sharding``, which may span devices of several processes.

    On one process this is ``jax.device_put``. When the mesh spans processes, each process holds the same host
    value of ``x`` (the SPMD convention) and builds the global array from the slices that live on its own
    devices; an array that is already global is resharded by a jitted identity.
    """
    if sharding.is_fully_addressable:
        return jax.device_put(x, sharding)
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return jax.jit(lambda a: a, out_shardings=sharding)(x)
    if jax.dtypes.issubdtype(jnp.result_type(x), jax.dtypes.prng_key):  # typed keys: place their raw data
        return jax.random.wrap_key_data(_place(jax.random.key_data(x), sharding), impl=jax.random.key_impl(x))
    host = np.asarray(x)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def batch_mesh(devices: Sequence[Any] | None = None) -> Mesh:
    """A 1-d device mesh with the single axis ``"batch"``.

    Args:
      devices: the devices to lay the batch over, in order; ``None`` means ``jax.devices()`` (every device of
        every process once ``jax.distributed.initialize()`` has run).

    Returns:
      A :class:`jax.sharding.Mesh` of shape ``(len(devices),)`` with axis name ``"batch"``.

    Raises:
      ValueError: ``devices`` is empty.
    """
    devs = list(jax.devices() if devices is None else devices)
    if not devs:
        raise ValueError("devices must contain at least one device, got an empty sequence")
    return Mesh(np.asarray(devs), (BATCH_AXIS,))


def batch_sharding(mesh: Mesh | None = None) -> NamedSharding:
    """Sharding that splits axis 0 over the mesh's ``"batch"`` axis and replicates the other axes.

    Args:
      mesh: a mesh with a ``"batch"`` axis; ``None`` means :func:`batch_mesh` over every device.

    Returns:
      ``NamedSharding(mesh, PartitionSpec("batch"))``.
    """
    return NamedSharding(mesh or batch_mesh(), PartitionSpec(BATCH_AXIS))


def shard_batch(tree: Any, mesh: Mesh | None = None) -> Any:
    """Place every leaf of ``tree`` with its leading axis split across the mesh.

    Args:
      tree: pytree of arrays (or array-likes), each with a leading batch axis whose size is a multiple of the
        number of devices.
      mesh: the mesh; ``None`` means :func:`batch_mesh` over every device.

    Returns:
      The same pytree with every leaf a JAX array placed with :func:`batch_sharding` (values unchanged).

    Raises:
      ValueError: a leaf is a scalar, or its leading size is not a multiple of the number of devices (use
        :func:`sharded_vmap`, which pads, when sizes are arbitrary).
    """
    mesh = mesh or batch_mesh()
    n_dev = mesh.devices.size
    sharding = batch_sharding(mesh)

    def put(x):
        x = jnp.asarray(x)
        if x.ndim == 0:
            raise ValueError("shard_batch needs arrays with a leading batch axis, got a scalar leaf")
        if x.shape[0] % n_dev:
            raise ValueError(
                f"leading axis of size {x.shape[0]} is not a multiple of the {n_dev} devices; "
                "pad it or use sharded_vmap"
            )
        return _place(x, sharding)

    return jax.tree_util.tree_map(put, tree)


def sharded_vmap(
    fn: Callable[..., Any],
    in_axes: int | Sequence[int | None] | None = 0,
    *,
    mesh: Mesh | None = None,
) -> Callable[..., Any]:
    """``jax.vmap(fn, in_axes)``, jitted, with the mapped inputs split across devices.

    Arguments mapped on axis 0 are padded (by repeating their last entry) to a multiple of the device count,
    sharded over the ``"batch"`` mesh axis, and the padding is removed from the outputs. Arguments with
    ``in_axes`` ``None`` are replicated. The result equals ``jax.vmap(fn, in_axes)(*args)`` up to
    floating-point reassociation by the partitioner (bitwise equal in practice for elementwise batches).

    Args:
      fn: the function to map; it takes positional arguments only.
      in_axes: ``0`` (map every argument over its leading axis) or one entry per positional argument, each
        ``0`` (mapped) or ``None`` (replicated), at least one ``0``.
      mesh: the mesh; ``None`` means :func:`batch_mesh` over every device, looked up at each call.

    Returns:
      ``wrapped(*args)``: the batched, jitted and sharded ``fn``. Its outputs have the leading size ``n`` of the
      mapped arguments.

    Raises:
      ValueError: (at call) ``in_axes`` has an entry other than ``0`` or ``None`` or a length different from
        the number of arguments, no argument is mapped, or the mapped arguments' leaves do not share one
        leading size.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.core import sharded_vmap
      >>> f = sharded_vmap(lambda x, c: jnp.sum(x**2) + c, in_axes=(0, None))
      >>> f(jnp.ones((5, 3)), 1.0).shape
      (5,)
    """
    jitted = jax.jit(jax.vmap(fn, in_axes=in_axes))

    def wrapped(*args):
        mesh_ = mesh or batch_mesh()
        n_dev = mesh_.devices.size
        axes = in_axes if isinstance(in_axes, (list, tuple)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(f"in_axes has {len(axes)} entries but {len(args)} arguments were given")
        if any(a not in (0, None) for a in axes):
            raise ValueError(f"sharded_vmap maps axis 0 or nothing, got in_axes={in_axes!r}")
        sizes = {
            int(jnp.shape(leaf)[0])
            for a, arg in zip(axes, args, strict=True)
            if a == 0
            for leaf in jax.tree_util.tree_leaves(arg)
        }
        if len(sizes) != 1:
            raise ValueError(f"mapped arguments must share one leading size, got sizes {sorted(sizes)}")
        (n,) = sizes
        n_pad = (-n) % n_dev
        replicated = NamedSharding(mesh_, PartitionSpec())

        def pad_and_shard(x):
            x = jnp.asarray(x)
            if n_pad:
                x = jnp.concatenate([x, jnp.repeat(x[-1:], n_pad, axis=0)], axis=0)
            return _place(x, batch_sharding(mesh_))

        placed = [
            jax.tree_util.tree_map(pad_and_shard, arg)
            if a == 0
            else jax.tree_util.tree_map(lambda x: _place(jnp.asarray(x), replicated), arg)
            for a, arg in zip(axes, args, strict=True)
        ]
        out = jitted(*placed)
        return jax.tree_util.tree_map(lambda y: y[:n], out) if n_pad else out

    return wrapped

