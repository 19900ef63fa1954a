"""``python -m assets.run``: a persistent instance, and a second run with nothing changed runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from assets.resources import FAKE_RESULTS
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
    assert "materialized 4 asset partitions" in first  # store, keyword index, evaluation, result
    assert f"results: {FAKE_RESULTS}/one.json" in first
    assert "dagster dev" in first
    assert (project / FAKE_RESULTS / "one.json").is_file()
    assert "enabled: false" in (home / "dagster.yaml").read_text(encoding="utf-8")
    assert (home / CURSOR).is_file()

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert "observed 4 sources; materialized 0 asset partitions" in second
    assert "materializing" not in second
