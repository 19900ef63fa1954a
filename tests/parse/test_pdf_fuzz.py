"""Damaged copies of a good PDF: every one parses into valid blocks or fails with a clear error.

The copies are the report PDF truncated (with and without a fresh ``%%EOF``, so pdfminer's repair
scan runs), with bytes flipped, with an object cut out, and with a stretch repeated. No other
exception type may escape either backend, and every success keeps the block invariant. Work is
bounded by the parsers' own caps (pages per file, characters per page), not by a timeout.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.errors import ClearRagError
from clear_rag.parse.base import Parsed
from clear_rag.parse.flat import FlatPdfParser
from clear_rag.parse.layout.parser import LayoutPdfParser
from tests.parse.pdfs import report_pdf
from tests.parse.test_parse_properties import check_blocks

BASE = report_pdf()
OBJECTS = [(m.start(), m.end()) for m in re.finditer(rb"\d+ 0 obj\n.*?\nendobj\n", BASE, re.DOTALL)]
PARSERS = (LayoutPdfParser(max_pages=50), FlatPdfParser(max_pages=50))


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    data = bytearray(BASE)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "truncate+eof", "flip", "flip", "delete", "repeat"]))
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        if kind == "truncate":
            del data[at:]
        elif kind == "truncate+eof":
            data[at:] = b"\n%%EOF\n"
        elif kind == "flip":
            data[at] = draw(st.integers(0, 255))
        elif kind == "delete":
            start, end = draw(st.sampled_from(OBJECTS))
            del data[start : min(end, len(data))]
        else:
            length = draw(st.integers(1, 200))
            data[at:at] = data[at : at + length]
    return bytes(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_a_damaged_pdf_parses_or_fails_with_a_clear_error(data: bytes) -> None:
    for parser in PARSERS:
        outcome: Parsed | ClearRagError
        try:
            outcome = parser.parse(data, source="fuzz.pdf")
        except ClearRagError as err:
            outcome = err
        if isinstance(outcome, ClearRagError):
            assert str(outcome).startswith("fuzz.pdf: "), str(outcome)
        else:
            assert outcome.blocks
            check_blocks(outcome)
