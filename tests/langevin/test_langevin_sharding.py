"""Annealed Langevin with the chains sharded over 8 simulated CPU devices equals the unsharded run (in a
subprocess, since the device count is fixed when jax starts)."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(r"""
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jaxlab.sampling import annealed_langevin as al
    assert len(jax.devices()) == 8
    m = jnp.array([1.0, -0.5, 0.25])
    score = lambda theta, t: -(theta - m)
    ts, hs, ks = al.ald_default_schedule(L=12, k=3, tau=0.5)
    theta0 = jax.random.normal(jax.random.key(0), (32, 3))
    a = al.annealed_langevin(jax.random.key(1), theta0, score, ts, hs, ks, shard=True)
    b = al.annealed_langevin(jax.random.key(1), theta0, score, ts, hs, ks, shard=False)
    pa = getattr(a, "particles", a)
    pb = getattr(b, "particles", b)
    assert len(pa.sharding.device_set) == 8, pa.sharding
    np.testing.assert_allclose(pa, pb, rtol=1e-12, atol=1e-12)
    print("OK")
""")


def test_sharded_chains_equal_unsharded():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "OK"
