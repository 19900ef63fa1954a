"""An answer-grading suite through the one runner: every question answered and graded, the generations
cached so that a second run regrades without calling the model, and a replay from the stored traces
giving the same grades."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import ConfigError
from clear_rag.eval import generations, runner
from clear_rag.eval.answers import ANSWER_METRICS, CHECK_METRICS
from clear_rag.eval.suite import load_suite
from clear_rag.providers.base import Message
from clear_rag.providers.fake import EchoChatModel, HashEmbedder
from tests.toy import GOLDEN

GRADED = GOLDEN.replace(
    "category: factual\n",
    "category: factual\n    must_mention: [[1.5 mm, 1.5mm]]\n    must_not_mention: [psi]\n",
) + ("  - id: price\n    question: what does a new chain cost\n    category: refusal\n    refusal: true\n")
ANSWERS = """
name: toy-answers
corpus: docs
golden: golden.yaml
baseline: small chunks
generate: true
base: {chunking: {chunker: fixed, size: 8, overlap: 1}, support_model: lexical}
rows:
  - {name: small chunks}
  - {name: bigger chunks, set: {chunking: {size: 32}, budget_tokens: 64}}
"""


class CountingChat:
    """The echo model, counting the times it is asked."""

    def __init__(self) -> None:
        self.inner = EchoChatModel()
        self.name, self.version, self.fingerprint = (
            self.inner.name,
            self.inner.version,
            self.inner.fingerprint,
        )
        self.calls = 0

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        self.calls += 1
        return self.inner.stream(messages, **options)


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GRADED, encoding="utf-8")
    (tmp_path / "answers.yaml").write_text(ANSWERS, encoding="utf-8")
    return tmp_path


def _run(project: Path, chat: CountingChat) -> dict[str, Any]:
    suite = load_suite("answers.yaml")
    cached = generations.cached_chat(chat, suite, project / "results")
    result = runner.run_suite(suite, embedder=HashEmbedder(dim=64), chat=cached, root=project / "stores")
    cached.cache.save()
    return result


def test_every_question_is_answered_graded_and_regraded_from_the_cache(project: Path) -> None:
    first_chat = CountingChat()
    first = _run(project, first_chat)
    cache = json.loads((project / "results" / "generations" / "toy-answers.json").read_text())
    # two rows, four questions: one answer each, a prompt that both rows build asked once
    assert 0 < first_chat.calls == len(cache["generations"]) <= 2 * 4
    assert first["headline"] == "correct"
    # the grades in their order; a check metric no question has (nothing flagged) is left out
    graded = [name for name in first["metric_names"] if name in ANSWER_METRICS]
    assert graded == [name for name in ANSWER_METRICS if name in graded]
    assert set(ANSWER_METRICS) - set(CHECK_METRICS) <= set(graded)
    rows = {r["name"]: r for r in first["rows"]}
    small = {q["id"]: q for q in rows["small chunks"]["questions"]}
    # the echo model answers with the first sentence of source [1] and cites it
    assert small["pads"]["answer"].endswith("[1]")
    assert small["pads"]["graded"]["mentioned"] == {"1.5 mm": "1.5 mm"}
    assert small["pads"]["graded"]["bleed"] == []
    assert "correct refusal" in small["price"]["metrics"]
    assert "correct" not in small["price"]["metrics"]
    assert small["pads"]["metrics"]["in context"] == 1.0
    refusal = rows["small chunks"]["by_category"]["refusal"].keys()
    assert "correct refusal" in refusal and refusal - {"correct refusal"} <= set(CHECK_METRICS)
    assert rows["small chunks"]["models"]["chat"].startswith("echo-chat")

    again_chat = CountingChat()
    again = _run(project, again_chat)
    assert again_chat.calls == 0, "a second run regrades from the cache"
    for before, after in zip(first["rows"], again["rows"], strict=True):
        assert [q["metrics"] for q in before["questions"]] == [q["metrics"] for q in after["questions"]]

    replayed = runner.replay(again, load_suite("answers.yaml"), project / "stores")
    for row in again["rows"]:
        for question in row["questions"]:
            assert replayed[row["name"]][question["id"]] == runner.replayable(question)


def test_the_cli_writes_the_file_and_replays_it_without_a_model(project: Path) -> None:
    cli = CliRunner()
    args = ["ablate", "answers.yaml", "--embedder", "hash", "--chat", "echo", "--store", "stores"]
    done = cli.invoke(app, [*args, "--save-results"])
    assert done.exit_code == 0, done.output
    generated = len(
        json.loads((project / "results" / "generations" / "toy-answers.json").read_text())["generations"]
    )
    # eight answers asked for (two rows, four questions); a prompt both rows build is asked once
    assert f"{8 - generated} from the cache, {generated} generated" in done.output
    written = json.loads((project / "results" / "toy-answers.json").read_text())
    assert written["rows"][0]["questions"][0]["graded"]["verdict"]
    again = cli.invoke(app, [*args, "--save-results"])
    assert "8 from the cache, 0 generated" in again.output
    replayed = cli.invoke(app, [*args, "--replay"])
    assert replayed.exit_code == 0, replayed.output
    assert "all metrics and verdicts identical" in replayed.output


def test_a_suite_naming_answer_grades_must_generate(project: Path) -> None:
    (project / "bad.yaml").write_text(
        ANSWERS.replace("generate: true", "metrics: [correct]"), encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="need generated answers"):
        load_suite("bad.yaml")


def test_the_outcome_table_and_plot_count_every_graded_answer_once(project: Path) -> None:
    from clear_rag.eval.answers import OUTCOMES
    from clear_rag.report.blocks import render_page
    from clear_rag.report.sources import Results
    from clear_rag.report.tables import query_rows
    from clear_rag.results.document import with_command
    from clear_rag.results.files import write_result

    result = _run(project, CountingChat())
    results = project / "results"
    write_result(
        results / "toy-answers.json", with_command(result, "clear-rag ablate answers.yaml --save-results")
    )
    columns, rows = query_rows("answers", results, "toy-answers")
    assert columns == ["row", "questions", *OUTCOMES]
    assert [r[0] for r in rows] == ["small chunks", "bigger chunks"]
    for row, measured in zip(rows, result["rows"], strict=True):
        assert row[1] == sum(row[2:]) == len(measured["questions"])
        outcomes = [q["graded"]["outcome"] for q in measured["questions"]]
        assert row[2:] == [outcomes.count(o) for o in OUTCOMES]
    page = project / "page.md"
    page.write_text(
        "<!-- results: toy-answers answers -->\n<!-- /results -->\n\n"
        "<!-- results: toy-answers plot answers -->\n<!-- /results -->\n",
        encoding="utf-8",
    )
    found = Results.at(results)
    rendered = render_page(page.read_text(encoding="utf-8"), Path("page.md"), found)
    assert "| small chunks | 4 |" in rendered and "toy-answers-answers.svg" in rendered
