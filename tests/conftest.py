"""Shared fixtures: a small corpus on disk and a chunker that needs no model package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clear_rag import environ
from clear_rag.chunk.base import Chunker
from clear_rag.chunk.factory import make_chunker
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.ingest import ingest
from clear_rag.providers.base import Embedder
from clear_rag.providers.fake import HashEmbedder, LexicalReranker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.session import open_pipeline, sync_indexes
from clear_rag.store import Store
from clear_rag.tokens import RegexTokenizer
from tests.toy import CORPUS


@pytest.fixture(autouse=True)
def hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No variable clear-rag reads (``clear_rag.environ.VARIABLES``) reaches a test from the shell
    that started it: a developer's ``CLEAR_RAG_STORE`` or ``CLEAR_RAG_RERANKER`` changes nothing here.
    Then every command a test runs checks answers with the lexical fake, as tests run every other model
    on a fake; a test of the shipped support model names it (``--support scifact-minilm-l6``)."""
    for variable in environ.VARIABLES:
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv(environ.SUPPORT.name, "lexical")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Three documents in three formats under ``tmp_path / "docs"``."""
    root = tmp_path / "docs"
    for name, text in CORPUS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def chunker() -> Chunker:
    return make_chunker("structural", size=32, tokenizer=RegexTokenizer())


TOY_CHUNKING = ChunkingConfig(size=32)  # the `chunker` fixture's chunking, as a config names it


def toy_config(**changes: Any) -> PipelineConfig:
    """A config over the toy store: its chunking, and whatever a test changes."""
    return PipelineConfig(chunking=TOY_CHUNKING, **changes)


@pytest.fixture
def toy_store(tmp_path: Path, corpus: Path, chunker: Chunker) -> Iterator[Store]:
    """The toy corpus ingested with its keyword (plain and Porter) and hash-vector indexes built,
    as `clear-rag ingest` leaves a store."""
    opened = Store(tmp_path / "s", root=tmp_path)
    ingest(opened, [corpus], chunker)
    sync_indexes(opened, [toy_config(), toy_config(stem=True)], HashEmbedder(dim=64))
    yield opened
    opened.close()


def toy_pipeline(store: Store, *, embedder: Embedder | None = None, **changes: Any) -> Pipeline:
    """The one factory over the toy store, on the fakes (the lexical reranker where it reranks)."""
    return open_pipeline(
        store,
        toy_config(**changes),
        embedder=embedder or HashEmbedder(dim=64),
        reranker=LexicalReranker(),
        tokenizer=RegexTokenizer(),
    )
