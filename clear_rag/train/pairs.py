"""Training pairs that any store gives without a question or a label: only its own text.

Two constructions, both seeded, both cutting the query out of a chunk:

* **inverse cloze** (Lee, Chang and Toutanova 2019, ORQA): a sentence of a chunk is the query, and the
  chunk with that sentence taken out is its positive. In a ``keep`` share of the pairs the sentence
  stays in (they keep 10%), so the model also learns that an exact match is evidence;
* **crop** (after Izacard et al. 2022, Contriever, who train on spans cropped from one document): a run of
  ``crop_words`` words of one sentence is the query, the shape of a keyword search, and the chunk with
  that sentence taken out is the positive, so no query is answered by copying it.

Negatives are mined by the store's own BM25 (as ``clear_rag.train.mining`` mines them for SciFact's
claims, with the same seeded draw from the first ``pool``): chunks that rank high for the query but
come from another document. Chunks of the query's own document are never negatives, since they may
well hold the answer too (in a store too small to hold documents apart, only its own chunk is left out).

**Held apart.** A seeded ``holdout`` share of the documents (of the chunks, in a store of fewer than
``MIN_DOCUMENTS`` documents) gives no query, no positive and no negative:
``clear-rag check`` draws its probe questions from those documents alone, so a model trained on a
store's pairs is never probed on text it was trained on. The construction reads nothing but the
store: no suite, no golden file, no question (the import rules test pins that this module imports
neither ``clear_rag.eval.golden`` nor ``clear_rag.eval.suite``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clear_rag.atomic import write_atomic
from clear_rag.generate.sentences import sentence_spans
from clear_rag.train.mining import Group, claim_rng, mine

Search = Callable[[str, int], Sequence[str]]  # a query and a depth -> chunk ids, best first
KINDS = ("ict", "crop")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class PairSettings:
    """What a construction is; every field is in the cache key and the pairs file."""

    queries: int = 1000  # pseudo-queries drawn from the store (fewer when it has fewer sentences)
    crop_share: float = 0.3  # of the queries, the share that are crops; the rest are inverse cloze
    keep: float = 0.1  # inverse cloze: the share whose sentence stays in its passage (Lee et al. keep 10%)
    min_words: int = 6  # a query sentence's length in words
    max_words: int = 40
    crop_words: int = 6  # a crop's length in words
    negatives: int = 7
    pool: int = 30
    holdout: float = 0.2  # the share of documents set apart for probes: never a query, positive or negative
    seed: int = 17

    def __post_init__(self) -> None:
        for name in ("crop_share", "keep", "holdout"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"PairSettings {name}={value!r} is out of range; use a share in [0, 1)")
        if self.queries < 1:
            raise ValueError(f"PairSettings queries={self.queries!r} is invalid; use a positive count")
        if not 1 <= self.min_words <= self.max_words:
            raise ValueError(
                f"PairSettings min_words={self.min_words!r}, max_words={self.max_words!r}: "
                "use 1 <= min_words <= max_words"
            )
        if not 2 <= self.crop_words <= self.min_words:
            raise ValueError(
                f"PairSettings crop_words={self.crop_words!r} is invalid; use 2 to min_words "
                f"({self.min_words}), so a crop fits every query sentence"
            )


@dataclass(frozen=True, slots=True)
class Passage:
    """A chunk as the construction sees it: its id, its document and its text."""

    id: str
    doc_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Probe:
    """A pseudo-query and where it was cut from: its chunk (the positive) and the sentence's span in it."""

    id: str
    kind: str  # "ict" or "crop"
    query: str
    chunk_id: str
    doc_id: str
    sentence: tuple[int, int]  # the sentence's [start, end) in the chunk's text
    kept: bool  # whether the sentence stays in the positive


@dataclass(frozen=True, slots=True)
class Pairs:
    """Groups to train on (``mining.Group``, the type SciFact's claims train as), every text they name,
    and the documents held apart."""

    groups: tuple[Group, ...]
    texts: dict[str, str]
    held_out: frozenset[str]  # the documents (or, in a small store, the chunks) held apart


MIN_DOCUMENTS = 10  # a store of fewer documents holds chunks apart, not documents (one profile: one file)


def unit_of(passages: Sequence[Passage]) -> str:
    """What is held apart in this store: ``"document"``, or ``"chunk"`` when it has fewer than
    ``MIN_DOCUMENTS`` documents (a store of one document would otherwise give no probe at all)."""
    return "document" if len({p.doc_id for p in passages}) >= MIN_DOCUMENTS else "chunk"


def apart(passage: Passage, unit: str, settings: PairSettings) -> bool:
    """Whether ``passage`` is held apart: its document's draw, or its own where chunks are the unit."""
    return held_out(passage.doc_id if unit == "document" else passage.id, settings)


def held_out(doc_id: str, settings: PairSettings) -> bool:
    """Whether a document is set apart for probes: the first 8 bytes of ``sha256(f"{seed}:holdout:{doc}")``
    as a fraction of 2^64 fall below ``holdout``. Per document, so adding a document moves no other."""
    digest = hashlib.sha256(f"{settings.seed}:holdout:{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < settings.holdout


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def candidate_sentences(passage: Passage, settings: PairSettings) -> list[tuple[int, int]]:
    """The sentences of a chunk that may become queries: ``min_words`` to ``max_words`` words, and
    not the whole chunk (a positive must keep some text when its sentence is taken out)."""
    out = []
    for start, end in sentence_spans(passage.text):
        n = len(_words(passage.text[start:end]))
        rest = len(_words(passage.text[:start])) + len(_words(passage.text[end:]))
        if settings.min_words <= n <= settings.max_words and rest >= settings.min_words:
            out.append((start, end))
    return out


def _crops(sentence: str, size: int) -> list[tuple[int, int]]:
    """Every run of ``size`` words of a sentence (as character spans) at least half of whose words are
    words a person would search with: letters only, four or more of them. A run of numbers, section
    references or markup ("Section 38.16.3 for details") is no query."""
    words = _words(sentence)
    out = []
    for i in range(len(words) - size + 1):
        run = words[i : i + size]
        if 2 * sum(1 for w in run if w.group().isalpha() and len(w.group()) >= 4) >= size:
            out.append((run[0].start(), run[-1].end()))
    return out


def draw_probes(
    passages: Iterable[Passage],
    settings: PairSettings,
    *,
    want_held_out: bool = False,
    every_sentence: bool = False,
) -> list[Probe]:
    """Up to ``settings.queries`` pseudo-queries, at most one per chunk, from the documents on one side
    of the split (training's by default, the held-out ones with ``want_held_out``).

    Each chunk's draw (which sentence, crop or not, which words, kept or not) comes from a generator
    seeded by ``(seed, chunk id)``, and which chunks are taken from one seeded over the sorted ids:
    the same store gives the same probes on any machine. With ``every_sentence`` each sentence of a
    chunk is a draw of its own (a probe set from the few documents a small store holds apart), its
    generator seeded by ``(seed, chunk id @ sentence start)``."""
    eligible: list[tuple[Passage, list[tuple[int, int]]]] = []
    ordered = sorted(passages, key=lambda p: p.id)
    unit = unit_of(ordered)
    for passage in ordered:
        if apart(passage, unit, settings) != want_held_out:
            continue
        sentences = candidate_sentences(passage, settings)
        if every_sentence:
            eligible += [(passage, [sentence]) for sentence in sentences]
        elif sentences:
            eligible.append((passage, sentences))
    if not eligible:
        return []
    order = claim_rng(settings.seed, "probes").permutation(len(eligible))
    probes = []
    for i in sorted(int(j) for j in order[: settings.queries]):
        passage, sentences = eligible[i]
        at = f"@{sentences[0][0]}" if every_sentence else ""
        rng = claim_rng(settings.seed, passage.id + at)
        start, end = sentences[int(rng.integers(len(sentences)))]
        sentence = passage.text[start:end]
        crops = _crops(sentence, settings.crop_words) if rng.random() < settings.crop_share else []
        if crops:
            first, last = crops[int(rng.integers(len(crops)))]
            kind, query, kept = "crop", sentence[first:last], False
        else:
            kind, query, kept = "ict", sentence, bool(rng.random() < settings.keep)
        probe_id = f"{kind}:{passage.id}{at}"
        probes.append(Probe(probe_id, kind, query, passage.id, passage.doc_id, (start, end), kept))
    return probes


def positive_text(passage: Passage, probe: Probe) -> str:
    """The chunk the query was cut from, without its sentence unless the probe keeps it."""
    if probe.kept:
        return passage.text
    start, end = probe.sentence
    return (passage.text[:start].rstrip() + " " + passage.text[end:].lstrip()).strip()


def build_pairs(passages: Sequence[Passage], search: Search, settings: PairSettings) -> Pairs:
    """Groups of (pseudo-query, its positive, mined negatives) from ``passages`` alone.

    ``search`` ranks chunk ids for a query (the store's BM25). Negatives are drawn by
    ``mining.mine`` from the first ``pool`` results that are neither held out nor of the query's own
    document. A probe whose pool holds fewer than ``negatives`` such chunks keeps the ones it has;
    training leaves out groups smaller than it asks for."""
    by_id = {p.id: p for p in passages}
    unit = unit_of(passages)
    probes = draw_probes(passages, settings)
    # the query's own unit: its document, or its chunk in a store too small to hold documents apart
    own = {probe.id: probe.doc_id if unit == "document" else probe.chunk_id for probe in probes}
    query_of = {probe.id: probe.query for probe in probes}

    def unit_id(chunk_id: str) -> str:
        return by_id[chunk_id].doc_id if unit == "document" else chunk_id

    def negatives_for(probe_id: str) -> Callable[[str], list[str]]:
        def retrieve(query: str) -> list[str]:
            ranked = search(query, settings.pool + 50)
            return [
                cid
                for cid in ranked
                if cid in by_id and unit_id(cid) != own[probe_id] and not apart(by_id[cid], unit, settings)
            ]

        return retrieve

    texts: dict[str, str] = {}
    groups: list[Group] = []
    for probe in probes:
        positive = f"{probe.id}:positive"
        texts[positive] = positive_text(by_id[probe.chunk_id], probe)
        (group,) = mine(
            negatives_for(probe.id),
            {probe.id: query_of[probe.id]},
            {probe.id: {positive: 1.0}},
            negatives=settings.negatives,
            pool=settings.pool,
            seed=settings.seed,
        )
        groups.append(group)
        texts.update({cid: by_id[cid].text for cid in group.negatives})
    kept_out = frozenset(unit_id(p.id) for p in passages if apart(p, unit, settings))
    return Pairs(tuple(groups), texts, kept_out)


def namespaced(pairs: Pairs, source: str) -> Pairs:
    """The same pairs with every id prefixed by ``source:``, so pairs of several stores (and SciFact's
    claims) can train together without two ids meeting."""

    def name(identifier: str) -> str:
        return f"{source}:{identifier}"

    groups = tuple(
        Group(name(g.query_id), g.query, tuple(map(name, g.positives)), tuple(map(name, g.negatives)))
        for g in pairs.groups
    )
    return Pairs(groups, {name(k): v for k, v in pairs.texts.items()}, pairs.held_out)


def save_pairs(path: Path, pairs: Pairs, settings: Mapping[str, Any]) -> None:
    """The groups, their texts and how they were made, as one JSON file (written atomically)."""
    document = {
        "settings": dict(settings),
        "held_out": sorted(pairs.held_out),
        "groups": [asdict(g) for g in pairs.groups],
        "texts": pairs.texts,
    }
    write_atomic(path, json.dumps(document, indent=1, sort_keys=True) + "\n")


def load_pairs(path: Path) -> tuple[Pairs, dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    groups = tuple(
        Group(g["query_id"], g["query"], tuple(g["positives"]), tuple(g["negatives"]))
        for g in document["groups"]
    )
    return Pairs(groups, dict(document["texts"]), frozenset(document["held_out"])), document["settings"]
