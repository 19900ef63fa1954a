"""Page furniture on PDFs drawn by reportlab at test time (issue 31): headers and footers in the
margins go, whatever their text does from chapter to chapter; page numbers where LaTeX puts them go,
on a one-page file too; lines repeated inside the body (a continued table's head row, its source line,
a sentence on every page) stay (the parse suite's cases, ``clear_rag.eval.drawn.pages``)."""

from __future__ import annotations

from collections import Counter

import pytest

from clear_rag.eval.drawn.pages import REPEATED_BODY, TABLE_HEAD, TABLE_SOURCE, latex_pages, manual, memo
from clear_rag.parse.base import Parsed
from clear_rag.parse.layout.parser import LayoutPdfParser
from tests.parse.drawn import draw
from tests.parse.test_parse_properties import check_blocks


def parse(data: bytes) -> tuple[Parsed, list[str], str]:
    """The parse, its furniture blocks' texts, and its body's text (every other block)."""
    parsed = LayoutPdfParser().parse(data, source="drawn.pdf")
    check_blocks(parsed)
    blocks = [(b.kind, parsed.text[b.start : b.end]) for b in parsed.blocks]
    return (
        parsed,
        [text for kind, text in blocks if kind == "furniture"],
        "\n".join(text for kind, text in blocks if kind != "furniture"),
    )


def test_a_manuals_headers_and_chapter_footers_go_and_its_repeated_body_lines_stay() -> None:
    truth = draw(manual)
    _, furniture, body = parse(truth.pdf)
    assert Counter(furniture) == Counter(truth.furniture)  # "Chapter 3. Indexing 3-2" and the rest
    assert "Chapter" not in body and "Operations Guide" not in body
    assert body.count(REPEATED_BODY) == 12
    assert body.count(TABLE_SOURCE) == 12
    assert body.count(" | ".join(TABLE_HEAD)) == 12  # the continued table's head row, in its table


@pytest.mark.parametrize("pages", [1, 3])
def test_latex_page_numbers_97_points_up_go_on_one_page_and_on_many(pages: int) -> None:
    truth = draw(lambda: latex_pages(pages))
    _, furniture, body = parse(truth.pdf)
    assert furniture == truth.furniture
    assert body.split() == " ".join(truth.body).split()


@pytest.mark.parametrize("pages", [1, 2])
def test_a_short_files_header_and_page_number_go_by_position_and_pattern(pages: int) -> None:
    truth = draw(lambda: memo(pages))
    parsed, furniture, body = parse(truth.pdf)
    assert Counter(furniture) == Counter(truth.furniture)
    heading = [(parsed.text[b.start : b.end], b.level) for b in parsed.blocks if b.kind == "heading"]
    assert heading == truth.headings
    assert all(line in body for line in truth.body)
