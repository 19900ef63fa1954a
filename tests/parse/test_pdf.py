"""PDF parsing on hand-built files whose geometry the test controls exactly (tests/parse/pdfs.py)."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from pdfminer.psexceptions import PSSyntaxError
from pdfplumber.utils.exceptions import PdfminerException

from clear_rag.chunk.factory import CHUNKERS, make_chunker
from clear_rag.errors import (
    ClearRagError,
    EmptyFileError,
    EncryptedPdfError,
    PdfError,
    ScannedPdfError,
)
from clear_rag.ingest import ingest
from clear_rag.parse.base import Parsed
from clear_rag.parse.flat import FlatPdfParser
from clear_rag.parse.layout.drawing import drawn_rules
from clear_rag.parse.layout.parser import LayoutPdfParser
from clear_rag.parse.registry import get_parser
from clear_rag.store import Store
from clear_rag.tokens import RegexTokenizer
from clear_rag.types import Block, Document
from tests.parse import pdfs
from tests.parse.pdfs import Box, Page, Text, paragraph, pdf_bytes, report_pdf
from tests.parse.test_parse_properties import check_blocks

REPORT = report_pdf()


@pytest.fixture(scope="module")
def layout() -> Parsed:
    return LayoutPdfParser().parse(REPORT, source="report.pdf")


@pytest.fixture(scope="module")
def flat() -> Parsed:
    return FlatPdfParser().parse(REPORT, source="report.pdf")


def text_of(parsed: Parsed, block: Block) -> str:
    return parsed.text[block.start : block.end]


def blocks_of(parsed: Parsed, kind: str) -> list[str]:
    return [text_of(parsed, block) for block in parsed.blocks if block.kind == kind]


def body_end(parsed: Parsed) -> int:
    return min((b.start for b in parsed.blocks if b.kind == "furniture"), default=len(parsed.text))


# --- layout on the report ---


def test_column_one_is_read_before_column_two(layout: Parsed) -> None:
    firsts = ["Alpha revenue", "Bravo margins", SUBHEADING_START, "Charlie operations", "Delta expenses"]
    positions = [layout.text.index(first) for first in firsts]
    assert positions == sorted(positions)
    # and each column's lines stay together: no line of column two inside column one's paragraph
    (alpha,) = [p for p in blocks_of(layout, "paragraph") if p.startswith("Alpha")]
    assert alpha == " ".join(pdfs.COLUMN_ONE).replace("equip- ment", "equipment")


SUBHEADING_START = pdfs.SUBHEADING


def test_a_full_width_table_is_read_between_the_column_runs_around_it() -> None:
    parsed = LayoutPdfParser().parse(pdf_bytes([pdfs.spanning_table_page()]), source="wide.pdf")
    order = ["Kilo", "Lima", "Region | Units", "Mike", "November"]
    positions = [parsed.text.index(first) for first in order]
    assert positions == sorted(positions)
    (table,) = blocks_of(parsed, "table")
    assert table.splitlines() == [" | ".join(row) for row in pdfs.WIDE]


def test_title_and_subheading_are_headings_ranked_by_size(layout: Parsed) -> None:
    headings = [(text_of(layout, b), b.level) for b in layout.blocks if b.kind == "heading"]
    assert headings == [(pdfs.TITLE, 1), (pdfs.SUBHEADING, 2)]


def test_running_header_and_page_numbers_are_furniture_after_the_body(layout: Parsed) -> None:
    assert blocks_of(layout, "furniture") == [pdfs.HEADER, "1", pdfs.HEADER, "2"]
    assert [b.meta["page"] for b in layout.blocks if b.kind == "furniture"] == ["1", "1", "2", "2"]
    kinds = [block.kind for block in layout.blocks]
    assert kinds.index("furniture") == len(kinds) - 4  # every body block comes first
    assert pdfs.HEADER not in layout.text[: body_end(layout)]


@pytest.mark.parametrize("name", CHUNKERS)
def test_no_chunk_holds_the_running_header_or_a_page_number(layout: Parsed, name: str) -> None:
    doc = Document("report", "report.pdf", "0" * 64, layout.text, layout.blocks, layout.media_type)
    chunks = make_chunker(name, size=24, overlap=3, tokenizer=RegexTokenizer()).chunk(doc)
    assert chunks and all(chunk.end <= body_end(layout) for chunk in chunks)
    assert not any("Annual Report" in chunk.text for chunk in chunks)
    assert chunks[-1].text.endswith("in millions of dollars.")  # the body's last words are still chunked


def test_a_ruled_table_is_one_block_with_its_cells(layout: Parsed) -> None:
    ruled = [b for b in layout.blocks if b.kind == "table" and b.meta["ruled"] == "yes"]
    (table,) = ruled
    assert text_of(layout, table).splitlines() == [" | ".join(row) for row in pdfs.RULED]
    assert json.loads(table.meta["cells"]) == [list(row) for row in pdfs.RULED]
    assert (table.meta["rows"], table.meta["columns"]) == ("3", "3")


def test_an_aligned_table_without_rules_is_one_block_with_its_cells(layout: Parsed) -> None:
    (table,) = [b for b in layout.blocks if b.kind == "table" and b.meta["ruled"] == "no"]
    # The header row's empty first cell is kept in the cells and in the text, as HTML keeps an empty
    # <td> ("| 2024 | 2023" once the block's leading space is trimmed), so no cell moves column.
    assert json.loads(table.meta["cells"]) == [list(row) for row in pdfs.ALIGNED]
    assert text_of(layout, table) == "\n".join(" | ".join(row) for row in pdfs.ALIGNED).strip()


def test_a_bulleted_list_with_a_hanging_indent_is_one_list_one_item_a_line(layout: Parsed) -> None:
    (listed,) = [b for b in layout.blocks if b.kind == "list"]
    assert listed.level == 1
    assert text_of(layout, listed).splitlines() == [
        f"{marker} {' '.join(lines)}" for marker, lines in pdfs.BULLETS
    ]


def test_a_word_hyphenated_across_a_line_end_is_joined(layout: Parsed) -> None:
    assert "industrial equipment rose" in layout.text
    assert "equip-" not in layout.text


def test_every_block_keeps_the_parser_invariant_and_names_its_page(layout: Parsed, flat: Parsed) -> None:
    for parsed in (layout, flat):
        check_blocks(parsed)
        assert parsed.media_type == "application/pdf" and parsed.warnings == ()
        assert {block.meta["page"] for block in parsed.blocks} == {"1", "2"}


# --- flat ---


def test_flat_reads_the_same_words_as_layout(layout: Parsed, flat: Parsed) -> None:
    words = Counter(word for word in layout.text.split() if word != "|")
    read = Counter(word for word in flat.text.split() if word != "|")
    assert words - read == Counter({"equipment": 1})
    assert read - words == Counter({"equip-": 1, "ment": 1})


def test_flat_is_one_paragraph_per_page_pages_joined_by_a_blank_line(flat: Parsed) -> None:
    assert [block.kind for block in flat.blocks] == ["paragraph", "paragraph"]
    first, second = (text_of(flat, block) for block in flat.blocks)
    assert flat.text == f"{first}\n\n{second}"
    # pdfplumber reads across the columns: column two's first line follows column one's
    assert "Alpha revenue grew in every region this Charlie operations" in first


# --- bad files ---

GOOD = pdf_bytes([Page((Text(72, 100, "A page of text."),))])
ROWS = [Text(10, 10 + row * 1.5, ("abcdefghij" * 20), 2) for row in range(500)]  # 100,000 glyphs
BAD = {
    "truncated": (REPORT[: len(REPORT) // 2], PdfError, "is truncated"),
    "encrypted": (pdf_bytes([Page((Text(72, 100, "Secret"),))], encrypt=True), EncryptedPdfError, "password"),
    "no-pages": (pdf_bytes([]), PdfError, "has no pages"),
    "scanned": (
        pdf_bytes([Page((Box(72, 72, 300, 400, fill=True),)), Page(())]),
        ScannedPdfError,
        "has no text layer on any of its 2 pages: it looks scanned",
    ),
    "html": (b"<!doctype html><p>not a pdf</p>", PdfError, "is not a PDF"),
    "empty": (b"", EmptyFileError, "is empty (0 bytes)"),
    "damaged": (b"%PDF-1.4\n" + bytes(range(256)) * 4 + b"\n%%EOF\n", PdfError, "is damaged"),
}


@pytest.mark.parametrize("backend", ["layout", "flat"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_pdf_is_a_clear_error_naming_the_file(backend: str, case: str) -> None:
    data, kind, said = BAD[case]
    with pytest.raises(kind) as caught:
        get_parser("pdf", backend).parse(data, source=f"in/{case}.pdf")
    message = str(caught.value)
    assert message.startswith(f"in/{case}.pdf: ") and said in message
    assert caught.value.fix  # and says what to do


def test_a_scanned_pdf_points_to_ocrmypdf() -> None:
    data, _, _ = BAD["scanned"]
    with pytest.raises(ScannedPdfError, match="ocrmypdf"):
        LayoutPdfParser().parse(data, source="scan.pdf")


def test_a_page_of_100000_glyphs_is_read_in_plain_order_with_a_warning() -> None:
    data = pdf_bytes([Page(tuple(ROWS)), Page(tuple(paragraph(72, 100, ["A normal page follows it."])))])
    parsed = LayoutPdfParser().parse(data, source="dense.pdf")
    (warning,) = parsed.warnings
    assert "dense.pdf: page 1 has 100000 characters" in warning and "plain reading order" in warning
    assert parsed.text.count("abcdefghij") == 100000 // 10  # every glyph is kept
    assert "A normal page follows it." in parsed.text
    check_blocks(parsed)


def test_more_pages_than_the_maximum_is_refused_by_name() -> None:
    data = pdf_bytes([Page((Text(72, 100, f"Page {n} text."),)) for n in range(3)])
    for parser in (LayoutPdfParser(max_pages=2), FlatPdfParser(max_pages=2)):
        with pytest.raises(PdfError, match=r"^many\.pdf: has 3 pages, more than the 2 read from one file"):
            parser.parse(data, source="many.pdf")
    assert LayoutPdfParser(max_pages=3).parse(data, source="many.pdf").blocks


def test_a_blank_page_among_pages_of_text_is_named_in_a_warning() -> None:
    data = pdf_bytes([Page((Text(72, 100, "Text on the first page."),)), Page(())])
    for backend in ("layout", "flat"):
        parsed = get_parser("pdf", backend).parse(data, source="blank.pdf")
        assert parsed.warnings == ("blank.pdf: page 2 has no text layer (blank, or scanned images of text); "
                                   "`ocrmypdf` adds one",)  # fmt: skip


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_page_and_glyph_maximums_are_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="must be a whole number"):
        LayoutPdfParser(max_pages=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a whole number"):
        LayoutPdfParser(max_glyphs=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a whole number"):
        FlatPdfParser(max_pages=bad)  # type: ignore[arg-type]


def test_ingesting_a_folder_with_a_bad_and_a_good_pdf_stores_the_good_one(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.pdf").write_bytes(REPORT)
    (folder / "bad.pdf").write_bytes(REPORT[:-200])
    chunker = make_chunker("structural", size=64, tokenizer=RegexTokenizer())
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [folder], chunker)
        outcomes = {Path(o.path).name: o for o in report.outcomes}
        assert outcomes["good.pdf"].action == "added" and outcomes["good.pdf"].chunks > 0
        assert outcomes["bad.pdf"].action == "failed"
        assert (outcomes["bad.pdf"].message or "").startswith(f"{folder / 'bad.pdf'}: is truncated")
        text = store.document_text("docs/good.pdf")
        assert "Alpha revenue" in text
        assert all("Annual Report" not in chunk.text for chunk in store.chunks("docs/good.pdf"))


def test_every_error_here_is_a_clear_rag_error() -> None:
    assert all(issubclass(kind, ClearRagError) for _, kind, _ in BAD.values())


def test_a_page_tree_that_fails_when_walked_is_a_clear_error_even_while_closing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pdfplumber's ``close`` walks the page tree again; inside its ``with`` block the pdfminer
    error it raised there replaced the ``PdfError`` being reported (found by the fuzz test)."""

    class Broken:
        stream = io.BytesIO()

        @property
        def pages(self) -> list[object]:
            raise PdfminerException(PSSyntaxError("Invalid dictionary construct"))

        def close(self) -> None:
            self.pages  # noqa: B018 - as pdfplumber's close does

    monkeypatch.setattr("clear_rag.parse.pdf.pdfplumber.open", lambda *args, **kwargs: Broken())
    with pytest.raises(PdfError, match=r"^tree\.pdf: is damaged \(its page tree\) and cannot be read"):
        FlatPdfParser().parse(REPORT, source="tree.pdf")
    assert Broken.stream.closed


def test_a_wide_table_under_two_columns_is_read_across_and_its_shading_is_no_grid() -> None:
    parsed = LayoutPdfParser().parse(pdf_bytes([pdfs.shaded_wide_table_page()]), source="wide.pdf")
    order = ["Kilo", "Lima", "Research and development", "Mike", "November"]
    positions = [parsed.text.index(first) for first in order]
    assert positions == sorted(positions)
    (table,) = [b for b in parsed.blocks if b.kind == "table"]
    assert table.meta["ruled"] == "no"  # light cell shading draws no cell grid
    assert json.loads(table.meta["cells"]) == [list(row) for row in pdfs.WIDE_ALIGNED]


def test_a_fill_is_a_rule_only_when_thin_and_dark() -> None:
    def rect(height: float, colour: object, *, stroke: bool = False) -> dict[str, object]:
        return {"x0": 10, "x1": 200, "top": 100, "bottom": 100 + height, "fill": True, "stroke": stroke,
                "non_stroking_color": colour}  # fmt: skip

    assert len(list(drawn_rules([], [rect(1, (0,))]))) == 1  # a black hairline: a rule
    assert list(drawn_rules([], [rect(1, (0.94,))])) == []  # a light grey sliver of shading
    assert list(drawn_rules([], [rect(1, (0.95, 0.95, 0.95))])) == []
    assert list(drawn_rules([], [rect(1, (0, 0, 0, 0.05))])) == []  # CMYK, nearly white
    assert list(drawn_rules([], [rect(20, (0,))])) == []  # a wide fill is a background
    assert len(list(drawn_rules([], [rect(20, (0,), stroke=True)]))) == 4  # a drawn box: its edges
