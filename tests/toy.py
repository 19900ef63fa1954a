"""The toy data many tests share: three documents in three formats with three questions, and a
three-document BEIR dataset with judgements and rationale spans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS = {
    "a.md": "# Brakes\n\nDisc brakes need *new pads* at 1.5 mm.\n\n- check rotor\n- bleed yearly\n",
    "b.txt": "Tyre pressure for road bikes is 80 to 100 psi.\n\nGravel tyres run lower.\n",
    "sub/c.html": "<html><body><h1>Chains</h1><p>Replace a chain at 0.5% stretch.</p></body></html>",
}

GOLDEN = """
questions:
  - id: pads
    question: when do disc brake pads need replacing
    category: factual
    answers: [{doc: docs/a.md, quote: "Disc brakes need new pads at 1.5 mm."}]
  - id: pressure
    question: how hard should road tyres be pumped
    category: paraphrase
    answers: [{quote: "Tyre pressure for road bikes is 80 to 100 psi."}]
  - id: chain
    question: chain stretch limit
    category: identifier
    answers:
      - {doc: docs/sub/c.html, quote: "Replace a chain at 0.5% stretch."}
      - {doc: docs/a.md, quote: bleed yearly}
"""


BEIR_CORPUS = [
    {"_id": "d1", "title": "Brakes", "text": "Disc brake pads wear down."},
    {"_id": "d2", "title": "", "text": "Tyre pressure matters for grip."},
    {"_id": "d3", "title": "Chains", "text": "A stretched chain wears the cassette and brake."},
]
BEIR_RATIONALES = [
    {
        "query_id": "q1",
        "claim": "brake pads",
        "doc_id": "d1",
        "label": "SUPPORT",
        "spans": [{"start": 0, "end": 26, "text": "Disc brake pads wear down."}],
    },
    {
        "query_id": "q2",
        "claim": "tyre grip",
        "doc_id": "d2",
        "label": "CONTRADICT",
        "spans": [{"start": 0, "end": 13, "text": "Tyre pressure"}],
    },
]


def write_beir(folder: Path, *, rationales: bool = False) -> Path:
    """The toy BEIR dataset in ``folder``: three documents, three queries (q3 unjudged), four judgements."""
    (folder / "qrels").mkdir(parents=True)
    queries = [
        {"_id": "q1", "text": "brake pads"},
        {"_id": "q2", "text": "tyre grip"},
        {"_id": "q3", "text": "x"},
    ]
    lines = "\n".join(json.dumps(r) for r in BEIR_CORPUS) + "\n"
    (folder / "corpus.jsonl").write_text(lines, encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq1\td3\t1\r\nq2\td3\t1\r\n", encoding="utf-8"
    )
    if rationales:
        text = "\n".join(json.dumps(r) for r in BEIR_RATIONALES)
        (folder / "test_rationale_spans.jsonl").write_text(text, encoding="utf-8")
    return folder


def suite_yaml(name: str, *rows: str) -> str:
    """A suite over the toy project (``docs/`` and ``golden.yaml`` in the working directory): fixed
    windows of 8 tokens, baseline ``hybrid``, and ``rows`` as YAML flow mappings, e.g.
    ``{name: bm25, set: {retrievers: [keyword]}}``."""
    header = (
        f"name: {name}\ncorpus: docs\ngolden: golden.yaml\nbaseline: hybrid\n"
        "base: {chunking: {chunker: fixed, size: 8, overlap: 1}}\nrows:\n"
    )
    return header + "".join(f"  - {row}\n" for row in rows)


DATE = "2026-01-02T00:00:00+00:00"


def suite_result(suite: str, rows: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    """A suite's result file in its whole shape (``clear_rag.results.schema``) around the parts a test
    cares about: each row and question given only what the test sets, the rest filled as a run fills
    it, so a test of one field need not spell out every other."""
    filled = []
    for row in rows:
        questions = [
            {"category": "factual", "retrieved": [], "metrics": {}, "trace": f"t-{q.get('id', n)}", **q}
            for n, q in enumerate(row.get("questions", []))
        ]
        filled.append(
            {
                "config": {},
                "config_hash": f"h-{row['name']}",
                "models": {},
                "store": "gone",
                "date": DATE,
                "corpus_sha256": "0" * 64,
                "golden_sha256": "0" * 64,
                "metrics": {},
                "by_category": {},
                "seconds_per_question": 0.0,
                "comparisons": {},
                **row,
                "questions": questions,
            }
        )
    names = list(dict.fromkeys(m for row in filled for m in row["metrics"]))
    count = max((len(row["questions"]) for row in filled), default=0)
    return {
        "suite": suite,
        "date": DATE,
        "command": f"clear-rag ablate {suite} --embedder hash --save-results",
        "embedder": "hash",
        "corpus": {"path": "docs", "sha256": "0" * 64},
        # "." as a run writes it when no labels file was read
        "golden": {"path": ".", "sha256": "0" * 64, "questions": count, "categories": {}},
        "baseline": filled[0]["name"] if filled else "",
        "headline": "ndcg@10",
        "metric_names": names,
        "metric_questions": dict.fromkeys(names, count),
        "skipped": [],
        "rows": filled,
        **top,
    }
