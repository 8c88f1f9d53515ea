"""SemanticFlow (area ``semantic_flow``): rectified-flow sampling of a tiny MM-DiT with read-only semantic probes
and energy-guided rectification of the early sampling steps.

Papers: X. Liu, C. Gong, Q. Liu, "Flow Straight and Fast: Learning to Generate and Transfer Data with Rectified
Flow", arXiv:2209.03003; P. Esser et al., "Scaling Rectified Flow Transformers for High-Resolution Image Synthesis"
(MM-DiT), arXiv:2403.03206; "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided
Rectification" (2026, abstract only).

Rectified flow and MM-DiT follow their papers. SemanticFlow is reconstructed from its abstract: its probes,
response maps, energy and rectification are **[chosen]** concrete forms of the abstract's "semantic token streams
as run-time probes" and "energy-guided rectification", built from prior training-free guidance work and measured
on a toy customization task; :mod:`.guidance`'s docstring says what was reconstructed and how.

Modules: :mod:`.rectified_flow` (RF loss, schedules, the Euler/diffrax samplers and the trainer), :mod:`.mmdit`
(joint attention and the tiny MM-DiT), :mod:`.guidance` (probes, response maps, the energy and the guided
sampler) and :mod:`.shapes` (the toy customization task, its metrics and the MM-DiT training on it).
"""

from jaxlab.generative.semantic_flow import (
    papers,  # noqa: F401  (registers the BibTeX entries)
    rectified_flow,
)
from jaxlab.generative.semantic_flow.guidance import (
    ROLE_CONTEXT,
    ROLE_SUBJECT,
    ROLE_VISUAL,
    ProbeSet,
    SemanticFlowConfig,
    SemanticFlowInfo,
    SemanticFlowState,
    SemanticFlowStepInfo,
    aggregate_responses,
    forward_with_probes,
    make_probes,
    rectify_step,
    semantic_energy,
    semanticflow_algorithm,
    semanticflow_sample,
    soft_mask,
)
from jaxlab.generative.semantic_flow.rectified_flow import (
    EulerInfo,
    EulerState,
    MMDiTBlock,
    TinyMMDiT,
    cfg_velocity,
    cfm_to_rf_velocity,
    diffrax_sample,
    euler_algorithm,
    euler_init,
    euler_sample,
    euler_step,
    flux_mu,
    joint_attention,
    make_sigmas,
    patchify,
    rf_interpolate,
    rf_loss,
    rf_optimizer,
    rf_target,
    rf_to_cfm_velocity,
    rf_train_step,
    sample_sigmas,
    shift_sigmas,
    time_shift_exponential,
    unpatchify,
)
from jaxlab.generative.semantic_flow.shapes import (
    ANCHORS,
    PALETTE,
    anchor_token_mask,
    anchor_windows,
    concept_fidelity,
    make_shapes_batch,
    prompt_alignment,
    train_tiny_mmdit,
)

__all__ = [
    "ANCHORS",
    "PALETTE",
    "ROLE_CONTEXT",
    "ROLE_SUBJECT",
    "ROLE_VISUAL",
    "EulerInfo",
    "EulerState",
    "MMDiTBlock",
    "ProbeSet",
    "SemanticFlowConfig",
    "SemanticFlowInfo",
    "SemanticFlowState",
    "SemanticFlowStepInfo",
    "TinyMMDiT",
    "aggregate_responses",
    "anchor_token_mask",
    "anchor_windows",
    "cfg_velocity",
    "cfm_to_rf_velocity",
    "concept_fidelity",
    "diffrax_sample",
    "euler_algorithm",
    "euler_init",
    "euler_sample",
    "euler_step",
    "flux_mu",
    "forward_with_probes",
    "joint_attention",
    "make_probes",
    "make_shapes_batch",
    "make_sigmas",
    "patchify",
    "prompt_alignment",
    "rectified_flow",
    "rectify_step",
    "rf_interpolate",
    "rf_loss",
    "rf_optimizer",
    "rf_target",
    "rf_to_cfm_velocity",
    "rf_train_step",
    "sample_sigmas",
    "semantic_energy",
    "semanticflow_algorithm",
    "semanticflow_sample",
    "shift_sigmas",
    "soft_mask",
    "time_shift_exponential",
    "train_tiny_mmdit",
    "unpatchify",
]
