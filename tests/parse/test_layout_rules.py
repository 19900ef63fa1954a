"""The layout parser's rules one at a time, on words placed by hand (no PDF needed)."""

from __future__ import annotations

import pytest

from clear_rag.parse.layout.aligned import aligned_tables, merge_heads
from clear_rag.parse.layout.blocks import (
    Element,
    elements_from_groups,
    group_lines,
    list_marker,
    runs_on,
)
from clear_rag.parse.layout.columns import gutters
from clear_rag.parse.layout.furniture import find_furniture, is_page_number, margin_candidates, normalise
from clear_rag.parse.layout.geometry import Line, Rule, Word, dominant_size, join_words
from clear_rag.parse.layout.headings import is_heading
from clear_rag.parse.layout.lines import join_lines, lines_from_words, segments
from clear_rag.parse.layout.ruled import ruled_tables

BODY = 10.0


def words(
    text: str, x: float, y: float, size: float = BODY, *, bold: bool = False, gap: float = 3
) -> list[Word]:
    """``text``'s words on the baseline ``y`` (the word's bottom) from ``x``, 5.5 points a letter."""
    out = []
    for word in text.split():
        out.append(Word(word, x, x + 5.5 * len(word), y - size, y, size, bold))
        x += 5.5 * len(word) + gap
    return out


def line(text: str, x: float = 72, y: float = 100, **kwargs: object) -> Line:
    return Line(tuple(words(text, x, y, **kwargs)))  # type: ignore[arg-type]


# --- lines ---


def test_words_on_one_baseline_make_one_line_left_to_right_and_a_superscript_stays() -> None:
    found = words("beta alpha", 200, 100) + words("first", 72, 100) + words("next line", 72, 112)
    superscript = Word("1", 150, 153, 90.5, 96.5, 6)  # 6 pt, raised 3.5 pt
    lines = lines_from_words([*found, superscript])
    assert [one.text for one in lines] == ["first 1 beta alpha", "next line"]


def test_a_gap_of_an_em_or_more_splits_a_line_into_segments() -> None:
    row = Line(tuple(words("Net sales", 72, 100) + words("3,470", 300, 100)))
    assert [part.text for part in segments(row)] == ["Net sales", "3,470"]
    assert len(segments(line("plain prose with ordinary spaces"))) == 1


def test_touching_words_split_by_a_font_change_join_without_a_space() -> None:
    bold = Word("Revenue", 72, 110, 90, 100, BODY, bold=True)
    comma = Word(",", 110.2, 113, 90, 100, BODY)
    assert join_words([bold, comma]) == "Revenue,"


def test_the_body_size_is_the_size_of_most_characters_not_most_words() -> None:
    table = [Word(str(n), 0, 5, 0, 8, 8) for n in range(10)]  # ten 1-character words at 8 pt
    prose = words("a paragraph of ordinary running text", 0, 20)  # six words, 31 characters
    assert dominant_size([*table, *prose]) == BODY


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (["industrial manu-", "facturing grew"], "industrial manufacturing grew"),
        (["the state-of-the-", "art plant"], "the state-of-the-art plant"),
        (["cases of COVID-", "19 fell"], "cases of COVID-19 fell"),
        (["New York-", "Based firms"], "New York-Based firms"),
        (["a 10-", "year note"], "a 10-year note"),
        (["prices rose -", "sharply"], "prices rose - sharply"),
        (["soft hyph\u00ad", "enated"], "soft hyphenated"),
        (["first line", "", "second line"], "first line second line"),
    ],
)
def test_line_ends_join_with_a_space_and_hyphenated_words_join_whole(lines: list[str], joined: str) -> None:
    assert join_lines(lines) == joined


# --- furniture ---


@pytest.mark.parametrize(
    "text",
    ["7", "- 7 -", "Page 7", "page 7 of 40", "7/40", "vii", "xii", "7-45", "A-3", "p. 7", "[7]", "XIV"],
)
def test_page_numbers(text: str) -> None:
    assert is_page_number(text)


@pytest.mark.parametrize(
    "text", ["2024 Annual Report", "Total", "Page seven", "7.5", "Item 7", "2023-2024", "10-K", "did", "iiii"]
)
def test_not_page_numbers(text: str) -> None:
    assert not is_page_number(text)


def test_furniture_text_compares_with_digits_and_case_normalised() -> None:
    assert normalise("ACME  Corp | Page 12") == normalise("acme corp | page 3") == "acme corp | page #"


def _page(n: int, header: tuple[float, float] = (72, 40), footer_y: float | None = None) -> list[Line]:
    """A header, ten lines of body text from y 300 (one repeated on every page), perhaps a footer."""
    found = [line(f"ACME Corp report page {n}", x=header[0], y=header[1])]
    found += [line(f"Body text {chr(70 + n + k)} of line {k}.", y=300 + 12 * k) for k in range(9)]
    found.append(line("This sentence repeats in the body of every page.", y=300 + 12 * 9))
    if footer_y is not None:
        found.append(line(f"ACME | Form 10-K | {n}", x=250, y=footer_y))
    return found


def test_a_line_repeated_at_the_same_height_in_a_margin_is_furniture_and_in_the_body_is_not() -> None:
    pages = [_page(n) for n in range(1, 6)]
    assert find_furniture(pages, [612.0] * 5, [792.0] * 5, BODY) == [{0}] * 5  # not the repeated body line
    moved = [_page(n, header=(72 + 40 * n, 40 + 20 * n)) for n in range(1, 6)]  # neither height nor place
    assert find_furniture(moved, [612.0] * 5, [792.0] * 5, BODY) == [set()] * 5


def test_a_footer_flowed_with_the_text_is_furniture_on_enough_pages_at_any_height() -> None:
    pages = [_page(n, header=(72, 30 + 20 * n), footer_y=450 + 50 * n) for n in range(1, 5)]
    assert find_furniture(pages, [612.0] * 4, [792.0] * 4, BODY) == [{0, 11}] * 4
    # two pages cannot show it; a header near the edge goes by its position alone
    two = [_page(n, header=(72, 30 + 20 * n), footer_y=450 + 50 * n) for n in range(1, 3)]
    assert find_furniture(two, [612.0] * 2, [792.0] * 2, BODY) == [{0}, {0}]


def test_a_lone_page_number_in_a_margin_is_furniture_even_on_one_page() -> None:
    one = [line("Text of a one-page memo.", y=300), line("1", x=300, y=695)]  # 97 points up
    assert find_furniture([one], [612.0], [792.0], BODY) == [{1}]
    inside = [line("Text of a memo.", y=300), line("1", x=300, y=312), line("More of the memo.", y=324)]
    assert find_furniture([inside], [612.0], [792.0], BODY) == [set()]


def test_the_margins_are_the_lines_set_apart_from_the_body_by_a_wide_gap() -> None:
    lines = [line("Header", y=40), line("Table head", y=90), line("Row one", y=103), line("Row two", y=116)]
    lines += [line("Last row", y=600), line("7-45", y=752)]
    found = {(c.edge, c.line) for c in margin_candidates(lines, 612.0, 792.0, 0, BODY)}
    assert found == {("top", 0), ("bottom", 5), ("bottom", 4)}  # not the table head under the header
    assert not {c.line for c in margin_candidates(lines[1:4], 612.0, 792.0, 0, BODY) if c.line == 1} - {1}


# --- lists and headings ---


@pytest.mark.parametrize(
    "text", ["• Cash at year end", "– A dash item", "1. First step", "(a) the first", "iv) fourth"]
)
def test_list_markers(text: str) -> None:
    assert list_marker(line(text)) is not None


@pytest.mark.parametrize("text", ["2024. A year", "Revenue grew", "•", "-5 degrees"])
def test_not_list_markers(text: str) -> None:
    assert list_marker(line(text)) is None


def test_headings_by_size_weight_or_numbering() -> None:
    assert is_heading([line("Results of Operations", size=14)], BODY)
    assert is_heading([line("Liquidity and Capital Resources", bold=True)], BODY)
    assert is_heading([line("Item 1A. Risk Factors")], BODY)
    assert is_heading([line("PART II")], BODY)
    assert is_heading([line("Note 3 – Revenue")], BODY)
    assert not is_heading([line("Revenue grew in every region this year.")], BODY)
    assert not is_heading([line("Item 7 of the agenda was discussed at length by the board today.")], BODY)
    assert not is_heading([line("2024", size=20)], BODY)  # a big number is no heading
    long = [line("A bold paragraph", bold=True, y=100 + 12 * n) for n in range(4)]
    assert not is_heading(long, BODY)


def test_a_paragraph_runs_on_across_a_break_only_mid_sentence() -> None:
    before = Element("paragraph", "the company expanded its", 700)
    assert runs_on(before, Element("paragraph", "capacity in Ohio.", 72, opens=True))
    assert not runs_on(before, Element("paragraph", "capacity in Ohio.", 72, opens=False))
    assert not runs_on(before, Element("paragraph", "Capacity grew.", 72, opens=True))
    assert runs_on(before, Element("paragraph", "$3.5 billion in 2024.", 72, opens=True))
    item = Element("list", "• Cash rose\n• Dividends paid in 2024 were", 700)
    assert runs_on(item, Element("paragraph", "$3.5 billion.", 72, opens=True))
    assert not runs_on(item, Element("heading", "results of the year", 72, opens=True))
    ended = Element("paragraph", "the company expanded.", 700)
    assert not runs_on(ended, Element("paragraph", "capacity in Ohio.", 72, opens=True))


# --- columns ---


def _column(x: float, top: float, count: int) -> list[Word]:
    found: list[Word] = []
    for n in range(count):
        found += words("some words of column prose here", x, top + 12 * n)
    return found


def test_two_columns_leave_a_gutter_and_one_column_none() -> None:
    two = lines_from_words(_column(72, 100, 8) + _column(320, 100, 8))
    ((left, right),) = gutters(two, BODY)
    assert 72 + 5.5 * 26 + 5 * 3 <= left < right <= 320  # between the columns' text
    one = lines_from_words(_column(72, 100, 16))
    assert gutters(one, BODY) == []


def test_a_table_on_a_one_column_page_makes_no_gutter() -> None:
    rows = []
    for n in range(10):
        rows += words("Label of the row", 72, 100 + 12 * n) + words(f"{n},000", 400, 100 + 12 * n)
    assert gutters(lines_from_words(rows), BODY) == []


# --- tables ---


def test_aligned_rows_make_a_table_and_two_columns_of_prose_do_not() -> None:
    rows = [Line(tuple(words("Net sales", 72, 100) + words("3,470", 300, 100) + words("3,105", 400, 100)))]
    rows += [Line(tuple(words("Cost", 72, 114) + words("2,210", 300, 114) + words("2,040", 400, 114)))]
    rows += [Line(tuple(words("Income", 72, 128) + words("1,260", 300, 128) + words("1,065", 400, 128)))]
    ((first, end, table),) = aligned_tables(rows, BODY, [False] * 3)
    assert (first, end) == (0, 3)
    assert table.rows == (
        ("Net sales", "3,470", "3,105"),
        ("Cost", "2,210", "2,040"),
        ("Income", "1,260", "1,065"),
    )
    prose = [
        Line(tuple(words("some words of running prose here that fill a line", 36, 100 + 12 * n)
                   + words("and more words of prose beside it in the other", 320, 100 + 12 * n)))
        for n in range(4)
    ]  # fmt: skip
    assert aligned_tables(prose, BODY, [False] * 4) == []


def test_a_drawn_grid_makes_a_ruled_table_and_a_lone_box_does_not() -> None:
    xs, ys = [72.0, 150.0, 250.0], [100.0, 120.0, 140.0]
    grid = [Rule(x, ys[0], x, ys[-1]) for x in xs] + [Rule(xs[0], y, xs[-1], y) for y in ys]
    inside = words("A", 76, 115) + words("B", 154, 115) + words("C", 76, 135) + words("D", 154, 135)
    outside = words("After", 72, 200)
    (table,), rest, too_many = ruled_tables([*inside, *outside], grid, BODY)
    assert table.rows == (("A", "B"), ("C", "D")) and rest == outside and not too_many
    box = [Rule(72, 100, 72, 140), Rule(250, 100, 250, 140), Rule(72, 100, 250, 100), Rule(72, 140, 250, 140)]
    assert ruled_tables(inside, box, BODY)[0] == []


def test_a_page_of_too_many_rules_skips_ruled_tables() -> None:
    rules = [Rule(x, 0, x, 1500) for x in range(0, 1800, 3)] + [
        Rule(0, y, 1800, y) for y in range(0, 1500, 3)
    ]
    tables, rest, too_many = ruled_tables(words("text", 72, 100), rules, BODY)
    assert (tables, too_many) == ([], True) and len(rest) == 1


def test_currency_signs_bullets_and_percent_signs_stay_with_their_words() -> None:
    row = Line(
        tuple(
            words("Net sales", 72, 100)
            + words("$", 250, 100)
            + words("167,045", 281, 100)
            + words("3", 362, 100)
            + words("%", 371, 100)
        )
    )
    assert [part.text for part in segments(row)] == ["Net sales", "$ 167,045", "3 %"]
    item = Line(tuple(words("•", 331, 100) + words("Repurchases of shares", 347, 100)))
    assert [part.text for part in segments(item)] == ["• Repurchases of shares"]


def test_column_heads_wrapped_over_two_lines_are_one_row() -> None:
    rows = [
        ("", "", "Years ended", ""),
        ("", "September 28,", "September 30,", "September 24,"),
        ("", "2024", "2023", "2022"),
        ("Net sales:", "", "", ""),
        ("Products", "294,866", "298,085", "316,199"),
    ]
    assert merge_heads(rows) == (
        ("", "", "Years ended", ""),
        ("", "September 28, 2024", "September 30, 2023", "September 24, 2022"),
        ("Net sales:", "", "", ""),
        ("Products", "294,866", "298,085", "316,199"),
    )


def test_a_statement_with_heads_above_and_row_labels_between_is_one_table() -> None:
    def row(label: str, y: float, *values: str, x: float = 37) -> Line:
        found = words(label, x, y) if label else []
        for value, right in zip(values, (423, 498, 573), strict=False):
            found += words(value, right - 5.5 * len(value), y)
        return Line(tuple(found))

    lines = [
        Line(tuple(words("Years ended", 445, 127, size=7, bold=True))),  # centred over the values
        Line(tuple(words("2024", 384, 139, 7) + words("2023", 459, 139, 7) + words("2022", 534, 139, 7))),
        row("Net sales:", 158),
        row("Products", 170, "294,866", "298,085", "316,199", x=43),
        row("Services", 182, "96,169", "85,200", "78,129", x=43),
        row("Total net sales", 194, "391,035", "383,285", "394,328", x=53),
        row("Cost of sales:", 218),  # after a section gap of 2 body sizes
        row("Products", 229, "185,233", "189,282", "201,471", x=43),
        row("Services", 241, "25,119", "24,855", "22,075", x=43),
    ]
    ((first, end, table),) = aligned_tables(lines, BODY, [False] * len(lines))
    assert (first, end) == (0, len(lines))
    assert table.rows[0] == ("", "", "Years ended", "")  # not aligned with the data, taken in as a head
    assert table.rows[1] == ("", "2024", "2023", "2022")
    assert ("Cost of sales:", "", "", "") in table.rows
    assert table.rows[-1] == ("Services", "25,119", "24,855", "22,075")


def test_bullets_after_a_gap_below_numbered_footnotes_start_a_list_of_their_own() -> None:
    lines = [
        line("(1) See the note below for details.", x=36, y=100),
        line("(2) For more, see Note 12.", x=36, y=112),
        line("• Revenues were $350.0 billion.", x=52, y=140),  # a paragraph gap above
        line("• Costs rose 10%.", x=52, y=152),
    ]
    found = elements_from_groups(group_lines(lines, BODY, 2.0), BODY)
    assert [(e.kind, e.text.splitlines()[0]) for e in found] == [
        ("list", "(1) See the note below for details."),
        ("list", "• Revenues were $350.0 billion."),
    ]


def test_thousands_of_two_part_lines_that_make_no_table_are_looked_at_a_bounded_number_of_times() -> None:
    """Each run of candidate rows is retried from at most RESTARTS of its lines, so a page of
    misaligned two-part lines costs linear work: retrying from every line of a failed run would be
    quadratic in the run's length (here 4,000 lines: minutes instead of a second)."""
    lines = [
        Line(
            tuple(
                words("left part", 36 + 7 * (n % 13), 10 + 12 * n)
                + words("right", 300 + 11 * (n % 7), 10 + 12 * n)
            )
        )
        for n in range(4000)
    ]
    assert aligned_tables(lines, BODY, [False] * len(lines)) == []
