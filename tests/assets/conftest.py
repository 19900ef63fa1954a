"""A tiny project for the Dagster assets: three documents, three questions, a four-row suite.

Two chunkings (size 8 for three rows, size 32 for one), keyword-only, dense-only and hybrid rows, so
every asset of the graph has partitions and the whole graph materializes in seconds on the fake
embedder. Tests run with the project as the working directory, as ``dagster dev`` and ``clear-rag
ablate`` do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from dagster import Definitions

from assets.definitions import build_definitions
from assets.resources import EmbedderResource, PathsResource
from clear_rag.providers.base import Embedder, EmbedKind
from clear_rag.providers.fake import HashEmbedder
from tests.toy import GOLDEN, suite_yaml

# What building the definitions warns about, named so that exactly these are let through: the
# observable source assets and DataVersionsByPartition are beta, and Dagster itself reads a deprecated
# property when it turns a source asset into an assets definition.
BETA = "ignore::dagster.BetaWarning"
SOURCE_ASSET_DEPRECATION = "ignore:Property `OpDefinition.version` is deprecated:DeprecationWarning"
DAGSTER_WARNINGS = (BETA, SOURCE_ASSET_DEPRECATION)


SUITE = suite_yaml(
    "toy",
    "{name: dense, set: {retrievers: [vector]}}",
    "{name: bm25, set: {retrievers: [keyword]}}",
    "{name: hybrid}",
    "{name: bigger chunks, set: {chunking: {size: 32}}}",
)
ROWS = ["bigger chunks", "bm25", "dense", "hybrid"]
CHUNKINGS = ["fixed-32-overlap1", "fixed-8-overlap1"]
PARSED = ["a.md@markdown-it", "b.txt@plain", "sub/c.html@html"]  # each file and its parser backend


class CountingEmbedder:
    """The fake embedder (same name, version and vectors), counting the document texts it embeds."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.name, self.version, self.dim = self.inner.name, self.inner.version, self.inner.dim
        self.documents: list[str] = []

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind == "document":
            self.documents.extend(texts)
        return self.inner.embed(texts, kind)


COUNTING = CountingEmbedder()


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny project in ``tmp_path`` (documents from the shared ``corpus`` fixture), as the cwd."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    suites = tmp_path / "golden" / "suites"
    suites.mkdir(parents=True)
    (suites / "toy.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


@pytest.fixture
def counting() -> Iterator[CountingEmbedder]:
    COUNTING.documents.clear()
    yield COUNTING
    COUNTING.documents.clear()


class CountingEmbedderResource(EmbedderResource):
    """The embedder resource a test swaps in: every asset gets the one counting fake."""

    def get(self) -> Embedder:
        return COUNTING


def toy_definitions(results_dir: str = "dagster-results", suites: Sequence[str] = ("toy",)) -> Definitions:
    return build_definitions(
        suites,
        embedder="hash",
        paths=PathsResource(results_dir=results_dir),
        embedder_resource=CountingEmbedderResource(name="hash"),
    )
