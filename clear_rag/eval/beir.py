"""BEIR-format datasets (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): load, ingest, evaluate.

Relevance in BEIR is judged per document, so a run ranks documents: each chunk hit counts for its
document at the document's best (first) rank. With the ``whole`` chunker a chunk is a document,
which is how the published BM25 figures index title and text as one field.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.golden import GoldenSet, Label, Question
from clear_rag.eval.metrics import first_occurrences, mrr_at_k, ndcg_at_k, recall_at_k
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.types import Block, Document

PARSER = "beir/jsonl@1"
CORPUS = "corpus.jsonl"
QRELS = "qrels/test.tsv"  # the split the suites evaluate
METRICS: dict[str, tuple[Callable[[list[str], dict[str, float], int], float], int]] = {
    "ndcg@10": (ndcg_at_k, 10),
    "recall@100": (recall_at_k, 100),
    "mrr@10": (mrr_at_k, 10),
}


@dataclass(frozen=True, slots=True)
class BeirDataset:
    name: str
    folder: Path
    split: str
    queries: dict[str, str]  # only the queries that have judgements in the split
    qrels: dict[str, dict[str, float]]

    @property
    def corpus_path(self) -> Path:
        return self.folder / CORPUS


def _bad(path: Path, line: int, what: str, fix: str) -> InputError:
    return InputError(what, path=f"{path}:{line}", fix=fix)


def _jsonl(path: Path, *, key: str = "_id") -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InputError("is missing", path=str(path), fix="Point to a BEIR dataset folder")
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise _bad(path, number, f"is not valid JSON ({err.msg})", "Fix or remove the line") from None
            if not isinstance(row, dict) or key not in row:
                raise _bad(path, number, f"has no {key} field", f"Each line needs an object with {key}")
            yield number, row


def load(folder: str | Path, *, split: str = "test") -> BeirDataset:
    """The queries and judgements of one split; the corpus is read later, as it is ingested."""
    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise InputError(
            "is missing", path=str(qrels_path), fix=f"Choose a split that has a qrels file (asked: {split!r})"
        )
    qrels: dict[str, dict[str, float]] = {}
    with qrels_path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            parts = line.rstrip("\r\n").split("\t")
            if (number == 1 and parts[0] == "query-id") or not line.strip():
                continue
            if len(parts) != 3:
                raise _bad(
                    qrels_path, number, f"has {len(parts)} fields", "Expected query-id, corpus-id, score"
                )
            try:
                grade = float(parts[2])
            except ValueError:
                raise _bad(
                    qrels_path, number, f"score {parts[2]!r} is not a number", "Fix the score"
                ) from None
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    queries = {
        str(row["_id"]): str(row.get("text", ""))
        for _, row in _jsonl(folder / "queries.jsonl")
        if str(row["_id"]) in qrels
    }
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise InputError(
            f"judges {len(missing)} queries that queries.jsonl lacks (first: {missing[0]!r})",
            path=str(qrels_path),
            fix="Check that the qrels and queries files belong to the same dataset",
        )
    return BeirDataset(folder.resolve().name, folder, split, queries, qrels)


def documents(dataset: BeirDataset) -> Iterator[Document]:
    """Each corpus row as a document: the title as a heading, then the text."""
    for _, row in _jsonl(dataset.corpus_path):
        title, body = str(row.get("title") or "").strip(), str(row.get("text") or "").strip()
        text = f"{title}\n\n{body}" if title and body else title or body
        blocks = []
        if title:
            blocks.append(Block("heading", 0, len(title), level=1))
        if body:
            blocks.append(Block("paragraph", len(text) - len(body), len(text)))
        digest = hashlib.sha256(text.encode()).hexdigest()
        doc_id = str(row["_id"])
        yield Document(doc_id, f"{dataset.corpus_path}#{doc_id}", digest, text, tuple(blocks))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def evaluate(
    pipeline: Pipeline,
    dataset: BeirDataset,
    *,
    progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
) -> dict[str, Any]:
    """Run every judged query and score the ranking before context assembly, per query and overall."""
    per_query: dict[str, dict[str, float]] = {}
    seconds: list[float] = []
    ids = sorted(dataset.queries)
    for qid in progress(ids) if progress is not None else ids:
        started = time.perf_counter()
        trace, _ = pipeline.retrieve(dataset.queries[qid])
        seconds.append(time.perf_counter() - started)
        ranked_stage = [s for s in trace.stages if s.name != "context"][-1]
        ranking = first_occurrences([c.doc_id for c in ranked_stage.candidates])
        per_query[qid] = {
            name: round(metric(ranking, dataset.qrels[qid], k), 6) for name, (metric, k) in METRICS.items()
        }
    means = {name: round(statistics.fmean(q[name] for q in per_query.values()), 4) for name in METRICS}
    return {
        "metrics": means,
        "queries": len(per_query),
        "seconds_per_query": {"median": round(statistics.median(seconds), 5) if seconds else 0.0},
        "per_query": per_query,
    }


def save_row(path: Path, suite: str, row: dict[str, Any]) -> None:
    """Add ``row`` to the suite's result file, replacing a row of the same name."""
    data: dict[str, Any] = {"suite": suite, "rows": []}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
    names = [r["name"] for r in data["rows"]]
    if row["name"] in names:  # replaced where it stood, so the table keeps its order
        data["rows"][names.index(row["name"])] = row
    else:
        data["rows"].append(row)
    data["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


RATIONALES = "test_rationale_spans.jsonl"


def _body_shifts(dataset: BeirDataset) -> dict[str, int]:
    """Per document, how far its raw ``text`` field's offsets move in our canonical text."""
    shifts = {}
    for _, row in _jsonl(dataset.corpus_path):
        title, raw = str(row.get("title") or "").strip(), str(row.get("text") or "")
        body = raw.strip()
        prefix = len(title) + 2 if title and body else 0
        shifts[str(row["_id"])] = prefix - (len(raw) - len(raw.lstrip()))
    return shifts


def rationale_golden(dataset: BeirDataset, texts: dict[str, str]) -> GoldenSet:
    """SciFact's rationale sentences as span labels, shifted into our canonical text.

    The file gives offsets into each document's ``text`` field; our canonical text puts the title
    and a blank line before it, so each span moves by that much. Every shifted span is checked
    against the sentence it should hold. Questions are the claims, in the split's query order.
    """
    path = dataset.folder / RATIONALES
    if not path.is_file():
        raise InputError(
            "is missing", path=str(path), fix="Span labels need the rationale file beside qrels/"
        )
    shifts = _body_shifts(dataset)
    labels: dict[str, list[Label]] = {}
    claims: dict[str, tuple[str, str]] = {}
    for number, row in _jsonl(path, key="query_id"):
        doc_id, qid = str(row["doc_id"]), str(row["query_id"])
        if doc_id not in texts:
            raise _bad(path, number, f"names document {doc_id!r}, not in the corpus", "Check the dataset")
        for span in row["spans"]:
            start = shifts[doc_id] + int(span["start"])
            end = start + int(span["end"]) - int(span["start"])
            if texts[doc_id][start:end] != span["text"]:
                raise _bad(
                    path,
                    number,
                    f"span [{span['start']}, {span['end']}) of {doc_id} is not its sentence",
                    "Check that the corpus and the rationale file are the same version",
                )
            labels.setdefault(qid, []).append(Label(doc_id, start, end, span["text"]))
        claims[qid] = (str(row["claim"]), str(row.get("label") or "claim").lower())
    questions = tuple(
        Question(qid, claims[qid][0], claims[qid][1], "", tuple(labels[qid]))
        for qid in sorted(labels, key=lambda q: (len(q), q))
    )
    return GoldenSet(f"{dataset.name}-rationales", questions, file_sha256(path))
