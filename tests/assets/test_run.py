"""``python -m assets.run``: a persistent instance, and a second run with nothing changed runs nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assets.resources import FAKE_RESULTS
from assets.run import CURSOR, main, reproduced
from tests.assets.conftest import SOURCE_ASSET_DEPRECATION

# One keyword row keeps this test (real SQLite storage, which syncs to disk per event) to a few runs.
ONE_ROW = """
name: one
corpus: docs
golden: golden.yaml
base: {chunking: {chunker: fixed, size: 8, overlap: 1}}
rows:
  - {name: bm25, set: {retrievers: [keyword]}}
"""


@pytest.mark.filterwarnings(SOURCE_ASSET_DEPRECATION)  # main() silences the beta warnings itself
def test_main_keeps_history_and_a_second_run_does_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "golden" / "suites" / "one.yaml").write_text(ONE_ROW, encoding="utf-8")
    home = project / ".clear-rag" / "dagster"
    argv = ["--embedder", "hash", "--suite", "one", "--home", str(home)]

    assert main(argv) == 0
    first = capsys.readouterr().out
    # three files parsed, then the store, keyword index, evaluation and result
    assert "materialized 7 asset partitions" in first
    assert f"results: {FAKE_RESULTS}/one.json" in first
    assert "dagster dev" in first
    assert (project / FAKE_RESULTS / "one.json").is_file()
    assert "enabled: false" in (home / "dagster.yaml").read_text(encoding="utf-8")
    assert (home / CURSOR).is_file()

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "observed 4 sources; materialized 0 asset partitions" in second
    assert "materializing" not in second


@pytest.mark.filterwarnings(SOURCE_ASSET_DEPRECATION)
def test_the_sample_answer_is_materialized_once_and_then_read_back_from_the_store(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "golden" / "suites" / "one.yaml").write_text(ONE_ROW, encoding="utf-8")
    shutil.copytree(project / "docs", project / "corpora" / "sample")
    argv = ["--embedder", "hash", "--suite", "one", "--home", str(project / ".clear-rag" / "dagster")]

    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "materialized 9 asset partitions" in first  # the suite's seven, the sample store and answer
    assert "materializing sample/store, sample/answer [-]" in first
    assert "query: How much is the deposit for a key fob?" in first
    assert "answer:" in first and "cited:" in first
    trace_id = first.split("(stored trace ")[1].split(";")[0]
    assert (project / ".clear-rag" / "clear-rag.db").is_file()  # the store `clear-rag ask` opens

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "observed 5 sources; materialized 0 asset partitions" in second
    # The same answer, printed from the stored trace: no model ran.
    assert f"(stored trace {trace_id};" in second
    printed = [out[out.index("query:") : out.index("(stored trace")] for out in (first, second)]
    assert printed[0] == printed[1]


def _result(path: Path, suite: str, metrics: dict[str, dict[str, float]], embedder: str = "e@1") -> Path:
    rows = [{"name": name, "metrics": values} for name, values in metrics.items()]
    path.write_text(json.dumps({"suite": suite, "embedder": embedder, "rows": rows}), encoding="utf-8")
    return path


def test_reproduced_compares_each_row_metric_by_metric(tmp_path: Path) -> None:
    committed = _result(tmp_path / "c.json", "s", {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.4}})
    same = _result(tmp_path / "same.json", "s", {"a": {"ndcg@10": 0.50004}, "b": {"ndcg@10": 0.4}})
    assert reproduced(same, committed) == f"s: 2 of 2 rows reproduce {committed} (every metric within 0.0001)"
    moved = _result(tmp_path / "moved.json", "s", {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.45}, "n": {}})
    assert reproduced(moved, committed).splitlines() == [
        f"s: 1 of 3 rows reproduce {committed} (every metric within 0.0001)",
        "  differs: 'b' ndcg@10 0.45 here, 0.4 there",
        "  differs: 'n' is not in it",
    ]
    other_model = _result(tmp_path / "o.json", "s", {"a": {"ndcg@10": 0.5}}, embedder="f@2")
    assert reproduced(other_model, committed) == f"s: not compared with {committed}, which e@1 measured"
    assert reproduced(_result(tmp_path / "t.json", "t", {}), committed) == ""
    assert reproduced(committed, committed) == ""
    assert reproduced(same, tmp_path / "absent.json") == ""
