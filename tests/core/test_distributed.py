"""Two processes joined by jax.distributed (gloo over localhost), two simulated CPU devices each, give the same
batch results as one process: sharded_vmap, ULA chains, annealed-Langevin particles, the scaling multistart,
multiscale SGD seeds and a QNN batch (tests/core/distributed_worker.py runs them)."""

import os
import pathlib
import re
import socket
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxlab.core import distributed

WORKER = pathlib.Path(__file__).with_name("distributed_worker.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    env.update(JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1", **extra)
    return env


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("distributed")
    single = subprocess.Popen([sys.executable, str(WORKER), str(tmp / "single.npz")], env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = _free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(tmp / f"p{i}.npz")],
            env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_COORDINATOR_ADDRESS=f"localhost:{port}",
                     JAX_NUM_PROCESSES="2", JAX_PROCESS_ID=str(i)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(2)
    ]
    for p in [single, *procs]:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, out[-4000:]
    return [dict(np.load(tmp / f"{name}.npz")) for name in ("single", "p0", "p1")]


def test_two_processes_see_four_devices(runs):
    single, p0, p1 = runs
    assert (int(single["process_count"]), int(single["device_count"])) == (1, 1)
    for r in (p0, p1):
        assert (int(r["process_count"]), int(r["device_count"])) == (2, 4)


def test_gathered_results_are_identical_on_every_process(runs):
    _, p0, p1 = runs
    assert p0.keys() == p1.keys()
    for k in p0:
        np.testing.assert_array_equal(p0[k], p1[k], err_msg=k)


@pytest.mark.parametrize("name", ["sharded_vmap_mmd2", "ula_position", "ald_particles", "msim_sgd_traj", "qnn_batch"])
def test_sharded_batch_equals_single_process(runs, name):
    """Rows are independent, so splitting them over devices and processes changes at most the last bits."""
    single, p0, _ = runs
    assert p0[name].shape == single[name].shape
    np.testing.assert_allclose(p0[name], single[name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_multistart_fits_agree(runs):
    """Levenberg-Marquardt (with its host-side compaction of the unconverged starts) runs every start to
    convergence (tol 1e-12), so the optima agree closely; a sum reassociated by the partitioner may move the
    iterates in the last bits only."""
    single, p0, _ = runs
    np.testing.assert_allclose(p0["lm_all_values"], single["lm_all_values"], rtol=1e-9)
    np.testing.assert_allclose(p0["lm_best_theta"], single["lm_best_theta"], rtol=1e-6)


def test_gather_passes_local_values_through():
    out = distributed.gather({"a": jax.numpy.arange(3.0), "b": "text", "c": 2})
    assert isinstance(out["a"], np.ndarray) and out["a"].tolist() == [0.0, 1.0, 2.0]
    assert out["b"] == "text" and out["c"] == 2
    assert distributed.is_main_process()


def test_initialize_rejects_bad_arguments_before_touching_jax():
    with pytest.raises(ValueError, match="cpu_collectives"):
        distributed.initialize("localhost:1", 1, 0, cpu_collectives="nccl")


_BAD = [
    ({"num_processes": 0, "process_id": 0}, "ValueError", "num_processes must be >= 1"),
    ({"num_processes": 2, "process_id": 2}, "ValueError", r"process_id must be in \[0, num_processes\)"),
    ({"num_processes": 2.0, "process_id": 0}, "TypeError", "num_processes must be a Python int"),
    ({"num_processes": "two", "process_id": 0}, "ValueError", "num_processes must be an integer"),
]


def test_initialize_validates_in_a_fresh_process():
    """In a fresh interpreter (no backend yet), each bad count raises the named error before JAX is touched."""
    code = "import jaxlab\nfrom jaxlab.core import distributed\n" + "".join(
        f"try:\n    distributed.initialize('localhost:1', **{kw!r})\n"
        f"except {exc} as e:\n    print({i}, 'raised', e)\n"
        for i, (kw, exc, _) in enumerate(_BAD)
    )
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(_BAD), out.stdout
    for line, (_, _, match) in zip(lines, _BAD, strict=True):
        assert re.search(match, line), line


def test_initialize_after_a_computation_says_why():
    code = (
        "import jax.numpy as jnp\nfrom jaxlab.core import distributed\njnp.ones(2).sum()\n"
        "try:\n    distributed.initialize('localhost:1', 1, 0)\nexcept RuntimeError as e:\n    print('raised', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert "must run before any JAX computation" in out.stdout, out.stdout + out.stderr
