"""Shared fixtures: a small corpus on disk and a chunker that needs no model package."""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.chunk.base import Chunker
from clear_rag.chunk.factory import make_chunker
from clear_rag.tokens import RegexTokenizer
from tests.toy import CORPUS


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
