"""A streamed reply read within bounds: its lines, NDJSON objects and SSE events as they arrive.

What one server can do to the process is bounded here: a line (and an SSE event) is at most
``MAX_LINE_BYTES``, and text must keep coming (``Pace``). The predecessor read lines with no bound, so
a server sending bytes without a newline grew memory until it ran out. The answer as a whole is bounded
where every chat stream is consumed (``clear_rag.generate.planner``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx

from clear_rag.errors import ModelError
from clear_rag.providers.replies import decode_json, malformed

# The longest line (or SSE event) a streamed reply may hold. A model's reply streams one short line
# per piece of text (about 100 to 300 bytes in Ollama's and the OpenAI format); 1 MiB leaves room for
# any metadata a server adds, while memory for one line stays bounded.
MAX_LINE_BYTES = 1024 * 1024


def read_head(response: httpx.Response, limit: int) -> bytes:
    """Up to ``limit`` bytes of a streamed body; the rest is left unread (closing drops it)."""
    head = bytearray()
    for chunk in response.iter_bytes():
        head += chunk
        if len(head) >= limit:
            break
    return bytes(head[:limit])


def read_body(response: httpx.Response, *, url: str, limit: int = MAX_LINE_BYTES) -> bytes:
    """A streamed reply's whole body, or a ``ModelError`` once it passes ``limit`` bytes."""
    body = read_head(response, limit + 1)
    if len(body) > limit:
        raise _too_long(url, "a body", limit)
    return body


def _too_long(url: str, what: str, limit: int) -> ModelError:
    return ModelError(
        f"the reply holds {what} of more than {limit:,} bytes, where a model server streams one short "
        "line per piece of text; it was not read further",
        path=url,
        fix="Check that this URL is a model server's, and the server's log",
    )


class Pace:
    """The clock of one streamed reply: the time since its last piece of text.

    httpx's read timeout only bounds the wait for *some* bytes, so a server trickling a byte at a time,
    or sending keep-alive lines and no text, would hold a stream open forever, and no deadline of the
    consumer's could fire while no piece arrives. ``check`` is called after every chunk of bytes and
    raises httpx's ``ReadTimeout`` (turned into the provider's timeout message) once ``seconds`` have
    gone by since the stream began or since ``piece`` was last called. A provider calls ``piece`` when
    the consumer asks for the next piece, so the time the consumer takes is not counted against the
    server.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last = time.monotonic()

    def piece(self) -> None:
        """Text arrived: the clock starts again."""
        self._last = time.monotonic()

    def check(self) -> None:
        if time.monotonic() - self._last > self.seconds:
            raise httpx.ReadTimeout(f"no text for {self.seconds:g} s although bytes kept coming")


def iter_lines(
    response: httpx.Response, *, url: str, pace: Pace | None = None, limit: int = MAX_LINE_BYTES
) -> Iterator[str]:
    """The reply's lines as they arrive, split at ``\\n`` only, a trailing ``\\r`` dropped.

    Not ``response.iter_lines()``: that splits with ``str.splitlines``, which also breaks at U+0085,
    U+2028 and U+2029, characters that a JSON string may hold unescaped (llama.cpp writes them raw), so a
    streamed piece holding one would arrive as two halves of invalid JSON. Splitting bytes at ``\\n`` is
    safe in UTF-8, where that byte never occurs inside a multi-byte character.

    A line longer than ``limit`` bytes is a ``ModelError`` as soon as it passes the limit, ended or
    not; only the new bytes of each chunk are searched for ``\\n``, so a long line costs linear time.
    ``pace``, when given, is checked after every chunk.
    """
    pending = bytearray()
    for chunk in response.iter_bytes():
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            pending += chunk[start:end]
            if len(pending) > limit:
                raise _too_long(url, "a line", limit)
            yield _decoded(pending)
            pending.clear()
            start = end + 1
        pending += chunk[start:]
        if len(pending) > limit:
            raise _too_long(url, "a line", limit)
        if pace is not None:  # after the chunk's lines, so text that came in it counts
            pace.check()
    if pending:
        yield _decoded(pending)


def _decoded(line: bytearray) -> str:
    return line.removesuffix(b"\r").decode("utf-8", errors="replace")


def iter_ndjson(
    response: httpx.Response, *, url: str, pace: Pace | None = None, limit: int = MAX_LINE_BYTES
) -> Iterator[dict[str, Any]]:
    """Newline-delimited JSON objects (Ollama's streaming format), each yielded as soon as its line ends."""
    for line in iter_lines(response, url=url, pace=pace, limit=limit):
        if line.strip():
            yield _object(decode_json(line, url=url, field="line"), url, "line")


def iter_sse_data(
    response: httpx.Response, *, url: str, pace: Pace | None = None, limit: int = MAX_LINE_BYTES
) -> Iterator[str]:
    """The ``data`` of each Server-Sent Event, its ``data:`` lines joined by ``\\n`` (the SSE rule).

    Comment lines (``:``) and the other fields (``event``, ``id``, ``retry``) are skipped: no
    OpenAI-compatible server sends anything the caller needs in them. An event is bounded like a line:
    ``data:`` lines without the blank line that ends an event would otherwise pile up without end.
    """
    data: list[str] = []
    size = 0
    for line in iter_lines(response, url=url, pace=pace, limit=limit):
        if not line:
            if data:
                yield "\n".join(data)
            data, size = [], 0
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            size += len(data[-1]) + 1
            if size > limit:
                raise _too_long(url, "an event", limit)
    if data:  # a last event without its blank line still counts
        yield "\n".join(data)


def _object(value: object, url: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise malformed(url, field, "a JSON object", value)
    return value
