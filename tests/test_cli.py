from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app

runner = CliRunner()


def test_every_command_has_help() -> None:
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0
    commands = [name for name in ("ingest", "status", "ask", "replay") if name in top.output]
    assert commands == ["ingest", "status", "ask", "replay"]
    for name in commands:
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert "--store" in result.output


def test_ingest_then_status(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = runner.invoke(app, ["ingest", str(corpus), "--size", "64", "--embedder", "hash"])
    assert first.exit_code == 0, first.output
    assert "3 added" in first.output and "0 failed" in first.output
    second = runner.invoke(app, ["ingest", str(corpus), "--size", "64", "--embedder", "hash"])
    assert "3 unchanged" in second.output and "added" not in second.output
    status = runner.invoke(app, ["status"])
    assert status.exit_code == 0, status.output
    assert "documents  3" in status.output
    assert str((tmp_path / ".clear-rag").resolve()) in status.output


def test_store_location_from_flag_and_environment(tmp_path: Path, corpus: Path) -> None:
    flagged = runner.invoke(app, ["ingest", str(corpus), "--store", str(tmp_path / "flag")])
    assert flagged.exit_code == 0, flagged.output
    assert (tmp_path / "flag" / "clear-rag.db").exists()
    env = runner.invoke(app, ["ingest", str(corpus)], env={"CLEAR_RAG_STORE": str(tmp_path / "env")})
    assert env.exit_code == 0, env.output
    assert (tmp_path / "env" / "clear-rag.db").exists()


def test_failures_give_one_line_each_and_a_nonzero_exit(tmp_path: Path, corpus: Path) -> None:
    (corpus / "empty.txt").write_bytes(b"")
    result = runner.invoke(app, ["ingest", str(corpus), "--store", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert "3 added" in result.output and "1 failed" in result.output
    assert "empty.txt: is empty (0 bytes). Add text to it or remove it from the folder" in result.output


def test_bad_settings_name_the_value(tmp_path: Path, corpus: Path) -> None:
    result = runner.invoke(app, ["ingest", str(corpus), "--chunker", "sentences", "--store", str(tmp_path)])
    assert result.exit_code == 2
    assert "sentences" in result.output


def test_status_without_a_store_says_what_to_do(tmp_path: Path) -> None:
    result = runner.invoke(app, ["status", "--store", str(tmp_path / "none")])
    assert result.exit_code == 3
    assert "clear-rag ingest" in result.output


def test_ask_prints_stages_and_replay_prints_them_again(tmp_path: Path, corpus: Path) -> None:
    store = ["--store", str(tmp_path / "s")]
    fake = ["--embedder", "hash"]
    assert runner.invoke(app, ["ingest", str(corpus), *store, *fake]).exit_code == 0
    asked = runner.invoke(app, ["ask", "disc brake pads", "--no-generate", *store, *fake])
    assert asked.exit_code == 0, asked.output
    for stage in ("[keyword]", "[vector]", "[fusion]", "[context]"):
        assert stage in asked.output
    assert "from keyword #" not in asked.output.split("[vector]")[0]  # a first stage names no source
    trace_id = asked.output.rsplit("trace ", 1)[1].split()[0]
    listed = runner.invoke(app, ["replay", "--list", *store])
    assert trace_id in listed.output
    replayed = runner.invoke(app, ["replay", trace_id, *store])
    assert replayed.exit_code == 0, replayed.output

    def blocks(text: str) -> list[str]:
        return sorted(block.strip() for block in text.split("\n\n") if block.strip().startswith("["))

    # the same stage blocks; ask printed them as they finished, replay prints them in stage order
    asked_stages = asked.output[: asked.output.index("\ncontext: ")]
    assert blocks(replayed.output) == blocks(asked_stages) and len(blocks(asked_stages)) == 4


def test_ask_with_a_reranker_prints_a_rerank_stage(tmp_path: Path, corpus: Path) -> None:
    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    assert runner.invoke(app, ["ingest", str(corpus), *store]).exit_code == 0
    asked = runner.invoke(app, ["ask", "tyre pressure", "--no-generate", "--reranker", "lexical", *store])
    assert asked.exit_code == 0, asked.output
    rerank = asked.output[asked.output.index("[rerank]") :]
    # reranked: how many it re-scored (all 3 here: fewer than the shortlist)
    assert (
        "(input=fusion, shortlist=50, model=lexical-reranker@overlap-1, display=sigmoid, reranked=3)"
        in rerank
    )
    assert "from fusion #" in rerank  # each candidate's input rank
    missing = runner.invoke(
        app, ["ask", "tyre pressure", "--no-generate", "--reranker", "ms-marco-minilm-l6", *store]
    )
    assert missing.exit_code == 4 and "clear-rag models pull ms-marco-minilm-l6" in missing.output


def test_ask_no_generate_still_expands_and_shows_what_was_searched(tmp_path: Path, corpus: Path) -> None:
    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    assert runner.invoke(app, ["ingest", str(corpus), *store]).exit_code == 0
    config = tmp_path / "expand.toml"
    config.write_text("expand = 2\nhyde = true\n", encoding="utf-8")
    asked = runner.invoke(
        app,
        [
            "ask",
            "when do disc brake pads wear",
            "--no-generate",
            "--config",
            str(config),
            "--chat",
            "echo",
            *store,
        ],
    )
    assert asked.exit_code == 0, asked.output
    assert "also searched as: do disc brake pads wear" in asked.output
    assert "also searched with a hypothetical answer" in asked.output
    assert "[keyword·q1]" in asked.output and "[vector·hyde]" in asked.output
    # replay shows a fused candidate's phrasings, and no per-phrasing search repeats a source
    trace_id = asked.output.rsplit("trace ", 1)[1].split()[0]
    replayed = runner.invoke(app, ["replay", trace_id, *store[:2]]).output
    first = replayed[replayed.index("[keyword·q0]") : replayed.index("[keyword·q1]")]
    assert "from " not in first
    assert "[keyword·q0 #" in replayed[replayed.index("[fusion]") :]


def test_ask_uses_the_stores_chunking_and_refuses_another(tmp_path: Path, corpus: Path) -> None:
    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    assert (
        runner.invoke(app, ["ingest", str(corpus), "--chunker", "fixed", "--size", "16", *store]).exit_code
        == 0
    )
    asked = runner.invoke(app, ["ask", "chain", "--no-generate", *store])
    assert asked.exit_code == 0, asked.output
    config = tmp_path / "c.toml"
    config.write_text("[chunking]\nsize = 512\n", encoding="utf-8")
    refused = runner.invoke(app, ["ask", "chain", "--no-generate", "--config", str(config), *store])
    assert refused.exit_code == 2 and "but the store was chunked" in refused.output


def test_ask_streams_an_answer_from_ollama_and_lists_the_cited_spans(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end through the CLI with a real HTTP server speaking Ollama's chat API."""
    from tests.providers.fake_servers import FakeServer, json_reply, ndjson_reply

    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    runner.invoke(app, ["ingest", str(corpus), *store])
    lines = [
        {"message": {"role": "assistant", "content": p}, "done": False}
        for p in ("New pads", " at 1.5 mm [1].")
    ]
    with FakeServer() as server:
        server.route("POST", "/api/chat", ndjson_reply([*lines, {"message": {"content": ""}, "done": True}]))
        server.route(
            "GET",
            "/api/tags",
            json_reply({"models": [{"name": "tiny:latest", "digest": "0123456789abcdef"}]}),
        )
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        result = runner.invoke(
            app,
            ["ask", "when do disc brake pads need replacing?", *store, "--chat", "ollama:tiny", "--stages"],
        )
        asked = server.seen("/api/chat")[0].json()
    assert result.exit_code == 0, result.output
    assert "New pads at 1.5 mm [1]." in result.output
    assert result.output.index("[fusion]") < result.output.index("answer:\nNew pads")  # stages, then tokens
    assert re.search(r"cited:\n  \[1\] \S*docs/a.md \[\d+, \d+\): ", result.output)
    assert asked["messages"][1]["content"].startswith("Sources:")
    total, parts = wait_parts(result.output)  # --stages: the whole wait, the answer one of its parts
    assert list(parts) == [
        "opening the store, indexes and models",
        "retrieval",
        "answer",
        "storing the trace",
    ]
    assert sum(parts.values()) == pytest.approx(total, abs=0.005)


def test_ask_with_no_chat_server_says_what_to_do(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.providers.fake_servers import unused_url

    runner.invoke(app, ["ingest", str(corpus), "--store", str(tmp_path), "--embedder", "hash"])
    monkeypatch.setenv("OLLAMA_HOST", unused_url())
    result = runner.invoke(
        app, ["ask", "brakes", "--store", str(tmp_path), "--embedder", "hash", "--chat", "ollama:x"]
    )
    assert result.exit_code == 4
    assert "ollama serve" in result.output


def test_replay_of_an_unknown_trace_names_it(tmp_path: Path, corpus: Path) -> None:
    runner.invoke(app, ["ingest", str(corpus), "--store", str(tmp_path), "--embedder", "hash"])
    result = runner.invoke(app, ["replay", "nope", "--store", str(tmp_path)])
    assert result.exit_code == 3
    assert "'nope'" in result.output and "replay --list" in result.output


WAITED = re.compile(r"^waited (?P<total>\d+\.\d\d) s in all \((?P<parts>[^)]*)\)$", re.MULTILINE)


def wait_parts(output: str) -> tuple[float, dict[str, float]]:
    """The total and the parts of the ``waited`` line `ask --stages` ends with."""
    found = WAITED.search(output)
    assert found, output
    parts = re.findall(r"([a-z ,-]+?) (\d+\.\d\d) s(?:, |$)", found.group("parts"))
    return float(found.group("total")), {name: float(seconds) for name, seconds in parts}


def test_ask_with_stages_says_how_long_the_whole_question_took(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait counts from the command's start, so opening the store, its indexes and the models is
    in it, not only each stage's own time: on a clock the test moves, 5 s to open and 2 s to search."""
    from types import SimpleNamespace

    import clear_rag.cli.ask as ask
    import clear_rag.session
    from clear_rag.generate.planner import Planner

    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    assert runner.invoke(app, ["ingest", str(corpus), *store]).exit_code == 0
    clock = [100.0]
    monkeypatch.setattr(ask, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    opening, running = clear_rag.session.open_pipeline, Planner.run

    def slow_open(*args: object, **kwargs: object) -> object:
        clock[0] += 5.0
        return opening(*args, **kwargs)  # type: ignore[arg-type]

    def slow_run(self: Planner, *args: object, **kwargs: object) -> object:
        clock[0] += 2.0
        return running(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(clear_rag.session, "open_pipeline", slow_open)
    monkeypatch.setattr(Planner, "run", slow_run)
    asked = runner.invoke(app, ["ask", "disc brake pads", "--no-generate", *store])
    assert asked.exit_code == 0, asked.output
    assert (
        "\nwaited 7.00 s in all (opening the store, indexes and models 5.00 s, retrieval 2.00 s, "
        "storing the trace 0.00 s)\n" in asked.output
    )
    assert asked.output.index("[context]") < asked.output.index("waited ") < asked.output.index("\ntrace ")


def test_the_waited_line_adds_up_what_it_shows() -> None:
    from clear_rag.cli.ask import waited

    parts = [("opening", 0.804), ("retrieval", 0.296), ("answer", 0.1349)]
    # each part rounded to what is shown, and the total their sum: 0.80 + 0.30 + 0.13
    assert waited(parts) == "waited 1.23 s in all (opening 0.80 s, retrieval 0.30 s, answer 0.13 s)"


def test_from_the_console_script_the_wait_includes_loading_clear_rag(tmp_path: Path, corpus: Path) -> None:
    """A person starting `clear-rag ask` waits through Python loading every command module too."""
    import os
    import subprocess
    import sys

    script = Path(sys.executable).with_name("clear-rag")
    if not script.exists():
        pytest.skip(f"{script} is not installed (pip install -e .)")
    store = ["--store", str(tmp_path / "s"), "--embedder", "hash"]
    assert runner.invoke(app, ["ingest", str(corpus), *store]).exit_code == 0
    asked = subprocess.run(
        [str(script), "ask", "disc brake pads", "--no-generate", *store],
        capture_output=True,
        text=True,
        check=False,
        # the developer's own CLEAR_RAG_* settings left out, the support check on its fake as in-process
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("CLEAR_RAG_")},
            "CLEAR_RAG_SUPPORT": "lexical",
        },
    )
    assert asked.returncode == 0, asked.stderr
    total, parts = wait_parts(asked.stdout)
    assert list(parts) == [
        "loading clear-rag",
        "opening the store, indexes and models",
        "retrieval",
        "storing the trace",
    ]
    assert sum(parts.values()) == pytest.approx(total, abs=0.005)
