"""A real server on 127.0.0.1 for the app's tests: uvicorn in a thread, waited on until it listens."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

READY_WITHIN_S = 60.0  # a generous bound on start-up under load; the wait ends as soon as it listens


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Run ``app`` on a free loopback port until the block ends; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + READY_WITHIN_S
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the test server stopped before it listened")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the test server did not listen within {READY_WITHIN_S} s")
        thread.join(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=READY_WITHIN_S)


@dataclass(frozen=True, slots=True)
class SseEvent:
    kind: str
    data: dict[str, Any]


def sse_events(response: httpx.Response) -> Iterator[SseEvent]:
    """The events of a ``text/event-stream`` response as they arrive (heartbeat comments skipped)."""
    kind, data = "message", list[str]()
    for line in response.iter_lines():
        if not line:
            if data:
                yield SseEvent(kind, json.loads("\n".join(data)))
            kind, data = "message", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
