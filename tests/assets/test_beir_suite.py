"""A BEIR suite in the asset graph: one corpus file, labels from its rationales, judged per document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dagster import DagsterInstance
from typer.testing import CliRunner

from assets.run import CURSOR, update
from clear_rag.cli import app
from tests.assets.conftest import DAGSTER_WARNINGS, CountingEmbedder, toy_definitions
from tests.assets.test_parity import _stable
from tests.toy import write_beir

SUITE = """
name: toy-beir
beir: toy-beir
baseline: hybrid
base: {chunking: {chunker: whole}}
rows:
  - {name: bm25, set: {retrievers: [keyword]}}
  - {name: hybrid}
"""


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_a_beir_suite_runs_in_the_graph_as_the_cli_runs_it(project: Path, counting: CountingEmbedder) -> None:
    write_beir(project / "toy-beir", rationales=True)
    (project / "golden" / "suites" / "toy-beir.yaml").write_text(SUITE, encoding="utf-8")
    defs = toy_definitions(suites=["toy-beir"])
    with DagsterInstance.ephemeral() as instance:
        first = update(defs, instance, project / CURSOR)
        assert first.partitions("toy_beir/evaluation") == ["bm25", "hybrid"]
        assert first.observed == [
            "toy_beir/suite_rows",
            "toy_beir/suite",
            "toy_beir/golden",
            "toy_beir/corpus",
        ]
        assert counting.documents and not first.failed_checks
        counting.documents.clear()
        again = update(defs, instance, project / CURSOR)
        assert again.materialized == 0 and counting.documents == []

        # A changed judgement (the qrels) re-runs every row. The store re-runs its label check and
        # skips every document, so no index is touched and nothing is embedded.
        qrels = project / "toy-beir" / "qrels" / "test.tsv"
        qrels.write_text(qrels.read_text(encoding="utf-8") + "q2\td2\t1\r\n", encoding="utf-8")
        judged = update(defs, instance, project / CURSOR)
        assert judged.partitions("toy_beir/evaluation") == ["bm25", "hybrid"]
        assert judged.partitions("toy_beir/keyword_index") == judged.partitions("toy_beir/vector_index") == []
        assert counting.documents == []

    ours = json.loads((project / "dagster-results" / "toy-beir.json").read_text(encoding="utf-8"))
    assert ours["metric_names"][-1] == "doc ndcg@10"
    cli = CliRunner().invoke(
        app, ["ablate", "toy-beir", "--embedder", "hash", "--save-results", "--results-dir", "cli-results"]
    )
    assert cli.exit_code == 0, cli.output
    theirs = json.loads((project / "cli-results" / "toy-beir.json").read_text(encoding="utf-8"))
    assert _stable(ours) == _stable(theirs)
