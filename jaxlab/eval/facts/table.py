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
    """One judge's verdict on one item.

    Attributes:
      model: name of the evaluated model.
      benchmark: one of ``"parametric"``, ``"search"``, ``"multimodal"``, ``"grounding"``.
      split: ``"public"`` or ``"private"``.
      item_id: the item's identifier within its benchmark and split.
      judge: name of the judge.
      values: the benchmark's fields (:data:`FIELDS`) as integer codes: ``(verdict,)`` with the codes of
        :data:`~jaxlab.eval.facts.metrics.VERDICT`, or two 0/1 values.
    """

    model: str
    benchmark: str
    split: str
    item_id: str
    judge: str
    values: tuple[int, ...]


class LeaderboardRow(NamedTuple):
    """One model's line of the leaderboard: its four sub-scores and FACTS score, each a float in ``[0, 1]``.

    Attributes:
      model: name of the model.
      multimodal: the multimodal sub-score (accuracy, splits combined).
      parametric: the parametric sub-score (accuracy, splits combined).
      search: the search sub-score (accuracy, splits combined).
      grounding: the grounding sub-score (splits combined).
      facts: the FACTS score, the mean of the four.
    """

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
    """Validated verdict rows, with the per-split arrays and scores the metrics need.

    Build it with :meth:`from_records`, :func:`load_verdicts`, :func:`judge_items` or :func:`synthetic_verdicts`.
    Methods: ``models()``, ``arrays(model, benchmark, split)`` (field arrays ``(J, n)``), ``split_score(...)``,
    ``item_scores(...)`` and ``n_items(...)``.

    Attributes:
      rows: tuple of :class:`VerdictRow`, in input order.
    """

    rows: tuple[VerdictRow, ...]

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], source: str = "record") -> VerdictTable:
        """Validate records into a table.

        Args:
          records: iterable of mappings with :data:`BASE_COLUMNS` and the benchmark's fields (:data:`FIELDS`):
            ``verdict`` a label of :data:`~jaxlab.eval.facts.metrics.VERDICT`, binary fields 0/1, True/False or the
            strings ``"0"``, ``"1"``, ``"true"``, ``"false"``.
          source: how to name a record in error messages (``"<source> <k>"``).

        Returns:
          The :class:`VerdictTable`.

        Raises:
          ValueError: naming the record, for a non-mapping, a missing column or field, an unknown benchmark, split
            or verdict label, a binary field not 0/1, or a duplicate ``(model, benchmark, split, item_id, judge)``;
            no records at all.
        """
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
        """The model names of the table, sorted.

        Returns:
          list of str.
        """
        return sorted({r.model for r in self.rows})

    def arrays(self, model: str, benchmark: str, split: str) -> dict[str, np.ndarray]:
        """Field arrays ``(J, n)`` (judges and item ids sorted) of one model, benchmark and split.

        Args:
          model: name of the model.
          benchmark: one of the benchmarks of :data:`FIELDS`.
          split: ``"public"`` or ``"private"``.

        Returns:
          dict from each field of the benchmark to an int32 array ``(J, n)``.

        Raises:
          ValueError: no rows for the triple, or a judge that did not rate every item.
        """
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
        """Primary score of one split: accuracy (short-form, multimodal) or the grounding score.

        Args:
          model: name of the model.
          benchmark: one of the benchmarks of :data:`FIELDS`.
          split: ``"public"`` or ``"private"``.
          eligibility: grounding eligibility rule, ``"per_judge"`` or ``"any_judge"``
            (:func:`~jaxlab.eval.facts.metrics.grounding_score`).

        Returns:
          The score as a Python float.

        Raises:
          ValueError: as :meth:`arrays`; an unknown ``eligibility`` (checked for grounding only).
        """
        a = self.arrays(model, benchmark, split)
        if benchmark == "grounding":
            return float(grounding_score(a["eligible"], a["grounded"], eligibility))
        if benchmark == "multimodal":
            return float(multimodal_metrics(a["coverage"], a["no_contradiction"])["accuracy"])
        return float(shortform_metrics(a["verdict"])["accuracy"])

    def item_scores(self, model: str, benchmark: str, split: str, eligibility: str = "per_judge") -> np.ndarray:
        """Per-item scores whose mean is the split score, for :func:`~jaxlab.eval.facts.metrics.facts_score_ci`.

        The correct indicator (short-form), ``κ ν`` (multimodal) or ``e g`` (grounding), each averaged over judges.

        Args:
          model: name of the model.
          benchmark: one of the benchmarks of :data:`FIELDS`.
          split: ``"public"`` or ``"private"``.
          eligibility: grounding eligibility rule, ``"any_judge"``, else per judge (not checked).

        Returns:
          ``(n,)`` float64 NumPy array, items in sorted id order.

        Raises:
          ValueError: as :meth:`arrays`.
        """
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
        """Number of distinct items of one model, benchmark and split (0 when there is none).

        Args:
          model: name of the model.
          benchmark: the benchmark.
          split: the split.

        Returns:
          int.
        """
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
    """Read and validate a verdict file: ``.csv`` (with a header), ``.json`` (a list of objects) or ``.jsonl``.

    One record per (model, benchmark, split, item_id, judge) with the benchmark's fields, as in the module docstring.

    Args:
      path: path of the file (str or ``pathlib.Path``).

    Returns:
      The :class:`VerdictTable`.

    Raises:
      ValueError: an unsupported suffix; a CSV header without :data:`BASE_COLUMNS`; invalid JSON (naming the
        line); a JSON file that is not a list; a malformed record (see :meth:`VerdictTable.from_records`).
      OSError: the file cannot be read.

    Example:
      >>> import json, pathlib, tempfile
      >>> from jaxlab.eval.facts import load_verdicts
      >>> rows = [{"model": "m", "benchmark": "parametric", "split": "public", "item_id": "q1", "judge": "j1",
      ...          "verdict": "correct"}]
      >>> path = pathlib.Path(tempfile.mkdtemp()) / "verdicts.json"
      >>> _ = path.write_text(json.dumps(rows))
      >>> load_verdicts(path).split_score("m", "parametric", "public")
      1.0
    """
    path = Path(path)
    records, unit = _read_records(path)
    return VerdictTable.from_records(records, source=f"{path.name} {unit}")


@cites(FACTS)
def leaderboard(table: VerdictTable, mode: str = "mean", eligibility: str = "per_judge") -> list[LeaderboardRow]:
    """The leaderboard: every model's four sub-scores and FACTS score, best first.

    Per benchmark ``b``, the public and private split scores (:meth:`VerdictTable.split_score`) are combined by
    :func:`~jaxlab.eval.facts.metrics.combine_splits` (``mode``; the item counts for ``"pooled"``), and the FACTS score
    is their mean (:func:`~jaxlab.eval.facts.metrics.facts_score`), as in Cheng et al., "The FACTS Leaderboard",
    arXiv:2512.10791 (the split combination is reconstructed: no official scoring code was located).

    Args:
      table: the :class:`VerdictTable`; every model needs both splits of all four benchmarks.
      mode: split combination, ``"mean"`` or ``"pooled"``.
      eligibility: grounding eligibility rule, ``"per_judge"`` or ``"any_judge"``.

    Returns:
      list of :class:`LeaderboardRow`, sorted by decreasing FACTS score (ties by model name).

    Raises:
      ValueError: a model without verdicts for some benchmark and split; judges that did not rate every item; an
        unknown ``mode`` or ``eligibility``.

    Example:
      >>> from jaxlab.eval.facts import format_leaderboard, leaderboard, synthetic_verdicts
      >>> skills = {"a": dict(multimodal=0.8, parametric=0.6, search=0.9, grounding=0.7),
      ...           "b": dict(multimodal=0.5, parametric=0.4, search=0.6, grounding=0.5)}
      >>> rows = leaderboard(synthetic_verdicts(0, skills, n_items=20))
      >>> [r.model for r in rows]
      ['a', 'b']
      >>> text = format_leaderboard(rows)
    """
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
    """The leaderboard as a fixed-width text table: rank, model, FACTS and the four sub-scores, in percent (one
    decimal).

    Args:
      rows: iterable of :class:`LeaderboardRow` in rank order (as :func:`leaderboard` returns them).

    Returns:
      The table as one string (a header, a rule and one line per row).
    """
    rows = list(rows)
    width = max([len("model"), *(len(r.model) for r in rows)])
    head = f"{'rank':>4}  {'model':<{width}}  {'FACTS':>6}  " + "  ".join(f"{b[:10]:>10}" for b in SUBBENCHMARKS)
    lines = [head, "-" * len(head)]
    for k, r in enumerate(rows, start=1):
        subs = "  ".join(f"{100 * getattr(r, b):10.1f}" for b in SUBBENCHMARKS)
        lines.append(f"{k:>4}  {r.model:<{width}}  {100 * r.facts:6.1f}  {subs}")
    return "\n".join(lines)


def print_leaderboard(rows: Iterable[LeaderboardRow]) -> None:
    """Print :func:`format_leaderboard` of ``rows``.

    Args:
      rows: iterable of :class:`LeaderboardRow` in rank order.
    """
    print(format_leaderboard(rows))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]", " ", str(text).lower())).strip()


class RuleJudge:
    """Deterministic rule-based judge: a stand-in for LLM judges in tests (jaxlab's rules, not the paper's prompts).

    Call it on an item dict (``benchmark`` and the content below); it returns the benchmark's fields. Texts are compared
    after normalisation (lower case, alphanumerics, single spaces).

    - short-form (reads ``response``, ``gold``): ``not_attempted`` if the response is empty or hedges (one of
      ``hedges``), ``correct`` if the normalised gold answer occurs in the normalised response, else
      ``incorrect``;
    - multimodal (reads ``response``, ``essential``, ``contradictions``): coverage = every ``essential`` fact
      occurs, no_contradiction = no ``contradictions`` entry occurs;
    - grounding (reads ``response``, ``document``, ``request_keywords``): eligible = a non-empty response with
      every ``request_keywords`` entry, grounded = every sentence of the response occurs in the document.

    Raises:
      ValueError: (on call) the item's ``benchmark`` is unknown.
      KeyError: (on call) a short-form item without ``gold``.
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
    """Run every judge on every item and validate their outputs into a :class:`VerdictTable`.

    A judge is any callable ``item dict -> dict of the benchmark's fields`` (an LLM call in practice, or
    :class:`RuleJudge`); it receives a copy of the item.

    Args:
      judges: mapping from judge name to judge.
      items: iterable of item dicts with ``model``, ``benchmark``, ``split``, ``item_id`` and the content the
        judges read.

    Returns:
      The :class:`VerdictTable` of one row per (item, judge).

    Raises:
      ValueError: a judge returned a non-mapping; a malformed verdict (see :meth:`VerdictTable.from_records`).
    """
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
    """A synthetic verdict table **[chosen]**, for tests, claims and the notebook.

    Model ``m`` succeeds on an item with probability ``skills[m][benchmark]`` on every benchmark and split. Short-form
    failures split evenly into incorrect and not_attempted, multimodal failures into missing coverage or a
    contradiction, grounding failures into ineligible or ungrounded. Short-form and multimodal items get one judge
    ``"j1"``; grounding items get ``n_judges`` judges, and on about 10 % of the items the last judge flips its
    eligibility verdict.

    Args:
      seed: seed of the NumPy generator.
      skills: mapping from model name to a mapping with a success probability in ``[0, 1]`` for each of
        :data:`~jaxlab.eval.facts.metrics.SUBBENCHMARKS`.
      n_items: items per benchmark and split.
      n_judges: number of grounding judges.

    Returns:
      The :class:`VerdictTable`.

    Raises:
      ValueError: a skill outside ``[0, 1]``; no records (e.g. no models).
      KeyError: a model's skills miss a benchmark.
    """
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
