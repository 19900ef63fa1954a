"""Probe questions cut from a store itself, for the technique check (``clear_rag.eval.check``).

Probes are drawn with the construction the reranker trains on (``clear_rag.train.pairs``, seeded),
from the documents that construction holds apart, so no model adapted to the store was trained on a
probe's text. A probe is a sentence of a chunk (or a few of its words) with the words only a few
documents share taken out (``mask``: its rarest content words by the store's document frequency), so
it is not found by one unique string alone; its label is the sentence's span in its document.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.eval.golden import Label, Question
from clear_rag.eval.labels import Labels
from clear_rag.store.sqlite import Store
from clear_rag.train.pairs import PairSettings, Passage, Probe, draw_probes
from clear_rag.types import Chunk

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class CheckSettings:
    probes: int = 100
    mask: int = 2  # the rarest content words taken out of each probe
    seed: int = 17
    cut: bool = False  # probes asked of a copy of the store with their sentences taken out (eval.cut)

    def pairs(self) -> PairSettings:
        """The construction's settings: the reranker's, so probes come from the documents it held apart."""
        return PairSettings(queries=self.probes, seed=self.seed)


def settings_record(settings: CheckSettings) -> dict[str, Any]:
    """What a check's file records of its settings (``cut`` only where set: older files lack it)."""
    found: dict[str, Any] = {"probes": settings.probes, "mask": settings.mask, "seed": settings.seed}
    return {**found, "cut": True} if settings.cut else found


def _content(word: str) -> bool:
    return word.isalpha() and len(word) >= 4


def masked(query: str, frequency: Mapping[str, int], drop: int) -> str:
    """``query`` without its ``drop`` content words of lowest document frequency (ties: the later word
    first); the query itself when fewer than ``drop + 2`` content words would be left."""
    words = list(_WORD.finditer(query))
    content = [w for w in words if _content(w.group())]
    if drop <= 0 or len(content) < drop + 2:
        return query
    rarest = sorted(content, key=lambda w: (frequency.get(w.group().lower(), 0), -w.start()))[:drop]
    out, at = [], 0
    for w in sorted(rarest, key=lambda w: w.start()):
        out.append(query[at : w.start()])
        at = w.end()
    out.append(query[at:])
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _probes(store: Store, settings: CheckSettings) -> list[tuple[Probe, Chunk, str]]:
    """Each probe drawn from the store's held-out documents, its chunk, and its masked text."""
    chunks = {c.id: c for c in store.chunks()}
    passages = [Passage(c.id, c.doc_id, c.text) for c in chunks.values()]
    words_of: dict[str, set[str]] = {}
    for passage in passages:
        words_of.setdefault(passage.doc_id, set()).update(w.lower() for w in _WORD.findall(passage.text))
    frequency = Counter(word for words in words_of.values() for word in words)
    return [
        (probe, chunks[probe.chunk_id], masked(probe.query, frequency, settings.mask))
        for probe in draw_probes(passages, settings.pairs(), want_held_out=True, every_sentence=True)
    ]


def _labels(store: Store, settings: CheckSettings, questions: list[Question]) -> Labels:
    return Labels("probes", (str(store.directory),), f"probes:{settings}", tuple(questions), {})


def probe_labels(store: Store, settings: CheckSettings) -> Labels:
    """Up to ``settings.probes`` probe questions from the store's held-out documents, each labelled with
    the span of the sentence it was cut from."""
    questions = []
    for probe, chunk, text in _probes(store, settings):
        start, end = (chunk.start + probe.sentence[0], chunk.start + probe.sentence[1])
        label = Label(chunk.doc_id, start, end, chunk.text[probe.sentence[0] : probe.sentence[1]])
        questions.append(Question(probe.id, text, probe.kind, "", (label,)))
    return _labels(store, settings, questions)


@contextmanager
def probing(store: Store, settings: CheckSettings) -> Iterator[tuple[Store, Labels]]:
    """The store the probes are asked of and their labels: ``store`` itself, or with ``settings.cut`` a
    copy beside it with every probe's sentence taken out (``eval.cut``), removed afterwards."""
    if not settings.cut:
        yield store, probe_labels(store, settings)
        return
    from clear_rag.eval.cut import Cut, cut_copy

    drawn = _probes(store, settings)
    cuts = [
        Cut(
            probe.id,
            chunk.doc_id,
            (chunk.start + probe.sentence[0], chunk.start + probe.sentence[1]),
            (chunk.start, chunk.end),
        )
        for probe, chunk, _ in drawn
    ]
    with tempfile.TemporaryDirectory(
        prefix=f"{store.directory.name}-cut-", dir=store.directory.parent
    ) as tmp:
        copy, spans = cut_copy(store, cuts, Path(tmp) / "store")
        try:
            questions = []
            for probe, chunk, text in drawn:
                if probe.id in spans:
                    start, end = spans[probe.id]
                    label = Label(chunk.doc_id, start, end, copy.document_text(chunk.doc_id)[start:end])
                    questions.append(Question(probe.id, text, probe.kind, "", (label,)))
            yield copy, _labels(copy, settings, questions)
        finally:
            copy.close()
