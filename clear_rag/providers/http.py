"""What the HTTP providers share: one httpx client, errors a person can act on, stream framing.

Every failure of a model server becomes a ``ModelError`` that names the URL and says what to do:
start the server, pull the model, raise the timeout, or which field of the reply was wrong.
httpx is imported here and by the provider modules only.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from clear_rag.errors import ModelError
from clear_rag.providers.base import Message

T = TypeVar("T")

_SHOWN = 300  # characters of a server's own error text quoted in a message


class HttpProvider:
    """Holds one ``httpx.Client`` for a provider; ``close()`` it, or use the provider in a ``with`` block.

    Subclasses set ``start_hint``: how to start their server, said when nothing answers at the URL.
    ``timeout`` bounds each wait (connecting, and each read of a streamed reply), not a whole answer,
    so a long answer that keeps streaming never times out but a stuck server does.
    """

    start_hint = "Start the server, or pass base_url= where it listens"

    def __init__(self, base_url: str, timeout: float, headers: Mapping[str, str] | None = None) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url={base_url!r} is not an http(s) URL; use one like 'http://127.0.0.1:11434'"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout={timeout!r} is invalid; use a number of seconds above 0, such as 120")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
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
            raise ModelError(
                f"no reply within timeout={self.timeout:g} s ({type(err).__name__})",
                path=url,
                fix=f"Pass a larger timeout= to {type(self).__name__}(...) (a model's first call loads it "
                "into memory, which can take a minute), or check that the server is not stuck",
            ) from err
        except httpx.ConnectError as err:
            raise ModelError(f"no server answers there ({err})", path=url, fix=self.start_hint) from err
        except httpx.RemoteProtocolError as err:
            raise ModelError(
                f"the server broke off its reply ({err})",
                path=url,
                fix="Check the server's log; it may have crashed",
            ) from err
        except httpx.HTTPError as err:
            raise ModelError(f"the request failed ({err})", path=url, fix="Check the server's log") from err

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
        response.read()
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
    ``{"message": ...}`` (vLLM), else the body as text; cut to a readable length."""
    text = response.text.strip()
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


def malformed(url: str, field: str, expected: str, got: object) -> ModelError:
    shown = repr(got)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return ModelError(
        f"the reply is malformed: expected {expected}, got {shown}",
        path=url,
        field=field,
        fix="Check that base_url points at the right kind of server and that it is up to date",
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


def iter_lines(response: httpx.Response) -> Iterator[str]:
    """The reply's lines as they arrive, split at ``\\n`` only, a trailing ``\\r`` dropped.

    Not ``response.iter_lines()``: that splits with ``str.splitlines``, which also breaks at U+0085,
    U+2028 and U+2029, characters that a JSON string may hold unescaped (llama.cpp writes them raw), so a
    streamed piece holding one would arrive as two halves of invalid JSON. Splitting bytes at ``\\n`` is
    safe in UTF-8, where that byte never occurs inside a multi-byte character.
    """
    pending = b""
    for chunk in response.iter_bytes():
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.removesuffix(b"\r").decode("utf-8", errors="replace")
    if pending:
        yield pending.removesuffix(b"\r").decode("utf-8", errors="replace")


def iter_ndjson(response: httpx.Response, *, url: str) -> Iterator[dict[str, Any]]:
    """Newline-delimited JSON objects (Ollama's streaming format), each yielded as soon as its line ends."""
    for line in iter_lines(response):
        if line.strip():
            yield _object(decode_json(line, url=url, field="line"), url, "line")


def iter_sse_data(response: httpx.Response) -> Iterator[str]:
    """The ``data`` of each Server-Sent Event, its ``data:`` lines joined by ``\\n`` (the SSE rule).

    Comment lines (``:``) and the other fields (``event``, ``id``, ``retry``) are skipped: no
    OpenAI-compatible server sends anything the caller needs in them.
    """
    data: list[str] = []
    for line in iter_lines(response):
        if not line:
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:  # a last event without its blank line still counts
        yield "\n".join(data)


def _object(value: object, url: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise malformed(url, field, "a JSON object", value)
    return value
