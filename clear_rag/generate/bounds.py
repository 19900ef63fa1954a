"""Bounds on every chat reply: an overall deadline and a maximum size, whatever the model."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence

from clear_rag.errors import ModelError
from clear_rag.providers.base import ChatModel
from clear_rag.types import Message


class BoundedChat:
    """A chat model whose every reply ends within a deadline and a size, or fails saying which.

    The predecessor read a model's stream with no bound: a server sending 1 MB tokens filled 4 GB of
    output in a minute, and one that never stopped held a question forever. Wrapped here, where every
    stream is consumed, the bounds hold for the embedded GGUF model, the HTTP models and the fakes
    alike. A reply that passes one is stopped, its stream closed so that no more tokens are asked
    for (an HTTP model hangs up), and a ``ModelError`` names the limit and the setting that raises it.
    A piece that would pass ``max_chars`` is not handed on, so what was handed on stays within it.

    The deadline runs from the ``stream`` call and is checked as each piece arrives; a model that
    sends nothing at all is bounded by its own timeout (an HTTP provider's ``timeout``), since a
    stream blocked inside the model cannot be interrupted from here.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        deadline_s: float,
        max_chars: int,
        reply: str = "the reply",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not deadline_s > 0:
            raise ValueError(f"deadline_s={deadline_s!r} is invalid; use a number of seconds above 0")
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(f"max_chars={max_chars!r} is invalid; use a positive number of characters")
        self.chat = chat
        self.deadline_s = deadline_s
        self.max_chars = max_chars
        self.reply = reply
        self._clock = clock

    @property
    def name(self) -> str:
        return self.chat.name

    @property
    def version(self) -> str:
        return self.chat.version

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        # The clock starts before the call: a model that loads its weights there spends the budget too.
        started = self._clock()
        return self._bounded(self.chat.stream(messages, **options), started)

    def _bounded(self, pieces: Iterator[str], started: float) -> Generator[str, None, None]:
        size = 0
        try:
            for piece in pieces:
                size += len(piece)
                if size > self.max_chars:
                    raise ModelError(
                        f"{self.reply} grew past {self.max_chars:,} characters and was stopped there",
                        path=self.chat.name,
                        field="max_answer_chars",
                        value=self.max_chars,
                        fix="Raise max_answer_chars in the pipeline config if replies this long are "
                        "wanted; otherwise the model or its server ignores max_tokens",
                    )
                if self._clock() - started > self.deadline_s:
                    raise ModelError(
                        f"{self.reply} was not finished within {self.deadline_s:g} s and was stopped",
                        path=self.chat.name,
                        field="answer_deadline_s",
                        value=self.deadline_s,
                        fix="Raise answer_deadline_s in the pipeline config if the model is slow but "
                        "working; one that never stops ignores max_tokens",
                    )
                yield piece
        finally:
            close = getattr(pieces, "close", None)
            if callable(close):
                close()  # a generator stops here: the model is asked for no more tokens
