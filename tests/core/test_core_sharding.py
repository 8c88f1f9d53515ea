"""Sharded == unsharded on 8 simulated CPU devices (in a subprocess, since the device count is fixed at
jax start-up), and the single-device behaviour in-process."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.core import batch_mesh, shard_batch, sharded_vmap
from jaxlab.kernels import mmd2

SCRIPT = textwrap.dedent(r"""
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jaxlab.core import run, shard_batch, sharded_vmap
    from jaxlab.kernels import mmd2
    assert len(jax.devices()) == 8
    X = jax.random.normal(jax.random.key(0), (13, 20, 2))
    Y = jax.random.normal(jax.random.key(1), (30, 2))
    f = lambda x, y: mmd2(x, None, y, None, lengthscale=0.7)
    a = sharded_vmap(f, in_axes=(0, None))(X, Y)
    b = jax.vmap(f, in_axes=(0, None))(X, Y)
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    # chains of an init/step loop sharded over devices
    step = lambda k, x: (0.9 * x + jax.random.normal(k, x.shape), x.sum())
    chains = lambda k: run(step, jnp.zeros(3), k, 20)[0]
    keys = jax.random.split(jax.random.key(2), 16)
    sharded_keys = shard_batch(keys)
    assert len(sharded_keys.sharding.device_set) == 8
    c = jax.jit(jax.vmap(chains))(sharded_keys)
    d = jax.vmap(chains)(keys)
    np.testing.assert_allclose(c, d, rtol=1e-13)
    print("OK", len(c.sharding.device_set))
""")


def test_sharded_equals_unsharded_on_eight_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["OK", "8"]


def test_single_device_paths():
    X = jax.random.normal(jax.random.key(0), (5, 10, 2))
    f = lambda x: mmd2(x, None, x[:3], None, lengthscale=1.0)  # noqa: E731
    np.testing.assert_allclose(sharded_vmap(f)(X), jax.vmap(f)(X), rtol=1e-13)
    tree = shard_batch({"a": jnp.ones((len(jax.devices()) * 2, 3))})
    assert tree["a"].shape[0] == 2 * len(jax.devices())
    assert batch_mesh().axis_names == ("batch",)


def test_sharding_errors():
    with pytest.raises(ValueError, match="scalar leaf"):
        shard_batch(jnp.ones(()))
    with pytest.raises(ValueError, match="one leading size"):
        sharded_vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="maps axis 0 or nothing"):
        sharded_vmap(lambda a: a, in_axes=1)(jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="at least one device"):
        batch_mesh([])
