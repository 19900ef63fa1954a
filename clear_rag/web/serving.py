"""Running the app in a thread and reading its event stream: what tests and benchmarks use.

``serving`` starts uvicorn on a free loopback port and returns once the socket listens (waiting on
readiness, not a fixed delay, so it holds on a loaded machine); ``read_events`` parses a
``text/event-stream`` response into events as they arrive, skipping the heartbeat comments.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette

READY_WITHIN_S = 60.0  # a generous bound on start-up; the wait ends as soon as the server listens


@contextmanager
def serving(app: Starlette, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run ``app`` until the block ends; yields its base URL (a free port when ``port`` is 0)."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
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
