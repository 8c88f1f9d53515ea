"""FACTS Leaderboard scoring (Cheng et al., "The FACTS Leaderboard: A Comprehensive Benchmark for Large Language
Model Factuality", arXiv:2512.10791): the metrics, split combination, suite score and bootstrap intervals
(:mod:`~jaxlab.eval.facts.metrics`, JAX), and the verdict tables, leaderboard and judges
(:mod:`~jaxlab.eval.facts.table`, plain Python)."""

from jaxlab.eval.facts import metrics, table
from jaxlab.eval.facts.metrics import (
    SUBBENCHMARKS,
    VERDICT,
    bootstrap_ci,
    combine_splits,
    facts_score,
    facts_score_ci,
    grounding_score,
    multimodal_metrics,
    shortform_metrics,
)
from jaxlab.eval.facts.table import (
    Judge,
    LeaderboardRow,
    RuleJudge,
    VerdictRow,
    VerdictTable,
    format_leaderboard,
    judge_items,
    leaderboard,
    load_verdicts,
    print_leaderboard,
    synthetic_verdicts,
)

__all__ = [
    "SUBBENCHMARKS",
    "VERDICT",
    "Judge",
    "LeaderboardRow",
    "RuleJudge",
    "VerdictRow",
    "VerdictTable",
    "bootstrap_ci",
    "combine_splits",
    "facts_score",
    "facts_score_ci",
    "format_leaderboard",
    "grounding_score",
    "judge_items",
    "leaderboard",
    "load_verdicts",
    "metrics",
    "multimodal_metrics",
    "print_leaderboard",
    "shortform_metrics",
    "synthetic_verdicts",
    "table",
]
