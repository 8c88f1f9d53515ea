"""Benchmark of jaxlab.quantum (spec qnn.md section 7) against PennyLane and TensorCircuit-NG, float32, one JSON
line per case.

Workload: the hardware-efficient re-uploading ansatz of the spec (Rot on every qubit, CNOT ring; RX(x)
encoding before every block but the first; O = Z_0), built identically in every library.

(a) value + gradient w.r.t. all (L+1)·n·3 parameters of f(x) for one input, n = 10 and 16 qubits, L = 6:
    jaxlab (jit) against PennyLane ``lightning.qubit`` with adjoint differentiation through PennyLane's autograd
    interface, its fastest path here (the issue's goal: >= 20x);
    the jaxlab compile time is reported (goal < 10 s at n = 10);
(b) value + gradient of the MSE over a batch of 256 inputs, n = 8, L = 2: jaxlab against PennyLane
    ``default.qubit`` under ``jax.jit`` (backprop, vmapped QNode) and TensorCircuit-NG (jax backend, jit + vmap);
    at 6 layers both take minutes to compile, so they are compared at 2 layers as the issue asks;
(c) the QNTK Gram matrix for 8 qubits and a batch of 64 inputs (L = 2 and L = 6): jaxlab against the
    PennyLane lightning adjoint Jacobian looped over the inputs and (L = 2) a ``jax.jacrev`` Gram matrix of the
    jitted default.qubit QNode, the spec's QNTK anchor;
(d) Fourier coefficients of a 2-qubit, 3-layer model against ``qml.fourier.coefficients`` (quality only).

Quality: max |f_jaxlab − f_peer| and max |∇ difference| (float32). Peers that cannot be imported are skipped
with a printed reason. Run: ``python bench/quantum.py``.
"""

from __future__ import annotations

import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_fn
from jaxlab.quantum import QNNConfig, fourier_coeffs_of, init_qnn_params, qnn_apply, qntk

AREA = "quantum"
CAL = calibration_gflops()

try:
    import pennylane as qml
except ImportError as exc:  # pragma: no cover - depends on the environment
    qml = None
    print(f"skip PennyLane cases: {exc}", file=sys.stderr)

try:
    import tensorcircuit as tc
except ImportError as exc:  # pragma: no cover
    tc = None
    print(f"skip TensorCircuit-NG cases: {exc}", file=sys.stderr)


def ring(n: int) -> list[tuple[int, int]]:
    return [] if n == 1 else [(0, 1)] if n == 2 else [(q, (q + 1) % n) for q in range(n)]


def pl_circuit(n: int, L: int):
    def circuit(params, x):
        for layer in range(L + 1):
            if layer > 0:
                for q in range(n):
                    qml.RX(x, wires=q)
            for q in range(n):
                qml.Rot(params[layer, q, 0], params[layer, q, 1], params[layer, q, 2], wires=q)
            for c, t in ring(n):
                qml.CNOT(wires=[c, t])
        return qml.expval(qml.PauliZ(0))

    return circuit


def tc_fn(n: int, L: int):
    K = tc.set_backend("jax")
    tc.set_dtype("complex64")

    def f(params, x):
        c = tc.Circuit(n)
        for layer in range(L + 1):
            if layer > 0:
                for q in range(n):
                    c.rx(q, theta=x)
            for q in range(n):
                c.rz(q, theta=params[layer, q, 0])
                c.ry(q, theta=params[layer, q, 1])
                c.rz(q, theta=params[layer, q, 2])
            for a, b in ring(n):
                c.cnot(a, b)
        return K.real(c.expectation_ps(z=[0]))

    return f


def lightning_value_and_grad(n: int, L: int):
    """PennyLane lightning.qubit, adjoint differentiation, through its autograd interface (``qml.grad`` keeps the
    forward value): the fastest PennyLane path here (its JAX interface adds seconds of overhead per call)."""
    from pennylane import numpy as pnp

    qnode = qml.QNode(pl_circuit(n, L), qml.device("lightning.qubit", wires=n), diff_method="adjoint")
    grad = qml.grad(qnode, argnums=0)

    def value_and_grad(params, x):
        p = pnp.array(np.asarray(params, np.float64), requires_grad=True)
        g = grad(p, pnp.array(float(x), requires_grad=False))
        return float(grad.forward), np.asarray(g)

    return value_and_grad


def setup(n: int, L: int):
    cfg = QNNConfig(n, L)
    params = init_qnn_params(jax.random.key(0), cfg, dtype=jnp.float32)
    return cfg, params, jnp.float32(0.37)


def bench_single(n: int, L: int = 6) -> None:
    cfg, params, x = setup(n, L)
    ours = jax.jit(jax.value_and_grad(lambda p, x: qnn_apply(p, x, cfg)))
    t0 = time.perf_counter()
    lowered = ours.lower(params, x)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t0
    t = time_fn(compiled, params, x, repeats=21, min_time=0.5)
    v, g = compiled(params, x)
    if qml is None:
        return
    peer = lightning_value_and_grad(n, L)
    tp = time_fn(peer, params, x, repeats=7 if n <= 12 else 3)
    pv, pg = peer(params, x)
    quality = {
        "max_abs_f": float(abs(v - pv)),
        "max_abs_grad": float(np.max(np.abs(np.asarray(g) - pg))),
        "n_params": int(params.size),
    }
    emit(
        AREA,
        f"value_grad_{n}q_{L}l",
        ours_s=t["median_s"],
        peer="pennylane lightning.qubit adjoint",
        peer_s=tp["median_s"],
        compile_s=compile_s,
        calibration=CAL,
        quality=quality,
        # the issue's >= 20x and compile < 10 s at n = 10; issue 27: >= 10x lightning at 16 qubits
        goal_ratio=20.0 if n == 10 else 10.0,
        **({"goal_metric": "compile_s", "goal_op": "<", "goal_value": 10.0} if n == 10 else {}),
    )


def bench_batch(n: int = 8, L: int = 2, B: int = 256) -> None:
    cfg, params, _ = setup(n, L)
    xs = jnp.linspace(0.0, 2 * np.pi, B, dtype=jnp.float32)
    ys = 0.3 * jnp.cos(3 * xs)

    def mse(f):
        return lambda p: jnp.mean((jax.vmap(lambda x: f(p, x))(xs) - ys) ** 2)

    ours = jax.jit(jax.value_and_grad(mse(lambda p, x: qnn_apply(p, x, cfg))))
    t = time_fn(ours, params, repeats=21, min_time=0.5)
    v, g = ours(params)
    peers = []
    if qml is not None:
        qnode = qml.QNode(
            pl_circuit(n, L), qml.device("default.qubit", wires=n), interface="jax", diff_method="backprop"
        )
        peers.append(("pennylane default.qubit jax.jit", jax.jit(jax.value_and_grad(mse(qnode)))))
    if tc is not None:
        peers.append(("tensorcircuit-ng jax jit", jax.jit(jax.value_and_grad(mse(tc_fn(n, L))))))
    for name, fn in peers:
        tp = time_fn(fn, params, repeats=7)
        pv, pg = fn(params)
        emit(
            AREA,
            f"mse_value_grad_{n}q_{L}l_batch{B}",
            ours_s=t["median_s"],
            peer=name,
            peer_s=tp["median_s"],
            compile_s=t["first_s"],
            calibration=CAL,
            peer_compile_s=tp["first_s"],
            quality={"abs_loss": float(abs(v - pv)), "max_abs_grad": float(jnp.max(jnp.abs(g - pg)))},
            goal_ratio=1.0,
        )


def bench_qntk(n: int = 8, L: int = 2, B: int = 64) -> None:
    cfg, params, _ = setup(n, L)
    xs = jnp.linspace(0.0, 2 * np.pi, B, endpoint=False, dtype=jnp.float32)
    ours = jax.jit(lambda p: qntk(p, xs, xs, cfg))
    t = time_fn(ours, params, repeats=7)
    K = np.asarray(ours(params))
    if qml is None:
        return
    vg = lightning_value_and_grad(n, L)

    def lightning_gram():
        J = np.stack([vg(params, x)[1].ravel() for x in xs])
        return J @ J.T

    tl = time_fn(lightning_gram, repeats=3)
    emit(
        AREA,
        f"qntk_{n}q_{L}l_batch{B}",
        ours_s=t["median_s"],
        peer="pennylane lightning adjoint (loop over x)",
        peer_s=tl["median_s"],
        compile_s=t["first_s"],
        calibration=CAL,
        quality={"max_abs_K": float(np.max(np.abs(K - lightning_gram())))},
        goal_ratio=1.0,
    )
    if L <= 2:
        dq = qml.QNode(pl_circuit(n, L), qml.device("default.qubit", wires=n), interface="jax", diff_method="backprop")

        @jax.jit
        def dq_gram(p):
            J = jax.vmap(lambda x: jax.jacrev(dq)(p, x))(xs).reshape(B, -1)
            return J @ J.T

        td = time_fn(dq_gram, params, repeats=5)
        emit(
            AREA,
            f"qntk_{n}q_{L}l_batch{B}",
            ours_s=t["median_s"],
            peer="pennylane default.qubit jit(vmap(jacrev))",
            peer_s=td["median_s"],
            compile_s=t["first_s"],
            calibration=CAL,
            peer_compile_s=td["first_s"],
            quality={"max_abs_K": float(np.max(np.abs(K - np.asarray(dq_gram(params)))))},
            goal_ratio=1.0,
        )


def bench_fourier() -> None:
    if qml is None:
        return
    n, L = 2, 3
    cfg, params, _ = setup(n, L)
    qnode = qml.QNode(pl_circuit(n, L), qml.device("default.qubit", wires=n), interface="jax")
    p64 = jnp.asarray(params, jnp.float32)
    t = time_fn(lambda: fourier_coeffs_of(lambda x: qnn_apply(p64, x, cfg), n * L), repeats=7)
    ours = np.asarray(fourier_coeffs_of(lambda x: qnn_apply(p64, x, cfg), n * L))
    tp = time_fn(lambda: qml.fourier.coefficients(lambda x: qnode(p64, x[0]), 1, n * L), repeats=3)
    # PennyLane: FFT order (w = 0, 1..W, -W..-1) with c_w the coefficient of e^{i w x} (checked on the model)
    c_pl = np.asarray(qml.fourier.coefficients(lambda x: qnode(p64, x[0]), 1, n * L))
    W = n * L
    c_pl = np.concatenate([c_pl[W + 1 :], c_pl[: W + 1]])
    emit(
        AREA,
        "fourier_coefficients_2q_3l",
        ours_s=t["median_s"],
        peer="qml.fourier.coefficients (default.qubit)",
        peer_s=tp["median_s"],
        compile_s=t["first_s"],
        calibration=CAL,
        quality={"max_abs_c": float(np.max(np.abs(ours - c_pl)))},
        goal=None,
        no_goal_reason="a quality comparison (the coefficients against PennyLane's), timed for scale only",
    )


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    bench_single(10)
    bench_single(16)
    bench_batch()
    bench_qntk(L=2)
    bench_qntk(L=6)
    bench_fourier()
