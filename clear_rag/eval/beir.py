"""BEIR-format datasets (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): load, read the corpus,
and SciFact's rationale sentences as span labels.

A BEIR dataset is evaluated as a suite like any other (``clear_rag.eval.runner``): its judged
queries are the questions, its qrels judge documents (each chunk hit counts for its document at
the document's best rank), and where a rationale file gives sentences, those are span labels too.
With the ``whole`` chunker a chunk is a document, which is how the published BM25 figures index
title and text as one field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.golden import Label
from clear_rag.types import Block, Document

PARSER = "beir/jsonl@1"
CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
RATIONALES = "test_rationale_spans.jsonl"


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


def qrels_path(folder: Path, split: str) -> Path:
    return folder / "qrels" / f"{split}.tsv"


def read_qrels(path: Path) -> dict[str, dict[str, float]]:
    """A qrels file (``query-id``, ``corpus-id``, ``score``, tab-separated, a header line optional) as
    grades by query id, then document id."""
    qrels: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            parts = line.rstrip("\r\n").split("\t")
            if (number == 1 and parts[0] == "query-id") or not line.strip():
                continue
            if len(parts) != 3:
                raise _bad(path, number, f"has {len(parts)} fields", "Expected query-id, corpus-id, score")
            try:
                grade = float(parts[2])
            except ValueError:
                raise _bad(path, number, f"score {parts[2]!r} is not a number", "Fix the score") from None
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    return qrels


def load(folder: str | Path, *, split: str = "test") -> BeirDataset:
    """The queries and judgements of one split; the corpus is read later, as it is ingested."""
    folder = Path(folder)
    lacking = [name for name in (CORPUS, QUERIES, "qrels") if not (folder / name).exists()]
    if lacking:
        raise InputError(
            f"is not a BEIR dataset folder (it has no {', '.join(lacking)})",
            path=str(folder),
            fix="Point to a folder holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
        )
    qrels_file = qrels_path(folder, split)
    if not qrels_file.is_file():
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise InputError(
            "is missing",
            path=str(qrels_file),
            fix=f"Choose a split that has a qrels file: {', '.join(splits) or 'none here'} "
            f"(asked: {split!r})",
        )
    qrels = read_qrels(qrels_file)
    queries = {
        str(row["_id"]): str(row.get("text", ""))
        for _, row in _jsonl(folder / QUERIES)
        if str(row["_id"]) in qrels
    }
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise InputError(
            f"judges {len(missing)} queries that queries.jsonl lacks (first: {missing[0]!r})",
            path=str(qrels_file),
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


def _body_shifts(dataset: BeirDataset) -> dict[str, int]:
    """Per document, how far its raw ``text`` field's offsets move in our canonical text."""
    shifts = {}
    for _, row in _jsonl(dataset.corpus_path):
        title, raw = str(row.get("title") or "").strip(), str(row.get("text") or "")
        body = raw.strip()
        prefix = len(title) + 2 if title and body else 0
        shifts[str(row["_id"])] = prefix - (len(raw) - len(raw.lstrip()))
    return shifts


@dataclass(frozen=True, slots=True)
class Rationale:
    """One claim's rationale sentences as span labels, and its verdict (support or contradict)."""

    verdict: str
    labels: tuple[Label, ...]


def rationales(dataset: BeirDataset, texts: dict[str, str]) -> dict[str, Rationale]:
    """SciFact's rationale sentences as span labels, by query id, shifted into our canonical text.

    The file gives offsets into each document's ``text`` field; our canonical text puts the title
    and a blank line before it, so each span moves by that much. Every shifted span is checked
    against the sentence it should hold.
    """
    path = dataset.folder / RATIONALES
    if not path.is_file():
        raise InputError(
            "is missing",
            path=str(path),
            fix="Span labels need the rationale file beside qrels/ (or spans: false)",
        )
    shifts = _body_shifts(dataset)
    found: dict[str, tuple[str, list[Label]]] = {}
    for number, row in _jsonl(path, key="query_id"):
        doc_id, qid = str(row["doc_id"]), str(row["query_id"])
        if doc_id not in texts:
            raise _bad(path, number, f"names document {doc_id!r}, not in the corpus", "Check the dataset")
        _, labels = found.setdefault(qid, (str(row.get("label") or "claim").lower(), []))
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
            labels.append(Label(doc_id, start, end, span["text"]))
    return {qid: Rationale(verdict, tuple(labels)) for qid, (verdict, labels) in found.items()}
