"""BEIR datasets as suites: loading, document metrics written as formulas on a hand-built dataset,
rationale spans, and SciFact against published figures."""

from __future__ import annotations

import json
import math
import re
import shlex
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
    args = ["beir", str(folder), "--set", 'retrievers=["keyword"]', "--store", str(tmp_path / "s")]
    result = runner.invoke(app, [*args, "--save-results", "--results-dir", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "results" / "beir-toy.json").read_text())
    row = document["rows"][0]
    per_query = {q["id"]: q["metrics"] for q in row["questions"]}
    # q1 "brake pads": d1 holds both terms, d3 only "brake" -> d1, d3: both relevant, nDCG 1, MRR 1.
    # q2 "tyre grip": only d2 matches, d3 (relevant) is not retrieved -> all zero.
    assert per_query["q1"] == {"doc ndcg@10": 1.0, "doc recall@100": 1.0, "doc mrr@10": 1.0}
    assert per_query["q2"] == {"doc ndcg@10": 0.0, "doc recall@100": 0.0, "doc mrr@10": 0.0}
    assert row["metrics"]["doc ndcg@10"] == pytest.approx((1.0 + 0.0) / 2)
    assert row["config"]["chunking"]["chunker"] == "whole"
    assert document["headline"] == "doc ndcg@10" and row["models"]["tokenizer"]
    # a second config is merged into the same file, compared with the first
    again = runner.invoke(
        app,
        [
            *args[:3],
            'retrievers=["vector"]',
            *args[4:],
            "--embedder",
            "hash",
            "--save-results",
            "--results-dir",
            str(tmp_path / "results"),
        ],
    )
    assert again.exit_code == 0, again.output
    merged = json.loads((tmp_path / "results" / "beir-toy.json").read_text())
    assert [r["name"] for r in merged["rows"]] == ["bm25 (lucene idf, unstemmed)", "dense"]
    assert (
        merged["rows"][1]["comparisons"]["baseline"]["doc ndcg@10"]["against"]
        == "bm25 (lucene idf, unstemmed)"
    )
    # each merged row records the command that made it, which runs it again as it was
    commands = merged["row_commands"]
    assert shlex.split(commands["dense"])[:3] == ["clear-rag", "beir", str(folder)]
    assert "--embedder hash" in commands["dense"] and "--embedder" not in commands[merged["rows"][0]["name"]]
    rerun = runner.invoke(
        app, [*shlex.split(commands["dense"])[1:], "--results-dir", str(tmp_path / "again")]
    )
    assert rerun.exit_code == 0, rerun.output
    again_doc = json.loads((tmp_path / "again" / "beir-toy.json").read_text())
    assert again_doc["rows"][0]["metrics"] == merged["rows"][1]["metrics"]


def test_a_merged_row_is_compared_with_the_row_it_names(tmp_path: Path) -> None:
    folder, results = _dataset(tmp_path / "toy"), tmp_path / "results"
    common = ["beir", str(folder), "--store", str(tmp_path / "s"), "--results-dir", str(results)]
    for retrievers, extra in (
        ('["keyword"]', []),
        ('["vector"]', []),
        ('["keyword"]', ["--set", "stem=true"]),
    ):
        ran = runner.invoke(
            app,
            [*common, "--set", f"retrievers={retrievers}", *extra, "--embedder", "hash", "--save-results"],
        )
        assert ran.exit_code == 0, ran.output
    ran = runner.invoke(
        app,
        [*common, "--set", 'retrievers=["vector"]', "--embedder", "hash", "--name", "dense again",
         "--against", "dense", "--save-results"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    rows = {r["name"]: r for r in json.loads((results / "beir-toy.json").read_text())["rows"]}
    assert rows["dense again"]["comparisons"]["previous"]["doc ndcg@10"]["against"] == "dense"
    assert rows["dense again"]["comparisons"]["previous"]["doc ndcg@10"]["difference"] == 0.0
    assert rows["bm25 (lucene idf, porter)"]["comparisons"]["previous"]["doc ndcg@10"]["against"] == "dense"
    missing = runner.invoke(app, [*common, "--name", "x", "--against", "no such row", "--save-results"])
    assert missing.exit_code != 0 and "--against" in missing.output and "no such row" in missing.output


def test_another_split_is_saved_apart_from_the_test_split(tmp_path: Path) -> None:
    folder, results = _dataset(tmp_path / "toy"), tmp_path / "results"
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td3\t1\n", encoding="utf-8")
    common = ["beir", str(folder), "--set", 'retrievers=["keyword"]', "--store", str(tmp_path / "s")]
    for split in ("test", "train"):
        ran = runner.invoke(app, [*common, "--split", split, "--save-results", "--results-dir", str(results)])
        assert ran.exit_code == 0, ran.output
    test, train = (json.loads((results / f"beir-toy{s}.json").read_text()) for s in ("", "-train"))
    assert [len(d["rows"][0]["questions"]) for d in (test, train)] == [2, 1]
    assert "--split train" in train["row_commands"][train["rows"][0]["name"]]


def test_a_folder_that_is_not_a_beir_dataset_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    with pytest.raises(InputError, match=r"notes: is not a BEIR dataset folder \(it has no corpus.jsonl"):
        beir.load(tmp_path / "notes")


def test_bad_dataset_files_name_the_line(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{broken\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"queries\.jsonl:2: is not valid JSON"):
        beir.load(folder)
    with pytest.raises(
        InputError, match=r"qrels/dev\.tsv: is missing. Choose a split that has a qrels file: test"
    ):
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
    settings = ["--set", 'retrievers=["keyword"]', "--set", f'idf="{idf}"', "--set", f"stem={stem}"]
    result = runner.invoke(app, ["beir", str(SCIFACT), *settings, "--store", str(store)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.endswith("(baseline)"))
    ndcg = float(re.findall(r"\d+\.\d{4}", line)[0])  # the first column: doc ndcg@10
    assert math.isclose(ndcg, published, abs_tol=tolerance), (ndcg, line)


def test_rationale_spans_shift_into_the_canonical_text(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "toy", rationales=True)
    data = beir.load(folder)
    texts = {d.id: d.text for d in beir.documents(data)}
    found = beir.rationales(data, texts)
    (pads,) = found["q1"].labels
    assert texts["d1"][pads.start : pads.end] == "Disc brake pads wear down."
    assert pads.start == len("Brakes\n\n")  # shifted past the title; d2 has none
    assert found["q2"].labels[0].start == 0
    assert (found["q1"].verdict, found["q2"].verdict) == ("support", "contradict")


def test_a_rationale_span_that_misses_its_sentence_is_an_error(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    row = {"query_id": "q1", "claim": "c", "doc_id": "d1", "spans": [{"start": 1, "end": 5, "text": "Disc"}]}
    (folder / beir.RATIONALES).write_text(json.dumps(row), encoding="utf-8")
    data = beir.load(folder)
    with pytest.raises(
        InputError, match=r"test_rationale_spans\.jsonl:1: span \[1, 5\) of d1 is not its sentence"
    ):
        beir.rationales(data, {d.id: d.text for d in beir.documents(data)})


def test_a_beir_suite_scores_spans_where_labelled_and_documents_everywhere(tmp_path: Path) -> None:
    from clear_rag.eval.labels import NO_RATIONALE, labels_in
    from clear_rag.eval.suite import Row, Suite
    from tests.conftest import toy_config

    folder = write_beir(tmp_path / "toy", rationales=True)
    (folder / beir.RATIONALES).write_text(
        json.dumps({**json.loads((folder / beir.RATIONALES).read_text().splitlines()[0])}), encoding="utf-8"
    )  # only q1 keeps its rationale
    suite = Suite("toy", folder, (Row("bm25", toy_config(retrievers=("keyword",))),), "bm25", beir=folder)
    labels = labels_in(suite, {d.id: d.text for d in beir.documents(beir.load(folder))})
    by_id = {q.id: q for q in labels.questions}
    assert by_id["q1"].labels and not by_id["q2"].labels and by_id["q2"].category == NO_RATIONALE
    assert labels.qrels["q2"] == {"d3": 1.0}


@pytest.mark.slow
@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact is not in ../shared/data")
def test_scifact_suite_resolves_every_rationale_span_and_judges_every_query(tmp_path: Path) -> None:
    from clear_rag.eval.labels import labels_in
    from clear_rag.eval.suite import load_suite

    suite = load_suite(str(Path(__file__).resolve().parents[2] / "golden" / "suites" / "scifact.yaml"))
    suite = type(suite)(suite.name, suite.path, suite.rows, suite.baseline, beir=SCIFACT)
    data = beir.load(SCIFACT)
    labels = labels_in(suite, {d.id: d.text for d in beir.documents(data)})
    questions = labels.questions
    assert len(questions) == 300 and sum(bool(q.labels) for q in questions) == 188
    assert sum(len(q.labels) for q in questions) == 366
    texts = {d.id: d.text for d in beir.documents(data)}
    for question in questions:
        for label in question.labels:
            assert texts[label.doc_id][label.start : label.end] == label.quote
