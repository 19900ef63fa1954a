"""A stored trace as the events its question sent: what the page replays, with the code that draws a
live answer (the history of the chat, and the traces behind a result row)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from clear_rag.generate.planner import stage_event
from clear_rag.types import Trace


def replay_events(trace: Trace) -> list[dict[str, Any]]:
    """The events a live question sent, rebuilt from its stored trace: what the page replays.

    The context's passages are not stored apart from the context text, so the ``context`` event of a
    replay carries the text, its token count and the chunks packed (the ``context`` stage); the
    answer arrives as one ``token`` event.
    """
    searched = trace.phrasings[0] if trace.phrasings else trace.query
    events: list[dict[str, Any]] = [
        {
            "event": "query",
            "data": {
                "question": trace.query,
                "searched": searched,
                "phrasings": list(trace.phrasings[1:]),
                "steps": trace.steps,
            },
        }
    ]
    events += [{"event": "stage", "data": stage_event(stage)} for stage in trace.stages]
    packed = next((stage for stage in trace.stages if stage.name == "context"), None)
    detail: Mapping[str, Any] = packed.detail if packed is not None else {}
    events.append(
        {
            "event": "context",
            "data": {
                "text": trace.context,
                "tokens": detail.get("tokens", 0),
                "budget_tokens": detail.get("budget_tokens", 0),
                "chunk_ids": [c.chunk_id for c in packed.candidates] if packed is not None else [],
            },
        }
    )
    if trace.answer:
        events.append({"event": "token", "data": {"text": trace.answer}})
        citations = [dataclasses.asdict(c) for c in trace.citations]
        events.append({"event": "citations", "data": {"citations": citations}})
    events.append({"event": "done", "data": {"trace_id": trace.id, "replayed": True}})
    return events
