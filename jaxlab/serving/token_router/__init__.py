r"""TokenRouter: token-level routed decoding served model-centrically, one subserver per model with delayed batching.

Paper: "TokenRouter: Efficient Serving of Token-Level Routed LLM Inference" (2026; abstract only, authors and
arXiv id not retrieved; the throughput model and scheduler rule are reconstructed), with the routers of Co-LLM
(Shen et al., arXiv:2403.03870), R2R (Fu et al., arXiv:2505.21600) and edge token routing (She et al.,
arXiv:2504.07878).

* :mod:`~jaxlab.serving.token_router.cost_model`: the step-cost model ``T_m(n) = alpha_m + beta_m n``, the
  throughput models and the derived delayed-batching threshold and timeout;
* :mod:`~jaxlab.serving.token_router.routers`: Bernoulli, confidence-threshold, Co-LLM and R2R routers (JAX);
* :mod:`~jaxlab.serving.token_router.simulator`: a discrete-event simulator of the serving policies;
* :mod:`~jaxlab.serving.token_router.tiny_lm`: a tiny KV-cached decoder (equinox);
* :mod:`~jaxlab.serving.token_router.engine`: the real two-model engine.
"""

from __future__ import annotations

from jaxlab.serving.token_router import cost_model, engine, routers, simulator, tiny_lm
from jaxlab.serving.token_router.cost_model import (
    DelayedBatchingParams,
    StepCostModel,
    check_cost,
    derive_delayed_batching,
    fit_step_cost,
    step_latency,
    throughput_lockstep,
    throughput_separate,
    throughput_sequential,
    throughput_shared,
)
from jaxlab.serving.token_router.engine import (
    EngineStats,
    Subserver,
    TokenRouterEngine,
    measure_step_cost,
    reference_decode,
    table_router,
)
from jaxlab.serving.token_router.routers import (
    CoLLMGate,
    R2RParams,
    bernoulli_router,
    colm_gate,
    colm_gate_prob,
    colm_marginal_nll,
    confidence_router,
    init_colm_gate,
    init_r2r,
    r2r_router,
    r2r_score,
)
from jaxlab.serving.token_router.simulator import SimResult, bernoulli_sim_router, check_route, simulate
from jaxlab.serving.token_router.tiny_lm import KVCache, TinyDecoder, decode_step, decode_step_flat, forward, init_cache

__all__ = [
    "CoLLMGate",
    "DelayedBatchingParams",
    "EngineStats",
    "KVCache",
    "R2RParams",
    "SimResult",
    "StepCostModel",
    "Subserver",
    "TinyDecoder",
    "TokenRouterEngine",
    "bernoulli_router",
    "bernoulli_sim_router",
    "check_cost",
    "check_route",
    "colm_gate",
    "colm_gate_prob",
    "colm_marginal_nll",
    "confidence_router",
    "cost_model",
    "decode_step",
    "decode_step_flat",
    "derive_delayed_batching",
    "engine",
    "fit_step_cost",
    "forward",
    "init_cache",
    "init_colm_gate",
    "init_r2r",
    "measure_step_cost",
    "r2r_router",
    "r2r_score",
    "reference_decode",
    "routers",
    "simulate",
    "simulator",
    "step_latency",
    "table_router",
    "throughput_lockstep",
    "throughput_separate",
    "throughput_sequential",
    "throughput_shared",
    "tiny_lm",
]
