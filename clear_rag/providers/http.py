"""What the HTTP providers share: one httpx client, and errors a person can act on.

Every failure of a model server becomes a ``ModelError`` that names the URL and says what to do:
start the server, pull the model, raise the timeout, or which field of the reply was wrong
(``clear_rag.providers.replies``). httpx is imported here and by the provider modules only. A streamed
reply is read within bounds by ``clear_rag.providers.streaming``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Self

import httpx

from clear_rag.errors import ModelError
from clear_rag.providers.base import Message
from clear_rag.providers.replies import decode_json
from clear_rag.providers.streaming import MAX_LINE_BYTES, Pace, read_head

_SHOWN = 300  # characters of a server's own error text quoted in a message
_ERROR_BODY = 64 * 1024  # bytes of an error reply read for its text; the rest is never needed


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
        raw = read_head(response, _ERROR_BODY)
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
