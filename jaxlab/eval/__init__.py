"""Evaluation scores: the FACTS Leaderboard factuality suite (arXiv:2512.10791): metrics, split combination,
suite score and bootstrap intervals (:mod:`~jaxlab.eval.facts`), verdict tables, leaderboard and judges
(:mod:`~jaxlab.eval.facts_table`)."""

from jaxlab.eval import facts, facts_table
from jaxlab.eval.facts import (
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
from jaxlab.eval.facts_table import (
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
    "facts",
    "facts_score",
    "facts_score_ci",
    "facts_table",
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
