"""Answers that must cite: what the ``cite`` chat option asks of a model, in each model's own terms.

``stream(messages, cite=N)`` asks for an answer whose every sentence ends with the numbers of sources
it was given (``[1]`` to ``[N]``), or else the refusal, exactly. A model that can be held to a shape
is held to this one: llama.cpp by a GBNF grammar (``grammar``), Ollama and OpenAI-compatible servers
by a JSON schema (``schema``), whose reply ``answer_from_json`` turns back into cited text. Whatever
the model, the planner reads the answer against the constraint afterwards
(``clear_rag.generate.constrain``), so a model or server that ignores the shape is reported, not
trusted.

The grammar's answer: one to ``MAX_SENTENCES`` sentences joined by a space, each a body of at most
``MAX_BODY`` characters free of brackets, line breaks and the end marks ``.``, ``!`` and ``?``, that
starts with no lower-case letter, space or opening punctuation; then its end mark, a space and one to
``MAX_CITES`` markers: ``Pads wear. [2] They squeal when worn. [2][3]``.
The schema holds a reply to as many sentences, each with one to ``MAX_CITES`` numbers of ``1..N``;
a sentence's words are the model's own, and ``answer_from_json`` writes it in the grammar's form.

Why this shape (each choice made after trying the other on SmolLM2-135M):

* the mark comes before the markers, as in the extractive answerer's answers. With the markers before
  it (``Pads wear [2].``) the model still writes its ``.`` first, and the grammar could only go on
  from there as a decimal ("bridges.2018-3/7 5:49am");
* no ``.`` inside a body, so no decimals (``3.5``) or abbreviations (``e.g.``): allowing ``.`` before
  a digit let the model continue "graduated in 2019." as "2019.35", a number it made up. A decimal
  comes out as ``3. [1] 5 mg``: wrong to read, but visibly so;
* a sentence starts upper-case (or with a digit or a quote), which is where the sentence splitter
  (``clear_rag.generate.sentences``) starts one, so the model's sentences are the ones the support
  check and the page read; and a new sentence cannot open with ``(``, which the model otherwise
  writes after a marker to echo the sources' ``[1] (doc)`` headers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from typing import Any

# generate.prompt.REFUSAL, the one answer that cites nothing; a test pins that the two agree (providers
# depend on no part of the pipeline, so it is not imported).
REFUSAL = "I can't answer that from the documents I have."
OPTION = "cite"
MAX_SENTENCES = 3  # "Be brief", as the prompt says and the extractive answerer does; max_tokens bounds it too
MAX_BODY = 300  # characters before the end mark, so a sentence and its markers stay one splitter span
MAX_CITES = 3


def cite_sources(value: object) -> int:
    """The ``cite`` option's value checked: the number of sources, an integer of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"option cite={value!r} is invalid; pass the number of numbered sources the answer may cite, "
            "an integer of at least 1"
        )
    return value


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _numbers(sources: int) -> str:
    """``"1" | "2" | ... | "N"``: every source number written out, so no other number can be sampled."""
    return " | ".join(f'"{n}"' for n in range(1, cite_sources(sources) + 1))


def grammar(sources: int) -> str:
    """The GBNF grammar (llama.cpp's ``grammars/README.md``) of an answer citing ``sources`` sources.

    Every repetition is bounded, so every answer it allows ends; llama.cpp expands a bounded
    repetition into one rule per step, well under its limit of 2,000.
    """
    return "\n".join(
        [
            f'root ::= refusal | sentence (" " sentence){{0,{MAX_SENTENCES - 1}}}',
            f"refusal ::= {_literal(REFUSAL)}",
            f'sentence ::= first body{{0,{MAX_BODY - 1}}} [.!?] " " cite{{1,{MAX_CITES}}}',
            r"first ::= [^\x00-\x20\x7f\[\](){}.,;:!?a-z]",
            r"body ::= [^\x00-\x1f\x7f\[\].!?]",
            f'cite ::= "[" ({_numbers(sources)}) "]"',
            "",
        ]
    )


def schema(sources: int) -> dict[str, Any]:
    """The JSON schema of an answer citing ``sources`` sources, for Ollama's ``format`` and the OpenAI
    ``response_format``: ``{"answer": [{"text": ..., "sources": [n, ...]}, ...]}`` or
    ``{"answer": REFUSAL}``. The root is an object, as OpenAI's strict mode wants; each number is an
    ``enum`` of ``1..N``."""
    sentence = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_BODY + 1},
            "sources": {
                "type": "array",
                "items": {"type": "integer", "enum": list(range(1, cite_sources(sources) + 1))},
                "minItems": 1,
                "maxItems": MAX_CITES,
            },
        },
        "required": ["text", "sources"],
        "additionalProperties": False,
    }
    sentences = {"type": "array", "items": sentence, "minItems": 1, "maxItems": MAX_SENTENCES}
    return {
        "type": "object",
        "properties": {"answer": {"anyOf": [sentences, {"type": "string", "enum": [REFUSAL]}]}},
        "required": ["answer"],
        "additionalProperties": False,
    }


_OPENING = re.compile(r'\s*\{\s*"answer"\s*:\s*\[')
_BETWEEN = re.compile(r"\s*,?\s*")
# A reply to the schema is at most MAX_SENTENCES objects of a few hundred characters: about 1 KB.
# Past this it is not one, and is passed on as it comes, so the planner's bounds see it.
MAX_JSON_CHARS = 64 * 1024


def answer_from_json(pieces: Iterator[str]) -> Generator[str, None, None]:
    """The text of a reply to ``schema``, as it streams: ``"Pads wear. [2] They squeal. [2][3]"``.

    Each sentence is handed on as soon as its object is complete, so the answer streams a sentence at
    a time; a piece that completes none is handed on as ``""``, so whoever bounds the reply's time
    still sees it arrive. A sentence's text has its whitespace collapsed and gets a ``.`` if it ends
    without a mark; its numbers are written as given, in range or not, so the planner's check reports
    one out of range (and ``prompt.citations`` ignores it) instead of this reader hiding it.
    ``{"answer": REFUSAL}`` is the refusal.

    A reply in neither shape is handed on as written, from where its readable sentences end, so the
    check reports it: at once when it does not open with ``{`` (a server that ignored the schema) or
    grows past ``MAX_JSON_CHARS``, else at its end (a reply cut off by ``max_tokens``). Closing this
    generator closes ``pieces``, so the model is asked for no more.
    """
    try:
        yield from _read(pieces)
    finally:
        close = getattr(pieces, "close", None)
        if callable(close):
            close()


def _read(pieces: Iterator[str]) -> Generator[str, None, None]:
    decoder = json.JSONDecoder()
    buffer, at, read, said = "", -1, 0, False  # at: where the next sentence starts, once the list opened
    raw = False  # passing the reply on as it comes
    for piece in pieces:
        if raw:
            yield piece
            continue
        buffer += piece
        told = []
        while True:
            if at < 0:
                opened = _OPENING.match(buffer)
                if opened is None:
                    break
                at = opened.end()
            start = _BETWEEN.match(buffer, at)
            try:
                item, end = decoder.raw_decode(buffer, start.end() if start else at)
            except json.JSONDecodeError:
                break  # the object is not complete yet, or the list has ended
            if not isinstance(item, dict):
                break
            text = _sentence(item)
            if text:
                told.append((" " if said else "") + text)
                said = True
            at, read = end, read + 1
        opening = buffer.lstrip()
        if (opening and not opening.startswith("{")) or len(buffer) > MAX_JSON_CHARS:
            raw = True
            told.append(_rest(buffer, at, read, said))
        yield "".join(told)
    if raw:
        return
    try:
        whole = json.loads(buffer)
    except json.JSONDecodeError:
        whole = None
    answer = whole.get("answer") if isinstance(whole, dict) else None
    if isinstance(answer, str) and not read:
        yield answer
    elif isinstance(answer, list) and all(isinstance(item, dict) for item in answer):
        for item in answer[read:]:
            text = _sentence(item)
            if text:
                yield (" " if said else "") + text
                said = True
    else:
        yield _rest(buffer, at, read, said)


def _rest(buffer: str, at: int, read: int, said: bool) -> str:
    """What follows the sentences read so far, as written, after a space if anything was said."""
    rest = buffer[at:].lstrip(" \t\r\n,").rstrip() if read else buffer.strip()
    return (" " if said and rest else "") + rest


def _sentence(item: dict[str, Any]) -> str:
    """One sentence object as text, ``"Pads wear. [2]"``; numbers that are not integers are left out."""
    text = " ".join(str(item.get("text", "")).split())
    numbers = item.get("sources")
    listed = numbers if isinstance(numbers, list) else []
    cited = [n for n in listed if isinstance(n, int) and not isinstance(n, bool)]
    if text and text[-1] not in ".!?":
        text += "."
    markers = "".join(f"[{n}]" for n in cited)
    return f"{text} {markers}".strip()
