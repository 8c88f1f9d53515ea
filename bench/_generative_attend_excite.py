"""SemanticFlow's excite energy step against Attend-and-Excite's update rule (spec (a) section 7, side-by-side
(i)), on the same tiny response maps; one JSON line per case. Needs diffusers (and transformers, which its
pipeline module imports); skipped otherwise.

Setup (float64 in JAX, float32 in torch): a latent ``z`` of 16 image tokens (4 x 4 grid) x 8 values, a fixed
projection ``W`` and four text-token queries (start, two words, end); logits ``S[t, i] = q_t . W z_i``.

- Attend-and-Excite (diffusers' ``StableDiffusionAttendAndExcitePipeline``, its own static methods): the
  cross-attention maps ``A[i, t] = softmax_t S[t, i]`` on the 4 x 4 grid go through
  ``_compute_max_attention_per_index`` (drop start/end, x100, softmax over the words, 3 x 3 Gaussian smoothing,
  max over the grid), ``_compute_loss`` (``max_t max(0, 1 - max_i)``) and ``_update_latent``
  (``z - alpha grad``, alpha = 20 as the pipeline's ``scale_factor`` at ``sqrt(1 - alpha_bar) = 1``).
- SemanticFlow: the probe responses ``R[t, i] = softmax_i S[t, i]`` of the two word probes, smoothed by
  ``aggregate_responses``, the excite term of ``semantic_energy`` (``lam_excite = 1``, the other terms off) and
  the rectification rule ``z - eta0 sigma g / (rms(g) + 1e-8)`` (``eta0 = 0.5``, ``sigma = 1``).

Reported: both losses before and after each update (each method's step evaluated on both losses), the cosine
between the two update directions, and the step-size convention (norm of each step). The two energies differ by
construction (A&E normalises over words with temperature 100, takes the worst word and a hinge; ours normalises
across the text probes at each location and sums squares), so the cosine measures how far they agree.
"""

from __future__ import annotations

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.bench import emit
from jaxlab.generative import semantic_flow as sf

AREA = "semantic_flow"
jax.config.update("jax_enable_x64", True)


def main() -> None:
    if importlib.util.find_spec("diffusers") is None or importlib.util.find_spec("transformers") is None:
        print("skip Attend-and-Excite side-by-side: diffusers/transformers not installed", flush=True)
        return
    import torch
    from diffusers.pipelines.deprecated.stable_diffusion_attend_and_excite.pipeline_stable_diffusion_attend_and_excite import (  # noqa: E501
        StableDiffusionAttendAndExcitePipeline as AE,
    )

    r = np.random.default_rng(0)
    z0 = r.standard_normal((16, 8))
    W = r.standard_normal((8, 8)) / np.sqrt(8)
    Q = 1.5 * r.standard_normal((4, 8))  # start, word 1, word 2, end
    alpha, eta0, sigma = 20.0, 0.5, 1.0
    cfg = sf.SemanticFlowConfig(lam_align=0.0, lam_excite=1.0, lam_leak=0.0)
    roles = jnp.array([sf.ROLE_SUBJECT, sf.ROLE_CONTEXT])

    def ours_energy(z):
        S = jnp.asarray(Q[1:3]) @ (jnp.asarray(W) @ z.T)  # (2 words, 16)
        R = sf.aggregate_responses(jax.nn.softmax(S, axis=-1)[None, None], (4, 4))
        return sf.semantic_energy(R, roles, cfg)[0]

    def ae_loss(z):
        S = torch.from_numpy(Q).float() @ (torch.from_numpy(W).float() @ z.T)  # (4 tokens, 16)
        maps = torch.softmax(S, dim=0).T.reshape(4, 4, 4) * 1.0  # (res, res, tokens); A&E scales it in place
        return AE._compute_loss(AE._compute_max_attention_per_index(maps, [1, 2]))

    g_ours = np.asarray(jax.grad(ours_energy)(jnp.asarray(z0)))
    step_ours = -eta0 * sigma * g_ours / (np.sqrt(np.mean(g_ours**2)) + 1e-8)
    zt = torch.from_numpy(z0).float().requires_grad_(True)
    step_ae = (AE._update_latent(zt, ae_loss(zt), alpha) - zt).detach().numpy().astype(np.float64)

    def both(z):
        return float(ours_energy(jnp.asarray(z))), float(ae_loss(torch.from_numpy(z).float()))

    e0, l0 = both(z0)
    e_o, l_o = both(z0 + step_ours)
    e_a, l_a = both(z0 + step_ae)
    cos = float(np.sum(step_ours * step_ae) / (np.linalg.norm(step_ours) * np.linalg.norm(step_ae) + 1e-30))
    emit(AREA, "excite_step_vs_attend_and_excite", ours_s=0.0, peer="diffusers Attend-and-Excite update", peer_s=0.0,
         compile_s=0.0,
         quality={"cosine_between_steps": cos,
                  "ours_energy_before_after_our_step": [e0, e_o], "ae_loss_before_after_our_step": [l0, l_o],
                  "ours_energy_before_after_ae_step": [e0, e_a], "ae_loss_before_after_ae_step": [l0, l_a],
                  "step_norm_ours": float(np.linalg.norm(step_ours)), "step_norm_ae": float(np.linalg.norm(step_ae))},
         goal=None, no_goal_reason="a side-by-side of two different energies' update steps (nothing is timed): the "
         "cosine between the steps says how far they agree, with no target")


if __name__ == "__main__":
    main()
