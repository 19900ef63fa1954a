"""Text at an angle to the body (issue 31): read in its own direction and set apart as furniture,
never interleaved letter by letter, reversed, into the body; a landscape page read turned upright.
The PDF is the parse suite's case (``clear_rag.eval.drawn.papers.turned``)."""

from __future__ import annotations

import math

import pytest

from clear_rag.eval.drawn.papers import ARXIV, STAMP, turned
from clear_rag.eval.drawn.tabled import turned_head
from clear_rag.parse.base import Parsed
from clear_rag.parse.layout.asides import in_cells
from clear_rag.parse.layout.geometry import Rule, Word
from clear_rag.parse.layout.parser import LayoutPdfParser
from clear_rag.parse.layout.rotation import (
    body_angle,
    by_angle,
    frame,
    glyph_angle,
    glyph_in_frame,
    relative_angle,
)
from tests.parse.drawn import draw
from tests.parse.test_parse_properties import check_blocks


def texts(parsed: Parsed, *kinds: str) -> list[str]:
    return [parsed.text[b.start : b.end] for b in parsed.blocks if b.kind in kinds]


@pytest.mark.parametrize(
    ("matrix", "angle"),
    [
        ((1, 0, 0, 1, 0, 0), 0),
        ((0, 1, -1, 0, 0, 0), 90),  # reads up the page
        ((0, -1, 1, 0, 0, 0), -90),  # reads down it
        ((-1, 0, 0, -1, 0, 0), 180),  # upside down: pdfminer calls it upright
        ((0.7071, 0.7071, -0.7071, 0.7071, 0, 0), 45),
        ((0.9994, 0.0349, -0.0349, 0.9994, 0, 0), 0),  # 2 degrees: a scan's skew, snapped
        ((12, 0, 0, 12, 0, 0), 0),  # the font size in the matrix changes nothing
    ],
)
def test_a_glyphs_direction_is_read_from_its_matrix(matrix: tuple[float, ...], angle: int) -> None:
    assert glyph_angle(matrix) == angle


def test_the_frame_of_a_quarter_turn_reads_up_the_page_left_to_right() -> None:
    """A glyph 90 degrees round near the page's foot comes first in its frame; the next line of
    turned text (further right on the page) comes below it in the frame."""
    page = frame(90, 612, 792)
    assert (page.width, page.height) == (792, 612)
    low = {"x0": 30.0, "x1": 40.0, "top": 700.0, "bottom": 707.0, "text": "a"}
    high = {"x0": 30.0, "x1": 40.0, "top": 100.0, "bottom": 107.0, "text": "b"}
    right = {"x0": 60.0, "x1": 70.0, "top": 700.0, "bottom": 707.0, "text": "c"}
    placed = {g["text"]: glyph_in_frame(g, page) for g in (low, high, right)}
    assert placed["a"]["x0"] < placed["b"]["x0"]  # read upwards
    assert placed["a"]["top"] < placed["c"]["top"]  # lines left to right
    assert placed["a"]["x1"] - placed["a"]["x0"] == pytest.approx(7.0)  # its advance, not its height
    assert relative_angle(-90, 90) == 180 and relative_angle(90, 0) == 90 and relative_angle(-180, 0) == 180


def test_stamps_watermarks_and_upside_down_text_are_set_apart_in_their_own_reading_order() -> None:
    truth = draw(turned)
    parsed = LayoutPdfParser().parse(truth.pdf, source="turned.pdf")
    check_blocks(parsed)
    apart = texts(parsed, "furniture")
    for drawn in truth.apart:
        assert drawn in apart, drawn  # read in its direction, whole: "arXiv:2004...", not "viXra"
    assert apart.count(STAMP) == 3  # on every page, the landscape one included
    body = " ".join(texts(parsed, "paragraph", "heading", "list", "table"))
    for word in ("arXiv", "viXra", "4002", "VerDate", "DRAFT", "upside"):
        assert word not in body
    # the body is the prose as drawn, in order, the landscape page's turned lines included
    assert body.split() == " ".join(truth.body).split()
    assert any("landscape" in warning for warning in parsed.warnings)
    assert ARXIV in apart


def test_a_landscape_pages_geometry_is_the_turned_page() -> None:
    from clear_rag.parse.layout.parser import LINE_TOLERANCE, WORD_GAP
    from clear_rag.parse.pdf import page_geometry, read_pages

    read = read_pages(
        draw(turned).pdf,
        "turned.pdf",
        lambda page: page_geometry(page, word_gap=WORD_GAP, line_tolerance=LINE_TOLERANCE),
    )
    first, _, landscape = (page.value for page in read)
    assert first is not None and landscape is not None
    assert (first.angle, first.width, first.height) == (0, 612, 792)
    assert (landscape.angle, landscape.width, landscape.height) == (90, 792, 612)
    assert {aside.angle for aside in first.asides} == {90, -90}
    assert [aside.angle for aside in landscape.asides] == [180]


def test_glyphs_at_near_angles_are_one_group_and_a_watermark_is_another() -> None:
    """A scan's text layer skews its lines by a few degrees each: they stay one body."""

    def glyph(angle: float) -> dict[str, object]:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        return {"matrix": (c, s, -s, c, 0, 0), "text": "a"}

    groups = by_angle([glyph(0), glyph(0), glyph(4), glyph(-6), glyph(45), glyph(47), glyph(90)])
    assert {angle: len(found) for angle, found in groups.items()} == {0: 4, 45: 2, 90: 1}
    assert body_angle(groups) == 0


def test_column_heads_turned_in_a_ruled_grid_are_the_tables_head_row_not_furniture() -> None:
    """A head turned to fit a narrow column was set apart as furniture, leaving the head row empty
    ("Region |  |  | "), and lost to the chunks (issue 31)."""
    drawn = draw(turned_head)
    parsed = LayoutPdfParser().parse(drawn.pdf, source="turned-head.pdf")
    check_blocks(parsed)
    (table,) = texts(parsed, "table")
    assert [row.split(" | ") for row in table.splitlines()] == [list(row) for row in drawn.rows]
    assert texts(parsed, "furniture") == [] and parsed.warnings == ()


def test_a_turned_run_stays_only_inside_a_ruled_cell_and_only_at_a_quarter_turn() -> None:
    """In a frame at 90 degrees, a run that reads up a cell of a grid ruled round it stays, as one word
    on the line where it starts; the same run with no rule right of it, or at 45 degrees, is set apart."""
    page = frame(0, 612, 792)
    up = frame(90, 612, 792)
    # "Net sales" reading up from (150, 200) to (150, 150) on the page, 10 points high
    x0, top, x1, bottom = up.box(140, 150, 150, 200)
    run = (Word("Net", x0, x0 + 18, top, bottom, 10), Word("sales", x0 + 21, x1, top, bottom, 10))
    grid = [
        Rule(100, 140, 300, 140),
        Rule(100, 210, 300, 210),
        Rule(100, 140, 100, 210),
        Rule(200, 140, 200, 210),
    ]
    kept, apart = in_cells(run, up, page, 90, grid)
    assert apart == () and [w.text for w in kept] == ["Net sales"]
    (head,) = kept
    assert (round(head.x0), round(head.x1), round(head.top), round(head.bottom)) == (140, 150, 190, 200)
    assert in_cells(run, up, page, 90, grid[:3]) == ((), run)  # no rule closes it on the right
    assert in_cells(run, up, page, 45, grid) == ((), run)
