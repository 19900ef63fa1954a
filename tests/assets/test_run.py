"""``python -m assets.run``: a persistent instance, and a second run with nothing changed runs nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assets.resources import FAKE_RESULTS, committed_for
from assets.run import CURSOR, main
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
    assert ".venv/bin/clear-rag serve --embedder hash --chat extractive:lexical" in first
    assert (project / FAKE_RESULTS / "one.json").is_file()
    assert "enabled: false" in (home / "dagster.yaml").read_text(encoding="utf-8")
    assert (home / CURSOR).is_file()
    # The file just written, committed as the fake baseline: the next run compares with it.
    committed = project / committed_for("one", "hash")
    committed.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(project / FAKE_RESULTS / "one.json", committed)

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "observed 4 sources; materialized 0 asset partitions" in second
    assert "materializing" not in second
    reproduces = f"one: 1 of 1 rows reproduce {committed_for('one', 'hash')} (every metric within 0.0001)"
    assert reproduces in second.splitlines()


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
    # answered by the extractive answerer (its fake-reranker form beside the fake embedder), not by the
    # suites' writer: a fresh clone has no llama-cpp-python, and the sample once asked SmolLM2 for it
    assert "answered by: extractive@1+lexical-reranker@overlap-1 (extractive)" in first
    trace_id = first.split("(stored trace ")[1].split(";")[0]
    assert (project / ".clear-rag" / "clear-rag.db").is_file()  # the store `clear-rag ask` opens

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "observed 5 sources; materialized 0 asset partitions" in second
    # The same answer, printed from the stored trace: no model ran.
    assert f"(stored trace {trace_id};" in second
    printed = [out[out.index("query:") : out.index("(stored trace")] for out in (first, second)]
    assert printed[0] == printed[1]
