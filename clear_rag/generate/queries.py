"""What the chat model does before retrieval: a standalone question, other phrasings, a HyDE passage.

Each step asks the model for text that is *not* an answer, and each checks what came back, because a
small model asked to rephrase often answers instead. The predecessor's rewrite prompt did exactly
that: from the second turn on, the index was searched with a hallucinated answer. Here a rewrite that
fails the check falls back to the user's own words, and the trace records why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from clear_rag.providers.base import ChatModel, Message

REWRITE_SYSTEM = """You rewrite the user's last message as one standalone question.
Use the conversation only to resolve what words like "it", "that" or "the second one" refer to.
Do NOT answer the question. Do not add facts. Output only the rewritten question, ending with "?"."""

EXPAND_SYSTEM = """You help search technical documentation.
Write {n} different phrasings of the user's question, each using the vocabulary the documentation
itself would use (its terms, identifiers and headings), not the user's words.
Do NOT answer the question. Output one phrasing per line, with no numbering and nothing else."""

HYDE_SYSTEM = """Write a short passage, three or four sentences, in the style of technical documentation,
that would answer the user's question. Write it as the documentation would state it, with plausible
specifics. Output only the passage."""

_ANSWER_OPENINGS = re.compile(r"^(yes|no|sure|the answer|it is|it's|you can|you should)\b", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass(frozen=True, slots=True)
class Rewrite:
    question: str  # what retrieval will search
    proposed: str  # what the model wrote ("" when there was nothing to rewrite)
    accepted: bool
    reason: str


def _complete(chat: ChatModel, messages: Sequence[Message], max_tokens: int) -> str:
    # A bound on every call: a small model that misreads the task can otherwise write until its
    # context is full, which turns one question into minutes.
    return "".join(chat.stream(messages, temperature=0.0, max_tokens=max_tokens)).strip()


def check_rewrite(proposed: str, question: str, history: Sequence[Message]) -> str | None:
    """Why ``proposed`` is not an acceptable standalone question, or ``None`` if it is.

    It must be one question (ending with "?"), not much longer than what it rewrites, not open
    like an answer, and not repeat a sentence of the assistant's earlier answers.
    """
    text = proposed.strip().strip('"').strip()
    if not text:
        return "the rewrite was empty"
    if not text.endswith("?"):
        return "the rewrite is not a question"
    if text.count("?") > 1 or len(re.findall(r"[.!]\s", text)) > 0:
        return "the rewrite is more than one sentence"
    if len(text) > max(3 * len(question), len(question) + 120):
        return f"the rewrite is {len(text)} characters for a {len(question)}-character question"
    if _ANSWER_OPENINGS.match(text):
        return "the rewrite opens like an answer"
    earlier = [m.content for m in history if m.role == "assistant"]
    for answer in earlier:
        for sentence in re.split(r"(?<=[.!?])\s+", answer):
            if len(sentence) > 30 and sentence.strip().rstrip(".!?").lower() in text.lower():
                return "the rewrite repeats the assistant's earlier answer"
    return None


def rewrite(chat: ChatModel, question: str, history: Sequence[Message]) -> Rewrite:
    """The standalone form of ``question`` given the conversation ``history`` before it."""
    if not any(m.role == "user" for m in history):
        return Rewrite(question, "", False, "first turn: nothing to resolve")
    shown = "\n".join(f"{m.role}: {m.content}" for m in history if m.role != "system")
    messages = [
        Message("system", REWRITE_SYSTEM),
        Message("user", f"Conversation:\n{shown}\n\nLast message: {question}"),
    ]
    proposed = _complete(chat, messages, max_tokens=64)
    problem = check_rewrite(proposed, question, history)
    if problem is not None:
        return Rewrite(question, proposed, False, f"{problem}; searched the message as written")
    return Rewrite(proposed.strip().strip('"').strip(), proposed, True, "accepted")


def expand(chat: ChatModel, question: str, n: int = 3) -> tuple[list[str], list[str]]:
    """Up to ``n`` other phrasings of ``question``, and the lines the model wrote that were dropped."""
    system = Message("system", EXPAND_SYSTEM.format(n=n))
    text = _complete(chat, [system, Message("user", question)], max_tokens=40 * n)
    kept: list[str] = []
    dropped: list[str] = []
    for line in text.splitlines():
        phrasing = _BULLET.sub("", line).strip().strip('"').strip()
        if not phrasing:
            continue
        answer_like = _ANSWER_OPENINGS.match(phrasing) is not None
        too_long = len(phrasing) > max(3 * len(question), len(question) + 120)
        if answer_like or too_long or phrasing.lower() == question.lower() or len(kept) == n:
            dropped.append(phrasing)
        elif phrasing.lower() not in {k.lower() for k in kept}:
            kept.append(phrasing)
    return kept, dropped


def hypothetical_passage(chat: ChatModel, question: str) -> str:
    """HyDE: a passage the model imagines answering ``question``, to be embedded as a document."""
    return _complete(chat, [Message("system", HYDE_SYSTEM), Message("user", question)], max_tokens=160)
