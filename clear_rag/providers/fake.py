"""Deterministic stand-ins for the three providers, so that no test needs a model.

They are simple but not arbitrary: texts that share words really are closer under
``HashEmbedder``, passages holding more of the query's words really score higher under
``LexicalReranker``, so retrieval tests can assert real rankings on them.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from clear_rag.errors import ModelError
from clear_rag.providers.base import EMBED_KINDS, EmbedKind, Message, describe, token_pieces

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lowercased ``\\w+`` tokens: the one word rule both fakes share."""
    return _WORD.findall(text.lower())


@functools.lru_cache(maxsize=65536)
def hash_bucket(token: str, dim: int) -> tuple[int, float]:
    """The bucket in ``[0, dim)`` and the sign (+1 or -1) that ``token`` adds its count to.

    Both come from the token's SHA-256 digest (the feature-hashing trick of Weinberger et al.
    2009): bucket = first 8 bytes little-endian mod dim, sign = low bit of byte 8. The sign makes
    collisions cancel on average instead of always adding up, so unrelated texts stay near 0.
    """
    digest = hashlib.sha256(token.encode("utf-8")).digest()
    bucket = int.from_bytes(digest[:8], "little") % dim
    sign = 1.0 if digest[8] & 1 else -1.0
    return bucket, sign


class HashEmbedder:
    """Bag-of-words feature hashing, L2-normalised; an empty (word-free) text embeds to zeros.

    Query and document kinds embed the same way (a fake needs no prefixes), but ``kind`` is still
    checked so that code which passes a wrong one fails here and not first against a real model.
    """

    version = "sha256-bow-1"

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"HashEmbedder dim={dim!r} is invalid; use a positive integer such as 256")
        self.dim = dim
        self.name = f"hash-embedder-{dim}"

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind not in EMBED_KINDS:
            raise ValueError(f"embed kind={kind!r} is unknown; use one of {EMBED_KINDS}")
        if isinstance(texts, str):
            # A bare string is a Sequence[str] of characters; embedding each letter is never meant.
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for token in words(text):
                bucket, sign = hash_bucket(token, self.dim)
                out[row, bucket] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Leave word-free rows at zero rather than divide by zero; a zero vector matches nothing.
        np.divide(out, norms, out=out, where=norms > 0)
        return out.astype(np.float32)


def overlap_logit(query_terms: set[str], passage_terms: set[str]) -> float:
    """``8 * |Q ∩ P| / |Q| - 4``: the fraction of distinct query words present, mapped to [-4, 4].

    A query with no words scores -4 everywhere. The range mimics a cross-encoder's logits, so that
    ``sigmoid`` shows 0.02 for no overlap and 0.98 for full overlap.
    """
    if not query_terms:
        return -4.0
    return 8.0 * len(query_terms & passage_terms) / len(query_terms) - 4.0


class LexicalReranker:
    """Scores passages by how many of the query's distinct words they contain."""

    name = "lexical-reranker"
    version = "overlap-1"

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        query_terms = set(words(query))
        logits = [overlap_logit(query_terms, set(words(p))) for p in passages]
        return np.asarray(logits, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class ChatCall:
    """One call to ``ScriptedChatModel.stream``: what it was asked, with which options."""

    messages: tuple[Message, ...]
    options: Mapping[str, object]


class ScriptedChatModel:
    """Answers with queued responses in order and records every call in ``history``.

    Any option is accepted and recorded, ``cite`` too: what it answers is what the test queued, so a
    test of the citation constraint queues an answer that keeps it or one that breaks it.
    """

    name = "scripted-chat"
    version = "1"

    def __init__(self) -> None:
        self._queue: list[tuple[str, ...]] = []
        self.history: list[ChatCall] = []

    @property
    def fingerprint(self) -> str:
        """``name@version``: a fake has no weights to hash."""
        return describe(self)

    def enqueue(self, text_or_chunks: str | Sequence[str]) -> None:
        """Queue one response: a string (streamed as word pieces) or the exact pieces to stream."""
        if isinstance(text_or_chunks, str):
            self._queue.append(tuple(token_pieces(text_or_chunks)))
        else:
            self._queue.append(tuple(text_or_chunks))

    @property
    def pending(self) -> int:
        """How many queued responses have not been streamed yet."""
        return len(self._queue)

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        # Not a generator function: the call is recorded and an empty queue fails at the call,
        # not at the first next(), so a test sees the error where the mistake is.
        if not self._queue:
            raise ModelError(
                f"ScriptedChatModel was called {len(self.history) + 1} time(s) but had no response queued",
                fix="Call enqueue(text) once for every answer the test expects before calling stream()",
            )
        self.history.append(ChatCall(tuple(messages), dict(options)))
        return iter(self._queue.pop(0))


# The user turn of ``generate.prompt.answer_messages``: "Sources:", numbered passages, "Question: ...".
# Recognised by its shape, not imported, so the fakes depend on no part of the pipeline.
_ANSWER_PROMPT = re.compile(r"\ASources:\s.*\n\nQuestion: ", re.DOTALL)
_FIRST_SOURCE = re.compile(r"^\[1\] \(.*?\)\n(?P<text>.*?)(?=\n\n\[2\] \(|\n\nQuestion: )", re.DOTALL | re.M)
_SENTENCE = re.compile(r".+?[.!?](?=\s|$)")
ECHO_REFUSAL = "I can't answer that from the documents I have."  # generate.prompt.REFUSAL; a test pins it
ECHO_ANSWER_WORDS = 40


def echo_answer(prompt: str) -> str:
    """A brief, cited answer to an answer prompt: the first sentence of source [1], then ``[1]``.

    At most ``ECHO_ANSWER_WORDS`` words, whitespace collapsed. With no source [1] the reply is the
    refusal, as the prompt asks of a model whose sources do not hold the answer.
    """
    found = _FIRST_SOURCE.search(prompt)
    text = " ".join(found.group("text").split()) if found else ""
    if not text:
        return ECHO_REFUSAL
    sentence = _SENTENCE.match(text)
    first = (sentence.group(0) if sentence else text).split()[:ECHO_ANSWER_WORDS]
    return f"{' '.join(first)} [1]"


class EchoChatModel:
    """A chat model without a model: each line of a reply is the last user message less one word.

    For fake-provider runs of the suites that expand queries or use HyDE (tests, quick runs): it is
    instant and deterministic, and its reply is shaped like one, so expansion and HyDE run end to end
    through the guards that check a model's output. Line ``i`` leaves out word ``i`` (up to three
    lines), so each phrasing really searches for something else; a one-word question comes back as is.

    Asked to answer (the last user message is an answer prompt, "Sources: ... Question: ..."), it
    replies ``echo_answer``: one cited sentence of the first source. Echoing that prompt, as it once
    did, printed the whole context three times over as the "answer" of ``make run --chat echo``.

    Options are accepted and ignored, ``cite`` too (``clear_rag.providers.cite``): the answer it
    writes ends with ``[1]``, which every prompt with a source has, so it keeps the constraint as it is.
    """

    name = "echo-chat"
    version = "1"

    @property
    def fingerprint(self) -> str:
        """``name@version``: a fake has no weights to hash."""
        return describe(self)

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if _ANSWER_PROMPT.match(question):
            return iter(token_pieces(echo_answer(question)))
        words = question.split()
        lines = (
            [" ".join(words[:i] + words[i + 1 :]) for i in range(min(len(words), 3))]
            if len(words) > 1
            else []
        )
        lines = lines or [question]
        return iter(token_pieces("\n".join(lines)))
