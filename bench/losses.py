"""Benchmark: batched loss + gradient of the CwR surrogates (batch 4096, K in {16, 256, 4096}), float32.

Peer: optax's ``softmax_cross_entropy_with_integer_labels`` (jitted value_and_grad), the cross-entropy a JAX user
would otherwise pick; PyTorch (the usual peer) is not installed in this environment, so optax stands in as the
closest honest reference for the K-dimensional cross-entropy. Each case times jaxlab's surrogate and the peer on
the same labels, after compilation (compile time reported separately), all five surrogates and the peer timed
round-robin in one process; ratio = peer time / our time.
Quality: output dimension d, and for ``ce`` the max |ours - optax| of the loss.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.losses import cwr

B = 4096


def _value_and_grad(loss):
    return jax.jit(jax.value_and_grad(lambda u, y: jnp.mean(loss(u, y))))


def main() -> None:
    gflops = calibration_gflops()
    peer = _value_and_grad(optax.softmax_cross_entropy_with_integer_labels)
    for K in (16, 256, 4096):
        ky, ku = jax.random.split(jax.random.key(K))
        y = jax.random.randint(ky, (B,), 0, K).astype(jnp.int32)
        uK = jax.random.normal(ku, (B, K), dtype=jnp.float32)
        cases = {}
        for name, c in (("cwr2d", 0.2), ("bep", 0.5), ("cs", 0.5), ("ova", 0.5), ("ce", 0.2)):
            s = cwr.surrogate(name, K, c)
            cases[name] = (s, uK[:, : s.dim] if s.dim <= K else uK)
        # every surrogate and the peer round-robin in one process, so that load on the machine hits all alike
        timed = time_interleaved({"peer": (peer, (uK, y)),
                                  **{n: (_value_and_grad(s.loss), (u, y)) for n, (s, u) in cases.items()}},
                                 repeats=15)
        peer_t = timed["peer"]
        for name, (s, _) in cases.items():
            t = timed[name]
            quality = {"d": s.dim}
            if name == "ce":
                quality["max_abs_diff_vs_optax"] = float(jnp.max(jnp.abs(
                    s.loss(uK, y) - optax.softmax_cross_entropy_with_integer_labels(uK, y))))
            emit("cwr", f"{name}_K{K}_B{B}", ours_s=t["median_s"], peer="optax.softmax_cross_entropy",
                 peer_s=peer_t["median_s"], compile_s=t["first_s"] - t["median_s"], calibration=gflops,
                 quality=quality, us_per_step=1e6 * t["median_s"], peer_us_per_step=1e6 * peer_t["median_s"],
                 goal_ratio=1.0)


if __name__ == "__main__":
    main()
