"""Positional spread of additive positional encodings ("Positional spread of additive positional encodings",
2026; title, authors and arXiv id not retrieved).

The spread ``S(E) = ‖E − 1ēᵀ‖_F²`` of a PE table, its closed forms and separation bound (:mod:`.pe`), softmax
attention with mean pooling and the estimators of its equivariance breaking (:mod:`.attention`), and
spread-regularised training on synthetic length-generalisation tasks (:mod:`.training`).
"""

from jaxlab.attention.pe_spread.attention import (
    MeanPoolAttention,
    attention_heads,
    attention_mean_pool,
    equivariance_gap,
    invariant_deviation,
)
from jaxlab.attention.pe_spread.pe import (
    alibi_bias,
    alibi_slopes,
    center_pe,
    displacement_spread,
    learned_pe_init,
    min_separation,
    normalized_spread,
    rope,
    rope_displacement_spread,
    scale_spread,
    sinusoidal_pe,
    spread,
    spread_closed_form_sinusoidal,
    spread_lower_bound,
    spread_penalty,
)
from jaxlab.attention.pe_spread.training import (
    TASKS,
    Block,
    PEClassifier,
    PEClassifierMetrics,
    accuracy,
    init,
    make_step,
    pe_classifier_algorithm,
    sample_batch,
    train,
)

__all__ = [
    "TASKS",
    "Block",
    "MeanPoolAttention",
    "PEClassifier",
    "PEClassifierMetrics",
    "accuracy",
    "alibi_bias",
    "alibi_slopes",
    "attention_heads",
    "attention_mean_pool",
    "center_pe",
    "displacement_spread",
    "equivariance_gap",
    "init",
    "invariant_deviation",
    "learned_pe_init",
    "make_step",
    "min_separation",
    "normalized_spread",
    "pe_classifier_algorithm",
    "rope",
    "rope_displacement_spread",
    "sample_batch",
    "scale_spread",
    "sinusoidal_pe",
    "spread",
    "spread_closed_form_sinusoidal",
    "spread_lower_bound",
    "spread_penalty",
    "train",
]
