"""The two places the parse metrics were blind (issue 31), each pinned by a test that failed on the
measure it replaced: furniture sharing a line or glued to prose read as 0 leaked, and a table whose
row labels were moved out of it still scored 6 of 8 cells in tables."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.eval.parse.cells import cell
from clear_rag.eval.parse.furniture import furniture_leakage, on_pages
from clear_rag.eval.parse.rows import Row, holds, table_rows, whole
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.truth import Truth
from tests.eval.test_parse_metrics import (
    FURNITURE,
    ON_PAGES,
    PARAGRAPHS,
    PERFECT,
    TABLE,
    TRUTH,
    render,
    score,
)

HEADER, NUMBER = FURNITURE
CELLS = sum(1 for row in TABLE for c in row if tokens(c))  # 8: "" is no cell


# -- furniture ------------------------------------------------------------------------------------


def test_furniture_sharing_a_line_or_glued_to_prose_leaks() -> None:
    """The whole-line count this replaced read both parses as 0 leaked."""
    shared = score([("paragraph", f"{HEADER} {NUMBER}"), *PERFECT])
    assert (shared.furniture.leaked, shared.furniture.on_pages) == (2, ON_PAGES)
    glued = score([*PERFECT[:-1], ("paragraph", f"{PARAGRAPHS[-1]} {NUMBER}")])
    assert glued.furniture.leakage == pytest.approx(1 / ON_PAGES)
    header_in_prose = score([("paragraph", f"{HEADER} {PARAGRAPHS[0]}"), *PERFECT[1:]])
    assert header_in_prose.furniture.leakage == pytest.approx(1 / ON_PAGES)


def test_furniture_words_that_are_body_text_do_not_leak() -> None:
    """The body says "23" too: only the page's extra "23" is furniture, and only an extra one leaks."""
    body = f"{PARAGRAPHS[0]} Net sales were $23 million."
    truth = Truth(text=body, furniture=FURNITURE)
    pages = "\n".join([HEADER, body, NUMBER])
    assert sum(on_pages(pages, truth.text, truth.furniture).values()) == ON_PAGES
    clean = score([("paragraph", body)], truth, pages)
    assert clean.furniture.leaked == 0
    assert score([("paragraph", f"{body} {NUMBER}")], truth, pages).furniture.leaked == 1


def test_no_furniture_leaks_nothing() -> None:
    bare = Truth(text=TRUTH.text, tables=TRUTH.tables)
    got = score([("paragraph", f"{HEADER} {NUMBER}"), *PERFECT], bare)
    assert (got.furniture.leaked, got.furniture.on_pages, got.furniture.leakage) == (0, 0, 0.0)


def test_a_parse_that_repeats_a_header_leaks_at_most_what_the_pages_print() -> None:
    got = score([("paragraph", f"{HEADER} {HEADER} {HEADER}"), *PERFECT])
    assert got.furniture.leaked == 1 and got.furniture.leakage == pytest.approx(1 / ON_PAGES)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=6))
def test_each_inserted_furniture_string_leaks_once_up_to_the_pages(inserts: list[tuple[int, bool]]) -> None:
    """Furniture inserted between any two body tokens: leaked counts each insertion of a string up to
    the times the pages print it, and never exceeds on_pages."""
    body = tokens(TRUTH.text)
    parsed = list(body)
    for where, is_header in inserts:
        at = where * len(body) // 4
        parsed[at:at] = tokens(HEADER if is_header else NUMBER)
    printed = on_pages(PAGES_TEXT, TRUTH.text, FURNITURE)
    got = furniture_leakage(parsed, body, FURNITURE, printed)
    headers = sum(1 for _, h in inserts if h)
    assert got.leaked == min(headers, 1) + min(len(inserts) - headers, 1)
    assert 0 <= got.leaked <= got.on_pages == ON_PAGES


PAGES_TEXT = "\n".join([HEADER, TRUTH.text, NUMBER])


# -- cells by row ---------------------------------------------------------------------------------


def test_labels_cut_from_their_numbers_lose_their_rows() -> None:
    """The table keeps the numbers and the labels follow as a paragraph: cells_in_tables (kept as it
    was) still credits 6 of 8 cells; cells_in_rows credits only the header row, whose cells are all
    in the block."""
    numbers = [row[1:] for row in TABLE]
    labels = " ".join(row[0] for row in TABLE if row[0])
    cut = score([PERFECT[0], ("table", render(numbers)), ("paragraph", labels), *PERFECT[2:]])
    header = sum(1 for c in TABLE[0] if tokens(c))
    assert cut.cells.in_tables_rate == pytest.approx((CELLS - 2) / CELLS)
    assert cut.rows.rate == pytest.approx(header / CELLS)
    assert cut.to_dict()["cells_in_rows"] == round(header / CELLS, 4)


def test_whole_rows_score_one_and_a_flattened_table_zero() -> None:
    assert score(PERFECT).rows.rate == 1.0
    assert score([(("paragraph" if k == "table" else k), t) for k, t in PERFECT]).rows.rate == 0.0
    assert score(PERFECT).to_dict()["counts"]["cells_in_rows"] == CELLS


def test_rows_in_any_order_count_and_cells_out_of_order_do_not() -> None:
    moved = score([PERFECT[0], ("table", render(TABLE[::-1])), *PERFECT[2:]])
    assert moved.rows.rate == 1.0
    reversed_cells = score([PERFECT[0], ("table", render([r[::-1] for r in TABLE])), *PERFECT[2:]])
    assert reversed_cells.rows.rate == 0.0


def test_a_row_with_an_extra_cell_still_holds_its_truth_row() -> None:
    extra = [*TABLE[:2], (*TABLE[2], "(a)")]
    assert score([PERFECT[0], ("table", render(extra)), *PERFECT[2:]]).rows.rate == 1.0


def test_a_split_table_is_credited_with_its_larger_part() -> None:
    first, second = render(TABLE[:1]), render(TABLE[1:])
    split = score([PERFECT[0], ("table", first), ("table", second), *PERFECT[2:]])
    assert split.rows.in_rows == CELLS - sum(1 for c in TABLE[0] if tokens(c))


def test_no_truth_cells() -> None:
    assert table_rows([], []).rate == 1.0
    assert table_rows([[("", "")]], [[(cell("x"),)]]).rate == 1.0


def test_the_matching_is_not_fooled_by_the_first_fit() -> None:
    """Taking, in truth order, the first parsed row that fits matches (a) to (a b) and leaves (a b)
    nothing; the maximum matching gives each its own row."""
    a, b = cell("a"), cell("b")
    assert whole([(a,), (a, b)], [(a, b), (a,)]) == 3


def brute(truth: list[Row], parsed: list[Row]) -> int:
    """The most truth cells over every assignment of truth rows to distinct parsed rows (or none)."""
    best = 0
    slots = [None, *range(len(parsed))]
    for choice in itertools.product(slots, repeat=len(truth)):
        used = [j for j in choice if j is not None]
        if len(used) == len(set(used)) and all(
            j is None or holds(parsed[j], r) for r, j in zip(truth, choice, strict=True)
        ):
            best = max(best, sum(len(r) for r, j in zip(truth, choice, strict=True) if j is not None))
    return best


ROWS = st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=3), max_size=4)


@settings(max_examples=300, deadline=None)
@given(ROWS, ROWS)
def test_whole_is_the_maximum_weight_matching(truth: list[list[str]], parsed: list[list[str]]) -> None:
    t = [tuple(cell(c) for c in row) for row in truth]
    p = [tuple(cell(c) for c in row) for row in parsed]
    assert whole(t, p) == brute(t, p)
