"""Every entry point that accepts `rerank = true` can build a reranker: `ask`, `ablate`, `beir` and the
asset graph, each given one by `--reranker` (here the lexical fake), each recording it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from tests.toy import GOLDEN, suite_yaml, write_beir

runner = CliRunner()
LEXICAL = "lexical-reranker@overlap-1"
SUITE = suite_yaml("toy-rerank", "{name: hybrid}", "{name: hybrid + rerank, set: {rerank: true}}")


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "golden" / "suites").mkdir(parents=True)
    (tmp_path / "golden" / "suites" / "toy-rerank.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def test_ask(project: Path) -> None:
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hash"]).exit_code == 0
    asked = runner.invoke(
        app, ["ask", "chain", "--no-generate", "--embedder", "hash", "--reranker", "lexical"]
    )
    assert asked.exit_code == 0 and "[rerank]" in asked.output and LEXICAL in asked.output


def test_ablate(project: Path) -> None:
    ran = runner.invoke(
        app, ["ablate", "toy-rerank", "--embedder", "hash", "--reranker", "lexical", "--save-results"]
    )
    assert ran.exit_code == 0, ran.output
    rows = json.loads((project / "results" / "toy-rerank.json").read_text())["rows"]
    assert rows[1]["models"]["reranker"] == LEXICAL and rows[1]["config"]["reranker"] == "lexical"


def test_beir(project: Path) -> None:
    folder = write_beir(project / "toy-beir")
    ran = runner.invoke(
        app, ["beir", str(folder), "--embedder", "hash", "--reranker", "lexical", "--save-results"]
    )
    assert ran.exit_code == 0, ran.output
    (row,) = json.loads((project / "results" / "beir-toy-beir.json").read_text())["rows"]
    assert row["name"].endswith("+ rerank") and row["models"]["reranker"] == LEXICAL


@pytest.mark.filterwarnings("ignore::dagster.BetaWarning", "ignore::DeprecationWarning")
def test_the_asset_graph(project: Path) -> None:
    from dagster import DagsterInstance

    from assets.definitions import build_definitions
    from assets.resources import PathsResource
    from assets.run import CURSOR, update

    definitions = build_definitions(
        ["toy-rerank"], embedder="hash", reranker="lexical", paths=PathsResource(results_dir="graph")
    )
    with DagsterInstance.ephemeral() as instance:
        update(definitions, instance, project / CURSOR)
    rows = json.loads((project / "graph" / "toy-rerank.json").read_text())["rows"]
    assert rows[1]["models"]["reranker"] == LEXICAL


def test_a_row_reranks_with_an_onnx_cross_encoder_from_a_folder(project: Path) -> None:
    """The real provider: an ONNX cross-encoder in a folder (as `models pull` leaves one), built here."""
    from tests.providers.tiny_models import build_model_dir

    folder = build_model_dir(project / "tiny-cross-encoder")
    ran = runner.invoke(
        app, ["ablate", "toy-rerank", "--embedder", "hash", "--reranker", str(folder), "--save-results"]
    )
    assert ran.exit_code == 0, ran.output
    document = json.loads((project / "results" / "toy-rerank.json").read_text())
    assert document["skipped"] == []
    assert document["rows"][1]["models"]["reranker"] == "tiny-cross-encoder@local"


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["ask", "ablate", "beir"])
def test_the_shipped_reranker_is_reachable_by_name(project: Path, entry: str) -> None:
    """The cross-encoder trained here, in the weights package (models/), by name from each entry point."""
    shipped = "scifact-minilm-l6"
    if entry == "ask":
        assert runner.invoke(app, ["ingest", "docs", "--embedder", "hash"]).exit_code == 0
        ran = runner.invoke(
            app, ["ask", "chain", "--no-generate", "--embedder", "hash", "--reranker", shipped]
        )
        assert ran.exit_code == 0 and f"{shipped}@" in ran.output, ran.output
        return
    if entry == "ablate":
        args, result = ["ablate", "toy-rerank"], project / "results" / "toy-rerank.json"
    else:
        args, result = (
            ["beir", str(write_beir(project / "toy-beir"))],
            project / "results" / "beir-toy-beir.json",
        )
    ran = runner.invoke(app, [*args, "--embedder", "hash", "--reranker", shipped, "--save-results"])
    assert ran.exit_code == 0, ran.output
    rows = json.loads(result.read_text())["rows"]
    assert rows[-1]["models"]["reranker"].startswith(f"{shipped}@")
