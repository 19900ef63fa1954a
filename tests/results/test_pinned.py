"""Rows read against a pinned row: config diffs, paired comparisons and the questions behind a move,
on hand-made documents, generated ones, and the real results/tech.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import InputError
from clear_rag.eval.significance import compare
from clear_rag.results.document import compared
from clear_rag.results.pinned import against_pinned, config_diff, moves

TECH = Path(__file__).resolve().parents[2] / "results" / "tech.json"
METRICS = ["recall@5", "ndcg@10"]
CONFIG = {
    "retrievers": ["keyword", "vector"],
    "top_k": 10,
    "weights": {},
    "chunking": {"size": 96, "overlap": 0},
}


def _question(qid: str, values: dict[str, float], rank: int | None, verdict: str | None) -> dict[str, Any]:
    q: dict[str, Any] = {"id": qid, "category": "factual" if qid < "q3" else "paraphrase",
                         "first_rank": rank, "metrics": values, "trace": f"t-{qid}"}  # fmt: skip
    if verdict is not None:
        q["lost"] = {"verdict": verdict, "stage": None, "ranks": {}}
    return q


def _row(name: str, config: dict[str, Any], questions: list[dict[str, Any]]) -> dict[str, Any]:
    metrics = {m: sum(q["metrics"][m] for q in questions) / len(questions) for m in METRICS}
    return {"name": name, "config": config, "metrics": metrics, "questions": questions}


def _document(rows: list[dict[str, Any]], skipped: list[dict[str, str]] | None = None) -> dict[str, Any]:
    rows = compared(rows, rows[0]["name"])
    return {"suite": "mini", "baseline": rows[0]["name"], "metric_names": METRICS, "rows": rows,
            "skipped": skipped or []}  # fmt: skip


@pytest.fixture
def mini() -> dict[str, Any]:
    """hybrid (the pinned one), bm25 (q1 down, q2 up, q3 down by more), and bigger chunks; one skipped row."""
    hybrid = [_question("q1", {"recall@5": 1.0, "ndcg@10": 1.0}, 1, "found"),
              _question("q2", {"recall@5": 0.0, "ndcg@10": 0.0}, None, "never retrieved"),
              _question("q3", {"recall@5": 1.0, "ndcg@10": 1 / 2}, 2, "found")]  # fmt: skip
    bm25 = [_question("q1", {"recall@5": 1.0, "ndcg@10": 1 / 2}, 2, "found"),
            _question("q2", {"recall@5": 1.0, "ndcg@10": 1 / 3}, 3, "found"),
            _question("q3", {"recall@5": 0.0, "ndcg@10": 0.0}, 12, "retrieved too low")]  # fmt: skip
    bigger = copy.deepcopy(hybrid)
    return _document(
        [_row("hybrid", CONFIG, hybrid),
         _row("bm25", {**CONFIG, "retrievers": ["keyword"]}, bm25),
         _row("bigger chunks", {**CONFIG, "chunking": {"size": 512, "overlap": 0}}, bigger)],
        [{"name": "hybrid + rerank", "reason": "the reranker is not here"}],
    )  # fmt: skip


def test_config_diff_names_only_the_settings_that_differ_with_nested_tables_dotted() -> None:
    other = {**CONFIG, "top_k": 5, "chunking": {"size": 512, "overlap": 0}, "rerank": True}
    assert config_diff(CONFIG, other) == {
        "top_k": (10, 5),
        "chunking.size": (96, 512),
        "rerank": (None, True),
    }
    assert config_diff(CONFIG, copy.deepcopy(CONFIG)) == {}
    assert config_diff({"weights": {}}, {"weights": {"vector": 2.0}}) == {
        "weights": ({}, None),
        "weights.vector": (None, 2.0),
    }
    assert config_diff({}, {}) == {}


def test_every_other_row_is_read_against_the_pinned_one(mini: dict[str, Any]) -> None:
    read = {r["name"]: r for r in against_pinned(mini, "hybrid")}
    assert list(read) == ["bm25", "bigger chunks", "hybrid + rerank"]
    assert read["bm25"]["config_diff"] == {"retrievers": [["keyword", "vector"], ["keyword"]]}
    ndcg = read["bm25"]["comparisons"]["ndcg@10"]
    assert ndcg["difference"] == round(((1 / 2 - 1) + (1 / 3 - 0) + (0 - 1 / 2)) / 3, 6)
    assert (ndcg["up"], ndcg["down"], ndcg["ties"], ndcg["against"]) == (1, 2, 0, "hybrid")
    assert read["bigger chunks"]["config_diff"] == {"chunking.size": [96, 512]}
    assert read["bigger chunks"]["comparisons"]["recall@5"]["difference"] == 0.0
    assert read["hybrid + rerank"] == {
        "name": "hybrid + rerank", "skipped": "the reranker is not here", "config_diff": {}, "comparisons": {}
    }  # fmt: skip


def test_a_metric_no_question_has_in_both_rows_is_left_out(mini: dict[str, Any]) -> None:
    for q in mini["rows"][1]["questions"]:
        del q["metrics"]["ndcg@10"]
    read = {r["name"]: r for r in against_pinned(mini, "hybrid")}
    assert list(read["bm25"]["comparisons"]) == ["recall@5"]
    assert list(read["bigger chunks"]["comparisons"]) == METRICS


def test_an_unknown_pinned_row_names_the_file_and_the_nearest_row(mini: dict[str, Any]) -> None:
    with pytest.raises(InputError) as caught:
        against_pinned(mini, "hybird", source="mini.json")
    message = str(caught.value)
    assert message.startswith("mini.json: row='hybird': no row has this name")
    assert "Did you mean 'hybrid'?" in message
    with pytest.raises(InputError, match="was skipped"):
        moves(mini, "hybrid + rerank", "bm25", "ndcg@10")
    with pytest.raises(InputError) as caught:
        moves(mini, "hybrid", "bm25", "mrr@10")
    assert (
        str(caught.value)
        == "mini: metric='mrr@10': is not a metric of this file. Use one of: recall@5, ndcg@10"
    )


def test_moves_lists_the_questions_behind_a_cell_largest_first(mini: dict[str, Any]) -> None:
    found = moves(mini, "hybrid", "bm25", "ndcg@10")
    assert [(m["id"], m["direction"]) for m in found] == [("q1", "down"), ("q3", "down"), ("q2", "up")]
    assert [m["difference"] for m in found] == [1 / 2 - 1, 0 - 1 / 2, 1 / 3 - 0]
    q3 = found[1]
    assert q3["category"] == "paraphrase"
    assert q3["pinned"] == {"value": 1 / 2, "first_rank": 2, "verdict": "found", "trace": "t-q3"}
    assert q3["row"] == {"value": 0.0, "first_rank": 12, "verdict": "retrieved too low", "trace": "t-q3"}
    assert moves(mini, "hybrid", "bigger chunks", "ndcg@10") == []


def test_a_question_without_a_loss_verdict_reads_none(mini: dict[str, Any]) -> None:
    for q in mini["rows"][1]["questions"]:
        del q["lost"]
    assert {m["row"]["verdict"] for m in moves(mini, "hybrid", "bm25", "ndcg@10")} == {None}


def test_a_graded_answer_shows_its_answer_and_the_graders_verdict(mini: dict[str, Any]) -> None:
    for row in mini["rows"]:
        for q in row["questions"]:
            q["answer"] = f"{row['name']} says {q['id']}"
            q["graded"] = {"outcome": "bleed", "verdict": "bleed: said psi"}
    found = moves(mini, "hybrid", "bm25", "ndcg@10")[0]
    assert found["pinned"]["answer"] == "hybrid says q1" and found["row"]["answer"] == "bm25 says q1"
    assert found["row"]["graded"] == "bleed: said psi"


# -- properties ------------------------------------------------------------------------------------

VALUES = st.sampled_from([0.0, 1 / 3, 1 / 2, 1.0])
QUESTIONS = st.lists(st.tuples(VALUES, VALUES, st.booleans()), min_size=1, max_size=12)


def _generated(pairs: list[tuple[float, float, bool]]) -> dict[str, Any]:
    """Two rows over the same questions; where the flag is false, the second lacks ndcg@10 (no spans)."""
    a = [
        _question(f"q{i:02}", {"recall@5": x, "ndcg@10": x}, 1, "found") for i, (x, _, _) in enumerate(pairs)
    ]
    b = [
        _question(f"q{i:02}", {"recall@5": y, **({"ndcg@10": y} if has else {})}, 2, None)
        for i, (_, y, has) in enumerate(pairs)
    ]
    rows = [{"name": "a", "config": CONFIG, "questions": a}, {"name": "b", "config": CONFIG, "questions": b}]
    return {"suite": "gen", "metric_names": METRICS, "rows": rows}


@settings(max_examples=40, deadline=None)
@given(QUESTIONS)
def test_a_row_pinned_against_its_own_copy_differs_nowhere(pairs: list[tuple[float, float, bool]]) -> None:
    document = _generated(pairs)
    document["rows"][1] = {**copy.deepcopy(document["rows"][0]), "name": "b"}
    (read,) = against_pinned(document, "a")
    assert read["config_diff"] == {}
    for c in read["comparisons"].values():
        assert (c["difference"], c["ci_low"], c["ci_high"], c["p_sign"], c["up"], c["down"]) == (
            0,
            0,
            0,
            1,
            0,
            0,
        )
    for metric in METRICS:
        assert moves(document, "a", "b", metric) == []
        assert moves(document, "a", "a", metric) == []


@settings(max_examples=40, deadline=None)
@given(QUESTIONS)
def test_the_moves_behind_a_cell_are_its_ups_and_downs(pairs: list[tuple[float, float, bool]]) -> None:
    document = _generated(pairs)
    (read,) = against_pinned(document, "a")
    for metric, c in read["comparisons"].items():
        found = moves(document, "a", "b", metric)
        assert sum(m["direction"] == "up" for m in found) == c["up"]
        assert sum(m["direction"] == "down" for m in found) == c["down"]
        assert all((m["difference"] > 0) == (m["direction"] == "up") for m in found)
    with_ndcg = [(x, y) for x, y, has in pairs if has]
    if with_ndcg:
        expected = compare("ndcg@10", "a", [x for x, _ in with_ndcg], [y for _, y in with_ndcg])
        assert read["comparisons"]["ndcg@10"] == expected.to_dict()
    else:
        assert "ndcg@10" not in read["comparisons"]


# -- the real results ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tech() -> dict[str, Any]:
    return json.loads(TECH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_pinning_the_baseline_reproduces_the_stored_baseline_comparisons(tech: dict[str, Any]) -> None:
    read = {r["name"]: r for r in against_pinned(tech, tech["baseline"])}
    checked = 0
    for row in tech["rows"]:
        stored = row["comparisons"].get("baseline")
        if stored is None:
            assert row["name"] == tech["baseline"]
            continue
        for metric, comparison in stored.items():
            assert read[row["name"]]["comparisons"][metric] == comparison, (row["name"], metric)
            checked += 1
    assert checked == (len(tech["rows"]) - 1) * len(tech["metric_names"])


def test_the_moves_of_every_tech_cell_are_its_ups_and_downs(tech: dict[str, Any]) -> None:
    baseline = tech["baseline"]
    for read in against_pinned(tech, baseline):
        for metric, c in read["comparisons"].items():
            found = moves(tech, baseline, read["name"], metric)
            directions = [m["direction"] for m in found]
            assert (directions.count("up"), directions.count("down")) == (c["up"], c["down"])
