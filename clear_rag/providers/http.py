"""What the HTTP providers share: one httpx client, errors a person can act on, stream framing.

Every failure of a model server becomes a ``ModelError`` that names the URL and says what to do:
start the server, pull the model, raise the timeout, or which field of the reply was wrong.
httpx is imported here and by the provider modules only.

A streamed reply is bounded here in what one server can do to the process: a line (and an SSE
event) is at most ``MAX_LINE_BYTES``, and text must keep coming (``Pace``). The predecessor read
lines with no bound, so a server sending bytes without a newline grew memory until it ran out. The
answer as a whole is bounded where every chat stream is consumed (``clear_rag.generate.planner``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from clear_rag.errors import ModelError
from clear_rag.providers.base import Message

T = TypeVar("T")

_SHOWN = 300  # characters of a server's own error text quoted in a message
_ERROR_BODY = 64 * 1024  # bytes of an error reply read for its text; the rest is never needed

# The longest line (or SSE event) a streamed reply may hold. A model's reply streams one short line
# per piece of text (about 100 to 300 bytes in Ollama's and the OpenAI format); 1 MiB leaves room for
# any metadata a server adds, while memory for one line stays bounded.
MAX_LINE_BYTES = 1024 * 1024


class HttpProvider:
    """Holds one ``httpx.Client`` for a provider; ``close()`` it, or use the provider in a ``with`` block.

    Subclasses set ``start_hint``: how to start their server, said when nothing answers at the URL.
    ``timeout`` bounds each wait (connecting, each read, and in a streamed reply the wait for the next
    piece of text, see ``Pace``), not a whole answer, so a long answer that keeps streaming never
    times out but a stuck server does; the whole answer has its own deadline in the planner.
    ``timeout_option`` is how a person sets ``timeout`` where the provider was built for them (the
    CLI's ``--timeout``); a timeout message names it, or else this class's ``timeout=`` argument.
    """

    start_hint = "Start the server, or pass base_url= where it listens"
    max_line_bytes = MAX_LINE_BYTES

    def __init__(
        self,
        base_url: str,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        *,
        timeout_option: str | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url={base_url!r} is not an http(s) URL; use one like 'http://127.0.0.1:11434'"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout={timeout!r} is invalid; use a number of seconds above 0, such as 120")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.timeout_option = timeout_option
        self._client = httpx.Client(base_url=self.base_url, timeout=self.timeout, headers=headers)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @contextlib.contextmanager
    def errors(self, path: str) -> Iterator[None]:
        """Turn httpx's transport errors during a call to ``path`` into a ``ModelError``."""
        url = self.url(path)
        try:
            yield
        except httpx.TimeoutException as err:
            # Checked before ConnectError: httpx's ConnectTimeout is a TimeoutException, not a ConnectError.
            raise self.timeout_error(url) from err
        except httpx.ConnectError as err:
            # "[Errno 111] Connection refused" on Linux is errno 61 on macOS; say it the same everywhere.
            reason = "the connection was refused" if "refused" in str(err).lower() else str(err)
            raise ModelError(f"no server answers there ({reason})", path=url, fix=self.start_hint) from err
        except httpx.RemoteProtocolError as err:
            raise ModelError(
                f"the server broke off its reply ({err})",
                path=url,
                fix="Check the server's log; it may have crashed",
            ) from err
        except httpx.HTTPError as err:
            raise ModelError(f"the request failed ({err})", path=url, fix="Check the server's log") from err

    def timeout_error(self, url: str) -> ModelError:
        """The error of a server too slow: "did not answer within 60 s (--timeout)", and how to raise it."""
        option = self.timeout_option
        if option:
            what, raise_it = f"did not answer within {self.timeout:g} s ({option})", f"Raise {option}"
        else:
            what = f"did not answer within timeout={self.timeout:g} s"
            raise_it = f"Pass a larger timeout= to {type(self).__name__}(...)"
        return ModelError(
            what,
            path=url,
            fix=f"{raise_it} (a model's first call loads it into memory, which can take a minute), "
            "or check that the server is not stuck",
        )

    def pace(self) -> Pace:
        """A fresh clock for one streamed reply, allowing ``timeout`` between pieces of text."""
        return Pace(self.timeout)

    def post_json(self, path: str, payload: Mapping[str, object]) -> object:
        """POST ``payload`` and return the decoded JSON reply; errors via ``errors`` and ``check_status``."""
        with self.errors(path):
            response = self._client.post(path, json=payload)
            self.check_status(response, path)
            return decode_json(response.content, url=self.url(path), field="body")

    def get_json(self, path: str) -> object:
        with self.errors(path):
            response = self._client.get(path)
            self.check_status(response, path)
            return decode_json(response.content, url=self.url(path), field="body")

    def check_status(self, response: httpx.Response, path: str) -> None:
        """Raise ``status_error`` for any answer but 2xx, after reading a streamed body for its error text."""
        if response.is_success:
            return
        raise self.status_error(response.status_code, error_text(response), path)

    def status_error(self, status: int, text: str, path: str) -> ModelError:
        """The error for an HTTP ``status`` with the server's ``text``; subclasses know their 404s."""
        return ModelError(
            f"the server answered HTTP {status}: {text}", path=self.url(path), fix="Check the server's log"
        )


def message_dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Chat messages as both Ollama's and the OpenAI API's JSON want them, checked first."""
    if not messages or not all(isinstance(m, Message) for m in messages):
        raise TypeError("stream() takes a non-empty sequence of Message(role, content)")
    return [{"role": m.role, "content": m.content} for m in messages]


def error_text(response: httpx.Response) -> str:
    """The server's own words: ``{"error": "..."}`` (Ollama), ``{"error": {"message": ...}}`` (OpenAI),
    ``{"message": ...}`` (vLLM), else the body as text; cut to a readable length.

    At most the first 64 KiB of a streamed body are read: an error page is short, and one that is
    not must not be read whole into memory only to be cut to 300 characters.
    """
    try:
        raw = response.content
    except httpx.ResponseNotRead:  # a streamed reply
        raw = _head(response, _ERROR_BODY)
    text = raw.decode(response.charset_encoding or "utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text[:_SHOWN] or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        if not isinstance(error, str):
            error = body.get("message")
        if isinstance(error, str):
            return error[:_SHOWN]
    return text[:_SHOWN]


def _head(response: httpx.Response, limit: int) -> bytes:
    """Up to ``limit`` bytes of a streamed body; the rest is left unread (closing drops it)."""
    head = bytearray()
    for chunk in response.iter_bytes():
        head += chunk
        if len(head) >= limit:
            break
    return bytes(head[:limit])


def read_body(response: httpx.Response, *, url: str, limit: int = MAX_LINE_BYTES) -> bytes:
    """A streamed reply's whole body, or a ``ModelError`` once it passes ``limit`` bytes."""
    body = _head(response, limit + 1)
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


def malformed(url: str, field: str, expected: str, got: object) -> ModelError:
    shown = repr(got)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return ModelError(
        f"the reply is malformed: expected {expected}, got {shown}",
        path=url,
        field=field,
        fix="Check that this URL is the right kind of model server and that it is up to date",
    )


def decode_json(raw: bytes | str, *, url: str, field: str) -> object:
    try:
        decoded: object = json.loads(raw)
    except ValueError as err:
        raise malformed(url, field, "JSON", raw) from err
    return decoded


def pluck(obj: object, path: Sequence[str | int], kind: type[T], *, url: str) -> T:
    """``obj[path[0]][path[1]]...`` checked to be a ``kind``; a ``ModelError`` names the field that is not."""
    field = ""
    for step in path:
        field += f"[{step}]" if isinstance(step, int) else (f".{step}" if field else step)
        if isinstance(step, int):
            if not (isinstance(obj, list) and -len(obj) <= step < len(obj)):
                raise malformed(url, field, f"a list with an item [{step}]", obj)
            obj = obj[step]
        else:
            if not (isinstance(obj, dict) and step in obj):
                raise malformed(url, field, "an object with this field", obj)
            obj = obj[step]
    if not isinstance(obj, kind):
        raise malformed(url, field, f"a {kind.__name__}", obj)
    return obj


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
