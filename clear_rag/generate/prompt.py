"""The answer prompt and its citations: numbered passages in, ``[n]`` markers out, spans back.

The model sees each packed passage under a number and is told to cite by number; the numbers map back
to passages, and passages are exact spans of their documents, so every citation ends as a highlight in
the source. A model that cites a number it was not given has that marker ignored, not trusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from clear_rag.providers.base import Message
from clear_rag.retrieve.assemble import Assembled, Passage
from clear_rag.types import Citation, ContextPassage

REFUSAL = "I can't answer that from the documents I have."

SYSTEM = f"""You answer questions using only the numbered sources below.
Cite every claim with the number of its source in square brackets, like [1] or [2][3].
If the sources do not contain the answer, reply exactly: {REFUSAL}
Do not use outside knowledge. Be brief."""

_MARKER = re.compile(r"\[(\d{1,3})\]")
_SOURCES = "Sources:\n\n"
_QUESTION = "\n\nQuestion: "


def sources_block(passages: Sequence[Passage]) -> str:
    """The packed passages as the model reads them, numbered for citation: a trace's ``context``."""
    return "\n\n".join(f"[{n}] ({p.doc_id})\n{p.text}" for n, p in enumerate(passages, start=1))


def passage_texts(context: str, passages: Sequence[ContextPassage]) -> list[str]:
    """Each passage's text cut back out of a ``sources_block``, by its header and its span's length (a
    stored trace keeps the context string and the passages' spans, not their texts twice)."""
    texts, offset = [], 0
    for p in passages:
        header = f"[{p.number}] ({p.doc_id})\n"
        if not context.startswith(header, offset):
            raise ValueError(f"the context does not hold passage [{p.number}] where its numbering puts it")
        begin = offset + len(header)
        texts.append(context[begin : begin + p.end - p.start])
        offset = begin + p.end - p.start + 2
    return texts


def answer_messages(question: str, context: str) -> list[Message]:
    """System instructions, then the numbered sources (``sources_block``) and the question in one user
    turn. Built from the context string itself, so the trace's context is what the model is given."""
    user = f"{_SOURCES}{context}{_QUESTION}{question}"
    return [Message("system", SYSTEM), Message("user", user)]


@dataclass(frozen=True, slots=True)
class GivenSource:
    """One numbered source of an answer prompt, as ``read_answer_messages`` reads it back."""

    number: int
    doc_id: str
    text: str


def read_answer_messages(messages: Sequence[Message]) -> tuple[str, list[GivenSource]] | None:
    """The question and the numbered sources of ``answer_messages``, read back from the messages; ``None``
    for any other conversation (a rewrite, an expansion, a HyDE prompt).

    The inverse of ``answer_messages``, for an answerer that works from the sources themselves (the
    extractive one) and so sees exactly what a generative model is given. A source's text runs to
    the header of the next number in sequence (``\n\n[n+1] (``), so a passage that itself holds
    such a line is cut there: the one ambiguity of the plain-text prompt.
    """
    if len(messages) != 2 or messages[0].role != "system":
        return None
    user = messages[1].content
    if messages[1].role != "user" or not user.startswith(_SOURCES):
        return None
    at = user.rfind(_QUESTION)
    if at < 0:
        return None
    question, context = user[at + len(_QUESTION) :], user[len(_SOURCES) : at]
    sources: list[GivenSource] = []
    offset = 0
    while offset < len(context):
        number = len(sources) + 1
        header = re.compile(rf"\[{number}\] \(([^\n]*)\)\n").match(context, offset)
        if header is None:
            return None
        following = context.find(f"\n\n[{number + 1}] (", header.end())
        end = len(context) if following < 0 else following
        sources.append(GivenSource(number, header.group(1), context[header.end() : end]))
        offset = end + 2
    return question, sources


def cited_numbers(answer: str) -> list[int]:
    """The source numbers an answer cites, in order of first citation."""
    return list(dict.fromkeys(int(n) for n in _MARKER.findall(answer)))


def citations(answer: str, packed: Assembled) -> tuple[Citation, ...]:
    """The spans the answer cites: one per cited passage, numbers outside the sources ignored."""
    found = []
    for number in cited_numbers(answer):
        if 1 <= number <= len(packed.passages):
            passage = packed.passages[number - 1]
            found.append(Citation(passage.chunk_ids[0], passage.doc_id, passage.start, passage.end, number))
    return tuple(found)


_WORD = re.compile(r"[^\W_]{3,}")


def attributed(answer: str, packed: Assembled, *, min_shared: int = 3) -> tuple[Citation, ...]:
    """Citations inferred from word overlap, for an answer whose model cited nothing.

    Small models often ignore the instruction to cite. Each sentence of the answer is attributed to
    the passage sharing the most words of three letters or more with it (at least ``min_shared``);
    the trace records that these citations were inferred, not given by the model.
    """
    words = [set(_WORD.findall(p.text.lower())) for p in packed.passages]
    chosen: list[int] = []
    for sentence in re.split(r"(?<=[.!?])\s+", answer):
        said = set(_WORD.findall(sentence.lower()))
        shared = [len(said & w) for w in words]
        if shared and max(shared) >= min_shared:
            best = shared.index(max(shared))
            if best not in chosen:
                chosen.append(best)
    return tuple(
        Citation(
            packed.passages[n].chunk_ids[0],
            packed.passages[n].doc_id,
            packed.passages[n].start,
            packed.passages[n].end,
            n + 1,
        )
        for n in chosen
    )


def is_refusal(answer: str) -> bool:
    """Whether the model declined: the agreed sentence, give or take case and punctuation."""

    def squash(text: str) -> str:
        return re.sub(r"[^a-z ]", "", text.lower()).strip()

    return squash(REFUSAL) in squash(answer)
