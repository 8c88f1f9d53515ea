"""Side-by-side of jaxlab.generative.flow_matching with torchcfm and Meta's flow_matching (spec F2 peers, issue
13), float32, one JSON line per case. Skips what is not installed (``pip install torchcfm flow-matching pot``).

1. Paths on identical arrays: ``cfm_path(x0, x1, t)`` against torchcfm's ``ConditionalFlowMatcher(0)`` and
   ``flow_matching``'s ``AffineProbPath(CondOTScheduler())`` (``x_t`` and target velocity, 512 x 2 points), and
   the I-CFM path with ``sigma = 0.1`` against torchcfm with its own noise passed to ours. Quality: max abs
   difference (spec: < 1e-6).
2. Exact minibatch OT (128 points in 2-D): the total squared cost of ``ot_pairing(method="exact_scipy")``
   against POT's ``ot.emd`` plan (torchcfm's exact OT sampler), ratio of costs (1 up to ties).
3. Speed, same work in both frameworks: (a) 500 CFM training steps of the same MLP (2 + 1 -> 64 -> 64 -> 2,
   SiLU; batch 256; AdamW lr 1e-3 with global-norm clipping 1.0; ``x1`` drawn from a fixed pool of 10,000
   two-moons points, ``x0 ~ N(0, I)``, ``t ~ U[0, 1]`` drawn by each framework): ours is ``cfm_fit`` (one
   ``lax.scan``), the peer a PyTorch loop using torchcfm's ``sample_location_and_conditional_flow``; (b) 100
   Euler steps for 10,000 samples with the trained weights copied to the torch MLP (``ode_sample`` against a
   ``torch.no_grad`` loop). Reported as steps/s and samples/s, ``ratio`` = peer time / our time.

torch runs on ``TORCH_THREADS`` intra-op threads (default 1, its fastest setting for these sizes here).
Run: ``python bench/_generative_cfm_peers.py``.
"""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import calibration_gflops, emit, time_interleaved
from jaxlab.generative import flow_matching as fm

AREA = "flow_matching"
CAL = calibration_gflops()


def _have(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _moons(n: int, seed: int = 0) -> np.ndarray:
    """Two interleaved half circles with N(0, 0.05^2) jitter, scaled to unit spread (numpy, fixed seed)."""
    r = np.random.default_rng(seed)
    a = np.pi * r.random(n)
    upper = r.random(n) < 0.5
    x = np.where(upper, np.cos(a), 1.0 - np.cos(a))
    y = np.where(upper, np.sin(a), 0.5 - np.sin(a))
    pts = np.stack([x, y], 1) + 0.05 * r.standard_normal((n, 2))
    return ((pts - pts.mean(0)) / pts.std(0)).astype(np.float32)


def paths() -> None:
    import torch

    r = np.random.default_rng(1)
    x0, x1 = r.standard_normal((512, 2)).astype(np.float32), _moons(512, 2)
    t = r.random(512).astype(np.float32)
    xt, ut = (np.asarray(a) for a in fm.cfm_path(jnp.asarray(x0), jnp.asarray(x1), jnp.asarray(t)))
    if _have("torchcfm"):
        from torchcfm.conditional_flow_matching import ConditionalFlowMatcher

        _, xt_p, ut_p = ConditionalFlowMatcher(0.0).sample_location_and_conditional_flow(
            torch.from_numpy(x0), torch.from_numpy(x1), t=torch.from_numpy(t))
        d = max(float(np.abs(xt - xt_p.numpy()).max()), float(np.abs(ut - ut_p.numpy()).max()))
        emit(AREA, "cfm_path_vs_torchcfm_sigma0", ours_s=0.0, peer="torchcfm", peer_s=0.0, compile_s=0.0,
             quality={"max_abs_diff": d}, goal_metric="max_abs_diff", goal_op="<", goal_value=1e-6)
        _, xt_p, ut_p, eps = ConditionalFlowMatcher(0.1).sample_location_and_conditional_flow(
            torch.from_numpy(x0), torch.from_numpy(x1), t=torch.from_numpy(t), return_noise=True)
        xt_s, ut_s = fm.cfm_path(jnp.asarray(x0), jnp.asarray(x1), jnp.asarray(t), sigma=0.1,
                                 noise=jnp.asarray(eps.numpy()))
        d = max(float(np.abs(np.asarray(xt_s) - xt_p.numpy()).max()),
                float(np.abs(np.asarray(ut_s) - ut_p.numpy()).max()))
        emit(AREA, "cfm_path_vs_torchcfm_sigma0.1", ours_s=0.0, peer="torchcfm", peer_s=0.0, compile_s=0.0,
             quality={"max_abs_diff": d}, goal_metric="max_abs_diff", goal_op="<", goal_value=1e-6)
    if _have("flow_matching"):
        from flow_matching.path import AffineProbPath
        from flow_matching.path.scheduler import CondOTScheduler

        s = AffineProbPath(scheduler=CondOTScheduler()).sample(t=torch.from_numpy(t), x_0=torch.from_numpy(x0),
                                                              x_1=torch.from_numpy(x1))
        d = max(float(np.abs(xt - s.x_t.numpy()).max()), float(np.abs(ut - s.dx_t.numpy()).max()))
        emit(AREA, "cfm_path_vs_flow_matching_condot", ours_s=0.0, peer="flow_matching", peer_s=0.0, compile_s=0.0,
             quality={"max_abs_diff": d}, goal_metric="max_abs_diff", goal_op="<", goal_value=1e-6)


def ot_cost() -> None:
    if not _have("ot"):
        print("skip POT: not installed", flush=True)
        return
    import ot

    r = np.random.default_rng(3)
    x0, x1 = r.standard_normal((128, 2)), _moons(128, 4).astype(np.float64)
    perm = np.asarray(fm.ot_pairing(jax.random.key(0), jnp.asarray(x0), jnp.asarray(x1), method="exact_scipy"))
    ours = float(np.sum((x0 - x1[perm]) ** 2))
    M = ot.dist(x0, x1)  # squared Euclidean
    plan = ot.emd(np.full(128, 1 / 128), np.full(128, 1 / 128), M)
    peer = float(128 * np.sum(plan * M))
    emit(AREA, "exact_ot_pairing_cost_B128", ours_s=0.0, peer="POT ot.emd (torchcfm's exact OT)", peer_s=0.0,
         compile_s=0.0, quality={"cost_ours": ours, "cost_pot": peer, "cost_ratio": ours / peer,
                                 "is_permutation": bool(len(set(perm.tolist())) == 128)},
         goal_metric="cost_ratio", goal_op="<=", goal_value=1.0 + 1e-9)  # the exact optimum: 1 up to ties


def speed() -> None:
    if not _have("torchcfm"):
        print("skip speed: torchcfm not installed", flush=True)
        return
    import torch
    from torchcfm.conditional_flow_matching import ConditionalFlowMatcher

    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    B, steps, n_samp, n_euler = 256, 500, 10_000, 100
    pool = _moons(10_000, 5)
    pool_j, pool_t = jnp.asarray(pool), torch.from_numpy(pool)
    model = fm.VelocityMLP((2,), width=64, depth=2, key=jax.random.key(0))

    def sample_fn(k):
        ka, kb = jax.random.split(k)
        return jax.random.normal(ka, (B, 2)), pool_j[jax.random.randint(kb, (B,), 0, pool.shape[0])], None

    train = eqx.filter_jit(lambda k: fm.cfm_fit(k, model, sample_fn, num_steps=steps)[0])

    class TorchMLP(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.layers = torch.nn.ModuleList()
            for lin in m.mlp.layers:
                t = torch.nn.Linear(lin.weight.shape[1], lin.weight.shape[0])
                with torch.no_grad():
                    t.weight.copy_(torch.from_numpy(np.array(lin.weight)))
                    t.bias.copy_(torch.from_numpy(np.array(lin.bias)))
                self.layers.append(t)

        def forward(self, x, t):
            h = torch.cat([x, t[:, None]], 1)
            for i, lin in enumerate(self.layers):
                h = lin(h)
                if i < len(self.layers) - 1:
                    h = torch.nn.functional.silu(h)
            return h

    cfm = ConditionalFlowMatcher(0.0)

    def torch_train():
        net = TorchMLP(model)
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
        for _ in range(steps):
            x0 = torch.randn(B, 2)
            x1 = pool_t[torch.randint(0, pool.shape[0], (B,))]
            t, xt, ut = cfm.sample_location_and_conditional_flow(x0, x1)
            loss = torch.mean((net(xt, t) - ut) ** 2)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        return net

    res = time_interleaved({"ours": (train, (jax.random.key(1),)), "torch": (torch_train, ())}, repeats=3)
    emit(AREA, f"cfm_train_moons_mlp64_B{B}_{steps}steps", ours_s=res["ours"]["median_s"],
         peer="torchcfm + PyTorch loop", peer_s=res["torch"]["median_s"],
         compile_s=res["ours"]["first_s"] - res["ours"]["median_s"], calibration=CAL,
         steps_per_s_ours=steps / res["ours"]["median_s"], steps_per_s_peer=steps / res["torch"]["median_s"],
         torch_threads=torch.get_num_threads(), goal_ratio=1.0)

    trained = train(jax.random.key(1))
    net = TorchMLP(trained)
    x0 = np.random.default_rng(6).standard_normal((n_samp, 2)).astype(np.float32)
    x0_t = torch.from_numpy(x0)

    def vel(x, t, _):
        return jax.vmap(lambda xi: trained(xi, t))(x)

    sample = jax.jit(lambda x: fm.ode_sample(vel, x, num_steps=n_euler))

    def torch_sample():
        with torch.no_grad():
            x, h = x0_t.clone(), 1.0 / n_euler
            for i in range(n_euler):
                x = x + h * net(x, torch.full((n_samp,), i * h))
            return x

    res = time_interleaved({"ours": (sample, (jnp.asarray(x0),)), "torch": (torch_sample, ())}, repeats=5)
    diff = float(np.abs(np.asarray(sample(jnp.asarray(x0))) - torch_sample().numpy()).max())
    emit(AREA, f"euler{n_euler}_samples{n_samp}", ours_s=res["ours"]["median_s"], peer="PyTorch loop",
         peer_s=res["torch"]["median_s"], compile_s=res["ours"]["first_s"] - res["ours"]["median_s"],
         calibration=CAL, samples_per_s_ours=n_samp / res["ours"]["median_s"],
         samples_per_s_peer=n_samp / res["torch"]["median_s"], quality={"max_abs_diff": diff},
         torch_threads=torch.get_num_threads(), goal_ratio=1.0)


if __name__ == "__main__":
    paths()
    ot_cost()
    speed()
