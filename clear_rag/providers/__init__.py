"""Model providers: the interfaces (``base``) and deterministic fakes (``fake``) for tests."""

from __future__ import annotations

from clear_rag.providers.base import (
    EMBED_KINDS,
    ChatModel,
    Embedder,
    EmbedKind,
    Message,
    Named,
    Reranker,
    Role,
    describe,
)

__all__ = [
    "EMBED_KINDS",
    "ChatModel",
    "EmbedKind",
    "Embedder",
    "Message",
    "Named",
    "Reranker",
    "Role",
    "describe",
]
