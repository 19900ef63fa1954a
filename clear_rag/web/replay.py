"""A stored trace as the events its question sent: what the page replays, with the code that draws a
live answer (the history of the chat, and the traces behind a result row)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from clear_rag.generate.events import retrieval_dict, stage_event
from clear_rag.generate.prompt import passage_texts
from clear_rag.generate.verdicts import judge
from clear_rag.types import Trace


def replay_events(trace: Trace) -> list[dict[str, Any]]:
    """The events a live question sent, rebuilt from its stored trace: what the page replays.

    The ``context`` event carries the passages (their texts cut back out of the stored context), the
    messages and what the support check knew before the answer; the answer arrives as one ``token``
    event, then ``citations`` and ``support`` as a live question sends them. A trace stored before
    passages were kept has none, and its context event only the text and the chunks packed.
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
    texts = passage_texts(trace.context, trace.passages)
    # the verdicts taken again from the stored evidence by the same rules: what replay shows is what
    # the rules say of the trace today, with no model
    support = judge(trace.support, trace.answer) if trace.support is not None else None
    context: dict[str, Any] = {
        "text": trace.context,
        "tokens": detail.get("tokens", 0),
        "budget_tokens": detail.get("budget_tokens", 0),
        "passages": [
            {**dataclasses.asdict(p), "text": t} for p, t in zip(trace.passages, texts, strict=True)
        ],
        "chunk_ids": [c.chunk_id for c in packed.candidates] if packed is not None else [],
        "messages": [dataclasses.asdict(m) for m in trace.messages],
    }
    if support is not None:
        context["retrieval"] = retrieval_dict(support)
    events.append({"event": "context", "data": context})
    if trace.answer:
        events.append({"event": "token", "data": {"text": trace.answer}})
        citations = [dataclasses.asdict(c) for c in trace.citations]
        answered = trace.steps.get("answered by")  # kept since the extractive answerer came
        by = dict(answered) if isinstance(answered, Mapping) else {}
        events.append({"event": "citations", "data": {"citations": citations, **by}})
        if support is not None and support.line:
            events.append(
                {"event": "support", "data": {**dataclasses.asdict(support), "answer": trace.answer}}
            )
    events.append({"event": "done", "data": {"trace_id": trace.id, "replayed": True}})
    return events
