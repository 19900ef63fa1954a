"""What a result file's question ids stand for: each question's text and the quotes that label it,
read from the labels the file says it was measured on (``golden.path``), so the Results view can
show a question beside its id rather than ``api-page-size-max`` alone.

A result file records the id of each question, not its words; the words are in the labels: a golden
set (``golden/tech.yaml``: question and quoted answers, read without a corpus by ``read_golden``) or a
BEIR split (its ``queries.jsonl``, and the rationale sentences where the suite used them; a split
judged by qrels alone has no quote, only its judged documents). Those paths are relative to the
folder the suite ran in, which is the folder holding ``results/``.

The labels may have changed since the file was written: the file records their SHA-256, so a
changed set is said (``changed``) rather than shown as if it were what was measured. Labels that
are not there (a file without ``golden``, a BEIR folder on another machine) leave the ids as they
are, with ``unavailable`` saying why: the view goes on without the words.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clear_rag.errors import ClearRagError
from clear_rag.eval import beir
from clear_rag.eval.golden import read_golden

GOLDEN_SUFFIXES = (".yaml", ".yml")


def questions(file: str, document: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """``GET /api/results/FILE/questions``: per question (in the labels' order) its ``id``, its
    ``question`` text, its ``quotes`` (``{doc, quote}``, the labelled spans' text) and, for a split
    judged per document, the ``judged`` document ids; with ``source`` (the labels' paths as the file
    names them), ``changed`` and ``unavailable`` as one line each, or ``None``."""
    golden = document.get("golden")
    named = str(golden.get("path", "")) if isinstance(golden, Mapping) else ""
    answer: dict[str, Any] = {
        "file": file,
        "source": named,
        "questions": [],
        "changed": None,
        "unavailable": None,
    }
    paths = [Path(p.strip()) for p in named.split(", ") if p.strip() and p.strip() != "."]
    if not paths:
        answer["unavailable"] = f"{file}.json names no labels file, so only its question ids are known"
        return answer
    found = [p if p.is_absolute() else root / p for p in paths]
    # said with the paths as the file names them: an answer (and an export) never holds where the
    # project happens to be on this machine
    absent = [str(named) for named, path in zip(paths, found, strict=True) if not path.is_file()]
    if absent:
        answer["unavailable"] = (
            f"the labels {', '.join(absent)} are not here (beside results/), so only the question "
            "ids are shown. Run where the suite ran, with its golden set or dataset in place"
        )
        return answer
    try:
        if len(found) == 1 and found[0].suffix in GOLDEN_SUFFIXES:
            listed, raw = _golden(found[0])
        else:
            listed, raw = _beir(found)
    except (ClearRagError, OSError, ValueError, KeyError, TypeError) as err:
        what = err.what if isinstance(err, ClearRagError) else f"{type(err).__name__}: {err}"
        answer["unavailable"] = (
            f"the labels {named} cannot be read ({' '.join(str(what).split())}), "
            "so only the question ids are shown"
        )
        return answer
    answer["questions"] = listed
    recorded = golden.get("sha256") if isinstance(golden, Mapping) else None
    if recorded and hashlib.sha256(raw).hexdigest() != recorded:
        answer["changed"] = (
            f"{named} has changed since {file}.json was written: a question's words or quotes here "
            f"may not be the ones it was measured on. Rerun the suite (`clear-rag ablate "
            f"{document.get('suite', 'SUITE')} --save-results`) to measure the labels as they are"
        )
    return answer


def _golden(path: Path) -> tuple[list[dict[str, Any]], bytes]:
    """A golden set's questions as written (no corpus needed: quotes are not resolved here)."""
    written, raw = read_golden(path)
    listed = [
        {
            "id": q.id,
            "question": q.question,
            "quotes": [{"doc": a.doc or "", "quote": a.quote} for a in q.answers or ()],
        }
        for q in written.questions
    ]
    return listed, raw


def _beir(paths: list[Path]) -> tuple[list[dict[str, Any]], bytes]:
    """A BEIR split's judged queries (the qrels file first, the rationale file after it, as
    ``clear_rag.eval.labels.label_files`` lists them), each with its rationale sentences."""
    qrels_file, *rest = paths
    dataset = beir.load(qrels_file.parent.parent, split=qrels_file.stem)
    quotes: dict[str, list[dict[str, str]]] = {}
    for rationale in rest:
        for line in rationale.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            said = quotes.setdefault(str(row["query_id"]), [])
            said += [{"doc": str(row["doc_id"]), "quote": str(s["text"])} for s in row.get("spans", [])]
    listed = [
        {
            "id": qid,
            "question": dataset.queries[qid],
            "quotes": quotes.get(qid, []),
            "judged": sorted(dataset.qrels.get(qid, {})),
        }
        for qid in sorted(dataset.queries, key=lambda q: (len(q), q))
    ]
    return listed, b"".join(p.read_bytes() for p in paths)
