"""The parse metrics (clear_rag.eval.parse): properties on a hand-built three-part document, values
written as formulas, and the LCS order measure checked against the dynamic programme. The two blind
spots of issue 31 (furniture on a shared line, labels cut from their numbers) are in
``test_parse_blind_spots.py``."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.eval.parse.cells import table_cells
from clear_rag.eval.parse.document import DocumentScore, overall, score_document
from clear_rag.eval.parse.furniture import occurrences
from clear_rag.eval.parse.order import lcs_length, reading_order
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.truth import Truth
from clear_rag.eval.parse.words import word_recovery
from clear_rag.types import Block, BlockKind

TABLE = (("", "2024", "2023"), ("Net sales", "$ 391,035", "383,285"), ("Net income", "(1,234)", "96,995"))
PARAGRAPHS = (
    "Apple designs, manufactures and markets smartphones, personal computers and tablets.",
    "The Company's fiscal year is the 52- or 53-week period that ends on the last Saturday of September.",
    "Net sales rose in every reportable segment except Greater China.",
)
FURNITURE = ("Apple Inc. | 2024 Form 10-K | 23", "23")


def render(rows: Sequence[Sequence[str]]) -> str:
    """Rows as the truth file writes them: one per line, non-empty cells separated by " | "."""
    return "\n".join(" | ".join(c for c in row if c.strip()) for row in rows)


def parse_of(parts: Sequence[tuple[BlockKind, str]]) -> tuple[str, tuple[Block, ...]]:
    """A parse: the parts' texts separated by blank lines, one block of the given kind per part."""
    text, blocks = "", []
    for kind, piece in parts:
        if text:
            text += "\n\n"
        blocks.append(Block(kind, len(text), len(text) + len(piece)))
        text += piece
    return text, tuple(blocks)


TRUTH = Truth(
    text="\n\n".join([PARAGRAPHS[0], render(TABLE), *PARAGRAPHS[1:]]),
    tables=(TABLE,),
    furniture=FURNITURE,
)
PERFECT: list[tuple[BlockKind, str]] = [
    ("paragraph", PARAGRAPHS[0]),
    ("table", render(TABLE)),
    *(("paragraph", p) for p in PARAGRAPHS[1:]),
]
PAGES = "\n".join([FURNITURE[0], TRUTH.text, FURNITURE[1]])  # the one page: header, body, page number
ON_PAGES = 2  # the header line and the page number, once each on the one page


def score(parts: Sequence[tuple[BlockKind, str]], truth: Truth = TRUTH, pages: str = PAGES) -> DocumentScore:
    text, blocks = parse_of(parts)
    return score_document(text, blocks, truth, pages=pages)


def test_numbers_have_one_form_and_punctuation_alone_is_no_token() -> None:
    assert tokens("$391,035 391,035. (1,234) -1,234 −1,234 5% $ | — 10-K U.S.") == [
        "391035",
        "391035",
        "-1234",
        "-1234",
        "-1234",
        "5",
        "10-k",
        "u.s",
    ]
    assert tokens("“Quoted” ﬁnance’s Revenue,") == ["quoted", "finance's", "revenue"]
    assert tokens("") == tokens(" | \n — ") == []


def test_a_perfect_parse_scores_one_everywhere_and_leaks_nothing() -> None:
    furniture: list[tuple[BlockKind, str]] = [("furniture", f) for f in FURNITURE]
    got = score([*PERFECT, *furniture]).to_dict()
    ones = ["words_precision", "words_recall", "words_f1", "order", "cells_in_tables", "cells_anywhere"]
    assert {k: got[k] for k in ones} == dict.fromkeys(ones, 1.0)
    assert got["furniture_leakage"] == 0.0
    assert got["counts"]["cells_truth"] == 8  # "" is no cell, "$ 391,035" is one: 2 + 3 + 3


def test_shuffled_paragraphs_lower_order_but_not_words() -> None:
    perfect, shuffled = score(PERFECT), score(PERFECT[::-1])
    assert shuffled.order.fidelity < perfect.order.fidelity == 1.0
    assert shuffled.words == perfect.words


def test_moving_one_paragraph_costs_its_share_of_the_matched_words() -> None:
    """Order is LIS / matched: a paragraph moved from the end to the front leaves the rest in order."""
    moved = score([PERFECT[-1], *PERFECT[:-1]])
    assert moved.order.fidelity == pytest.approx(1 - len(tokens(PARAGRAPHS[-1])) / len(tokens(TRUTH.text)))


def test_dropped_words_lower_recall_not_precision() -> None:
    kept = " ".join(PARAGRAPHS[1].split()[::2])
    dropped = score([PERFECT[0], PERFECT[1], ("paragraph", kept), PERFECT[3]])
    assert dropped.words.precision == 1.0
    assert dropped.words.recall == pytest.approx(
        (len(tokens(TRUTH.text)) - len(tokens(PARAGRAPHS[1])) + len(tokens(kept))) / len(tokens(TRUTH.text))
    )
    assert dropped.order.fidelity == 1.0


def test_furniture_in_the_body_leaks_and_in_furniture_blocks_does_not() -> None:
    header, number = FURNITURE
    assert score(PERFECT).furniture.leakage == 0.0
    one = score([("paragraph", header), *PERFECT])
    assert one.furniture.leakage == pytest.approx(1 / ON_PAGES)
    both = score([("paragraph", header), *PERFECT, ("paragraph", number)])
    assert both.furniture.leakage == 1.0
    assert both.words.precision < 1.0


def test_the_body_ends_where_the_chunkers_stop_at_the_first_furniture_block() -> None:
    """What the index sees (clear_rag.chunk.base.indexable): a paragraph placed after furniture is lost."""
    late = score([*PERFECT[:-1], ("furniture", FURNITURE[0]), PERFECT[-1]])
    assert late.words.recall == pytest.approx(1 - len(tokens(PARAGRAPHS[-1])) / len(tokens(TRUTH.text)))


def test_furniture_is_counted_as_a_token_run_longest_first() -> None:
    """The page number inside the footer is the footer's; a number in prose is a run too (the truth
    body's own occurrences are what keeps it from leaking, see test_parse_blind_spots.py)."""
    text = "Net sales were $23 million.\n23\nApple Inc. | 2024 Form 10-K | 23\nApple Inc. 2024 Form 10-K 23"
    header, number = (tuple(tokens(f)) for f in FURNITURE)
    assert occurrences(tokens(text), FURNITURE) == {header: 2, number: 2}


def test_tables_flattened_into_paragraphs_keep_their_cells_anywhere_only() -> None:
    flat = score([(("paragraph" if kind == "table" else kind), text) for kind, text in PERFECT])
    assert flat.cells.in_tables_rate == 0.0
    assert flat.cells.anywhere_rate == 1.0
    assert flat.words == score(PERFECT).words


def test_a_split_table_is_credited_with_its_larger_part_and_merged_tables_with_one() -> None:
    cells = [tuple(tokens(c)) for row in TABLE for c in row if tokens(c)]
    split = table_cells([TABLE], [cells[:5], cells[5:]], [])
    assert (split.in_tables, split.truth) == (5, 8)
    merged = table_cells([TABLE, TABLE], [cells + cells], [])
    assert (merged.in_tables, merged.truth) == (8, 16)
    both = table_cells([TABLE, TABLE], [cells, cells], [])
    assert both.in_tables == 16


def test_words_as_formulas() -> None:
    got = word_recovery(["a", "a", "b", "x"], ["a", "b", "b", "c"])
    overlap = 1 + 1  # min(2, 1) for a, min(1, 2) for b
    p, r = overlap / 4, overlap / 4
    assert (got.precision, got.recall, got.f1) == pytest.approx((p, r, 2 * p * r / (p + r)))


def test_empty_inputs() -> None:
    assert word_recovery([], []).f1 == 1.0
    assert (word_recovery([], ["a"]).precision, word_recovery([], ["a"]).f1) == (0.0, 0.0)
    assert word_recovery(["a"], []).recall == 1.0
    assert reading_order([], []).fidelity == 1.0
    assert reading_order(["b"], ["a"]).fidelity == 0.0
    assert table_cells([], [], []).in_tables_rate == table_cells([], [], []).anywhere_rate == 1.0
    empty = score_document("", (), TRUTH, pages="")
    assert empty.to_dict()["words_recall"] == 0.0
    assert empty.furniture.leakage == 0.0
    assert overall([]) is None


def test_overall_is_the_micro_average_of_the_counts() -> None:
    a = score(PERFECT)
    b = score([PERFECT[0]])
    total = overall([a, b])
    assert total is not None
    assert total.words.recall == pytest.approx(
        (a.words.overlap + b.words.overlap) / (a.words.truth + b.words.truth)
    )
    assert total.order.fidelity == pytest.approx(
        (a.order.in_order + b.order.in_order) / (a.order.matched + b.order.matched)
    )
    assert total.documents == 2


# -- order against the longest common subsequence ------------------------------------------------


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """The textbook O(n·m) dynamic programme."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b, start=1):
            previous, row[j] = row[j], previous + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def test_the_reference_lcs() -> None:
    assert lcs("abcbdab", "bdcaba") == 4
    assert lcs("", "abc") == lcs("abc", "") == 0


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=14), st.lists(st.sampled_from("abcd"), max_size=14))
def test_the_bit_parallel_lcs_equals_the_dynamic_programme(a: list[str], b: list[str]) -> None:
    """Exactly equal, on short sequences over four letters, where repeats are the rule."""
    assert lcs_length(a, b) == lcs(a, b)
    got = reading_order(a, b)
    assert got.in_order == lcs(a, b) <= got.matched == word_recovery(a, b).overlap


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=200), st.lists(st.integers(0, 300), max_size=200))
def test_the_bit_parallel_lcs_on_longer_sequences(a: list[int], b: list[int]) -> None:
    """Sequences longer than a machine word, so the carries cross word boundaries."""
    x, y = [str(n % 7) for n in a], [str(n % 7) for n in b]
    assert lcs_length(x, y) == lcs(x, y)


def test_one_lost_common_word_does_not_disorder_the_rest() -> None:
    """The pairing by occurrence index (k-th "the" with k-th "the") that this measure replaced paired
    every later "the" with the next one once an early one was lost, and scored them all out of order."""
    truth = tokens(" ".join(f"the word{i} of the page" for i in range(200)))
    parsed = truth[1:]
    assert reading_order(parsed, truth).fidelity == 1.0
    assert word_recovery(parsed, truth).recall == pytest.approx((len(truth) - 1) / len(truth))


def test_order_scales_to_a_long_document() -> None:
    """100,000 tokens, halves swapped: the LCS keeps one half at least, about half of the tokens."""
    rng = random.Random(7)
    truth = [f"w{rng.randrange(5000)}" for _ in range(100_000)]
    got = reading_order(truth[50_000:] + truth[:50_000], truth)
    assert got.matched == 100_000
    assert 0.5 <= got.fidelity < 0.6
