"""Benchmark of jaxlab.forecasting (issue 14 part c), float32, one JSON line per case.

Work: the EF roll-out of L = 720 steps (stride = H = 96, so 8 evolution steps) for 1,024 histories of T = 336
steps and C = 7 channels, RevIN inside every step, in one call. Models: ``MLPForecaster`` (336 -> 256 -> 256 ->
96, GELU) and ``DLinear`` (moving average 25, two 336 -> 96 maps), random weights.

- ours: ``jax.jit(jax.vmap(lambda x: ef_forecast(model, x, 720)))`` (a ``lax.scan`` over the 8 evolutions).
- numpy: the same roll-out written with NumPy, batched over the histories (matmuls over all windows and
  channels at once, a Python loop over the 8 evolutions), the model's weights copied.
- python loop: a per-history Python loop calling the jitted single-history ``ef_forecast`` 1,024 times.
- torch: the batched roll-out in PyTorch 2 (CPU, ``torch.no_grad``), the weights copied.

Goal (issue 14): the whole roll-out in one call; report the time and the ratios to the NumPy roll-out and the
per-history loop. ``ratio`` in each JSON line is peer time / our time (> 1: jaxlab faster); ``max_abs_diff`` is
the largest difference of the peer's forecasts from ours. Run: ``python bench/_generative_forecasting.py``.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax
import jax.numpy as jnp
import numpy as np
import torch

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.forecasting import DLinear, MLPForecaster, ef_forecast

AREA = "forecasting"
B, T, H, C, L = 1024, 336, 96, 7, 720
CAL = calibration_gflops()
REPEATS = 7


def _gelu_np(x):
    # jax.nn.gelu's default (tanh) form
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _ma_matrix(kernel: int) -> np.ndarray:
    """The replicate-padded moving average as a (T, T) matrix, for the batched peers."""
    half = (kernel - 1) // 2
    M = np.zeros((T, T), np.float32)
    for t in range(T):
        for j in range(t - half, t + half + 1):
            M[t, min(max(j, 0), T - 1)] += 1.0 / kernel
    return M


def numpy_net(model):
    """A batched NumPy copy of ``model``: (N, T) normalised series -> (N, H)."""
    if isinstance(model, MLPForecaster):
        layers = [(np.asarray(lin.weight).T, np.asarray(lin.bias)) for lin in model.mlp.layers]

        def net(z):
            for i, (w, b) in enumerate(layers):
                z = z @ w + b
                if i < len(layers) - 1:
                    z = _gelu_np(z)
            return z

        return net
    M = _ma_matrix(model.kernel)
    ws, bs = np.asarray(model.seasonal.weight).T, np.asarray(model.seasonal.bias)
    wt, bt = np.asarray(model.trend.weight).T, np.asarray(model.trend.bias)

    def net(z):
        trend = z @ M.T
        return (z - trend) @ ws + bs + trend @ wt + bt

    return net


def numpy_rollout(net):
    def go(x):  # x (B, T, C)
        w, out = x, []
        for _ in range(-(-L // H)):
            mu = w.mean(1, keepdims=True)
            sc = np.sqrt(((w - mu) ** 2).mean(1, keepdims=True)) + 1e-5
            z = ((w - mu) / sc).transpose(0, 2, 1).reshape(-1, T)
            y = net(z).reshape(w.shape[0], C, H).transpose(0, 2, 1) * sc + mu
            out.append(y)
            w = np.concatenate([w, y], axis=1)[:, -T:]
        return np.concatenate(out, axis=1)[:, :L]

    return go


def torch_rollout(model):
    if isinstance(model, MLPForecaster):
        mods = []
        for i, lin in enumerate(model.mlp.layers):
            t = torch.nn.Linear(*np.asarray(lin.weight).T.shape)
            t.weight.data = torch.tensor(np.asarray(lin.weight))
            t.bias.data = torch.tensor(np.asarray(lin.bias))
            mods += [t] + ([torch.nn.GELU(approximate="tanh")] if i < len(model.mlp.layers) - 1 else [])
        net = torch.nn.Sequential(*mods)
    else:
        M = torch.tensor(_ma_matrix(model.kernel))
        ws, bs = torch.tensor(np.asarray(model.seasonal.weight)), torch.tensor(np.asarray(model.seasonal.bias))
        wt, bt = torch.tensor(np.asarray(model.trend.weight)), torch.tensor(np.asarray(model.trend.bias))

        def net(z):
            trend = z @ M.T
            return (z - trend) @ ws.T + bs + trend @ wt.T + bt

    @torch.no_grad()
    def go(x):
        w, out = x, []
        for _ in range(-(-L // H)):
            mu = w.mean(1, keepdim=True)
            sc = ((w - mu) ** 2).mean(1, keepdim=True).sqrt() + 1e-5
            z = ((w - mu) / sc).transpose(1, 2).reshape(-1, T)
            y = net(z).reshape(w.shape[0], C, H).transpose(1, 2) * sc + mu
            out.append(y)
            w = torch.cat([w, y], dim=1)[:, -T:]
        return torch.cat(out, dim=1)[:, :L]

    return go


def main() -> None:
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((B, T, C)).cumsum(1).astype(np.float32) * 0.1
    x = jnp.asarray(x_np)
    x_t = torch.tensor(x_np)
    models = {"mlp": MLPForecaster(T, H, key=jax.random.key(0)), "dlinear": DLinear(T, H, key=jax.random.key(0))}
    for name, model in models.items():
        ours = jax.jit(jax.vmap(lambda h, m=model: ef_forecast(m, h, L)))
        one = jax.jit(lambda h, m=model: ef_forecast(m, h, L))
        t0 = time.perf_counter()
        ours.lower(x).compile()
        compile_s = time.perf_counter() - t0
        ref = np.asarray(ours(x))

        def loop(xs, one=one):
            return [one(xs[i]) for i in range(xs.shape[0])]

        np_fn, th_fn = numpy_rollout(numpy_net(model)), torch_rollout(model)
        diffs = {"numpy": float(np.max(np.abs(np_fn(x_np) - ref))),
                 "python loop": float(np.max(np.abs(np.stack([np.asarray(o) for o in loop(x[:8])]) - ref[:8]))),
                 "torch": float(np.max(np.abs(th_fn(x_t).numpy() - ref)))}
        res = time_interleaved({"ours": (ours, (x,)), "numpy": (np_fn, (x_np,)), "python loop": (loop, (x,)),
                                "torch": (th_fn, (x_t,))}, repeats=REPEATS)
        for peer in ("numpy", "python loop", "torch"):
            emit(AREA, f"ef_rollout_{name}_L{L}_B{B}", ours_s=res["ours"]["median_s"], peer=peer,
                 peer_s=res[peer]["median_s"], compile_s=compile_s, quality={"max_abs_diff": diffs[peer]},
                 calibration=CAL, time_ratio=res["ours"]["median_s"] / res[peer]["median_s"],
                 histories=B, horizon=L, stride=H, goal_ratio=1.0)  # issue 27 (torch), and ahead of every peer


if __name__ == "__main__":
    main()
