"""Generation faults through `clear-rag ask`, against a real HTTP server on 127.0.0.1 speaking Ollama's API:
a server that is not there, fails, streams garbage, never stops, sends giant tokens or stalls.

Each case asserts the exact message and exit code, that the store is as it was (same documents, no trace
stored for a question that failed), and that a cut answer is said to be incomplete, never reported as
complete (no citations, no "trace ... stored" line).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from clear_rag.cli import app
from clear_rag.cli.ask import INCOMPLETE
from clear_rag.store import Store
from tests.providers.fake_servers import FakeServer, Reply, json_reply, ndjson_reply, unused_url
from tests.reliability.catalogue import Case, case, expect

runner = CliRunner()
QUESTION = "when do disc brake pads need replacing?"
RAISE_TIMEOUT = (
    "Raise --timeout (a model's first call loads it into memory, which can take a minute), "
    "or check that the server is not stuck"
)

UNREACHABLE = case(
    "generation-server-unreachable",
    area="generation",
    fault="`ask --chat ollama:MODEL` with nothing listening at OLLAMA_HOST",
    message="error: {url}/api/chat: no server answers there (the connection was refused). "
    "Start Ollama with `ollama serve`, or set OLLAMA_HOST to where it listens",
    exit_code=4,
)
HTTP_500 = case(
    "generation-server-http-500",
    area="generation",
    fault="the chat server answers HTTP 500 with an error of its own",
    message="error: {url}/api/chat: Ollama answered HTTP 500: llama runner process has terminated. "
    "Check that 'tiny' is the right kind of model for this call, and Ollama's log",
    exit_code=4,
)
MALFORMED = case(
    "generation-malformed-json-line",
    area="generation",
    fault="the chat server streams a line that is not JSON",
    message="error: {url}/api/chat: line: the reply is malformed: expected JSON, got 'Pads <b>wear</b>'. "
    "Check that this URL is the right kind of model server and that it is up to date",
    exit_code=4,
)
FAILED_MID_ANSWER = case(
    "generation-failed-mid-answer",
    area="generation",
    fault='the chat server streams a token, then `{"error": "out of memory"}`',
    message="error: {url}/api/chat: Ollama failed mid-answer: out of memory. Check Ollama's log",
    exit_code=4,
)
CUT_OFF = case(
    "generation-stream-cut-off",
    area="generation",
    fault="the chat stream ends without its `done: true` line (a server that crashed)",
    message="error: {url}/api/chat: the answer stopped before a line with done: true. "
    "Check Ollama's log; it may have crashed",
    exit_code=4,
)
ENDLESS = case(
    "generation-endless-stream",
    area="generation",
    fault="the chat server streams a token every 10 ms without end (`answer_deadline_s = 0.5` in --config)",
    message="error: ollama/tiny: answer_deadline_s=0.5: the answer was not finished within 0.5 s and was "
    "stopped. Raise answer_deadline_s in the pipeline config if the model is slow but working; one that "
    "never stops ignores max_tokens",
    exit_code=4,
)
GIANT_TOKENS = case(
    "generation-giant-tokens",
    area="generation",
    fault="the chat server streams 1 MB tokens without end",
    message="error: ollama/tiny: max_answer_chars=20000: the answer grew past 20,000 characters and was "
    "stopped there. Raise max_answer_chars in the pipeline config if replies this long are wanted; "
    "otherwise the model or its server ignores max_tokens",
    exit_code=4,
)
ENDLESS_LINE = case(
    "generation-line-without-end",
    area="generation",
    fault="the chat server streams bytes without ever sending a newline",
    message="error: {url}/api/chat: the reply holds a line of more than 1,048,576 bytes, where a model "
    "server streams one short line per piece of text; it was not read further. Check that this URL "
    "is a model server's, and the server's log",
    exit_code=4,
)
STALLED = case(
    "generation-server-stalls",
    area="generation",
    fault="the chat server sends one token, then nothing (`ask --timeout 0.3`)",
    message=f"error: {{url}}/api/chat: did not answer within 0.3 s (--timeout). {RAISE_TIMEOUT}",
    exit_code=4,
)
TRICKLE = case(
    "generation-keepalive-without-text",
    area="generation",
    fault="the chat server sends a blank line every 20 ms and no text (`ask --timeout 0.3`)",
    message=f"error: {{url}}/api/chat: did not answer within 0.3 s (--timeout). {RAISE_TIMEOUT}",
    exit_code=4,
)
BAD_TIMEOUT = case(
    "generation-timeout-not-positive",
    area="generation",
    fault="`ask --timeout 0`",
    message="error: --timeout=0.0: is not a number of seconds above 0. Use a number of seconds such as 120",
    exit_code=2,
)


def token_line(text: str) -> bytes:
    return json.dumps({"message": {"role": "assistant", "content": text}, "done": False}).encode() + b"\n"


@pytest.fixture
def store(tmp_path: Path, corpus: Path) -> Path:
    """The toy corpus ingested with the hash embedder, as a user's small store."""
    where = tmp_path / "store"
    built = runner.invoke(app, ["ingest", str(corpus), "--store", str(where), "--embedder", "hash"])
    assert built.exit_code == 0, built.output
    return where


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        yield fake


def snapshot(store: Path) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """What a failed question must leave as it was: the documents and the stored traces."""
    with Store(store) as opened:
        return tuple(opened.records()), tuple(opened.traces())


def ask(store: Path, *extra: str) -> Result:
    args = ["ask", QUESTION, "--store", str(store), "--embedder", "hash", "--chat", "ollama:tiny", *extra]
    return runner.invoke(app, args)


def failed_cleanly(store: Path, entry: Case, *extra: str, incomplete: bool = False, **places: str) -> Result:
    """Ask, and check the exit code, the message, the store left as it was, and no answer passed off
    as complete: no citations, no stored trace, and the notice when some tokens were printed."""
    before = snapshot(store)
    result = ask(store, *extra)
    assert result.exit_code == entry.exit_code, result.output
    expect(result.output, entry, **places)
    assert snapshot(store) == before
    assert "cited:" not in result.output and "stored;" not in result.output
    assert (INCOMPLETE in result.stdout.splitlines()) == incomplete, result.stdout
    return result


def test_an_unreachable_server(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = unused_url()
    monkeypatch.setenv("OLLAMA_HOST", url)
    failed_cleanly(store, UNREACHABLE, url=url)


def test_a_server_answering_http_500(store: Path, server: FakeServer) -> None:
    server.route("POST", "/api/chat", json_reply({"error": "llama runner process has terminated"}, 500))
    failed_cleanly(store, HTTP_500, url=server.url)


def test_a_line_that_is_not_json(store: Path, server: FakeServer) -> None:
    server.route(
        "POST", "/api/chat", Reply(chunks=[b"Pads <b>wear</b>\n"], content_type="application/x-ndjson")
    )
    failed_cleanly(store, MALFORMED, url=server.url)


def test_a_failure_mid_answer(store: Path, server: FakeServer) -> None:
    lines = [{"message": {"content": "Pads"}, "done": False}, {"error": "out of memory"}]
    server.route("POST", "/api/chat", ndjson_reply(lines))
    failed_cleanly(store, FAILED_MID_ANSWER, incomplete=True, url=server.url)


def test_a_stream_cut_off(store: Path, server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply([{"message": {"content": "Pads"}, "done": False}]))
    failed_cleanly(store, CUT_OFF, incomplete=True, url=server.url)


def test_an_endless_stream_meets_the_deadline(store: Path, server: FakeServer, tmp_path: Path) -> None:
    config = tmp_path / "deadline.toml"
    config.write_text("answer_deadline_s = 0.5\n", encoding="utf-8")
    server.route(
        "POST",
        "/api/chat",
        Reply(endless=token_line("pad "), chunk_delay=0.01, content_type="application/x-ndjson"),
    )
    failed_cleanly(store, ENDLESS, "--config", str(config), incomplete=True)
    assert server.hung_up.wait(5)  # the stream was closed: the server was asked for no more tokens


def test_giant_tokens_meet_the_size_cap(store: Path, server: FakeServer) -> None:
    server.route(
        "POST", "/api/chat", Reply(endless=token_line("x" * 1_000_000), content_type="application/x-ndjson")
    )
    result = failed_cleanly(store, GIANT_TOKENS)  # the first token is already too big: nothing printed
    assert len(result.output) < 2_000
    assert server.hung_up.wait(5)


def test_a_line_without_end_meets_the_line_cap(store: Path, server: FakeServer) -> None:
    server.route("POST", "/api/chat", Reply(endless=b"x" * 65536, content_type="application/x-ndjson"))
    failed_cleanly(store, ENDLESS_LINE, url=server.url)
    assert server.hung_up.wait(5)


def test_a_stalled_server_meets_the_timeout_option(store: Path, server: FakeServer) -> None:
    release = threading.Event()
    stalled = Reply(
        chunks=[token_line("Pads"), token_line(" wear")], content_type="application/x-ndjson", gate=release
    )
    server.route("POST", "/api/chat", stalled)
    try:
        failed_cleanly(store, STALLED, "--timeout", "0.3", incomplete=True, url=server.url)
    finally:
        release.set()


def test_keepalives_without_text_meet_the_timeout_option(store: Path, server: FakeServer) -> None:
    server.route(
        "POST", "/api/chat", Reply(endless=b"\n", chunk_delay=0.02, content_type="application/x-ndjson")
    )
    failed_cleanly(store, TRICKLE, "--timeout", "0.3", url=server.url)


def test_a_timeout_that_is_not_positive(store: Path) -> None:
    failed_cleanly(store, BAD_TIMEOUT, "--timeout", "0")


def test_the_timeout_option_reaches_the_provider_and_a_normal_answer_is_whole(
    store: Path, server: FakeServer
) -> None:
    """The bounds cost a normal answer nothing: it streams, is cited and stored as before."""
    lines = [token_line(p) for p in ("New pads", " at 1.5 mm [1].")]
    done = json.dumps({"message": {"content": ""}, "done": True}).encode() + b"\n"
    server.route("POST", "/api/chat", Reply(chunks=[*lines, done], content_type="application/x-ndjson"))
    server.route(
        "GET", "/api/tags", json_reply({"models": [{"name": "tiny:latest", "digest": "0123456789ab"}]})
    )
    result = ask(store, "--timeout", "5")
    assert result.exit_code == 0, result.output
    assert "New pads at 1.5 mm [1]." in result.output and "cited:" in result.output
    assert INCOMPLETE not in result.output
    assert len(snapshot(store)[1]) == 1
