"""Probes whose sentence is cut out of a copy of the store: the inverse cloze task with the answer removed.

A probe left in its chunk is found by the very words it was cut from, so every row that matches
words wins the race: on the check's own agreement runs, ``bm25 only`` helped on the probes of every
suite where it hurt on the real questions (``results/check/agreement.json``). Here the sentence is
taken out of a copy of the store instead, as the inverse cloze task does for most of its pairs (Lee
et al. 2019): the store's folder is copied, each probed document is written back without its probe
sentences (its blocks moved with the text, chunked again with the store's own chunking), and the
indexes are brought up to date for those documents alone. A probe's label is what is left of the
chunk it was cut from, in the copy's coordinates: to find it, a search has to match the sentence's
context, not the sentence.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from clear_rag.chunk.factory import chunker_for
from clear_rag.ingest import chunker_key
from clear_rag.store.sqlite import Store
from clear_rag.types import Document

Span = tuple[int, int]
LEFT_BEHIND = ("adapted-*", "check.json")  # what the copy does not need: trained models, the last check


@dataclass(frozen=True, slots=True)
class Cut:
    """One probe's sentence and the chunk it came from, both ``[start, end)`` in the original document."""

    probe_id: str
    doc_id: str
    sentence: Span
    chunk: Span


def merged(spans: Iterable[Span]) -> list[Span]:
    """``spans`` sorted, with the ones that overlap or touch joined."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def moved(offset: int, cuts: Sequence[Span]) -> int:
    """Where ``offset`` lands once ``cuts`` (sorted, disjoint) are taken out: an offset inside a cut
    lands where the cut was."""
    shift = 0
    for start, end in cuts:
        if offset <= start:
            break
        shift += min(offset, end) - start
    return offset - shift


def widened(text: str, sentence: Span) -> Span:
    """The sentence with the white space after it, so the text closes up where it was taken out."""
    start, end = sentence
    while end < len(text) and text[end].isspace():
        end += 1
    return start, end


def cut_document(doc: Document, cuts: Sequence[Span]) -> Document:
    """``doc`` without ``cuts`` (sorted, disjoint): its text, its blocks moved with it (a block left
    empty is dropped), and a content hash of its own, so every index sees a new version."""
    text, at = [], 0
    for start, end in cuts:
        text.append(doc.text[at:start])
        at = end
    text.append(doc.text[at:])
    blocks = tuple(
        replace(b, start=moved(b.start, cuts), end=moved(b.end, cuts))
        for b in doc.blocks
        if moved(b.start, cuts) < moved(b.end, cuts)
    )
    digest = hashlib.sha256(f"{doc.content_hash} cut {list(cuts)}".encode()).hexdigest()
    return replace(doc, text="".join(text), blocks=blocks, content_hash=digest)


def cut_copy(store: Store, cuts: Sequence[Cut], directory: Path) -> tuple[Store, dict[str, Span]]:
    """A copy of ``store`` in ``directory`` with every cut's sentence taken out, open for writing; and
    each probe's label, the rest of its chunk in the copy (a probe whose chunk held nothing else is
    left out). The caller brings the copy's indexes up to date (``session.sync_indexes``)."""
    from clear_rag.session import store_chunking

    shutil.copytree(store.directory, directory, ignore=shutil.ignore_patterns(*LEFT_BEHIND))
    copy = Store(directory, mode="write")
    chunker = chunker_for(store_chunking(store))
    by_doc: dict[str, list[Cut]] = {}
    for cut in cuts:
        by_doc.setdefault(cut.doc_id, []).append(cut)
    labels: dict[str, Span] = {}
    for doc_id, mine in sorted(by_doc.items()):
        doc = copy.document(doc_id)
        taken = merged(widened(doc.text, c.sentence) for c in mine)
        after = cut_document(doc, taken)
        record = copy.record(doc_id)
        assert record is not None  # the document was just read from the copy
        copy.put(
            after,
            chunker.chunk(after),
            parser=record.parser,
            chunker=chunker_key(chunker),
            size_bytes=len(after.text.encode()),
        )
        for c in mine:
            start, end = moved(c.chunk[0], taken), moved(c.chunk[1], taken)
            while start < end and after.text[start].isspace():
                start += 1
            while end > start and after.text[end - 1].isspace():
                end -= 1
            if start < end:
                labels[c.probe_id] = (start, end)
    return copy, labels
