"""Verdict tables: the shipped tiny CSV against hand-computed scores, JSON/JSONL round trips, the leaderboard
against a plain-Python group-by, malformed files, the rule-based judge."""

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from jaxlab.eval import (
    SUBBENCHMARKS,
    RuleJudge,
    format_leaderboard,
    judge_items,
    leaderboard,
    load_verdicts,
    synthetic_verdicts,
)

TINY = Path(__file__).with_name("verdicts_tiny.csv")


def test_tiny_csv_hand_computed_scores():
    rows = {r.model: r for r in leaderboard(load_verdicts(TINY))}
    a, b = rows["model-a"], rows["model-b"]
    # model a: parametric (0.5 + 1) / 2, search (0.5 + 0) / 2, multimodal (0.5 + 0.5) / 2,
    # grounding public j1 0.5, j2 1.0 -> 0.75, private j1 1.0, j2 0.5 -> 0.75
    assert (a.parametric, a.search, a.multimodal, a.grounding) == (0.75, 0.25, 0.5, 0.75)
    assert a.facts == pytest.approx((0.75 + 0.25 + 0.5 + 0.75) / 4, abs=1e-15)
    assert (b.parametric, b.search, b.multimodal, b.grounding, b.facts) == (0.5, 1.0, 1.0, 1.0, 0.875)
    assert [r.model for r in leaderboard(load_verdicts(TINY))] == ["model-b", "model-a"]
    # any_judge: public item g2 is ineligible for every judge -> public 0.5, grounding (0.5 + 0.75) / 2
    a_any = {r.model: r for r in leaderboard(load_verdicts(TINY), eligibility="any_judge")}["model-a"]
    assert a_any.grounding == 0.625
    text = format_leaderboard(leaderboard(load_verdicts(TINY)))
    assert "model-b" in text and "87.5" in text and "56.2" in text


def test_json_and_jsonl_round_trip(tmp_path):
    with TINY.open() as fh:
        records = [{k: v for k, v in r.items() if v != ""} for r in csv.DictReader(fh)]
    (tmp_path / "v.json").write_text(json.dumps(records))
    (tmp_path / "v.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    ref = leaderboard(load_verdicts(TINY))
    assert leaderboard(load_verdicts(tmp_path / "v.json")) == ref
    assert leaderboard(load_verdicts(tmp_path / "v.jsonl")) == ref


def groupby_reference(table, mode):
    """Plain-Python group-by: per (model, benchmark, split, judge) mean of the item score, mean over judges,
    then splits and benchmarks."""
    acc = defaultdict(list)
    for r in table.rows:
        if r.benchmark in ("parametric", "search"):
            ok = r.values[0] == 0
        else:
            ok = r.values[0] == 1 and r.values[1] == 1
        acc[r.model, r.benchmark, r.split, r.judge].append(ok)
    split = defaultdict(list)
    size = {}
    for (m, b, s, _), v in acc.items():
        split[m, b, s].append(np.mean(v))
        size[m, b, s] = len(v)
    out = {}
    for m in {k[0] for k in split}:
        subs = []
        for b in SUBBENCHMARKS:
            pub, priv = np.mean(split[m, b, "public"]), np.mean(split[m, b, "private"])
            if mode == "mean":
                subs.append((pub + priv) / 2)
            else:
                n1, n2 = size[m, b, "public"], size[m, b, "private"]
                subs.append((n1 * pub + n2 * priv) / (n1 + n2))
        out[m] = np.mean(subs)
    return out


@pytest.mark.parametrize("mode", ["mean", "pooled"])
def test_leaderboard_matches_groupby_reference(mode):
    skills = {
        f"m{k}": {b: p for b, p in zip(SUBBENCHMARKS, np.linspace(0.3, 0.9, 4)[::-1] ** (k + 1), strict=True)}
        for k in range(3)
    }
    table = synthetic_verdicts(0, skills, n_items=30)
    ref = groupby_reference(table, mode)
    for row in leaderboard(table, mode=mode):
        assert row.facts == pytest.approx(ref[row.model], abs=1e-12)


def write_csv(path, rows, header=("model", "benchmark", "split", "item_id", "judge", "verdict")):
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(header), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


BASE = {"model": "m", "benchmark": "parametric", "split": "public", "item_id": "1", "judge": "j"}


@pytest.mark.parametrize(
    ("rows", "header", "match"),
    [
        ([{**BASE, "verdict": "right"}], None, "unknown verdict label 'right'"),
        ([{**BASE, "verdict": "correct"}], ("model", "benchmark", "split", "item_id", "verdict"), r"missing column"),
        ([{**BASE, "verdict": ""}], None, r"missing column\(s\) \['verdict'\]"),
        ([{**BASE, "benchmark": "video", "verdict": "correct"}], None, "unknown benchmark"),
        ([{**BASE, "split": "dev", "verdict": "correct"}], None, "unknown split"),
        ([{**BASE, "verdict": "correct"}, {**BASE, "verdict": "incorrect"}], None, "duplicate verdict"),
        (
            [{**BASE, "benchmark": "multimodal", "coverage": 2, "no_contradiction": 1}],
            (*BASE, "coverage", "no_contradiction"),
            "coverage must be 0 or 1",
        ),
    ],
)
def test_malformed_files_raise(tmp_path, rows, header, match):
    path = write_csv(tmp_path / "v.csv", rows, header or ("model", "benchmark", "split", "item_id", "judge", "verdict"))
    with pytest.raises(ValueError, match=match):
        load_verdicts(path)


def test_other_file_errors(tmp_path):
    with pytest.raises(ValueError, match=r"\.csv, \.json or \.jsonl"):
        load_verdicts(tmp_path / "v.txt")
    (tmp_path / "v.json").write_text(json.dumps({"model": "m"}))
    with pytest.raises(ValueError, match="list of objects"):
        load_verdicts(tmp_path / "v.json")
    (tmp_path / "v.jsonl").write_text('{"model": "m"}\n{oops\n')
    with pytest.raises(ValueError, match="line 2 is not valid JSON"):
        load_verdicts(tmp_path / "v.jsonl")
    rows = [
        {**BASE, "benchmark": "grounding", "judge": j, "item_id": i, "eligible": 1, "grounded": 1}
        for j, i in (("j1", "1"), ("j1", "2"), ("j2", "1"))
    ]
    table = load_verdicts(write_csv(tmp_path / "g.csv", rows, (*BASE, "eligible", "grounded")))
    with pytest.raises(ValueError, match="every judge must rate every item"):
        table.arrays("m", "grounding", "public")
    with pytest.raises(ValueError, match="no verdicts for model"):
        leaderboard(table)


def test_rule_judge_and_judge_items():
    judge = RuleJudge()
    assert judge({"benchmark": "parametric", "response": "It is Paris.", "gold": "paris"}) == {"verdict": "correct"}
    assert judge({"benchmark": "search", "response": "Lyon", "gold": "Paris"}) == {"verdict": "incorrect"}
    assert judge({"benchmark": "search", "response": "I don't know", "gold": "Paris"}) == {"verdict": "not_attempted"}
    mm = {
        "benchmark": "multimodal",
        "response": "A red car on a bridge",
        "essential": ["red car"],
        "contradictions": ["blue car"],
    }
    assert judge(mm) == {"coverage": 1, "no_contradiction": 1}
    doc = "The river is 300 km long. It flows into the sea."
    g = {
        "benchmark": "grounding",
        "document": doc,
        "request_keywords": ["river"],
        "response": "The river is 300 km long. It flows into the sea.",
    }
    assert judge(g) == {"eligible": 1, "grounded": 1}
    assert judge({**g, "response": "The river is 400 km long."}) == {"eligible": 1, "grounded": 0}
    with pytest.raises(ValueError, match="item benchmark must be one of"):
        judge({"benchmark": "video"})
    items = [
        {"model": "m", "benchmark": "parametric", "split": "public", "item_id": str(k), "response": r, "gold": "paris"}
        for k, r in enumerate(["Paris", "Rome", "unknown"])
    ]
    table = judge_items({"rule": judge}, items)
    assert table.arrays("m", "parametric", "public")["verdict"].tolist() == [[0, 1, 2]]
    with pytest.raises(ValueError, match="unknown verdict label 'yes'"):
        judge_items({"bad": lambda item: {"verdict": "yes"}}, items)


def test_item_scores_average_to_split_scores():
    table = load_verdicts(TINY)
    for b in SUBBENCHMARKS:
        for split in ("public", "private"):
            for elig in ("per_judge", "any_judge"):
                got = table.item_scores("model-a", b, split, elig).mean()
                assert got == pytest.approx(table.split_score("model-a", b, split, elig), abs=1e-15)
