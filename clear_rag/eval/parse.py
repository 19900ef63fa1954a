"""How well a parser recovered a document: words, reading order, table cells and page furniture.

Every metric compares a parse with a ground truth (``Truth``: the visible text in reading order, the
tables cell by cell, and the running headers, footers and page numbers that must not reach the body)
through one tokenisation (``tokens``). Each returns its counts, not only a ratio, so scores over
several documents are micro averages: the counts are summed, then divided (``DocumentScore.plus``).

The parse's body is what the chunkers cut chunks from: its text before the first ``furniture`` block
(``body``), where a parser puts running headers, footers and page numbers.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clear_rag.chunk.base import indexable
from clear_rag.types import Block, Document

CELL_SEPARATOR = " | "  # between the non-empty cells of a table row, in truth text and table blocks
TABLE = "table"

# Typographic variants PDF text extraction and source text choose between freely; the same word either
# way. NFKC already folds ligatures (U+FB01 "ﬁ") and non-breaking spaces.
_EQUIVALENT = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": None,  # soft hyphen: invisible on the page
        "\u200b": None,
    }
)
_SENTENCE = ".,;:!?'\""
_NUMBER = re.compile(
    r"\$?(?P<open>\()?\$?(?P<minus>-)?\$?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?%?(?P<close>\))?%?"
)
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def normalise_token(raw: str) -> str:
    """One whitespace-separated piece of (already folded) text as the token compared, or ``""``.

    A number keeps one form whatever its dress: thousands separators, ``$`` and ``%`` are dropped, so
    ``391,035``, ``$391,035`` and ``391,035.`` are one token ``391035``, and the accounting negative
    ``(1,234)`` (or ``(1,234`` cut from its parenthesis) and ``-1,234`` are ``-1234``. Anything else
    loses the punctuation around it and keeps what is inside (``"revenue,"`` is ``revenue``, ``10-K``
    stays ``10-k``); punctuation alone (``$``, ``|``, ``—``) is no token. A list marker ``(1)`` reads
    as ``-1``: both sides of a comparison read it the same way.
    """
    token = raw.strip(_SENTENCE)
    number = _NUMBER.fullmatch(token)
    if number is not None:
        # An opening parenthesis alone still means negative: a parser that splits "(1,234)" into the
        # cells "(1,234" and ")" keeps the number (the truth file closes such a cell itself).
        sign = "-" if number["open"] or number["minus"] else ""
        return sign + number["int"].replace(",", "") + (number["frac"] or "")
    return _EDGE.sub("", token)


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` in order: NFKC-folded, typographic quotes and dashes made ASCII,
    case-folded, split on whitespace, each piece through ``normalise_token``, empty ones dropped.

    Case is folded because the keyword index folds it too: a parse that changed only case would find
    the same chunks, so it is not counted as a lost word.
    """
    folded = unicodedata.normalize("NFKC", text).translate(_EQUIVALENT).casefold()
    return [token for token in map(normalise_token, folded.split()) if token]


# -- words -----------------------------------------------------------------------------------------


def _ratio(part: int, whole: int, *, empty: float) -> float:
    return part / whole if whole else empty


@dataclass(frozen=True, slots=True)
class WordScore:
    """Bag-of-words agreement: ``overlap = sum_t min(parsed_t, truth_t)`` over the token multisets.

    ``precision = overlap / parsed``, ``recall = overlap / truth``, ``f1 = 2PR / (P + R)``. With no
    truth tokens recall is 1.0 (nothing to recover); with no parsed tokens precision is 1.0 if the
    truth is empty too and 0.0 otherwise; F1 is 0.0 where P + R is 0.
    """

    overlap: int
    parsed: int
    truth: int

    @property
    def precision(self) -> float:
        return _ratio(self.overlap, self.parsed, empty=1.0 if self.truth == 0 else 0.0)

    @property
    def recall(self) -> float:
        return _ratio(self.overlap, self.truth, empty=1.0)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def word_recovery(parsed: Sequence[str], truth: Sequence[str]) -> WordScore:
    """Precision, recall and F1 of the parsed token multiset against the truth's (``WordScore``)."""
    have, want = Counter(parsed), Counter(truth)
    overlap = sum(min(count, have[token]) for token, count in want.items())
    return WordScore(overlap, len(parsed), len(truth))


# -- reading order ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrderScore:
    """``fidelity = in_order / matched``: ``in_order`` is the longest common subsequence (LCS) of the
    parsed and truth tokens, ``matched`` the multiset overlap (``WordScore.overlap``), the most the LCS
    could be. With nothing matched: 1.0 for an empty truth, else 0.0."""

    in_order: int
    matched: int
    truth: int

    @property
    def fidelity(self) -> float:
        return _ratio(self.in_order, self.matched, empty=1.0 if self.truth == 0 else 0.0)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b``, bit-parallel.

    Allison and Dix (1986) in the form of Crochemore et al. (2001) and Hyyrö (2004): ``V`` starts as
    ``len(b)`` one bits and for each token x of ``a``, with ``M`` the bits of b's positions holding x,
    ``U = V & M; V = (V + U) | (V - U)``; the LCS is the number of zero bits left in ``V``. It is the
    O(n·m) dynamic programme with a whole row per integer operation: a 100,000-token document against
    its truth takes about two seconds, where the row-by-row table would take hours in Python.
    """
    masks: dict[str, int] = {}
    for j, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    get = masks.get
    for token in a:
        m = get(token)
        if m is not None:
            u = v & m
            # The sum carries past bit len(b); the mask keeps the integers (and the time) bounded.
            v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def reading_order(parsed: Sequence[str], truth: Sequence[str]) -> OrderScore:
    """Reading-order fidelity: ``LCS(parsed, truth) / matched``.

    The LCS counts the words a parse keeps in the truth's order; dividing by the words it recovered at
    all (rather than by the truth's length) keeps order apart from recall and precision: dropping or
    adding words changes neither, and moving a paragraph of s tokens costs at most s / matched.

    Why not a cheaper stand-in. Pairing the k-th occurrence of each token in the truth with the k-th in
    the parse and taking the longest increasing subsequence (O(n log n)) is LCS only when no token
    repeats: a parse that lost one early ``"the"`` paired every later ``"the"`` with the next one, put
    all of them out of order, and lost as much order as ``"the"`` has share of the text for one lost
    word (``test_one_lost_common_word_does_not_disorder_the_rest`` pins this). Kendall's tau over the
    same pairing has the same fault, and charges a moved block by how far it moved, not by its size.
    """
    overlap = word_recovery(parsed, truth).overlap
    return OrderScore(lcs_length(parsed, truth), overlap, len(truth))


# -- table cells -----------------------------------------------------------------------------------

Cell = tuple[str, ...]


def cell(text: str) -> Cell:
    """A cell as compared: its ``tokens``. A cell of punctuation alone (``$``, ``—``) is empty and left
    out on both sides, so a parser that puts ``$`` in a cell of its own loses nothing by it."""
    return tuple(tokens(text))


def row_cells(line: str) -> list[Cell]:
    """The non-empty cells of one table row written as text, cells separated by ``CELL_SEPARATOR``."""
    return [c for c in map(cell, line.split(CELL_SEPARATOR)) if c]


@dataclass(frozen=True, slots=True)
class CellScore:
    """Truth table cells recovered: ``in_tables / truth`` found as cells of the parse's table blocks,
    ``anywhere / truth`` found as a run of tokens anywhere in its body. No truth cells: both 1.0."""

    in_tables: int
    anywhere: int
    truth: int

    @property
    def in_tables_rate(self) -> float:
        return _ratio(self.in_tables, self.truth, empty=1.0)

    @property
    def anywhere_rate(self) -> float:
        return _ratio(self.anywhere, self.truth, empty=1.0)


def table_cells(
    truth_tables: Sequence[Sequence[Sequence[str]]],
    parsed_tables: Sequence[Sequence[Cell]],
    body: Sequence[str],
) -> CellScore:
    """Cell recovery of ``truth_tables`` (rows of cell strings) by ``parsed_tables`` (each table block's
    cells, in any order) and by the body's ``tokens``.

    In tables: each truth table is paired with at most one parsed table and each parsed table with at
    most one truth table, greedily by the largest multiset overlap of cells first (ties: earlier truth
    table, then earlier parsed table); ``in_tables`` sums the overlaps of the pairs. A table split in two
    is credited with its larger part, and two tables merged into one block with one of them.

    Anywhere: ``sum_c min(truth count of c, occurrences of c's tokens as a contiguous run in body)`` over
    the distinct truth cells c, all tables together.
    """
    wanted = [Counter(c for row in table for c in map(cell, row) if c) for table in truth_tables]
    offered = [Counter(table) for table in parsed_tables]
    holders: dict[Cell, list[int]] = {}
    for j, cells in enumerate(offered):
        for c in cells:
            holders.setdefault(c, []).append(j)
    pairs = []
    for i, cells in enumerate(wanted):
        overlap: Counter[int] = Counter()
        for c, count in cells.items():
            for j in holders.get(c, ()):
                overlap[j] += min(count, offered[j][c])
        pairs += [(-shared, i, j) for j, shared in overlap.items()]
    used_truth: set[int] = set()
    used_parsed: set[int] = set()
    in_tables = 0
    for negative, i, j in sorted(pairs):
        if i not in used_truth and j not in used_parsed:
            used_truth.add(i)
            used_parsed.add(j)
            in_tables -= negative
    total = sum(wanted, Counter[Cell]())
    found = run_counts(body, total)
    anywhere = sum(min(count, found[c]) for c, count in total.items())
    return CellScore(in_tables, anywhere, sum(total.values()))


def run_counts(sequence: Sequence[str], runs: Iterable[Cell]) -> Counter[Cell]:
    """How often each of ``runs`` occurs as a contiguous run of ``sequence`` (overlapping ones too)."""
    by_first: dict[str, set[Cell]] = {}
    for run in runs:
        if run:
            by_first.setdefault(run[0], set()).add(run)
    found: Counter[Cell] = Counter()
    for i, token in enumerate(sequence):
        for run in by_first.get(token, ()):
            if tuple(sequence[i : i + len(run)]) == run:
                found[run] += 1
    return found


# -- furniture -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeakScore:
    """``leakage = leaked / on_pages``: of the furniture occurrences printed on the pages, the share
    still in the body. 0.0 is perfect, and is also the value when there is no furniture to leak."""

    leaked: int
    on_pages: int

    @property
    def leakage(self) -> float:
        return _ratio(self.leaked, self.on_pages, empty=0.0)


def furniture_occurrences(text: str, furniture: Iterable[str]) -> int:
    """How many times the furniture strings occur in ``text``, each counted where its ``tokens`` fill a
    line of ``text`` (a header, footer or page number stands on a line of its own on the page, and as
    a line or block of its own in a parse). Matching whole lines keeps a page number ``12`` from being
    found in every ``$12 million`` of the prose."""
    wanted = {tuple(tokens(f)) for f in furniture} - {()}
    return sum(1 for line in text.splitlines() if tuple(tokens(line)) in wanted)


def furniture_leakage(body: str, furniture: Iterable[str], *, on_pages: int) -> LeakScore:
    """``LeakScore`` of the furniture left in ``body``; ``on_pages`` is how many occurrences the pages
    carry, counted the same way (``furniture_occurrences``) in a full extraction of the PDF. Leaked
    occurrences past ``on_pages`` (a parse that repeats a header) count as ``on_pages``."""
    return LeakScore(min(furniture_occurrences(body, furniture), on_pages), on_pages)


# -- one document ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Truth:
    """What a document's pages hold: ``text`` in reading order (blocks separated by a blank line, table
    rows one per line with their non-empty cells separated by ``" | "``), ``tables`` as rows of cells,
    and the ``furniture`` strings (running headers, footers, page numbers) that must not reach the body."""

    text: str
    tables: tuple[tuple[tuple[str, ...], ...], ...]
    furniture: tuple[str, ...]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str) -> Truth:
        """A truth file's content; ``ValueError`` naming ``source`` and the field when it has another
        shape."""
        text, tables, furniture = data.get("text"), data.get("tables", []), data.get("furniture", [])
        if not isinstance(text, str):
            raise ValueError(f"{source}: 'text' is {type(text).__name__}, expected a string")
        if not isinstance(tables, list) or not all(
            isinstance(t, dict)
            and isinstance(t.get("rows"), list)
            and all(isinstance(r, list) and all(isinstance(c, str) for c in r) for r in t["rows"])
            for t in tables
        ):
            raise ValueError(f"{source}: 'tables' must be a list of {{\"rows\": [[cell, ...], ...]}}")
        if not isinstance(furniture, list) or not all(isinstance(f, str) for f in furniture):
            raise ValueError(f"{source}: 'furniture' must be a list of strings")
        rows = tuple(tuple(tuple(r) for r in t["rows"]) for t in tables)
        return cls(text, rows, tuple(furniture))


def body(text: str, blocks: Sequence[Block]) -> tuple[str, tuple[Block, ...]]:
    """The part of a parse the chunks are cut from, and its blocks: ``clear_rag.chunk.base.indexable``,
    the text before the first furniture block, so that the metrics see what the index will."""
    kept = indexable(Document(id="", source="", content_hash="", text=text, blocks=tuple(blocks)))
    return kept.text, kept.blocks


def table_blocks(text: str, blocks: Iterable[Block]) -> list[list[Cell]]:
    """The non-empty cells of each ``table`` block, row by row, one list per block."""
    return [
        [c for line in text[b.start : b.end].splitlines() for c in row_cells(line)]
        for b in blocks
        if b.kind == TABLE
    ]


@dataclass(frozen=True, slots=True)
class DocumentScore:
    """Every metric of one document, or of several (``plus`` sums the counts: a micro average)."""

    words: WordScore
    order: OrderScore
    cells: CellScore
    furniture: LeakScore
    pages: int = 0
    seconds: float = 0.0
    documents: int = 1

    def plus(self, other: DocumentScore) -> DocumentScore:
        def add(a: Any, b: Any) -> Any:
            return type(a)(*(x + y for x, y in zip(_fields(a), _fields(b), strict=True)))

        return DocumentScore(
            add(self.words, other.words),
            add(self.order, other.order),
            add(self.cells, other.cells),
            add(self.furniture, other.furniture),
            self.pages + other.pages,
            self.seconds + other.seconds,
            self.documents + other.documents,
        )

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ratios first, rounded to 4 places, then the counts they are computed from."""
        return {
            "words_precision": round(self.words.precision, 4),
            "words_recall": round(self.words.recall, 4),
            "words_f1": round(self.words.f1, 4),
            "order": round(self.order.fidelity, 4),
            "cells_in_tables": round(self.cells.in_tables_rate, 4),
            "cells_anywhere": round(self.cells.anywhere_rate, 4),
            "furniture_leakage": round(self.furniture.leakage, 4),
            "pages": self.pages,
            "seconds": round(self.seconds, 3),
            "pages_per_second": round(self.pages_per_second, 2),
            "counts": {
                "tokens_parsed": self.words.parsed,
                "tokens_truth": self.words.truth,
                "tokens_matched": self.words.overlap,
                "tokens_in_order": self.order.in_order,
                "cells_truth": self.cells.truth,
                "cells_in_tables": self.cells.in_tables,
                "cells_anywhere": self.cells.anywhere,
                "furniture_on_pages": self.furniture.on_pages,
                "furniture_leaked": self.furniture.leaked,
            },
        }


def _fields(score: Any) -> tuple[Any, ...]:
    return tuple(getattr(score, f.name) for f in dataclasses.fields(score))


def score_document(
    text: str, blocks: Sequence[Block], truth: Truth, *, furniture_on_pages: int
) -> DocumentScore:
    """Every metric of one parse (``text`` and its ``blocks``) against its ``truth``.

    ``furniture_on_pages`` counts the furniture occurrences the PDF's pages carry (see
    ``furniture_leakage``); pages and seconds are left 0 for the caller to fill in.
    """
    kept, kept_blocks = body(text, blocks)
    parsed, wanted = tokens(kept), tokens(truth.text)
    return DocumentScore(
        words=word_recovery(parsed, wanted),
        order=reading_order(parsed, wanted),
        cells=table_cells(truth.tables, table_blocks(kept, kept_blocks), parsed),
        furniture=furniture_leakage(kept, truth.furniture, on_pages=furniture_on_pages),
    )


def overall(scores: Iterable[DocumentScore]) -> DocumentScore | None:
    """The micro average of ``scores`` (their counts summed), or ``None`` for none."""
    total: DocumentScore | None = None
    for score in scores:
        total = score if total is None else total.plus(score)
    return total
