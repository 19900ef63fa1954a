"""hub.pull and hub.locate against a local http.server on 127.0.0.1, via the base-URL override."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from clear_rag.errors import ModelError
from clear_rag.providers import hub
from clear_rag.providers.cross_encoder import pulled_reranker
from clear_rag.providers.hub import HubFile, HubModel
from tests.providers.tiny_models import build_model_dir

WEIGHTS = b"\x00\x01weights" * 1000
VOCAB = b'{"tokens": ["a", "b"]}'
REGISTRY = {
    "tiny": HubModel(
        repo="someone/tiny",
        revision="main",
        files=(
            HubFile("onnx/model_int8.onnx", "model_int8.onnx", sha256=hashlib.sha256(WEIGHTS).hexdigest()),
            HubFile("tokenizer.json", "tokenizer.json"),  # no checksum known: accepted as received
        ),
    )
}


class FileServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.files: dict[str, bytes] = {
            "/someone/tiny/resolve/main/onnx/model_int8.onnx": WEIGHTS,
            "/someone/tiny/resolve/main/tokenizer.json": VOCAB,
        }
        self.redirects: dict[str, str] = {}
        self.hang: set[str] = set()  # paths answered with silence, to test the timeout
        self.requests: list[str] = []
        self.release = threading.Event()  # lets a deliberately slow answer finish at teardown

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FileServer

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        if self.path in self.server.hang:
            self.server.release.wait(timeout=5)
            return
        if self.path in self.server.redirects:
            self.send_response(302)  # the hub answers resolve/ with a redirect to its CDN
            self.send_header("Location", self.server.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.server.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Silence the per-request log line."""


@pytest.fixture
def server() -> Iterator[FileServer]:
    httpd = FileServer()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _pull(
    server: FileServer, cache: Path, progress: hub.Progress | None = None, timeout: float = 30.0
) -> Path:
    return hub.pull("tiny", cache, base_url=server.url, registry=REGISTRY, progress=progress, timeout=timeout)


def test_pull_downloads_every_file_and_records_a_manifest(server: FileServer, tmp_path: Path) -> None:
    seen: list[tuple[str, int, int | None]] = []
    folder = _pull(server, tmp_path, progress=lambda *call: seen.append(call))
    assert folder == tmp_path / "tiny"
    assert (folder / "model_int8.onnx").read_bytes() == WEIGHTS
    assert (folder / "tokenizer.json").read_bytes() == VOCAB
    assert seen[-1] == ("tokenizer.json", len(VOCAB), len(VOCAB))
    assert ("model_int8.onnx", len(WEIGHTS), len(WEIGHTS)) in seen
    manifest = json.loads((folder / hub.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["repo"] == "someone/tiny" and manifest["revision"] == "main"
    assert manifest["files"]["tokenizer.json"] == {
        "url": f"{server.url}/someone/tiny/resolve/main/tokenizer.json",
        "size": len(VOCAB),
        "sha256": hashlib.sha256(VOCAB).hexdigest(),
    }
    assert hub.pulled_version(folder) == f"main:{hashlib.sha256(WEIGHTS).hexdigest()[:12]}"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [hub.MANIFEST, "model_int8.onnx", "tokenizer.json"]
    )


def test_files_already_present_are_not_fetched_again(server: FileServer, tmp_path: Path) -> None:
    _pull(server, tmp_path)
    assert len(server.requests) == 2
    seen: list[tuple[str, int, int | None]] = []
    _pull(server, tmp_path, progress=lambda *call: seen.append(call))
    assert len(server.requests) == 2
    assert seen == [
        ("model_int8.onnx", len(WEIGHTS), len(WEIGHTS)),
        ("tokenizer.json", len(VOCAB), len(VOCAB)),
    ]


def test_a_present_file_with_the_wrong_checksum_is_fetched_again(server: FileServer, tmp_path: Path) -> None:
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "model_int8.onnx").write_bytes(b"half a download")
    _pull(server, tmp_path)
    assert (tmp_path / "tiny" / "model_int8.onnx").read_bytes() == WEIGHTS


def test_a_checksum_mismatch_is_an_error_and_leaves_nothing_behind(
    server: FileServer, tmp_path: Path
) -> None:
    server.files["/someone/tiny/resolve/main/onnx/model_int8.onnx"] = b"tampered" + WEIGHTS[8:]
    with pytest.raises(ModelError, match=f"expected {REGISTRY['tiny'].files[0].sha256} for model_int8.onnx"):
        _pull(server, tmp_path)
    assert list((tmp_path / "tiny").iterdir()) == []


def test_a_size_mismatch_is_an_error(server: FileServer, tmp_path: Path) -> None:
    registry = {
        "tiny": HubModel("someone/tiny", "main", (HubFile("tokenizer.json", "tokenizer.json", size=3),))
    }
    with pytest.raises(ModelError, match=f"gave {len(VOCAB)} bytes where tokenizer.json has 3"):
        hub.pull("tiny", tmp_path, base_url=server.url, registry=registry)
    assert not (tmp_path / "tiny" / "tokenizer.json").exists()


def test_redirects_are_followed(server: FileServer, tmp_path: Path) -> None:
    server.redirects["/someone/tiny/resolve/main/tokenizer.json"] = "/cdn/abc123"
    server.files["/cdn/abc123"] = VOCAB
    _pull(server, tmp_path)
    assert (tmp_path / "tiny" / "tokenizer.json").read_bytes() == VOCAB
    assert "/cdn/abc123" in server.requests


def test_an_http_error_names_the_url_and_the_code(server: FileServer, tmp_path: Path) -> None:
    del server.files["/someone/tiny/resolve/main/tokenizer.json"]
    with pytest.raises(ModelError, match=r"tokenizer\.json'?: answered HTTP 404"):
        _pull(server, tmp_path)
    assert not (tmp_path / "tiny" / "tokenizer.json").exists()


def test_a_server_that_does_not_answer_times_out(server: FileServer, tmp_path: Path) -> None:
    server.hang.add("/someone/tiny/resolve/main/tokenizer.json")
    with pytest.raises(ModelError, match=r"tokenizer\.json'?: could not be downloaded \(.*timed out"):
        _pull(server, tmp_path, timeout=0.3)
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == ["model_int8.onnx"]


def test_the_base_url_comes_from_the_argument_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(hub.HUB_URL_ENV, raising=False)
    assert hub.hub_url() == "https://huggingface.co"
    monkeypatch.setenv(hub.HUB_URL_ENV, "https://mirror.example/hf/")
    assert hub.hub_url() == "https://mirror.example/hf"
    assert hub.hub_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    with pytest.raises(ModelError, match="is not an http"):
        hub.hub_url("file:///etc")


def test_pull_uses_the_environment_override(
    server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(hub.HUB_URL_ENV, server.url)
    hub.pull("tiny", tmp_path, registry=REGISTRY)
    assert len(server.requests) == 2


def test_locate_finds_a_pulled_model_and_never_downloads(server: FileServer, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"not been downloaded.*clear-rag models pull tiny") as caught:
        hub.locate("tiny", tmp_path, registry=REGISTRY)
    assert str(tmp_path / "tiny") in str(caught.value)
    folder = _pull(server, tmp_path)
    assert hub.locate("tiny", tmp_path, registry=REGISTRY) == folder
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"tokenizer\.json missing"):
        hub.locate("tiny", tmp_path, registry=REGISTRY)
    assert len(server.requests) == 2


def test_unknown_names_list_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"model='nope'.*Choose one of: ms-marco-minilm-l6"):
        hub.locate("nope", tmp_path)
    with pytest.raises(ModelError, match="model='nope'"):
        hub.pull("nope", tmp_path, base_url="http://127.0.0.1:1")


def test_the_default_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.default_cache_dir() == tmp_path / "xdg" / "clear-rag" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hub.default_cache_dir() == tmp_path / ".cache" / "clear-rag" / "models"


def test_the_default_reranker_entry_pulls_and_loads(server: FileServer, tmp_path: Path) -> None:
    """The real registry entry, served locally: what `clear-rag models pull` then `ask --rerank` do."""
    tiny = build_model_dir(tmp_path / "source", "model_quint8_avx2.onnx")
    entry = hub.KNOWN_MODELS[hub.DEFAULT_RERANKER]
    for file in entry.files:
        path = f"/{entry.repo}/resolve/{entry.revision}/{file.remote}"
        server.files[path] = (tiny / file.local).read_bytes()
    hub.pull(hub.DEFAULT_RERANKER, tmp_path / "cache", base_url=server.url)
    reranker = pulled_reranker(cache_dir=tmp_path / "cache")
    assert reranker.name == hub.DEFAULT_RERANKER and reranker.version.startswith("main:")
    logits = reranker.score("disc brake pads", ["tyre pressure", "new disc brake pads"])
    assert int(np.argmax(logits)) == 1


def test_a_non_positive_timeout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        hub.pull("tiny", tmp_path, registry=REGISTRY, timeout=0)


def test_cli_pull_then_list_then_select(
    server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from clear_rag.cli import app
    from clear_rag.providers.select import make_reranker

    tiny = build_model_dir(tmp_path / "source", "model_quint8_avx2.onnx")
    entry = hub.KNOWN_MODELS[hub.DEFAULT_RERANKER]
    for file in entry.files:
        server.files[f"/{entry.repo}/resolve/{entry.revision}/{file.remote}"] = (
            tiny / file.local
        ).read_bytes()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLEAR_RAG_HUB_URL", server.url)
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list"])
    assert f"not pulled (clear-rag models pull {hub.DEFAULT_RERANKER})" in listed.output
    pulled = runner.invoke(app, ["models", "pull", hub.DEFAULT_RERANKER])
    assert pulled.exit_code == 0, pulled.output
    assert "pulled: " in runner.invoke(app, ["models", "list"]).output
    reranker = make_reranker(hub.DEFAULT_RERANKER)
    assert int(np.argmax(reranker.score("disc brake pads", ["tyre pressure", "new disc brake pads"]))) == 1
