"""The app's tests run it for real on 127.0.0.1 (``clear_rag.web.serving``) and read its stream."""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from clear_rag.web.serving import StreamEvent, read_events, serving

SseEvent = StreamEvent

__all__ = ["SseEvent", "serving", "sse_events"]


def sse_events(response: httpx.Response) -> Iterator[StreamEvent]:
    """The events of a streamed ``httpx`` response as they arrive."""
    return read_events(response.iter_lines())
