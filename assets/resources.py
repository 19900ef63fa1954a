"""Resources chosen per environment: which embedder, and where stores and result files go.

The embedder and the chat models are names, as the CLI spells them: ``minilm`` and ``smollm2`` (the
defaults, real models shipped in packages; the sample question is answered by ``extractive``) or
``hash`` and ``echo`` (the deterministic fakes, for tests and quick runs). Result files go to the
project's data folder, ``.clear-rag/results`` (or ``.clear-rag/results-hash`` for the fakes), never
over the committed ``results/`` that the README and the site render: publishing a run there is a
deliberate ``--results-dir results``.
"""

from __future__ import annotations

import functools
from pathlib import Path

from dagster import ConfigurableResource

from clear_rag import environ
from clear_rag.eval.stores import stores_root
from clear_rag.providers.base import ChatModel, Embedder
from clear_rag.providers.select import (
    DEFAULT_CHAT,
    DEFAULT_EMBEDDER,
    DEFAULT_WRITER,
    make_chat,
    make_embedder,
)
from clear_rag.results import files
from clear_rag.store.sqlite import DEFAULT_DIR

RESULTS = "results"  # committed: what the README and the site render
RUN_RESULTS = ".clear-rag/results"
FAKE_RESULTS = ".clear-rag/results-hash"
BASELINE_FAKE = str(files.BASELINE_FAKE)


def results_dir_for(embedder: str) -> str:
    return FAKE_RESULTS if embedder == "hash" else RUN_RESULTS


def committed_for(suite: str, embedder: str) -> Path:
    """The committed result file a run of ``suite`` on ``embedder`` should reproduce."""
    return Path(BASELINE_FAKE) if embedder == "hash" else Path(RESULTS) / f"{suite}.json"


def reranker_for(embedder: str) -> str:
    """The reranker of the rows that rerank when none is named: the fake with the fake embedder, and
    otherwise none, so that each row's config says (rows whose cross-encoder is not here are skipped)."""
    return "lexical" if embedder == "hash" else ""


def support_for(embedder: str) -> str:
    """The support check's model that goes with an embedder: the fake with the fake, else the config's."""
    from clear_rag.config import PipelineConfig

    return "lexical" if embedder == "hash" else PipelineConfig().support_model


def chat_for(embedder: str) -> str:
    """The chat model that goes with an embedder when none is named: the fake with the fake."""
    return "echo" if embedder == "hash" else DEFAULT_WRITER


def answerer_for(embedder: str) -> str:
    """What answers the sample question when no chat model is named: the extractive answerer, picking
    with the fake reranker beside the fake embedder. It needs no compiled runtime (llama-cpp-python
    is an opt-in install), so `make run` answers on a fresh clone."""
    return "extractive:lexical" if embedder == "hash" else DEFAULT_CHAT


@functools.cache
def _embedder(name: str) -> Embedder:
    # Loaded once per process: under the in-process executor every step of a run shares one model.
    return make_embedder(name)


# ConfigurableResource is generic in a value type that a pythonic resource (its own value) never sets.
class EmbedderResource(ConfigurableResource):  # type: ignore[type-arg]
    """The embedder the vector indexes and the dense rows use."""

    name: str = DEFAULT_EMBEDDER

    def get(self) -> Embedder:
        return _embedder(self.name)


@functools.cache
def _chat(name: str) -> ChatModel:
    return make_chat(name)


class ChatResource(ConfigurableResource):  # type: ignore[type-arg]
    """The chat model of the rows that expand the query or use HyDE. They ask it through the suite's
    generation cache, so its weights load only on a miss (``clear-rag ablate --regenerate`` asks anew)."""

    name: str = DEFAULT_WRITER

    def get(self, name: str | None = None) -> ChatModel:
        """The chat model ``name`` (a suite row's own), or this resource's."""
        return _chat(name or self.name)


class PathsResource(ConfigurableResource):  # type: ignore[type-arg]
    """Where stores live (shared with ``clear-rag ablate``, so both see the same stores and write the
    same ``store`` field in result rows), where result files go, and the fake-provider baseline."""

    store_root: str = str(stores_root(Path(environ.text(environ.STORE) or DEFAULT_DIR)))
    results_dir: str = RUN_RESULTS
    baseline: str = BASELINE_FAKE
