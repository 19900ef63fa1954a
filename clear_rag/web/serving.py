"""Running the app under uvicorn, and reading its event stream.

``make_server`` builds the one uvicorn server of the app, for ``clear-rag serve`` and the tests alike:
h11 with a deadline on each request's headers (``HEADER_TIMEOUT_S``). ``serving`` starts it in a
thread on a free loopback port and returns once the socket listens (waiting on readiness, not a fixed
delay, so it holds on a loaded machine); ``read_events`` parses a ``text/event-stream`` response into
events as they arrive, skipping the heartbeat comments.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from clear_rag.errors import ClearRagError

READY_WITHIN_S = 60.0  # a generous bound on start-up; the wait ends as soon as the server listens
HEADER_TIMEOUT_S = 10.0  # a browser sends a request's headers in one packet


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers, counted from the connection
    (or, on a kept-alive one, from the next request's first byte) to the end of its headers; past it
    the client gets a 408 in one JSON line and the connection is closed.

    uvicorn bounds only the idle time between requests (``timeout_keep_alive``): five connections
    trickling a header one byte every 2 s were each held for as long as they went on. h11 rather than
    httptools because h11 is uvicorn's own requirement, so the server is the same wherever it runs.
    """

    header_timeout_s = HEADER_TIMEOUT_S
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of the next request on a kept-alive connection
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:  # its headers are in: the request is the app's now
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        """Answer and close. No request is in flight (the deadline runs only while none is), so the
        response is written as bytes: h11 sends a response only to a request it has read."""
        self._deadline = None
        why = ClearRagError(
            f"did not arrive within {self.header_timeout_s:g} s; the connection is closed",
            field="the request's headers",
            fix="Send the request line and headers at once, as a browser or an HTTP library does",
        )
        body = json.dumps({"error": str(why)}).encode()
        head = (
            "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(head.encode() + body)
        self.transport.close()


def make_server(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, header_timeout_s: float = HEADER_TIMEOUT_S
) -> uvicorn.Server:
    """The uvicorn server of ``app`` (not yet started), with ``header_timeout_s`` on each request's
    headers; the body's bounds are the app's own (``clear_rag.web.guard``)."""
    protocol = type("HeaderDeadline", (HeaderDeadline,), {"header_timeout_s": header_timeout_s})
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, http=protocol, log_level="warning"))


@contextmanager
def serving(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, header_timeout_s: float = HEADER_TIMEOUT_S
) -> Iterator[str]:
    """Run ``app`` until the block ends; yields its base URL (a free port when ``port`` is 0)."""
    server = make_server(app, host=host, port=port, header_timeout_s=header_timeout_s)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + READY_WITHIN_S
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server stopped before it listened")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not listen within {READY_WITHIN_S:g} s")
        thread.join(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=READY_WITHIN_S)


@dataclass(frozen=True, slots=True)
class StreamEvent:
    kind: str
    data: dict[str, Any]


def read_events(lines: Iterable[str]) -> Iterator[StreamEvent]:
    """The events of a ``text/event-stream`` body, given its lines (``response.iter_lines()``)."""
    kind, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield StreamEvent(kind, json.loads("\n".join(data)))
            kind, data = "message", list[str]()
        elif line.startswith(":"):
            continue  # a heartbeat
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
