"""What the answer-side browser tests share: a chat model that answers as scripted (echoing when
nothing is queued) and counts its calls, the server's models with the support check on (the lexical
fake), and the context a question is given, read off a Retrieve only request."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from clear_rag.generate.support import SupportChecker
from clear_rag.providers.base import ChatModel, Message
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker, ScriptedChatModel
from clear_rag.web.runner import Models
from tests.web.browser import WAIT_MS
from tests.web.conftest import sse_events

# Every word of it is in the first sentence of docs/b.txt, "Tyre pressure for road bikes is 80 to
# 100 psi.": that passage looks like it answers it.
ANSWERED = "tyre pressure for road bikes"
# No word of it is in any document: no passage looks like it answers it.
UNANSWERED = "zebra quantum lasagna"


class CountingChat(ScriptedChatModel):
    """The scripted model, answering as the echo model does when nothing is queued, and counting every
    ``stream()`` call (the scripted model's ``history`` records only the calls it answered)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        self.calls += 1
        if self.pending:
            return super().stream(messages, **options)
        return EchoChatModel().stream(messages, **options)


def checked_models(chat: ChatModel) -> Models:
    """The fakes with the support check on: a ``SupportChecker`` over the lexical reranker."""
    return Models(
        HashEmbedder(dim=64),
        chat,
        lambda name: LexicalReranker(),
        {},
        lambda name: SupportChecker(LexicalReranker()),
    )


@contextmanager
def serve_checked(folder: Path, chat: ChatModel) -> Iterator[tuple[str, Any]]:
    """The page's store (``build_store``) in ``folder`` served with the support check on and ``chat``
    answering, over a results folder with no graded answers: its base URL and the store."""
    from clear_rag.web.app import create_app
    from tests.web.conftest import serving
    from tests.web.test_page import build_store, page_config  # test_page imports this module

    store = build_store(folder)
    (folder / "results").mkdir()
    app = create_app(store, page_config(), checked_models(chat), results_dir=folder / "results")
    try:
        with serving(app) as url:
            yield url, store
    finally:
        store.close()


def context_of(base: str, question: str) -> dict[str, Any]:
    """The ``context`` event of ``question`` asked with Retrieve only (no model is asked)."""
    found: dict[str, Any] = {}
    body = {"question": question, "generate": False}
    with httpx.stream("POST", f"{base}/api/chat", json=body, timeout=WAIT_MS / 1000) as response:
        for event in sse_events(response):
            if event.kind == "context":
                found = event.data
            assert event.kind != "error", event.data
    assert found, f"no context event for {question!r}"
    return found


def numbers(context: dict[str, Any]) -> dict[str, int]:
    """Each packed document's passage number, as the model saw it: ``{"docs/b.txt": 1, ...}``."""
    return {p["doc_id"]: p["number"] for p in context["passages"]}


def miscited(base: str) -> tuple[str, int, int]:
    """An answer to ``ANSWERED`` whose first sentence is passage [b]'s (docs/b.txt) and cites it, and
    whose second is copied from passage [l] (docs/lights.txt) but cites [b]: ``(answer, b, l)``."""
    found = numbers(context_of(base, ANSWERED))
    b, lights = found["docs/b.txt"], found["docs/lights.txt"]
    answer = (
        f"Tyre pressure for road bikes is 80 to 100 psi [{b}]. "
        f"A front light of 400 lumen is enough for road riding at night [{b}]."
    )
    return answer, b, lights
