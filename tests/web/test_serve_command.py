"""``clear-rag serve``: bound to 127.0.0.1 unless told otherwise, with a warning when told otherwise, and
answering only the names it was started for."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from clear_rag.cli import app

runner = CliRunner()


@pytest.fixture
def ingested(tmp_path: Path, corpus: Path) -> Path:
    store = tmp_path / "s"
    result = runner.invoke(app, ["ingest", str(corpus), "--store", str(store), "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    return store


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Where the server would listen; it does not start (its run is replaced)."""
    seen: list[tuple[str, int]] = []

    def run(self: uvicorn.Server, sockets: object = None) -> None:
        seen.append((self.config.host, self.config.port))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return seen


def test_serve_listens_on_loopback_by_default(ingested: Path, bound: list[tuple[str, int]]) -> None:
    result = runner.invoke(app, ["serve", "--store", str(ingested), "--embedder", "hash", "--chat", "echo"])
    assert result.exit_code == 0, result.output
    assert bound == [("127.0.0.1", 8000)]
    assert "warning" not in result.output
    assert f"serving {ingested} on http://127.0.0.1:8000/" in result.output


def test_serve_warns_when_told_to_listen_beyond_this_machine(
    ingested: Path, bound: list[tuple[str, int]]
) -> None:
    args = ["serve", "--store", str(ingested), "--embedder", "hash", "--chat", "echo", "--host", "0.0.0.0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert bound == [("0.0.0.0", 8000)]
    assert "warning: listening on 0.0.0.0: anyone who can reach this address can read your documents" in (
        result.output
    )


def test_serve_without_a_store_says_to_ingest(tmp_path: Path, bound: list[tuple[str, int]]) -> None:
    result = runner.invoke(app, ["serve", "--store", str(tmp_path / "none"), "--embedder", "hash"])
    assert result.exit_code == 3
    assert "holds no store" in result.output and "clear-rag ingest PATH" in result.output
    assert bound == []


def test_serve_answers_only_the_names_it_was_started_for(
    ingested: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's guard takes its names from --host: 127.0.0.1 and localhost, and the address given."""
    from starlette.applications import Starlette

    apps: list[Starlette] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: apps.append(self.config.app))
    args = ["serve", "--store", str(ingested), "--embedder", "hash", "--chat", "echo", "--host", "192.0.2.7"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "It answers requests addressed to 127.0.0.1, localhost, 192.0.2.7 only" in result.output
    (guard,) = apps[0].user_middleware
    assert guard.kwargs["hosts"] == ("127.0.0.1", "localhost", "192.0.2.7")
