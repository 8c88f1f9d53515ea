"""One process of the multi-process test (tests/core/test_distributed.py); not collected by pytest.

Usage: ``python distributed_worker.py OUT.npz`` alone (the single-process reference) or with
``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` set (one of several processes). Each
batch-parallel computation runs sharded over every device of every process, is gathered to the host, and
written to ``OUT.npz``, with the process and device counts.
"""

import os
import sys

import jaxlab  # importing jaxlab must not initialise a backend, so initialize() may follow it
from jaxlab.core import distributed

if os.environ.get("JAX_NUM_PROCESSES"):
    distributed.initialize()  # reads JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np

from jaxlab.core import sharded_vmap
from jaxlab.kernels import mmd2
from jaxlab.multiscale import MSIMConfig, run_online_sgd, sample_features
from jaxlab.quantum import QNNConfig, qnn_fn
from jaxlab.sampling.langevin import ald_default_schedule, annealed_langevin, ula_run
from jaxlab.scaling import covariates, fit_multistart, hoffmann_init_grid, load_chinchilla


def main(out: str) -> None:
    assert jaxlab.__version__
    results = {"process_count": jax.process_count(), "device_count": jax.device_count()}

    # sharded_vmap: 13 MMD² evaluations (padded to a multiple of the device count)
    X = jax.random.normal(jax.random.key(0), (13, 32, 3))
    Y = jax.random.normal(jax.random.key(1), (32, 3)) + 0.5
    one_mmd2 = lambda x, y: mmd2(x, None, y, None, lengthscale=1.0)  # noqa: E731
    results["sharded_vmap_mmd2"] = sharded_vmap(one_mmd2, in_axes=(0, None))(X, Y)

    # ULA chains and annealed-Langevin particles laid out over every device
    theta0 = jax.random.normal(jax.random.key(2), (16, 2))
    final, _ = ula_run(jax.random.key(3), theta0, lambda th: -2.0 * th, 0.1, 20, shard=True)
    results["ula_position"] = final.position
    ts, hs, ks = ald_default_schedule(L=6, k=2)
    results["ald_particles"] = annealed_langevin(jax.random.key(4), theta0, lambda th, t: -th, ts, hs, ks,
                                                 shard=True)

    # scaling: the multistart fit (every start a batch row)
    d = load_chinchilla()
    Xc, log_L = covariates(d.N, d.D), jnp.log(d.L)
    starts = jax.tree_util.tree_map(lambda a: a[:24], hoffmann_init_grid(reduced=True))
    best, every = fit_multistart("chinchilla", starts, Xc, log_L, method="lm")  # compacts on the host
    results["lm_best_theta"] = jax.flatten_util.ravel_pytree(best.theta)[0]
    results["lm_all_values"] = every.value

    # multiscale: online SGD, one seed per batch row
    cfg = MSIMConfig(16, 2, ("tanh", "linear"))
    ws = sample_features(jax.random.key(5), 16, 2)
    seeds = jax.random.split(jax.random.key(6), 6)
    _, traj = sharded_vmap(lambda k, w: run_online_sgd(k, w, cfg, 400, 0.05, 40), in_axes=(0, None))(seeds, ws)
    results["msim_sgd_traj"] = traj

    # quantum: a batch of 10 random circuits evaluated at 3 inputs
    qcfg = QNNConfig(n_qubits=3, n_layers=2)
    f = qnn_fn(qcfg)
    params = jax.random.uniform(jax.random.key(7), (10, 3, 3, 3), maxval=2 * np.pi)
    xs = jnp.array([0.1, 1.0, 2.5])
    results["qnn_batch"] = sharded_vmap(lambda p, x: jax.vmap(lambda xi: f(p, xi))(x), in_axes=(0, None))(params, xs)

    host = distributed.gather(results)
    np.savez(out, **{k: np.asarray(v) for k, v in host.items()})
    if distributed.is_main_process():
        print("ok", {k: np.shape(v) for k, v in host.items()})


if __name__ == "__main__":
    main(sys.argv[1])
