from __future__ import annotations

import pytest

from clear_rag.providers import ChatModel, Embedder, Message, Reranker, describe
from clear_rag.providers.fake import HashEmbedder, LexicalReranker, ScriptedChatModel


def test_the_fakes_satisfy_the_protocols() -> None:
    # The annotations are the test: mypy --strict rejects a fake that drifts from its protocol.
    embedder: Embedder = HashEmbedder()
    reranker: Reranker = LexicalReranker()
    chat: ChatModel = ScriptedChatModel()
    assert [describe(p) for p in (embedder, reranker, chat)] == [
        "hash-embedder-256@sha256-bow-1",
        "lexical-reranker@overlap-1",
        "scripted-chat@1",
    ]


def test_message_is_frozen_and_checks_its_role() -> None:
    message = Message("user", "How worn may a brake pad get?")
    assert (message.role, message.content) == ("user", "How worn may a brake pad get?")
    with pytest.raises(AttributeError):
        message.content = "changed"  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"role='tool'.*system"):
        Message("tool", "x")  # type: ignore[arg-type]
