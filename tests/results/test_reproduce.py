"""Reproduction of a committed result file: row by row, metric by metric, and the text assets.run prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clear_rag.results.reproduce import TOLERANCE, Moved, Reproduction, RowDiff, format, reproduced
from tests.toy import suite_result


def _result(path: Path, suite: str, metrics: dict[str, dict[str, float]], embedder: str = "e@1") -> Path:
    rows = [{"name": name, "metrics": values} for name, values in metrics.items()]
    path.write_text(json.dumps(suite_result(suite, rows, embedder=embedder)), encoding="utf-8")
    return path


@pytest.fixture
def committed(tmp_path: Path) -> Path:
    return _result(
        tmp_path / "c.json", "s", {"a": {"ndcg@10": 0.5, "mrr@10": 0.3}, "b": {"ndcg@10": 0.4, "mrr@10": 0.2}}
    )


def test_rows_within_the_tolerance_reproduce(tmp_path: Path, committed: Path) -> None:
    same = _result(
        tmp_path / "same.json",
        "s",
        {"a": {"ndcg@10": 0.5 + TOLERANCE / 2, "mrr@10": 0.3}, "b": {"ndcg@10": 0.4, "mrr@10": 0.2}},
    )
    found = reproduced(same, committed)
    assert found == Reproduction("s", committed, same=("a", "b"))
    assert found.rows == 2
    assert format(found) == f"s: 2 of 2 rows reproduce {committed} (every metric within 0.0001)"


def test_every_metric_that_moved_is_reported_with_its_difference(tmp_path: Path, committed: Path) -> None:
    moved = _result(
        tmp_path / "moved.json",
        "s",
        {
            "a": {"ndcg@10": 0.5, "mrr@10": 0.3},
            "b": {"ndcg@10": 0.45, "mrr@10": 0.1, "recall@5": 0.7},
            "n": {},
        },
    )
    found = reproduced(moved, committed)
    assert found is not None
    assert found.same == ("a",) and found.rows == 3
    b, n = found.differ
    assert b == RowDiff(
        "b", (Moved("ndcg@10", 0.45, 0.4), Moved("mrr@10", 0.1, 0.2), Moved("recall@5", 0.7, None))
    )
    assert [m.delta for m in b.moved] == [pytest.approx(0.45 - 0.4), pytest.approx(0.1 - 0.2), None]
    assert n == RowDiff("n", missing=True)
    # recall@5 is not in the committed row: it counts as moving from 0.0, the furthest (0.7).
    assert b.largest == Moved("recall@5", 0.7, None)


def test_format_names_the_metric_that_moved_furthest(tmp_path: Path, committed: Path) -> None:
    moved = _result(
        tmp_path / "moved.json", "s", {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.45, "mrr@10": 0.1}, "n": {}}
    )
    found = reproduced(moved, committed)
    assert found is not None
    # ndcg@10 moved by 0.05 and mrr@10 by 0.1: mrr@10 is named. Metrics only the committed row has
    # (mrr@10 of 'a') are not looked at.
    assert format(found).splitlines() == [
        f"s: 1 of 3 rows reproduce {committed} (every metric within 0.0001)",
        "  differs: 'b' mrr@10 0.1 here, 0.2 there",
        "  differs: 'n' is not in it",
    ]
    assert format(found, every_metric=True).splitlines() == [
        f"s: 1 of 3 rows reproduce {committed} (every metric within 0.0001)",
        "  differs: 'b'",
        "    ndcg@10 0.45 here, 0.4 there (+0.0500)",
        "    mrr@10 0.1 here, 0.2 there (-0.1000)",
        "  differs: 'n' is not in it",
    ]


def test_a_metric_missing_there_is_reported_as_not_there(tmp_path: Path, committed: Path) -> None:
    extra = _result(tmp_path / "x.json", "s", {"a": {"ndcg@10": 0.5, "mrr@10": 0.3, "recall@5": 0.7}})
    found = reproduced(extra, committed)
    assert found is not None
    assert format(found).splitlines()[1:] == ["  differs: 'a' recall@5 0.7 here, None there"]
    assert format(found, every_metric=True).splitlines()[1:] == [
        "  differs: 'a'",
        "    recall@5 0.7 here, None there (not there)",
    ]


def test_another_embedder_is_not_compared(tmp_path: Path, committed: Path) -> None:
    other_model = _result(tmp_path / "o.json", "s", {"a": {"ndcg@10": 0.9}}, embedder="f@2")
    found = reproduced(other_model, committed)
    assert found == Reproduction("s", committed, other_embedder="e@1")
    assert format(found) == f"s: not compared with {committed}, which e@1 measured"


def test_nothing_to_compare_with(tmp_path: Path, committed: Path) -> None:
    assert reproduced(_result(tmp_path / "t.json", "t", {}), committed) is None  # another suite
    assert reproduced(committed, committed) is None  # the committed file itself
    assert reproduced(committed, tmp_path / "absent.json") is None
    assert reproduced(tmp_path / "absent.json", committed) is None


def test_a_file_without_rows(tmp_path: Path, committed: Path) -> None:
    found = reproduced(_result(tmp_path / "e.json", "s", {}), committed)
    assert found == Reproduction("s", committed)
    assert format(found) == f"s: 0 of 0 rows reproduce {committed} (every metric within 0.0001)"
