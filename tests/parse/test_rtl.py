"""Right-to-left scripts in reading order (issue 31): the Unicode bidirectional algorithm undoes the
visual order a PDF draws Arabic and Persian in, in both PDF backends, so their words can be found.
The PDF is the parse suite's case, drawn in DejaVu Sans (``clear_rag.eval.drawn.papers.right_to_left``)."""

from __future__ import annotations

import pytest

from clear_rag.eval.drawn.papers import right_to_left
from clear_rag.parse.flat import FlatPdfParser
from clear_rag.parse.layout.parser import LayoutPdfParser
from clear_rag.parse.rtl import logical_order
from tests.parse.drawn import draw
from tests.parse.test_parse_properties import check_blocks


@pytest.mark.parametrize(
    ("seen", "read"),
    [
        ("ملاعلا ابحرم", "مرحبا العالم"),  # words spelt backwards, in reverse order
        ("2024 ماع يف", "في عام 2024"),  # a number keeps its digits' order
        (")ةرهاقلا( يف", "في (القاهرة)"),  # brackets mirrored back
        ("The word ابحرم means hello.", "The word مرحبا means hello."),  # an English line stays English
        ("Plain English text.", "Plain English text."),
        ("ﺎﺒﺣﺮﻣ", "مرحبا"),  # presentation forms become the letters they show
        ("ﻻ", "لا"),  # lam-alef: one ligature glyph, two letters in reading order
    ],
)
def test_a_line_in_visual_order_is_put_in_reading_order(seen: str, read: str) -> None:
    assert logical_order(seen) == read


@pytest.mark.parametrize("parser", [LayoutPdfParser(), FlatPdfParser()], ids=["layout", "flat"])
def test_arabic_and_persian_pdfs_read_in_logical_order_in_both_backends(
    parser: LayoutPdfParser | FlatPdfParser,
) -> None:
    truth = draw(right_to_left)
    parsed = parser.parse(truth.pdf, source="rtl.pdf")
    check_blocks(parsed)
    assert parsed.text.split() == " ".join(truth.body).split()
