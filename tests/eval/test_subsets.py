"""Seen and unseen questions: a test question is seen when one of its relevant documents was a positive
of the training split, computed from the data files; the suite key that names the split is read
strictly."""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.errors import ConfigError, InputError
from clear_rag.eval import beir
from clear_rag.eval.labels import labels_in
from clear_rag.eval.subsets import SEEN, UNSEEN, assign, positives, training_subsets
from clear_rag.eval.suite import load_suite
from clear_rag.hashing import file_sha256
from tests.toy import write_beir

# The toy's test qrels: q1 judges d1 and d3 relevant, q2 judges d3. Here q2 also grades d1 0 (judged,
# not relevant). Training: t1 found d1 relevant; t2 graded d3 0, so d3 taught nothing.
TRAIN = "query-id\tcorpus-id\tscore\nt1\td1\t1\nt2\td3\t0\n"


def _dataset(folder: Path) -> Path:
    write_beir(folder)
    with (folder / "qrels" / "test.tsv").open("a", encoding="utf-8") as qrels:
        qrels.write("q2\td1\t0\r\n")
    (folder / "qrels" / "train.tsv").write_text(TRAIN, encoding="utf-8")
    return folder


def test_a_question_is_seen_when_a_relevant_document_was_a_training_positive(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "toy")
    test = beir.load(folder).qrels
    # q1: d1 is relevant and t1's positive -> seen. q2: d3 (relevant) was graded 0 in training, and d1
    # (a training positive) is graded 0 for q2: neither counts -> unseen.
    assert positives(beir.read_qrels(folder / "qrels" / "train.tsv")) == {"d1"}
    made = training_subsets(test, "train", folder / "qrels" / "train.tsv")
    assert dict(made.by_question) == {"q1": SEEN, "q2": UNSEEN}
    assert made.to_dict() == {
        "split": "train",
        "path": str(folder / "qrels" / "train.tsv"),
        "sha256": file_sha256(folder / "qrels" / "train.tsv"),
        "questions": {SEEN: 1, UNSEEN: 1},
    }


def test_assign_on_empty_and_unjudged_input() -> None:
    assert assign({}, {"t": {"d": 1.0}}) == {}
    assert assign({"q": {"d": 1.0}}, {}) == {"q": UNSEEN}
    assert assign({"q": {}}, {"t": {"d": 1.0}}) == {"q": UNSEEN}  # nothing relevant: nothing seen


def test_a_suite_with_a_training_split_labels_every_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _dataset(tmp_path / "toy")
    (tmp_path / "s.yaml").write_text(
        "name: s\nbeir: toy\ntraining_split: train\nrows: [{name: a}]\n", encoding="utf-8"
    )
    suite = load_suite("s.yaml")
    assert suite.training_split == "train"
    suite.check_data()
    labels = labels_in(suite, {d.id: d.text for d in beir.documents(beir.load(folder))})
    assert labels.training is not None
    assert dict(labels.training.by_question) == {"q1": SEEN, "q2": UNSEEN}
    # the labels' own digest is the test split's alone, as before the key existed
    assert labels.paths == (str(Path("toy") / "qrels" / "test.tsv"),)


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        (
            "name: s\nbeir: toy\ntraining_split: 1\nrows: [{name: a}]\n",
            r"^s\.yaml: training_split=1: must be text\. Write it as text, quoted",
        ),
        (
            "name: s\nbeir: toy\ntraining_split: test\nrows: [{name: a}]\n",
            r"^s\.yaml: training_split='test': must name the split the models were trained on, not the "
            r"split the suite measures\. Write the training split's name, e\.g\. training_split: train$",
        ),
        (
            "name: s\nbeir: toy\ntraining_split: ''\nrows: [{name: a}]\n",
            r"^s\.yaml: training_split='': must name a split\. Write the training split's name",
        ),
        (
            "name: s\ncorpus: docs\ngolden: g.yaml\ntraining_split: train\nrows: [{name: a}]\n",
            r"^s\.yaml: training_split='train': names a qrels split, which only a BEIR suite has\. Drop "
            r"training_split:, or run the suite over a BEIR folder \(beir:\)$",
        ),
        (
            "name: s\nbeir: toy\ntraining_splt: train\nrows: [{name: a}]\n",
            r"^s\.yaml: training_splt: is not a suite key\. Did you mean 'training_split'\?",
        ),
    ],
)
def test_bad_training_splits_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(suite, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_suite("s.yaml")


def test_a_training_split_without_its_qrels_file_is_named_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _dataset(tmp_path / "toy")
    (tmp_path / "s.yaml").write_text(
        "name: s\nbeir: toy\ntraining_split: dev\nrows: [{name: a}]\n", encoding="utf-8"
    )
    suite = load_suite("s.yaml")  # loads: the data is checked when it is about to run
    with pytest.raises(ConfigError) as caught:
        suite.check_data()
    where = Path("toy") / "qrels" / "dev.tsv"
    assert str(caught.value) == (
        f"s.yaml: training_split='dev': names a split whose qrels file {where} does not exist. Name a "
        "split of toy that has a qrels file: test, train"
    )
    with pytest.raises(InputError, match=r"dev\.tsv: is missing\. The suite's training_split \('dev'\)"):
        training_subsets({}, "dev", where)


def test_rederive_adds_the_split_to_a_file_measured_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``clear-rag ablate SUITE --rederive --save-results`` gives the file a run with the split writes,
    from the file's own per-question values, and records itself."""
    import json

    from typer.testing import CliRunner

    from clear_rag.cli import app

    monkeypatch.chdir(tmp_path)
    _dataset(tmp_path / "toy")
    rows = (
        "rows: [{name: bm25, set: {retrievers: [keyword]}},"
        " {name: porter, set: {retrievers: [keyword], stem: true}}]"
    )
    (tmp_path / "s.yaml").write_text(
        f"name: s\nbeir: toy\ntraining_split: train\nbase: {{chunking: {{chunker: whole}}}}\n{rows}\n",
        encoding="utf-8",
    )
    common = ["--store", "store", "--results-dir", "out"]
    ran = CliRunner().invoke(app, ["ablate", "s.yaml", *common, "--save-results"])
    assert ran.exit_code == 0, ran.output
    measured = json.loads((tmp_path / "out" / "s.json").read_text())
    assert measured["training"]["questions"] == {SEEN: 1, UNSEEN: 1}
    # the file as a version before the split wrote it
    older = json.loads(json.dumps(measured))
    del older["training"]
    for row in older["rows"]:
        del row["by_subset"]
        row["questions"] = [{k: v for k, v in q.items() if k != "subset"} for q in row["questions"]]
    (tmp_path / "out" / "s.json").write_text(json.dumps(older), encoding="utf-8")
    again = CliRunner().invoke(
        app, ["ablate", "s.yaml", "--rederive", "--results-dir", "out", "--save-results"]
    )
    assert again.exit_code == 0, again.output
    rederived = json.loads((tmp_path / "out" / "s.json").read_text())
    assert (
        rederived.pop("rederived_by") == "clear-rag ablate s.yaml --rederive --results-dir out --save-results"
    )
    assert rederived == measured
    refused = CliRunner().invoke(
        app, ["ablate", "s.yaml", "--rederive", "--row", "bm25", "--results-dir", "out"]
    )
    assert refused.exit_code != 0 and "--rederive" in refused.output
