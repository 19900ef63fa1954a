"""Real HTTP servers on 127.0.0.1 that answer with scripted replies, for testing the HTTP providers.

A ``FakeServer`` listens on a free port in a background thread and speaks HTTP/1.1 with chunked
replies, so a client sees each scripted chunk arrive on its own, as from a model producing tokens. It
records every request it receives. Every wait in it is bounded, and ``stop()`` (or leaving its ``with``
block) hangs up on open connections so that shutting down never waits for a client.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

GATE_WAIT = 2.0  # longest a reply waits on its gate; a passing test opens it at once
HANG_UP_WAIT = 3.0  # longest a reply waits for the client to close the connection


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    """What to answer: a status, a content type and the body in chunks, with the timing to send them."""

    status: int = 200
    chunks: Sequence[bytes] = ()
    content_type: str = "application/json"
    delay: float = 0.0  # before the status line: a server that is slow to answer at all
    chunk_delay: float = 0.0  # before each chunk after the first: a model producing tokens
    gate: threading.Event | None = None  # the last chunk waits until the test sets this
    hang_up_after: int | None = None  # after this many chunks, wait for the client to close; send no more
    endless: bytes | None = None  # after the chunks, this one again and again until the client hangs up
    sent_last: threading.Event = field(default_factory=threading.Event)


Responder = Reply | Callable[[Seen], Reply]


def json_reply(body: object, status: int = 200) -> Reply:
    return Reply(status=status, chunks=[json.dumps(body).encode()])


def ndjson_reply(lines: Sequence[object], **timing: Any) -> Reply:
    """One JSON object per line, one line per chunk (Ollama's streaming format); raw UTF-8, unescaped."""
    chunks = [json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines]
    return Reply(chunks=chunks, content_type="application/x-ndjson", **timing)


def sse_reply(events: Sequence[object], **timing: Any) -> Reply:
    """One ``data:`` event per chunk; a str is sent as it is (``"[DONE]"``), anything else as JSON."""
    chunks = [
        f"data: {e if isinstance(e, str) else json.dumps(e, ensure_ascii=False)}\n\n".encode() for e in events
    ]
    return Reply(chunks=chunks, content_type="text/event-stream", **timing)


def text_reply(text: str, status: int) -> Reply:
    return Reply(status=status, chunks=[text.encode()], content_type="text/plain")


def unused_url() -> str:
    """The URL of a 127.0.0.1 port that nothing listens on: bound by the OS, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class FakeServer:
    """A scripted HTTP server: ``route(method, path, *responders)``, then point a client at ``url``.

    A route's responders answer its requests in order, the last one repeating. A route nobody scripted
    answers 404 ``404 page not found``, as Go's router (and so Ollama) does.
    """

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.hung_up = threading.Event()  # set when a hang_up_after reply saw the client close
        self.errors: list[BaseException] = []  # writes that failed because a client left early
        self.stopping = threading.Event()
        self._routes: dict[tuple[str, str], list[Responder]] = {}
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02})
        self._thread.start()

    def route(self, method: str, path: str, *responders: Responder) -> None:
        with self._lock:
            self._routes[(method, path)] = list(responders)

    def seen(self, path: str) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def respond(self, request: Seen) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self._routes.get((request.method, request.path))
            if not queue:
                return text_reply("404 page not found", 404)
            responder = queue.pop(0) if len(queue) > 1 else queue[0]
        return responder(request) if callable(responder) else responder

    def track(self, conn: socket.socket, open_: bool) -> None:
        with self._lock:
            (self._connections.add if open_ else self._connections.discard)(conn)

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        with self._lock:
            # A handler waiting for a kept-alive client's next request would otherwise block server_close.
            for conn in self._connections:
                with contextlib.suppress(OSError):  # already closed by the client
                    conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-reply is what some tests do on purpose; keep it off stderr.
        error = sys.exc_info()[1]
        if error is not None:
            self.fake.errors.append(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked replies and kept-alive connections, like a real server
    disable_nagle_algorithm = True  # else each small chunk can wait ~40 ms for a delayed ACK
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake.track(self.connection, True)

    def finish(self) -> None:
        self.server.fake.track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        reply = fake.respond(Seen(self.command, self.path, dict(self.headers.items()), body))
        if reply.delay and fake.stopping.wait(reply.delay):
            self.close_connection = True
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, chunk in enumerate(reply.chunks):
            if index == reply.hang_up_after:
                self._await_hang_up()
                return
            if index and reply.chunk_delay and fake.stopping.wait(reply.chunk_delay):
                return
            if index == len(reply.chunks) - 1:
                if reply.gate is not None:
                    reply.gate.wait(GATE_WAIT)
                reply.sent_last.set()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if reply.endless is not None:
            self._send_forever(reply.endless, reply.chunk_delay)
            return
        self.wfile.write(b"0\r\n\r\n")

    def _send_forever(self, chunk: bytes, delay: float) -> None:
        """Send ``chunk`` until the client hangs up (a write fails) or the server stops: a server that
        streams without end, as one whose model never stops would."""
        self.close_connection = True
        fake = self.server.fake
        while not (delay and fake.stopping.wait(delay)) and not fake.stopping.is_set():
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            except OSError:
                fake.hung_up.set()
                return

    def _await_hang_up(self) -> None:
        """Wait until the client closes the connection: a read then returns no bytes."""
        self.close_connection = True
        self.connection.settimeout(0.02)
        deadline = time.monotonic() + HANG_UP_WAIT
        while time.monotonic() < deadline and not self.server.fake.stopping.is_set():
            try:
                if self.connection.recv(1) == b"":
                    self.server.fake.hung_up.set()
                    return
            except TimeoutError:
                continue
            except OSError:  # a reset is a hang-up too
                self.server.fake.hung_up.set()
                return
