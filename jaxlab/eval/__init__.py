"""Evaluation scores: the FACTS Leaderboard factuality suite (arXiv:2512.10791), in :mod:`~jaxlab.eval.facts`:
metrics, split combination, suite score and bootstrap intervals (:mod:`~jaxlab.eval.facts.metrics`), verdict
tables, leaderboard and judges (:mod:`~jaxlab.eval.facts.table`). Its public API is re-exported here."""

from jaxlab.eval import facts
from jaxlab.eval.facts import (
    SUBBENCHMARKS,
    VERDICT,
    Judge,
    LeaderboardRow,
    RuleJudge,
    VerdictRow,
    VerdictTable,
    bootstrap_ci,
    combine_splits,
    facts_score,
    facts_score_ci,
    format_leaderboard,
    grounding_score,
    judge_items,
    leaderboard,
    load_verdicts,
    multimodal_metrics,
    print_leaderboard,
    shortform_metrics,
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
    "facts",
    "facts_score",
    "facts_score_ci",
    "format_leaderboard",
    "grounding_score",
    "judge_items",
    "leaderboard",
    "load_verdicts",
    "multimodal_metrics",
    "print_leaderboard",
    "shortform_metrics",
    "synthetic_verdicts",
]
