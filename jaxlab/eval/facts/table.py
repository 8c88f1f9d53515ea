"""FACTS verdict tables: loading per-item judge verdicts (CSV, JSON, JSONL), the leaderboard, and pluggable judges.

Plain Python and NumPy (bookkeeping); the numbers come from :mod:`jaxlab.eval.facts.metrics`. One row per (model,
benchmark, split, item_id, judge) with the fields of its benchmark:

==============================  ===========================================================
benchmark                       fields
==============================  ===========================================================
``parametric``, ``search``      ``verdict`` in {correct, incorrect, not_attempted}
``multimodal``                  ``coverage``, ``no_contradiction`` in {0, 1}
``grounding``                   ``eligible``, ``grounded`` in {0, 1}
==============================  ===========================================================

``split`` is ``public`` or ``private``. Malformed rows (missing columns or fields, unknown benchmark, split or
label, values outside {0, 1}, duplicates) raise ``ValueError`` naming the row. Within a (model, benchmark, split)
every judge must rate the same items.

A judge is any ``Callable[[dict], dict]`` (an LLM call in practice): it receives an item (``benchmark`` and the
item's content) and returns the benchmark's fields. :class:`RuleJudge` is a deterministic stand-in for tests
(jaxlab's rules, not the paper's prompts).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from jaxlab.core.citations import cites
from jaxlab.eval.facts.metrics import (
    SUBBENCHMARKS,
    VERDICT,
    combine_splits,
    facts_score,
    grounding_score,
    multimodal_metrics,
    shortform_metrics,
)
from jaxlab.eval.facts.papers import FACTS

__all__ = [
    "BASE_COLUMNS",
    "FIELDS",
    "Judge",
    "LeaderboardRow",
    "RuleJudge",
    "VerdictRow",
    "VerdictTable",
    "format_leaderboard",
    "judge_items",
    "leaderboard",
    "load_verdicts",
    "print_leaderboard",
    "synthetic_verdicts",
]

BASE_COLUMNS = ("model", "benchmark", "split", "item_id", "judge")
FIELDS = {
    "parametric": ("verdict",),
    "search": ("verdict",),
    "multimodal": ("coverage", "no_contradiction"),
    "grounding": ("eligible", "grounded"),
}
SPLITS = ("public", "private")

Judge = Callable[[dict], dict]
"""A judge: item dict (``benchmark`` and content) -> the benchmark's verdict fields (see :data:`FIELDS`)."""


class VerdictRow(NamedTuple):
    """One judge's verdict on one item; ``values`` holds the benchmark's fields as integer codes."""

    model: str
    benchmark: str
    split: str
    item_id: str
    judge: str
    values: tuple[int, ...]


class LeaderboardRow(NamedTuple):
    model: str
    multimodal: float
    parametric: float
    search: float
    grounding: float
    facts: float


def _binary(value: Any, where: str, field: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false"):
        return int(value.strip().lower() in ("1", "true"))
    raise ValueError(f"{where}: {field} must be 0 or 1, got {value!r}")


def _row(record: Mapping[str, Any], where: str) -> VerdictRow:
    if not isinstance(record, Mapping):
        raise ValueError(f"{where}: must be an object with columns {BASE_COLUMNS}, got {type(record).__name__}")
    missing = [c for c in BASE_COLUMNS if c not in record or record[c] in (None, "")]
    if missing:
        raise ValueError(f"{where}: missing column(s) {missing}")
    bench, split = str(record["benchmark"]).strip(), str(record["split"]).strip()
    if bench not in FIELDS:
        raise ValueError(f"{where}: unknown benchmark {bench!r}; expected one of {tuple(FIELDS)}")
    if split not in SPLITS:
        raise ValueError(f"{where}: unknown split {split!r}; expected one of {SPLITS}")
    fields = FIELDS[bench]
    absent = [f for f in fields if f not in record or record[f] in (None, "")]
    if absent:
        raise ValueError(f"{where}: missing column(s) {absent} for benchmark {bench!r}")
    if fields == ("verdict",):
        label = str(record["verdict"]).strip()
        if label not in VERDICT:
            raise ValueError(f"{where}: unknown verdict label {label!r}; expected one of {tuple(VERDICT)}")
        values = (VERDICT[label],)
    else:
        values = tuple(_binary(record[f], where, f) for f in fields)
    ident = tuple(str(record[c]).strip() for c in ("model", "item_id", "judge"))
    return VerdictRow(ident[0], bench, split, ident[1], ident[2], values)


@dataclass(frozen=True)
class VerdictTable:
    """Validated verdict rows, with the arrays the metrics need."""

    rows: tuple[VerdictRow, ...]

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], source: str = "record") -> VerdictTable:
        """Validate records (dicts with :data:`BASE_COLUMNS` and the benchmark's fields) into a table."""
        rows, seen = [], set()
        for k, rec in enumerate(records, start=1):
            row = _row(rec, f"{source} {k}")
            key = row[:5]
            if key in seen:
                raise ValueError(f"{source} {k}: duplicate verdict for {dict(zip(BASE_COLUMNS, key, strict=True))}")
            seen.add(key)
            rows.append(row)
        if not rows:
            raise ValueError(f"no verdict rows in {source}s")
        return cls(tuple(rows))

    def models(self) -> list[str]:
        return sorted({r.model for r in self.rows})

    def arrays(self, model: str, benchmark: str, split: str) -> dict[str, np.ndarray]:
        """Field arrays ``(J, n)`` (judges and item ids sorted) of one model, benchmark and split."""
        sel = [r for r in self.rows if (r.model, r.benchmark, r.split) == (model, benchmark, split)]
        if not sel:
            raise ValueError(f"no verdicts for model {model!r}, benchmark {benchmark!r}, split {split!r}")
        judges = sorted({r.judge for r in sel})
        items = sorted({r.item_id for r in sel})
        j_of, i_of = {j: k for k, j in enumerate(judges)}, {i: k for k, i in enumerate(items)}
        fields = FIELDS[benchmark]
        out = {f: np.full((len(judges), len(items)), -1, np.int32) for f in fields}
        for r in sel:
            for f, v in zip(fields, r.values, strict=True):
                out[f][j_of[r.judge], i_of[r.item_id]] = v
        if any(np.any(a < 0) for a in out.values()):
            raise ValueError(
                f"{model!r}/{benchmark!r}/{split!r}: every judge must rate every item ({len(judges)} judges, "
                f"{len(items)} items, {len(sel)} rows)"
            )
        return out

    def split_score(self, model: str, benchmark: str, split: str, eligibility: str = "per_judge") -> float:
        """Primary score of one split: accuracy (short-form, multimodal) or the grounding score."""
        a = self.arrays(model, benchmark, split)
        if benchmark == "grounding":
            return float(grounding_score(a["eligible"], a["grounded"], eligibility))
        if benchmark == "multimodal":
            return float(multimodal_metrics(a["coverage"], a["no_contradiction"])["accuracy"])
        return float(shortform_metrics(a["verdict"])["accuracy"])

    def item_scores(self, model: str, benchmark: str, split: str, eligibility: str = "per_judge") -> np.ndarray:
        """Per-item scores whose mean is the split score (for
        :func:`~jaxlab.eval.facts.metrics.facts_score_ci`): correct indicator (short-form), ``kappa nu``
        (multimodal), judge mean of ``e g`` (grounding), each averaged over judges."""
        a = self.arrays(model, benchmark, split)
        if benchmark in ("parametric", "search"):
            return (a["verdict"] == VERDICT["correct"]).mean(0)
        if benchmark == "multimodal":
            return (a["coverage"] * a["no_contradiction"]).mean(0)
        e = a["eligible"]
        if eligibility == "any_judge":
            e = np.broadcast_to(e.min(0), e.shape)
        return (e * a["grounded"]).mean(0)

    def n_items(self, model: str, benchmark: str, split: str) -> int:
        return len({r.item_id for r in self.rows if (r.model, r.benchmark, r.split) == (model, benchmark, split)})


def _read_records(path: Path) -> tuple[list[dict], str]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json", ".jsonl"):
        raise ValueError(f"verdict file must end in .csv, .json or .jsonl, got {path.name!r}")
    if suffix == ".csv":
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [c for c in BASE_COLUMNS if c not in header]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing} in the CSV header {header}")
            return list(reader), "row"
    text = path.read_text()
    if suffix == ".jsonl":
        out = []
        for k, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {k} is not valid JSON ({exc.msg})") from exc
        return out, "line"
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError(f"{path}: a JSON verdict file must hold a list of objects, got {type(data).__name__}")
    return data, "entry"


@cites(FACTS)
def load_verdicts(path: str | Path) -> VerdictTable:
    """Read and validate a verdict file (``.csv``, ``.json`` list of objects, or ``.jsonl``)."""
    path = Path(path)
    records, unit = _read_records(path)
    return VerdictTable.from_records(records, source=f"{path.name} {unit}")


@cites(FACTS)
def leaderboard(table: VerdictTable, mode: str = "mean", eligibility: str = "per_judge") -> list[LeaderboardRow]:
    """Every model's four sub-scores (public and private combined by ``mode``) and FACTS score, best first."""
    out = []
    for model in table.models():
        subs = {}
        for b in SUBBENCHMARKS:
            pub, priv = (table.split_score(model, b, s, eligibility) for s in SPLITS)
            n_pub, n_priv = (table.n_items(model, b, s) for s in SPLITS)
            subs[b] = float(combine_splits(pub, priv, n_pub, n_priv, mode=mode))
        out.append(LeaderboardRow(model, *(subs[b] for b in SUBBENCHMARKS), float(facts_score(subs))))
    return sorted(out, key=lambda r: (-r.facts, r.model))


def format_leaderboard(rows: Iterable[LeaderboardRow]) -> str:
    """The leaderboard as a fixed-width text table, percentages with one decimal."""
    rows = list(rows)
    width = max([len("model"), *(len(r.model) for r in rows)])
    head = f"{'rank':>4}  {'model':<{width}}  {'FACTS':>6}  " + "  ".join(f"{b[:10]:>10}" for b in SUBBENCHMARKS)
    lines = [head, "-" * len(head)]
    for k, r in enumerate(rows, start=1):
        subs = "  ".join(f"{100 * getattr(r, b):10.1f}" for b in SUBBENCHMARKS)
        lines.append(f"{k:>4}  {r.model:<{width}}  {100 * r.facts:6.1f}  {subs}")
    return "\n".join(lines)


def print_leaderboard(rows: Iterable[LeaderboardRow]) -> None:
    print(format_leaderboard(rows))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]", " ", str(text).lower())).strip()


class RuleJudge:
    """Deterministic rule-based judge (a stand-in for LLM judges in tests; jaxlab's rules).

    - short-form: ``not_attempted`` if the response is empty or hedges (one of ``hedges``), ``correct`` if the
      normalised gold answer occurs in the normalised response, else ``incorrect``;
    - multimodal: coverage = every ``essential`` fact occurs, no_contradiction = no ``contradictions`` entry
      occurs;
    - grounding: eligible = every ``request_keywords`` entry occurs in the response, grounded = every sentence of
      the response occurs in the document (after normalisation).
    """

    hedges = ("i don t know", "i am not sure", "i cannot answer", "unknown")

    def __call__(self, item: Mapping[str, Any]) -> dict[str, Any]:
        bench = item.get("benchmark")
        if bench not in FIELDS:
            raise ValueError(f"item benchmark must be one of {tuple(FIELDS)}, got {bench!r}")
        resp = _norm(item.get("response", ""))
        if bench in ("parametric", "search"):
            if not resp or any(h in resp for h in self.hedges):
                return {"verdict": "not_attempted"}
            return {"verdict": "correct" if _norm(item["gold"]) in resp else "incorrect"}
        if bench == "multimodal":
            cov = all(_norm(f) in resp for f in item.get("essential", ()))
            ok = not any(_norm(c) in resp for c in item.get("contradictions", ()))
            return {"coverage": int(cov), "no_contradiction": int(ok)}
        doc = _norm(item.get("document", ""))
        eligible = bool(resp) and all(_norm(k) in resp for k in item.get("request_keywords", ()))
        sentences = [_norm(s) for s in re.split(r"[.!?]", str(item.get("response", ""))) if _norm(s)]
        grounded = bool(sentences) and all(s in doc for s in sentences)
        return {"eligible": int(eligible), "grounded": int(grounded)}


@cites(FACTS)
def judge_items(judges: Mapping[str, Judge], items: Iterable[Mapping[str, Any]]) -> VerdictTable:
    """Run every judge on every item (dicts with ``model, benchmark, split, item_id`` and the content the judge
    reads) and validate their outputs into a :class:`VerdictTable`."""
    records = []
    for item in items:
        for name, judge in judges.items():
            out = judge(dict(item))
            if not isinstance(out, Mapping):
                raise ValueError(f"judge {name!r} must return a dict, got {type(out).__name__}")
            records.append({**{c: item.get(c) for c in BASE_COLUMNS if c != "judge"}, "judge": name, **out})
    return VerdictTable.from_records(records, source="judged item")


def synthetic_verdicts(
    seed: int, skills: Mapping[str, Mapping[str, float]], n_items: int = 50, n_judges: int = 2
) -> VerdictTable:
    """A synthetic verdict table (for tests, claims and the notebook): model ``m`` gets item-level success with
    probability ``skills[m][benchmark]`` on every benchmark and split; short-form failures split evenly into
    incorrect and not_attempted, multimodal failures into missing coverage or a contradiction, grounding
    failures into ineligible or ungrounded; judges of grounding disagree on 10 % of the items (one flips)."""
    rng = np.random.default_rng(seed)
    records = []
    for model, sk in skills.items():
        for b in SUBBENCHMARKS:
            p = float(sk[b])
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"skills[{model!r}][{b!r}] must lie in [0, 1], got {p!r}")
            for split in SPLITS:
                ok = rng.random(n_items) < p
                kind = rng.random(n_items) < 0.5
                flip = rng.random(n_items) < 0.1
                for i in range(n_items):
                    base = {"model": model, "benchmark": b, "split": split, "item_id": f"{b}-{split}-{i}"}
                    if b in ("parametric", "search"):
                        label = "correct" if ok[i] else ("incorrect" if kind[i] else "not_attempted")
                        records.append({**base, "judge": "j1", "verdict": label})
                    elif b == "multimodal":
                        cov, nc = (1, 1) if ok[i] else ((0, 1) if kind[i] else (1, 0))
                        records.append({**base, "judge": "j1", "coverage": cov, "no_contradiction": nc})
                    else:
                        e, g = (1, 1) if ok[i] else ((0, 1) if kind[i] else (1, 0))
                        for j in range(n_judges):
                            ej, gj = (1 - e, g) if (flip[i] and j == n_judges - 1) else (e, g)
                            records.append({**base, "judge": f"j{j + 1}", "eligible": ej, "grounded": gj})
    return VerdictTable.from_records(records, source="synthetic record")
