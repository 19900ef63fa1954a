"""``clear-rag ablate`` and the Dagster assets write the same result file for the same suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance
from typer.testing import CliRunner

from assets.run import CURSOR, update
from clear_rag.cli import app
from tests.assets.conftest import DAGSTER_WARNINGS, CountingEmbedder, toy_definitions


def _stable(result: dict[str, Any]) -> dict[str, Any]:
    """The document without what differs between any two runs: dates, timings, trace ids."""
    copy: dict[str, Any] = json.loads(json.dumps(result))
    copy.pop("date")
    for row in copy["rows"]:
        row.pop("date")
        row.pop("seconds_per_question")
        for question in row["questions"]:
            question.pop("trace")
    return copy


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_cli_and_the_assets_write_the_same_result(project: Path, counting: CountingEmbedder) -> None:
    with DagsterInstance.ephemeral() as instance:
        update(toy_definitions(results_dir="dagster-results"), instance, project / CURSOR)
    cli = CliRunner().invoke(
        app, ["ablate", "toy", "--embedder", "hash", "--save-results", "--results-dir", "cli-results"]
    )
    assert cli.exit_code == 0, cli.output
    ours = json.loads((project / "dagster-results" / "toy.json").read_text(encoding="utf-8"))
    theirs = json.loads((project / "cli-results" / "toy.json").read_text(encoding="utf-8"))
    assert list(ours) == list(theirs)
    assert [r["name"] for r in ours["rows"]] == [r["name"] for r in theirs["rows"]]
    assert _stable(ours) == _stable(theirs)
    assert ours["embedder"] == theirs["embedder"] == "hash-embedder-256@sha256-bow-1"
