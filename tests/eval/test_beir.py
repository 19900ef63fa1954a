"""BEIR loading and evaluation on a hand-built dataset, and SciFact against published figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import InputError
from clear_rag.eval import beir
from tests.toy import write_beir

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir-scifact"
runner = CliRunner()


def _dataset(folder: Path) -> Path:
    return write_beir(folder)


def test_load_keeps_judged_queries_and_builds_documents(tmp_path: Path) -> None:
    data = beir.load(_dataset(tmp_path / "toy"))
    assert data.queries == {"q1": "brake pads", "q2": "tyre grip"}
    assert data.qrels == {"q1": {"d1": 1.0, "d3": 1.0}, "q2": {"d3": 1.0}}
    docs = {d.id: d for d in beir.documents(data)}
    assert docs["d1"].text == "Brakes\n\nDisc brake pads wear down."
    assert [b.kind for b in docs["d1"].blocks] == ["heading", "paragraph"]
    assert docs["d2"].text == "Tyre pressure matters for grip."


def test_cli_reports_metrics_written_as_formulas(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    result = runner.invoke(
        app,
        [
            "beir",
            str(folder),
            "--set",
            'retrievers=["keyword"]',
            "--store",
            str(tmp_path / "s"),
            "--save-results",
            "--results-dir",
            str(tmp_path / "results"),
        ],
    )
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "results" / "beir-toy.json").read_text())["rows"][0]
    # q1 "brake pads": d1 holds both terms, d3 only "brake" -> d1, d3: both relevant, nDCG 1, MRR 1.
    # q2 "tyre grip": only d2 matches, d3 (relevant) is not retrieved -> all zero.
    assert row["per_query"]["q1"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    assert row["per_query"]["q2"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert row["metrics"]["ndcg@10"] == pytest.approx((1.0 + 0.0) / 2)
    assert row["config"]["chunking"]["chunker"] == "whole"
    assert row["dataset"]["documents"] == 3 and row["models"]["tokenizer"]


def test_bad_dataset_files_name_the_line(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{broken\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"queries\.jsonl:2: is not valid JSON"):
        beir.load(folder)
    with pytest.raises(InputError, match=r"qrels/dev\.tsv: is missing"):
        beir.load(folder, split="dev")


@pytest.mark.slow
@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact is not in ../shared/data")
@pytest.mark.parametrize(
    ("idf", "stem", "published", "tolerance"),
    [
        # SQLite FTS5 on the same data (the data README): our "fts5" idf is FTS5's own formula.
        ("fts5", "false", 0.6683, 0.001),
        ("fts5", "true", 0.6824, 0.001),
        # bm25s with the seed's idf, unstemmed 0.6596; its tokenizer drops one-letter tokens.
        ("lucene", "false", 0.6596, 0.01),
    ],
)
def test_scifact_bm25_matches_published_figures(
    tmp_path_factory: pytest.TempPathFactory, idf: str, stem: str, published: float, tolerance: float
) -> None:
    store = tmp_path_factory.getbasetemp() / "scifact-store"  # shared: ingested once for all three
    result = runner.invoke(
        app,
        [
            "beir",
            str(SCIFACT),
            "--set",
            'retrievers=["keyword"]',
            "--set",
            f'idf="{idf}"',
            "--set",
            f"stem={stem}",
            "--store",
            str(store),
        ],
    )
    assert result.exit_code == 0, result.output
    ndcg = float(result.output.split("ndcg@10 ")[1].split()[0])
    assert math.isclose(ndcg, published, abs_tol=tolerance), ndcg


def test_rationale_spans_shift_into_the_canonical_text(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "toy", rationales=True)
    data = beir.load(folder)
    texts = {d.id: d.text for d in beir.documents(data)}
    golden = beir.rationale_golden(data, texts)
    by_id = {q.id: q for q in golden.questions}
    (pads,) = by_id["q1"].labels
    assert texts["d1"][pads.start : pads.end] == "Disc brake pads wear down."
    assert pads.start == len("Brakes\n\n")  # shifted past the title; d2 has none
    assert by_id["q2"].labels[0].start == 0
    assert (by_id["q1"].category, by_id["q2"].category) == ("support", "contradict")


def test_a_rationale_span_that_misses_its_sentence_is_an_error(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    row = {"query_id": "q1", "claim": "c", "doc_id": "d1", "spans": [{"start": 1, "end": 5, "text": "Disc"}]}
    (folder / beir.RATIONALES).write_text(json.dumps(row), encoding="utf-8")
    data = beir.load(folder)
    with pytest.raises(
        InputError, match=r"test_rationale_spans\.jsonl:1: span \[1, 5\) of d1 is not its sentence"
    ):
        beir.rationale_golden(data, {d.id: d.text for d in beir.documents(data)})


@pytest.mark.slow
@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact is not in ../shared/data")
def test_scifact_suite_resolves_every_rationale_span(tmp_path: Path) -> None:
    from clear_rag.eval import ablate
    from clear_rag.eval.suite import load_suite

    suite = load_suite(str(Path(__file__).resolve().parents[2] / "golden" / "suites" / "scifact.yaml"))
    suite = type(suite)(suite.name, suite.path, suite.rows, suite.baseline, beir=SCIFACT)
    prepared = ablate.prepare(suite, suite.rows[0].config.chunking, tmp_path)
    questions = prepared.golden.questions
    assert len(questions) == 188
    assert sum(len(q.labels) for q in questions) == 366
    for question in questions:
        for label in question.labels:
            assert prepared.store.document_text(label.doc_id)[label.start : label.end] == label.quote
    prepared.store.close()
