"""Result documents split by what training saw: each question's subset, each row's aggregates and paired
comparisons per subset through the same comparison as the whole suite's, and a re-derivation that adds
them to a file measured before while changing nothing it held."""

from __future__ import annotations

import copy
import statistics
from pathlib import Path
from typing import Any

import pytest

from clear_rag.errors import InputError
from clear_rag.eval.golden import Question
from clear_rag.eval.labels import Labels
from clear_rag.eval.significance import compare
from clear_rag.eval.subsets import SEEN, UNSEEN, TrainingSubsets
from clear_rag.eval.suite import Row, Suite
from clear_rag.results.document import merge, rederive, result_document, with_subset
from clear_rag.results.files import dumps
from tests.conftest import toy_config

SUBSETS = {"q1": SEEN, "q2": SEEN, "q3": UNSEEN}
TRAINING = TrainingSubsets("train", "toy/qrels/train.tsv", "0" * 64, SUBSETS)
BASE = {"q1": 0.5, "q2": 0.0, "q3": 1.0}
BETTER = {"q1": 1.0, "q2": 0.5, "q3": 0.5}


def _row(name: str, values: dict[str, float], *, subsets: bool = True) -> dict[str, Any]:
    questions: list[dict[str, Any]] = [
        {"id": q, "category": "all", "metrics": {"doc ndcg@10": v}} for q, v in values.items()
    ]
    if subsets:
        questions = [with_subset(q, SUBSETS[str(q["id"])]) for q in questions]
    mean = round(statistics.fmean(values.values()), 4)
    return {"name": name, "metrics": {"doc ndcg@10": mean}, "by_category": {}, "questions": questions}


def _document(*, subsets: bool = True) -> dict[str, Any]:
    rows = (Row("base", toy_config()), Row("better", toy_config()))
    suite = Suite("toy", Path("s.yaml"), rows, "base", beir=Path("toy"), training_split="train")
    questions = tuple(Question(q, q, "all", "", ()) for q in SUBSETS)
    labels = Labels("toy", ("toy/qrels/test.tsv",), "1" * 64, questions, {}, TRAINING if subsets else None)
    made = [_row("base", BASE, subsets=subsets), _row("better", BETTER, subsets=subsets)]
    return result_document(suite, made, labels, "2" * 64, None)


def test_each_question_says_its_subset_and_the_document_how_many_each_holds() -> None:
    document = _document()
    assert document["training"] == {
        "split": "train",
        "path": "toy/qrels/train.tsv",
        "sha256": "0" * 64,
        "questions": {SEEN: 2, UNSEEN: 1},
    }
    assert [list(q)[:3] for q in document["rows"][0]["questions"]] == [["id", "category", "subset"]] * 3
    assert [q["subset"] for q in document["rows"][1]["questions"]] == [SEEN, SEEN, UNSEEN]


def test_per_subset_aggregates_are_the_means_of_the_per_question_values() -> None:
    better = _document()["rows"][1]
    assert better["by_subset"][SEEN]["questions"] == 2
    assert better["by_subset"][SEEN]["metrics"] == {"doc ndcg@10": (1.0 + 0.5) / 2}
    assert better["by_subset"][UNSEEN]["questions"] == 1
    assert better["by_subset"][UNSEEN]["metrics"] == {"doc ndcg@10": 0.5 / 1}


def test_per_subset_comparisons_are_the_suites_comparison_over_that_subset() -> None:
    better = _document()["rows"][1]
    seen = better["by_subset"][SEEN]["comparisons"]["baseline"]["doc ndcg@10"]
    assert seen == compare("doc ndcg@10", "base", [0.5, 0.0], [1.0, 0.5]).to_dict()
    assert seen["difference"] == pytest.approx(((1.0 - 0.5) + (0.5 - 0.0)) / 2)
    unseen = better["by_subset"][UNSEEN]["comparisons"]["baseline"]["doc ndcg@10"]
    assert (unseen["difference"], unseen["up"], unseen["down"]) == (0.5 - 1.0, 0, 1)
    # and the whole-suite comparison is the one it always was
    whole = better["comparisons"]["baseline"]["doc ndcg@10"]
    assert whole == compare("doc ndcg@10", "base", [0.5, 0.0, 1.0], [1.0, 0.5, 0.5]).to_dict()
    assert better["by_subset"][SEEN]["comparisons"]["previous"]["doc ndcg@10"] == seen


def test_a_suite_without_a_training_split_writes_what_it_wrote_before() -> None:
    document = _document(subsets=False)
    assert "training" not in document
    assert all("by_subset" not in row for row in document["rows"])
    assert all("subset" not in q for row in document["rows"] for q in row["questions"])


def _values(value: Any, where: str = "") -> dict[str, Any]:
    """Every leaf of ``value`` by its path, to compare two documents value for value."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _values(item, f"{where}.{key}").items()}
    if isinstance(value, list):
        return {k: v for n, item in enumerate(value) for k, v in _values(item, f"{where}[{n}]").items()}
    return {where: value}


def test_rederiving_adds_the_split_and_changes_no_existing_value() -> None:
    before = _document(subsets=False)
    held = copy.deepcopy(before)
    after = rederive(before, TRAINING, "clear-rag ablate toy --rederive --save-results")
    assert before == held  # a new document, the old one untouched
    old, new = _values(before), _values(after)
    assert {k: new[k] for k in old} == old
    added = {k.split("[")[0].split(".")[1] for k in set(new) - set(old)}
    assert added == {"training", "rows", "rederived_by"}
    assert after["rows"][1]["by_subset"] == _document()["rows"][1]["by_subset"]
    assert list(after)[list(after).index("golden") + 1] == "training"


def test_rederiving_twice_gives_the_same_bytes() -> None:
    once = rederive(_document(subsets=False), TRAINING, "cmd")
    assert dumps(rederive(once, TRAINING, "cmd")) == dumps(once)
    fresh = _document()
    assert dumps(rederive(fresh, TRAINING)) == dumps(fresh)  # run with the split: nothing to add


def test_a_file_over_other_questions_is_refused() -> None:
    other = TrainingSubsets("train", "p", "0" * 64, {"q1": SEEN})
    with pytest.raises(InputError, match=r"row 'base': has 2 questions that the training split's subsets"):
        rederive(_document(subsets=False), other)


def test_a_merged_row_without_subsets_takes_them_from_the_file() -> None:
    """``clear-rag beir`` runs its row without the suite's training split; merged into the suite's
    file the row is reported per subset like the rest."""
    existing = _document()
    new = {**_document(subsets=False), "rows": [_row("another", BETTER, subsets=False)]}
    merged = merge(existing, new)
    another = merged["rows"][2]
    assert [q["subset"] for q in another["questions"]] == [SEEN, SEEN, UNSEEN]
    better = merged["rows"][1]["by_subset"]
    for subset in (SEEN, UNSEEN):  # the same values as "better": the same figures against the baseline
        assert another["by_subset"][subset]["metrics"] == better[subset]["metrics"]
        baseline = another["by_subset"][subset]["comparisons"]["baseline"]
        assert baseline == better[subset]["comparisons"]["baseline"]
    assert merged["training"] == existing["training"]


def test_the_result_layer_makes_new_rows_and_leaves_its_callers_rows_as_they_were() -> None:
    """``result_document``, ``merge`` and ``rederive`` return new rows: the rows handed to them (an
    asset's inputs, which Dagster may hand to another asset too) are not edited."""
    rows = (Row("base", toy_config()), Row("better", toy_config()))
    suite = Suite("toy", Path("s.yaml"), rows, "base", beir=Path("toy"), training_split="train")
    questions = tuple(Question(q, q, "all", "", ()) for q in SUBSETS)
    labels = Labels("toy", ("toy/qrels/test.tsv",), "1" * 64, questions, {}, TRAINING)
    given = [_row("base", BASE), _row("better", BETTER)]
    before = copy.deepcopy(given)
    document = result_document(suite, given, labels, "2" * 64, None)
    assert given == before and "comparisons" in document["rows"][1]
    held = copy.deepcopy(document)
    rederive(document, TRAINING, "again")
    merge(document, {**document, "rows": document["rows"][1:]})
    assert document == held
