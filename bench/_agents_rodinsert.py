"""RodInsert2D stepping benchmark (CPU, float32): steps per second of 1,024 environments advanced 100 steps,
jaxlab's ``jit(vmap(rodinsert_step))`` inside ``lax.scan`` vs the vectorised NumPy reference
(``rodinsert_step_numpy``) stepping the same 1,024 envs with the same actions in a Python loop; quality = max
|position difference| after 100 steps. py_trees is not installed here, so the BT tick comparison of spec B.7 is
not run.

Run: ``python bench/agents.py`` (all agents benchmarks) or ``python bench/_agents_rodinsert.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.agents import rodinsert as ri
from jaxlab.core.bench import calibration_gflops, emit, time_interleaved

AREA = "tree_of_skill"
N_ENVS, N_STEPS = 1024, 100


def main() -> None:
    params = ri.RodInsertParams(max_steps=10_000)
    _, s0 = jax.vmap(lambda k: ri.rodinsert_reset(k, params))(jax.random.split(jax.random.key(0), N_ENVS))
    s0 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if x.dtype == jnp.float64 else x, s0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (N_STEPS, N_ENVS, 3)).astype(np.float32)
    actions[..., 2] = np.abs(actions[..., 2])  # grippers close: grasps and carries happen
    acts_j = jnp.asarray(actions)
    step = jax.vmap(lambda s, a: ri.rodinsert_step(jax.random.key(0), s, a, params)[1])

    @jax.jit
    def ours(s, acts):
        return jax.lax.scan(lambda st, a: (step(st, a), None), s, acts)[0]

    ref0 = [np.asarray(x) for x in (s0.p, s0.rod, s0.held, s0.delta, s0.inserted, s0.t)]

    def peer(acts):
        st = list(ref0)
        for a in acts:
            st = list(ri.rodinsert_step_numpy(*st, a, params)[:6])
        return st

    t = time_interleaved({"ours": (ours, (s0, acts_j)), "numpy": (peer, (actions,))}, repeats=15)
    err = float(np.abs(np.asarray(ours(s0, acts_j).p) - peer(actions)[0]).max())
    n = N_ENVS * N_STEPS
    emit(AREA, "rodinsert_step_1024_envs_x100", ours_s=t["ours"]["median_s"], peer="numpy vectorised step",
         peer_s=t["numpy"]["median_s"], compile_s=t["ours"]["first_s"] - t["ours"]["median_s"],
         quality={"max_abs_p_diff": err}, calibration=calibration_gflops(),
         steps_per_s_ours=n / t["ours"]["median_s"], steps_per_s_peer=n / t["numpy"]["median_s"], goal_ratio=1.0)


if __name__ == "__main__":
    main()
