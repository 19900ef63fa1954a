"""The one shape of a result file: a suite's rows with their metrics, per question and per category,
paired comparisons, and what they were measured on.

```
{suite, date, embedder, corpus: {path, sha256}, golden: {path, sha256, questions, categories},
 baseline, headline, metric_names, metric_questions: {metric: questions that have it},
 skipped: [{name, reason}], rows: [{name, config, config_hash, models, store, date, corpus_sha256,
 golden_sha256, metrics, by_category, seconds_per_question, rerank_reused?: {logits, reused},
 questions: [{id, category, metrics, first_rank, covered, labels, relevant_chunks, retrieved, trace}],
 comparisons}]}
```

``rerank_reused`` is present on a row some of whose reranker logits an earlier row of the same run had
computed: its seconds per question are then less than the row would take alone.

A suite over a BEIR dataset has this shape too; its questions carry document metrics (``doc
ndcg@10``), and span metrics where they have span labels.

A suite that names the split its trained models saw (``training_split``) adds, after ``golden``,
``training: {split, path, sha256, questions: {seen, unseen}}``; each question its ``subset`` (``seen``
or ``unseen``, ``clear_rag.eval.subsets``); and each row, after ``comparisons``, ``by_subset: {seen,
unseen: {questions, metrics, comparisons}}``: the row's metrics over that subset's questions and its
paired comparisons over them, with the same rows as the whole suite's. ``rederive`` adds them to a file
measured before, from its own per-question values, changing nothing it held.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.labels import Labels
from clear_rag.eval.significance import compare
from clear_rag.eval.subsets import SUBSETS, TrainingSubsets
from clear_rag.eval.suite import Suite
from clear_rag.packaged import library_versions
from clear_rag.providers.base import Embedder, describe

HEADLINES = ("correct", "ndcg@10", "doc ndcg@10")


def headline(names: Sequence[str]) -> str:
    """The metric a suite's comparisons lead with: the share of correct answers in a suite that grades
    them, else span nDCG@10, else document nDCG@10."""
    return next((h for h in HEADLINES if h in names), names[0] if names else "")


def aggregate(questions: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, float]:
    """Each metric's mean over the questions that have it (a span metric over those with span labels)."""
    means = {}
    for name in names:
        values = [q["metrics"][name] for q in questions if name in q["metrics"]]
        if values:
            means[name] = round(statistics.fmean(values), 4)
    return means


def with_subset(question: Mapping[str, Any], subset: str) -> dict[str, Any]:
    """A question's record with its ``subset`` put after its category (where a reader looks for it)."""
    out: dict[str, Any] = {}
    for key, value in question.items():
        if key != "subset":
            out[key] = value
        if key == "category":
            out["subset"] = subset
    if "subset" not in out:
        out["subset"] = subset
    return out


def compared(rows: list[dict[str, Any]], baseline: str | None) -> list[dict[str, Any]]:
    """``rows`` again, each with its paired comparisons against the baseline row and the previous row
    (new dicts: the rows given are left as they were).

    A row that names the row it is read against (``against``, set by ``clear-rag beir --against``
    for a row merged in later) is compared with that one in place of the row before it.
    Questions are paired by id, and only those that have the metric in both rows count (a span
    metric exists only for questions with span labels).
    """
    by_name = {r["name"]: r for r in rows}
    out = []
    for n, row in enumerate(rows):
        against = {"baseline": by_name[baseline]} if baseline in by_name and row["name"] != baseline else {}
        if row.get("against") in by_name:
            against["previous"] = by_name[row["against"]]
        elif n > 0:
            against["previous"] = rows[n - 1]
        made = {**row, "comparisons": {role: _compare(other, row) for role, other in against.items()}}
        if any("subset" in q for q in row["questions"]):
            made["by_subset"] = {
                subset: {
                    "questions": len(mine),
                    "metrics": aggregate(mine, list(row["metrics"])),
                    "comparisons": {role: _compare(other, row, subset) for role, other in against.items()},
                }
                for subset in SUBSETS
                for mine in [[q for q in row["questions"] if q.get("subset") == subset]]
            }
        out.append(made)
    return out


def _compare(other: Mapping[str, Any], row: Mapping[str, Any], subset: str | None = None) -> dict[str, Any]:
    """``row`` against ``other`` on each of its metrics, over its questions (of ``subset`` if given)."""
    theirs = {q["id"]: q["metrics"] for q in other["questions"]}
    mine = [q for q in row["questions"] if subset is None or q.get("subset") == subset]
    out = {}
    for name in row["metrics"]:
        pairs = [
            (theirs[q["id"]][name], q["metrics"][name])
            for q in mine
            if name in q["metrics"] and name in theirs.get(q["id"], {})
        ]
        before, after = [a for a, _ in pairs], [b for _, b in pairs]
        out[name] = compare(name, other["name"], before, after).to_dict()
    return out


def with_command(document: dict[str, Any], command: str) -> dict[str, Any]:
    """``document`` with the command that wrote it recorded after its date (a new dict)."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key != "command":
            out[key] = value
        if key == "date":
            out["command"] = command
    return out if "command" in out else {**out, "command": command}


def result_document(
    suite: Suite, rows: list[dict[str, Any]], labels: Labels, corpus_sha256: str, embedder: Embedder | None
) -> dict[str, Any]:
    """The result document for ``rows`` (``run_row`` outputs in suite order, some perhaps skipped);
    attaches comparisons. Shared by ``clear-rag ablate`` and the Dagster result asset, so both write
    the same file."""
    measured = [r for r in rows if "skipped" not in r]
    skipped = [{"name": r["name"], "reason": r["skipped"]} for r in rows if "skipped" in r]
    names = list(measured[0]["metrics"]) if measured else []
    for row in measured[1:]:
        names += [n for n in row["metrics"] if n not in names]
    baseline = suite.baseline if any(r["name"] == suite.baseline for r in measured) else None
    measured = compared(measured, baseline)
    counts = {n: sum(n in q["metrics"] for q in measured[0]["questions"]) for n in names} if measured else {}
    training = {"training": labels.training.to_dict()} if labels.training is not None else {}
    return {
        "suite": suite.name,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "embedder": describe(embedder) if embedder is not None else None,
        "corpus": {"path": str(suite.beir or suite.corpus), "sha256": corpus_sha256},
        "golden": {
            "path": ", ".join(labels.paths) if labels.paths else str(Path()),
            "sha256": labels.sha256,
            "questions": len(labels.questions),
            "categories": {c: sum(q.category == c for q in labels.questions) for c in labels.categories()},
        },
        **training,
        "baseline": baseline or suite.baseline,
        "headline": headline(names),
        "metric_names": names,
        "metric_questions": counts,
        "skipped": skipped,
        "rows": measured,
        # the libraries that computed the numbers (the models are named per row)
        "versions": library_versions(),
    }


def merge(existing: Mapping[str, Any], new: Mapping[str, Any], order: Sequence[str] = ()) -> dict[str, Any]:
    """``existing`` with the rows of ``new`` put in: a row of the same name replaced where it stood,
    others appended; then the rows ``order`` names (a suite file's, in its order) first, the rest as
    they stand; comparisons recomputed over the merged rows (``clear-rag beir``, ``ablate --row``)."""
    rows = [dict(row) for row in existing["rows"]]
    names = [row["name"] for row in rows]
    for row in new["rows"]:
        if row["name"] in names:
            rows[names.index(row["name"])] = dict(row)
        else:
            rows.append(dict(row))
            names.append(row["name"])
    # every row over the same questions: a row run without the suite's training split (``clear-rag
    # beir``) takes each question's subset from the rows that have it
    subsets = {q["id"]: q["subset"] for row in rows for q in row["questions"] if "subset" in q}
    if subsets:
        rows = [_stamped(row, subsets) for row in rows]
    place = {name: n for n, name in enumerate(order)}
    rows.sort(key=lambda row: place.get(row["name"], len(place)))  # stable: the rest keep their order
    names = [row["name"] for row in rows]
    metric_names = list(existing["metric_names"]) + [
        n for n in new["metric_names"] if n not in existing["metric_names"]
    ]
    baseline = existing.get("baseline") if existing.get("baseline") in names else names[0]
    rows = compared(rows, baseline)
    # a merged row's own command (``clear-rag beir --save-results``), kept while the row is
    row_commands = {**existing.get("row_commands", {}), **new.get("row_commands", {})}
    training = existing.get("training") or new.get("training")
    return {
        **existing,
        **({"training": training} if training else {}),
        **({"row_commands": {k: v for k, v in row_commands.items() if k in names}} if row_commands else {}),
        "date": new["date"],
        "metric_names": metric_names,
        "metric_questions": {**existing.get("metric_questions", {}), **new.get("metric_questions", {})},
        "headline": headline(metric_names),
        "baseline": baseline,
        "rows": rows,
    }


def _stamped(row: Mapping[str, Any], subsets: Mapping[str, str]) -> dict[str, Any]:
    """``row`` with each question's subset set from ``subsets`` (question id -> subset)."""
    missing = [q["id"] for q in row["questions"] if q["id"] not in subsets]
    if missing:
        raise InputError(
            f"has {len(missing)} questions that the training split's subsets do not cover "
            f"(first: {missing[0]!r})",
            field=f"row {row['name']!r}",
            fix="Re-derive the file with the suite's own questions (the BEIR folder it was measured on)",
        )
    return {**row, "questions": [with_subset(q, subsets[q["id"]]) for q in row["questions"]]}


def rederive(
    document: Mapping[str, Any], training: TrainingSubsets | None, command: str = ""
) -> dict[str, Any]:
    """``document`` re-derived from its own per-question values, with no retrieval run: each question
    given its subset from ``training`` (if given), each row's per-subset metrics and every comparison
    computed again. Nothing the file held changes (the comparisons are seeded, so computed again they
    are the same numbers); ``command``, if given, is recorded as ``rederived_by``.
    """
    rows = [dict(row) for row in document["rows"]]
    if training is not None:
        rows = [_stamped(row, training.by_question) for row in rows]
    names = [row["name"] for row in rows]
    baseline = (
        document.get("baseline") if document.get("baseline") in names else (names[0] if names else None)
    )
    rows = compared(rows, baseline)
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key == "training" and training is not None:
            continue
        out[key] = rows if key == "rows" else value
        if key == "golden" and training is not None:
            out["training"] = training.to_dict()
    if command:
        out["rederived_by"] = command
    return out
