"""The extractive answerer: the context's own sentences that best answer the question, each with its ``[n]``.

A chat model (it speaks ``ChatModel``), so it goes wherever one does: ``--chat extractive``, a suite
row's ``chat:``, the page, the generation cache. It reads the answer prompt back
(``prompt.read_answer_messages``), so it is given exactly what a generative model is given, and it
writes nothing that is not in a source: every sentence of its answer is a sentence of the source whose
number follows it. No compile, no sampling: the same context always gives the same answer.

The rule, fixed before it was measured (``results/answers.json`` measures it):

1. **Candidates.** Every window of every source: each sentence and each two adjacent sentences
   (``sentences.windows``), as the support check reads them.
2. **Scores.** The support check's own scoring of the question against those windows
   (``SupportChecker.scored``): the ``shortlist`` windows that hold most of the question's content
   terms are read by the support model (the shipped cross-encoder, at sentence level), and its logit
   and the coverage are calibrated into ``p``, the chance that the window answers.
3. **Refusal.** A window *answers* when it looks like it answers the question by the check's rule:
   ``p`` at least ``verdicts.BOUNDARY`` (0.5) and every number and name of the question in it. When no
   window answers, the reply is the refusal (``prompt.REFUSAL``): the answerer refuses exactly when the
   check says retrieval looks weak.
4. **How many.** The best answering window (highest ``p``, then coverage, then the order the sources
   and windows come in), then each next answering window in that order that shares no sentence with
   one taken, as long as the answer stays within ``max_sentences`` sentences (3); a window that would
   pass the limit is passed over.
5. **Writing.** Each sentence of a taken window as it stands in the source, then `` [n]``; best window
   first, its sentences in the source's order. Sentences are joined by a space where the sentence
   splitter (``sentences.sentence_spans``) ends a sentence there, else by a line break, so the
   answer's sentences are exactly the quoted ones, each with its citation.

Asked anything but an answer (the rewrite of a follow-up question) it replies with nothing, and the
rewrite falls back to the message as written; asked for phrasings or a HyDE passage it raises a
``ModelError``, since writing text is what it does not do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence

from clear_rag.errors import ModelError
from clear_rag.generate.prompt import REFUSAL, GivenSource, read_answer_messages
from clear_rag.generate.queries import REWRITE_SYSTEM
from clear_rag.generate.sentences import sentence_spans
from clear_rag.generate.support import Source, SupportChecker
from clear_rag.providers.base import Message, token_pieces
from clear_rag.types import Evidence

RULE = "1"  # the rule's version: part of the name a result row records, and of the cache key
MAX_SENTENCES = 3
OPTIONS = ("temperature", "max_tokens", "seed", "stop", "repeat_penalty", "cite")


class ExtractiveAnswerer:
    """Answers with the sources' best sentences (see the module docstring for the rule).

    ``name`` is ``extractive``; ``version`` is the rule's and the support model's
    (``1+scifact-minilm-l6@...``); ``fingerprint`` adds the calibration and the limits, every input that
    can change an answer. The generative models' options are accepted and mean nothing to it: it
    samples nothing, and its answers are far shorter than any ``max_tokens``.
    """

    name = "extractive"
    quotes = True  # what it writes is the sources' own sentences: the page and the planner say so

    def __init__(self, checker: SupportChecker, *, max_sentences: int = MAX_SENTENCES) -> None:
        if isinstance(max_sentences, bool) or max_sentences < 1:
            raise ValueError(
                f"max_sentences={max_sentences!r} is invalid; use a positive number of sentences"
            )
        self.checker = checker
        self.max_sentences = max_sentences
        self.version = f"{RULE}+{checker.name}"

    @property
    def fingerprint(self) -> str:
        material = json.dumps(
            [self.version, self.checker.calibration.to_dict(), self.checker.shortlist, self.max_sentences],
            sort_keys=True,
        )
        return f"extractive:{hashlib.sha256(material.encode('utf-8')).hexdigest()[:16]}"

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"the extractive answerer does not take option(s) {unknown}; it takes {OPTIONS}")
        read = read_answer_messages(messages)
        if read is None:
            if messages and messages[0].role == "system" and messages[0].content == REWRITE_SYSTEM:
                return iter(())
            raise ModelError(
                "the extractive answerer only answers from sources: it writes no phrasings or HyDE passages",
                fix="Use a generative --chat (smollm2, ollama:MODEL) for a config with expand or hyde",
            )
        question, sources = read
        return iter(token_pieces(self.answer(question, sources)))

    def answer(self, question: str, sources: Sequence[GivenSource]) -> str:
        """The answer to ``question`` from ``sources``: their best sentences with their numbers, or the
        refusal."""
        given = [Source(s.number, f"[{s.number}]", s.doc_id, 0, s.text) for s in sources]
        scored = [
            (n, e) for n, e in self.checker.scored(question, given) if e.supports
        ]  # the windows that answer
        if not scored:
            return REFUSAL
        ranked = sorted(
            enumerate(scored), key=lambda item: (-item[1][1].probability, -item[1][1].coverage, item[0])
        )
        taken: list[tuple[int, list[tuple[int, int]]]] = []  # source index, the window's sentence spans
        count = 0
        for _, (n, window) in ranked:
            spans = _sentences_of(given[n].text, window)
            clash = any(m == n and set(spans) & set(held) for m, held in taken)
            if clash or count + len(spans) > self.max_sentences:
                continue
            taken.append((n, spans))
            count += len(spans)
        return _written([(given[n].text[a:b], given[n].number) for n, spans in taken for a, b in spans])


def _sentences_of(text: str, window: Evidence) -> list[tuple[int, int]]:
    """The sentences of a source that a window (a sentence, or two joined) is made of."""
    return [(a, b) for a, b in sentence_spans(text) if window.start <= a and b <= window.end]


def _written(quoted: Sequence[tuple[str, int]]) -> str:
    """The quoted sentences, each followed by its `` [n]``, joined so that the sentence splitter cuts the
    answer into exactly these sentences: a space where it would end a sentence there, else a line break."""
    answer = ""
    for sentence, number in quoted:
        piece = f"{sentence} [{number}]"
        if not answer:
            answer = piece
            continue
        joined = f"{answer} {piece}"
        ends = [b for _, b in sentence_spans(joined)]
        answer = joined if len(answer) in ends else f"{answer}\n{piece}"
    return answer
