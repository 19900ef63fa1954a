"""Tables as real-world PDFs draw them (issue 31), on the parse suite's table cases drawn at test time
(``clear_rag.eval.drawn.tabled``, ``equations``), each checked against the truth it was drawn from."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from clear_rag.eval.drawn import equations, tabled
from clear_rag.eval.drawn.drawn import Drawn
from clear_rag.parse.base import Parsed
from clear_rag.parse.layout.geometry import Line, Word
from clear_rag.parse.layout.maths import is_math
from clear_rag.parse.layout.parser import LayoutPdfParser


def parse(drawn: Drawn) -> Parsed:
    return LayoutPdfParser().parse(drawn.pdf, source="drawn.pdf")


def tables(parsed: Parsed) -> list[list[list[str]]]:
    """Each table block's rows, each row its cells (an empty cell as "")."""
    return [
        [[cell.strip() for cell in row.split("|")] for row in parsed.text[b.start : b.end].splitlines()]
        for b in parsed.blocks
        if b.kind == "table"
    ]


def outside_tables(parsed: Parsed) -> str:
    return "\n".join(parsed.text[b.start : b.end] for b in parsed.blocks if b.kind != "table")


# --- empty cells ---


@pytest.mark.parametrize("draw", [tabled.empty_cells_ruled, tabled.empty_cells_aligned])
def test_an_empty_cell_stays_empty_in_its_column_so_the_row_keeps_its_columns(
    draw: Callable[[], Drawn],
) -> None:
    drawn = draw()
    found = tables(parse(drawn))
    assert len(found) == 1
    assert [len(row) for row in found[0]] == [len(row) for row in drawn.rows]
    assert found[0] == [list(row) for row in drawn.rows]


def flat(text: str) -> str:
    return " ".join(text.split())


# --- row labels outside a ruled grid ---


@pytest.mark.parametrize("rules_under_labels", [False, True])
def test_labels_left_of_a_grid_are_in_the_same_row_as_their_numbers(rules_under_labels: bool) -> None:
    drawn = tabled.labels_outside_grid(rules_under_labels=rules_under_labels)
    parsed = parse(drawn)
    (rows,) = tables(parsed)
    assert rows == [list(row) for row in drawn.rows]
    rest = flat(outside_tables(parsed))
    assert not any(row[0] in rest for row in drawn.rows if row[0])
    assert all(flat(line) in rest for line in drawn.body)


@pytest.mark.parametrize("right", [0, 2, 8])
def test_a_grid_in_one_column_takes_no_labels_from_the_column_beside_it(right: int) -> None:
    drawn = tabled.ruled_beside_column(right)
    parsed = parse(drawn)
    (rows,) = tables(parsed)
    assert rows == [list(row) for row in drawn.rows]
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)


# --- a table beside a column of prose ---


@pytest.mark.parametrize("right", [1, 2, 3, 8])
def test_a_table_in_one_column_holds_none_of_the_prose_of_the_column_beside_it(right: int) -> None:
    drawn = tabled.aligned_beside_column(right)
    parsed = parse(drawn)
    (rows,) = tables(parsed)
    assert rows == [list(row) for row in drawn.rows]
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)


# --- mathematics ---


@pytest.mark.parametrize("symbol_font", [True, False])
def test_a_display_equation_is_not_a_table(symbol_font: bool) -> None:
    drawn = equations.display_equation(symbol_font=symbol_font)
    parsed = parse(drawn)
    assert tables(parsed) == []
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)
    assert all(f"({number})" in rest for number in range(1, len(equations.EQUATIONS) + 1))


def cells_line(cells: list[str], *, math: bool = False, y: float = 100) -> Line:
    """One table row: each cell's words 5.5 points a letter, cells 40 points apart."""
    found: list[Word] = []
    x = 72.0
    for cell in cells:
        for token in cell.split():
            found.append(Word(token, x, x + 5.5 * len(token), y - 10, y, 10, math=math))
            x += 5.5 * len(token) + 3
        x += 40
    return Line(tuple(found))


def test_a_table_set_in_math_fonts_is_math_whatever_its_cells() -> None:
    grid = [["alpha", "beta"], ["gamma", "delta"]]
    assert is_math([cells_line(row, math=True) for row in grid], grid)
    assert not is_math([cells_line(row) for row in grid], grid)


@pytest.mark.parametrize(
    ("grid", "math"),
    [
        ([["i=1", "i i", ""], ["= n y", "", "(2)"], ["x2", "+ b", "(3)"]], True),
        ([["α", "β"], ["∑", "(1)"]], True),
        ([["", "Q1", "Q2"], ["Net sales", "94,000", "—"], ["Cost of sales", "(1,250)", "12.5%"]], False),
        ([["Staff Travel", "94,000"], ["Office Supplies", "12,500"], ["Total", "106,500"]], False),
    ],
)
def test_a_table_whose_cells_are_mostly_variables_and_operators_is_math(
    grid: list[list[str]], math: bool
) -> None:
    assert is_math([cells_line(row) for row in grid], grid) is math


# --- tables one under the other ---


def test_two_tables_one_under_the_other_each_with_its_heads_are_two_tables() -> None:
    drawn = tabled.stacked_tables()
    parsed = parse(drawn)
    assert tables(parsed) == [[list(row) for row in tabled.SALES], [list(row) for row in tabled.ASSETS]]
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)


# --- labels wrapped over lines ---


def test_a_label_wrapped_over_lines_is_one_cell_in_the_row_of_its_values() -> None:
    drawn = tabled.wrapped_labels()
    parsed = parse(drawn)
    (rows,) = tables(parsed)
    assert rows == [list(row) for row in drawn.rows]
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)


def test_a_table_with_wordy_labels_on_a_one_column_page_shows_no_gutter() -> None:
    drawn = tabled.wordy_labels()
    parsed = parse(drawn)
    (rows,) = tables(parsed)
    assert rows == [list(row) for row in drawn.rows]
    rest = flat(outside_tables(parsed))
    assert all(flat(line) in rest for line in drawn.body)
