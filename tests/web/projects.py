"""Result folders the Results tests read: a toy suite run for real on the fakes (so its stores and
traces exist) beside a hand-made file whose stores are gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clear_rag.eval.runner import run_suite
from clear_rag.eval.suite import load_suite
from clear_rag.providers.fake import HashEmbedder
from clear_rag.results.document import compared, with_command
from clear_rag.results.files import write_result
from tests.toy import CORPUS, GOLDEN, suite_result


def question(qid: str, ndcg: float, rank: int | None, verdict: str) -> dict[str, Any]:
    return {"id": qid, "category": "factual", "first_rank": rank, "metrics": {"ndcg@10": ndcg},
            "trace": f"t-{qid}", "lost": {"verdict": verdict, "stage": None, "ranks": {}}}  # fmt: skip


def mini_result() -> dict[str, Any]:
    """Two rows over three questions: bm25 has q1 lower (rank 2 against 1) and q2 found where hybrid
    never retrieved it."""
    rows = [
        {"name": "hybrid", "config": {"top_k": 10, "chunking": {"size": 96}}, "config_hash": "h1",
         "models": {"embedder": "hash"}, "date": "2026-01-02T00:00:00+00:00", "store": "gone",
         "metrics": {"ndcg@10": 1 / 3}, "by_category": {"factual": {"ndcg@10": 1 / 3}},
         "questions": [question("q1", 1.0, 1, "found"), question("q2", 0.0, None, "never retrieved"),
                       question("q3", 0.0, None, "never retrieved")]},
        {"name": "bm25", "config": {"top_k": 10, "chunking": {"size": 192}}, "config_hash": "h2",
         "models": {}, "date": "2026-01-02T00:00:00+00:00", "store": "gone",
         "metrics": {"ndcg@10": (1 / 2 + 1) / 3}, "by_category": {"factual": {"ndcg@10": 0.5}},
         "questions": [question("q1", 1 / 2, 2, "found"), question("q2", 1.0, 1, "found"),
                       question("q3", 0.0, None, "never retrieved")]},
    ]  # fmt: skip
    rows = compared(rows, "hybrid")
    return suite_result("mini", rows, baseline="hybrid")


ODD_ROWS = {
    "hybrid": "hybrid + rerank (k=60, 50%)",
    "bm25": 'bm25, b=0.75 / "k1" 100% + #?&',
}


def odd_result() -> dict[str, Any]:
    """``mini_result`` with rows named as suites name them and worse: spaces, a comma, parentheses, '%',
    '+', a slash, quotes, '#', '?', '&'; and a third row called ``__proto__``, a name a JavaScript object
    keyed by row would mistake for its prototype; and a skipped row."""
    document = mini_result()
    rows = [{**row, "name": ODD_ROWS[row["name"]]} for row in document["rows"]]
    rows.append({**rows[1], "name": "__proto__", "config": {"top_k": 5, "chunking": {"size": 192}}})
    for row in rows:
        row.pop("comparisons")
    rows = compared(rows, ODD_ROWS["hybrid"])
    skipped = [{"name": "dense (50%)", "reason": "the embedder is not installed"}]
    return {**document, "suite": "odd", "baseline": ODD_ROWS["hybrid"], "rows": rows, "skipped": skipped}


def results_project(root: Path, suite: str) -> Path:
    """``root`` with the toy corpus, its golden set and ``suite`` (a suite file's text) run for real
    into ``results/toy.json`` (stores under ``stores/``), and ``results/mini.json`` beside it."""
    for name, text in CORPUS.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    (root / "toy.yaml").write_text(suite, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        result = run_suite(load_suite("toy.yaml"), embedder=HashEmbedder(dim=64), root=root / "stores")
    write_result(
        root / "results" / "toy.json", with_command(result, "clear-rag ablate toy.yaml --save-results")
    )
    write_result(root / "results" / "mini.json", mini_result())
    return root
