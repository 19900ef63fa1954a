"""``clear-rag ablate`` and the Dagster assets write the same result file for the same suite."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance
from typer.testing import CliRunner

from assets.arguments import arguments
from assets.run import CURSOR, update
from clear_rag.cli import app
from tests.assets.conftest import DAGSTER_WARNINGS, CountingEmbedder, toy_definitions
from tests.toy import suite_yaml


def _stable(result: dict[str, Any]) -> dict[str, Any]:
    """The document without what differs between any two runs: dates, timings, trace ids, and the
    command, which each records as the one that wrote it."""
    copy: dict[str, Any] = json.loads(json.dumps(result))
    copy.pop("date")
    copy.pop("command")
    for row in copy["rows"]:
        row.pop("date")
        row.pop("seconds_per_question")
        for question in row["questions"]:
            question.pop("trace")
    return copy


# Rows that need a chat model: on the fake embedder the assets use the echo chat model.
EXPANSION = suite_yaml(
    "toy-expansion",
    "{name: hybrid}",
    "{name: multi-query, set: {expand: 2}}",
    "{name: hyde, set: {hyde: true}}",
)


def _both(project: Path, suite: str, *cli_options: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The result file of ``suite`` as the assets write it and as ``clear-rag ablate`` writes it."""
    with DagsterInstance.ephemeral() as instance:
        update(toy_definitions(results_dir="dagster-results", suites=[suite]), instance, project / CURSOR)
    cli = CliRunner().invoke(
        app,
        [
            "ablate",
            suite,
            "--embedder",
            "hash",
            *cli_options,
            "--save-results",
            "--results-dir",
            "cli-results",
        ],
    )
    assert cli.exit_code == 0, cli.output
    ours = json.loads((project / "dagster-results" / f"{suite}.json").read_text(encoding="utf-8"))
    theirs = json.loads((project / "cli-results" / f"{suite}.json").read_text(encoding="utf-8"))
    return ours, theirs


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_cli_and_the_assets_write_the_same_result(project: Path, counting: CountingEmbedder) -> None:
    ours, theirs = _both(project, "toy")
    assert list(ours) == list(theirs)
    assert [r["name"] for r in ours["rows"]] == [r["name"] for r in theirs["rows"]]
    assert _stable(ours) == _stable(theirs)
    assert ours["embedder"] == theirs["embedder"] == "hash-embedder-256@sha256-bow-1"
    # each names the command that wrote it, and each command runs as written
    assert shlex.split(theirs["command"]) == [
        "clear-rag", "ablate", "toy", "--embedder", "hash", "--results-dir", "cli-results", "--save-results"
    ]  # fmt: skip
    graph = shlex.split(ours["command"])
    assert graph[:3] == ["python", "-m", "assets.run"] and "--suite" in graph
    parsed = arguments().parse_args(graph[3:])
    assert (parsed.suite, parsed.embedder, parsed.results_dir) == (["toy"], "hash", "dagster-results")


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_a_suite_that_needs_a_chat_model_writes_the_same_result(
    project: Path, counting: CountingEmbedder
) -> None:
    (project / "golden" / "suites" / "toy-expansion.yaml").write_text(EXPANSION, encoding="utf-8")
    ours, theirs = _both(project, "toy-expansion", "--chat", "echo")
    assert _stable(ours) == _stable(theirs)
    models = {r["name"]: r["models"].get("chat") for r in ours["rows"]}
    assert models == {"hybrid": None, "multi-query": "echo-chat@1", "hyde": "echo-chat@1"}
    # The phrasings changed what was retrieved: the expanded rows are not copies of the plain one.
    retrieved = {r["name"]: [q["retrieved"] for q in r["questions"]] for r in ours["rows"]}
    assert retrieved["multi-query"] != retrieved["hybrid"] or retrieved["hyde"] != retrieved["hybrid"]


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_cli_the_runner_and_the_graph_give_one_question_the_same_trace(
    project: Path, counting: CountingEmbedder
) -> None:
    """One question path: `clear-rag ask --no-generate`, the evaluation runner and the asset graph
    produce the same trace for the same question and config (ids, dates and timings aside)."""
    import yaml

    from clear_rag.eval import runner, stores
    from clear_rag.eval.suite import load_suite
    from clear_rag.providers.fake import HashEmbedder
    from clear_rag.store import Store
    from clear_rag.trace import without_timings

    with DagsterInstance.ephemeral() as instance:
        update(toy_definitions(results_dir="dagster-results"), instance, project / CURSOR)
    graph = json.loads((project / "dagster-results" / "toy.json").read_text(encoding="utf-8"))
    row = next(r for r in graph["rows"] if r["name"] == "hybrid")
    question = next(q for q in row["questions"] if q["id"] == "pads")
    suite = load_suite("toy")
    (config,) = [r.config for r in suite.rows if r.name == "hybrid"]
    with Store(Path(row["store"])) as store:
        from_graph = store.load_trace(question["trace"])
        labels = stores.suite_labels(suite, store)
        ran = runner.run_row(
            next(r for r in suite.rows if r.name == "hybrid"), store, labels, graph["metric_names"],
            embedder=HashEmbedder(),
        )  # fmt: skip
        from_runner = store.load_trace(next(q for q in ran["questions"] if q["id"] == "pads")["trace"])
    (project / "row.yaml").write_text(yaml.safe_dump(config.to_dict()), encoding="utf-8")
    asked = CliRunner().invoke(
        app,
        ["ask", from_graph.query, "--no-generate", "--store", row["store"], "--config", "row.yaml",
         "--embedder", "hash", "--support", "lexical"],
    )  # fmt: skip
    assert asked.exit_code == 0, asked.output
    with Store(Path(row["store"])) as store:
        from_cli = store.load_trace(asked.output.rsplit("trace ", 1)[1].split()[0])
    # `ask` also says whether retrieval looks weak (the support check's first half, which a retrieval
    # suite does not run): the record is the CLI's alone, and the rest of the trace is the same
    assert from_cli.support is not None and from_cli.support.line == "" and from_runner.support is None
    cli = without_timings(from_cli)
    assert cli.pop("support") and cli["models"].pop("support") == "lexical-reranker@overlap-1"
    cli["config"]["support_model"] = from_runner.config["support_model"]
    cli["config"]["hash"] = from_runner.config["hash"]
    assert without_timings(from_graph) == without_timings(from_runner) == {**cli, "support": None}
    assert [s.name for s in from_cli.stages] == ["keyword", "vector", "fusion", "context"]


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_a_suite_that_grades_answers_writes_the_same_result(
    project: Path, counting: CountingEmbedder
) -> None:
    graded = suite_yaml("toy-answers", "{name: hybrid}", "{name: bigger chunks, set: {chunking: {size: 32}}}")
    graded = graded.replace("baseline: hybrid\n", "baseline: hybrid\ngenerate: true\n")
    graded = graded.replace("overlap: 1}}", "overlap: 1}, support_model: lexical}")  # the fake checks answers
    (project / "golden" / "suites" / "toy-answers.yaml").write_text(graded, encoding="utf-8")
    ours, theirs = _both(project, "toy-answers", "--chat", "echo")
    assert _stable(ours) == _stable(theirs)
    assert ours["headline"] == "correct"
    assert all(q["graded"]["verdict"] for r in ours["rows"] for q in r["questions"])
    assert {r["models"]["chat"] for r in ours["rows"]} == {"echo-chat@1"}
    assert {r["models"]["support"] for r in ours["rows"]} == {"lexical-reranker@overlap-1"}
    assert all(q["graded"]["support"]["line"] for r in ours["rows"] for q in r["questions"])
