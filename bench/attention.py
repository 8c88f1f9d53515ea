"""Benchmark of softmax attention with mean pooling (jaxlab.attention.pe_spread) against flax.nnx and numpy.

Same work in one process, float32: multi-head attention on ``x + E`` (sinusoidal PE), mean over tokens, then
the output projection (``mean(MHA(x)) = mean(heads) W_o``). Peers: ``flax.nnx.MultiHeadAttention`` loaded
with the same weights (forward, and forward+backward with respect to the weights and the input) and a plain
numpy implementation (forward only). Medians after compilation; compile time reported separately. Quality:
max abs difference of the pooled outputs against flax.

The issue's headline case (batch 64, n = 2048, d = 128) runs only with ``PE_SPREAD_FULL=1`` (several minutes on
2 cores). jaxlab maps a batch in chunks of bounded score memory; flax.nnx would hold about 4 GB of scores per
tensor for the whole batch (more than 16 GB for forward+backward), so there it is mapped over chunks of 8
sequences with ``jax.lax.map`` (the same work; ``flax_chunk`` in the JSON line says so).
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from jaxlab.attention.pe_spread.attention import MeanPoolAttention, attention_mean_pool
from jaxlab.attention.pe_spread.pe import sinusoidal_pe
from jaxlab.core.bench import calibration_gflops, emit, time_fn

H = 4


def numpy_forward(x, pe, wq, wk, wv, wo):
    """Reference: per-head softmax((ZWq)(ZWk)ᵀ/√dk) ZWv, concatenated, mean over tokens, times W_o."""
    z = x + pe
    B, n, _ = z.shape
    q, k, v = ((z @ w).reshape(B, n, H, -1).transpose(0, 2, 1, 3) for w in (wq, wk, wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    s = np.exp(s - s.max(-1, keepdims=True))
    a = s / s.sum(-1, keepdims=True)
    o = (a @ v).transpose(0, 2, 1, 3).reshape(B, n, -1)
    return o.mean(1) @ wo


def case(B: int, n: int, d: int, calib: float, *, with_numpy: bool, flax_chunk: int | None = None,
         reps: int | None = None) -> None:
    key = jax.random.key(0)
    model = MeanPoolAttention(d, d, num_heads=H, key=key)
    x = jax.random.normal(jax.random.key(1), (B, n, d), jnp.float32)
    pe = sinusoidal_pe(n, d)

    mha = nnx.MultiHeadAttention(H, d, d, d, use_bias=False, rngs=nnx.Rngs(0), deterministic=True,
                                decode=False)
    mha.query.kernel.value = model.wq.reshape(d, H, -1)
    mha.key.kernel.value = model.wk.reshape(d, H, -1)
    mha.value.kernel.value = model.wv.reshape(d, H, -1)
    mha.out.kernel.value = model.wo.reshape(H, -1, d)
    graph, state = nnx.split(mha)

    @jax.jit
    def ours(m, x):
        return attention_mean_pool(m, x, pe) @ m.wo

    def flax_pool(state, x):
        return jnp.mean(nnx.merge(graph, state)(x + pe), axis=1)

    @jax.jit
    def flax_fwd(state, x):
        if flax_chunk is None:
            return flax_pool(state, x)
        xs = x.reshape(-1, flax_chunk, *x.shape[1:])
        return jax.lax.map(lambda xc: flax_pool(state, xc), xs).reshape(x.shape[0], -1)

    ours_grad = jax.jit(jax.grad(lambda m, x: jnp.sum(ours(m, x) ** 2), argnums=(0, 1)))
    flax_grad = jax.jit(jax.grad(lambda s, x: jnp.sum(flax_fwd(s, x) ** 2), argnums=(0, 1)))

    err = float(jnp.max(jnp.abs(ours(model, x) - flax_fwd(state, x))))
    size = f"B={B},n={n},d={d},H={H}"
    reps = reps or (3 if n >= 2048 else 5)
    for label, fo, fp in (("forward", ours, flax_fwd), ("forward+backward", ours_grad, flax_grad)):
        t_ours = time_fn(fo, model, x, repeats=reps)
        t_flax = time_fn(fp, state, x, repeats=reps)
        emit("pe_spread", f"{label} {size}", ours_s=t_ours["median_s"], peer="flax.nnx.MultiHeadAttention",
             peer_s=t_flax["median_s"], compile_s=t_ours["first_s"] - t_ours["median_s"],
             peer_compile_s=t_flax["first_s"] - t_flax["median_s"], quality={"max_abs_diff_vs_flax": err},
             calibration=calib, flax_chunk=flax_chunk, goal_ratio=1.0)
    if with_numpy:
        args = [np.asarray(a) for a in (x, pe, model.wq, model.wk, model.wv, model.wo)]
        ref = numpy_forward(*args)
        t_np = time_fn(numpy_forward, *args, repeats=3)
        t_ours = time_fn(ours, model, x, repeats=3)
        emit("pe_spread", f"forward {size}", ours_s=t_ours["median_s"], peer="numpy", peer_s=t_np["median_s"],
             compile_s=t_ours["first_s"] - t_ours["median_s"], calibration=calib,
             quality={"max_abs_diff_vs_numpy": float(np.max(np.abs(np.asarray(ours(model, x)) - ref)))},
             goal_ratio=1.0)


def main() -> None:
    calib = calibration_gflops()
    case(8, 512, 128, calib, with_numpy=True)
    case(8, 2048, 128, calib, with_numpy=True)
    if os.environ.get("PE_SPREAD_FULL") == "1":
        case(64, 2048, 128, calib, with_numpy=False, flax_chunk=8, reps=1)


if __name__ == "__main__":
    main()
