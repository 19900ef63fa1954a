"""OCR: tesseract's words read and grouped, the ``ocr`` backend, and scanned pages in ``layout`` and
``flat``, on scanned PDFs made here (``tests/parse/scans.py``) whose truth is known.

Tests that read pixels need tesseract (``needs_tesseract``: they skip, naming the apt command, where it
is absent); the reading of its output, the engine's absence and the hint that then stays run anywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.errors import ModelMissing, ScannedPdfError
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.words import word_recovery
from clear_rag.parse import ocr, tesseract
from clear_rag.parse.base import Parsed
from clear_rag.parse.ocr import OcrPage, OcrPdfParser, confident
from clear_rag.parse.registry import get_parser
from clear_rag.parse.tesseract import INSTALL, OcrWord, Tesseract, parse_tsv
from tests.parse import scans
from tests.parse.pdfs import pdf_bytes
from tests.parse.scans import needs_tesseract, scanned, scanned_report, truth_of
from tests.parse.test_parse_properties import check_blocks

# Word F1 a parse of the scanned fixture must reach. A misread word costs precision and recall alike,
# so on the report page's 77 words one misread word scores 76/77 = 0.987 and four score 0.948:
# 0.95 allows three misreads of clean 11-point print at 300 dpi while failing a page read out of
# order, missing a paragraph (-0.2 or worse) or run together into one word.
MIN_WORD_F1 = 0.95


def word_f1(parsed_text: str, truth: str) -> float:
    return word_recovery(tokens(parsed_text), tokens(truth)).f1


# --- tesseract's output, read without tesseract ---

TSV = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"


def _row(level: int, block: int, par: int, line: int, left: int, conf: float, text: str) -> str:
    return "\t".join(str(v) for v in (level, 1, block, par, line, 1, left, 100 * line, 40, 30, conf, text))


def test_the_tsv_gives_word_rows_in_order_and_skips_the_rest() -> None:
    tsv = "\n".join(
        [
            TSV,
            _row(4, 1, 1, 1, 0, -1, ""),  # a line row: structure, no word
            _row(5, 1, 1, 1, 10, 96.5, "Harbour"),
            _row(5, 1, 1, 1, 60, 91.0, "   "),  # a blank word
            _row(5, 1, 1, 1, 110, 12.0, "notes"),
            "5\t1\tbroken row",
            _row(5, 2, 1, 1, 10, 88.0, "Tab\tinside"),  # the text is the last column, whatever it holds
        ]
    )
    words = parse_tsv(tsv)
    assert [(w.text, w.confidence, w.block, w.left) for w in words] == [
        ("Harbour", 96.5, 1, 10),
        ("notes", 12.0, 1, 110),
        ("Tab\tinside", 88.0, 2, 10),
    ]
    assert parse_tsv("") == [] and parse_tsv(TSV) == []


def _word(text: str, confidence: float, left: int = 0, line: int = 1, par: int = 1) -> OcrWord:
    return OcrWord(text, confidence, left, 100 * line, 40, 30 + line, 1, par, line)


def test_low_confidence_punctuation_is_dropped_and_words_are_kept_at_any_confidence() -> None:
    words = [_word("Company's", 0.0), _word("¢", 20.0), _word("_—", 49.9), _word("$", 50.0), _word("7", 3.0)]
    kept, dropped = confident(words)
    assert [w.text for w in kept] == ["Company's", "$", "7"]
    assert dropped == 2
    assert confident([], 50.0) == ((), 0)


def test_an_ocr_page_becomes_words_in_points_that_share_their_line() -> None:
    page = OcrPage(
        1, 612.0, 792.0, 300, (_word("Harbour", 90, 300), _word("notes", 90, 600), _word("x", 90, 0, 2))
    )
    geometry = page.geometry()
    first, second, third = geometry.words
    scale = 72 / 300
    assert (first.x0, first.x1) == (300 * scale, 340 * scale)
    assert (first.top, first.bottom) == (second.top, second.bottom) == (100 * scale, 131 * scale)
    assert first.size == pytest.approx(31 * scale)
    assert third.top == 200 * scale
    assert geometry.glyphs == len("Harbour") + len("notes") + len("x")
    assert page.paragraphs() == [["Harbour notes", "x"]]
    assert page.text() == "Harbour notes\nx"


# --- the engine absent ---


def test_a_missing_binary_is_a_model_error_naming_it_and_the_apt_command(tmp_path: Path) -> None:
    missing = str(tmp_path / "no" / "tesseract")
    with pytest.raises(ModelMissing) as caught:
        Tesseract(missing)
    message = str(caught.value)
    assert message.startswith(f"tesseract={missing!r}: OCR needs the tesseract binary")
    assert "at that path" in message and INSTALL in message
    with pytest.raises(ModelMissing, match="on PATH"):
        Tesseract("tesseract-not-installed-here")


def test_the_ocr_backend_without_tesseract_is_refused_by_the_registry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tesseract, "TESSERACT", str(tmp_path / "tesseract"))
    with pytest.raises(ModelMissing, match="apt-get install tesseract-ocr tesseract-ocr-eng"):
        get_parser("pdf", "ocr")


@pytest.mark.parametrize("backend", ["layout", "flat"])
def test_without_tesseract_a_scan_keeps_the_hint_and_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, backend: str
) -> None:
    monkeypatch.setattr(tesseract, "TESSERACT", str(tmp_path / "tesseract"))
    with pytest.raises(ScannedPdfError) as caught:
        get_parser("pdf", backend).parse(scanned_report(), source="scan.pdf")
    message = str(caught.value)
    assert message.startswith("scan.pdf: has no text layer on any of its 1 page: it looks scanned")
    assert "ocrmypdf" in message and INSTALL in message
    parsed = get_parser("pdf", backend).parse(scans.mixed_report(), source="mixed.pdf")
    assert parsed.ocr_pages == ()
    assert "harbour authority" in parsed.text and "pelicans" not in parsed.text
    assert any("page 2 has no text layer" in w and "ocrmypdf" in w for w in parsed.warnings)
    assert any("page 2 is an image of text" in w and INSTALL in w for w in parsed.warnings)


# --- with tesseract ---


@needs_tesseract
def test_the_ocr_backend_reads_the_scan_close_to_its_truth_in_valid_blocks() -> None:
    parsed = OcrPdfParser().parse(scanned_report(), source="scan.pdf")
    check_blocks(parsed)
    assert word_f1(parsed.text, truth_of()) >= MIN_WORD_F1
    assert parsed.ocr_pages == (1,)
    assert {block.meta["page"] for block in parsed.blocks} == {"1"}
    assert all(block.meta["ocr"].startswith("tesseract ") for block in parsed.blocks)
    (note,) = parsed.warnings
    assert note.startswith("scan.pdf: page 1 read by OCR (tesseract ") and "300 dpi" in note


@needs_tesseract
@pytest.mark.parametrize("backend", ["layout", "flat"])
def test_layout_and_flat_read_a_scan_by_ocr(backend: str) -> None:
    parsed = get_parser("pdf", backend).parse(scanned_report(), source="scan.pdf")
    check_blocks(parsed)
    assert word_f1(parsed.text, truth_of()) >= MIN_WORD_F1
    assert parsed.ocr_pages == (1,)
    if backend == "layout":  # its rules run on the OCR'd words: the 18-point title is a heading
        (heading,) = [parsed.text[b.start : b.end] for b in parsed.blocks if b.kind == "heading"]
        assert tokens(heading) == tokens(scans.TITLE)


@needs_tesseract
@pytest.mark.parametrize("backend", ["layout", "flat"])
def test_a_mixed_file_keeps_its_text_layer_and_ocrs_only_the_scanned_page(backend: str) -> None:
    parser = get_parser("pdf", backend)
    parsed = parser.parse(scans.mixed_report(), source="mixed.pdf")
    check_blocks(parsed)
    assert parsed.ocr_pages == (2,)
    by_page = {
        page: "\n\n".join(parsed.text[b.start : b.end] for b in parsed.blocks if b.meta.get("page") == page)
        for page in ("1", "2")
    }
    born_digital = parser.parse(pdf_bytes([scans.report_page()]), source="text.pdf")
    assert by_page["1"] == born_digital.text  # the text layer as it is, not OCR's reading of it
    assert word_f1(by_page["2"], truth_of("Harbour Notes", (scans.FACT,))) >= MIN_WORD_F1
    assert {b.meta.get("ocr", "") != "" for b in parsed.blocks if b.meta.get("page") == "2"} == {True}
    assert all("ocr" not in b.meta for b in parsed.blocks if b.meta.get("page") == "1")
    assert any(w.startswith("mixed.pdf: page 2 read by OCR") for w in parsed.warnings)


@needs_tesseract
def test_a_missing_language_names_its_debian_package() -> None:
    with pytest.raises(ModelMissing, match=r"languages='eng\+xqz'.*apt-get install tesseract-ocr-xqz"):
        Tesseract(languages="eng+xqz")


# Words of the report page (longer than three letters): English, as tesseract's dictionary expects of
# print, and long enough that one misread letter is not a whole page's F1.
VOCABULARY = sorted(
    {
        w.strip(".,").lower()
        for lines in scans.PARAGRAPHS
        for line in lines
        for w in line.split()
        if len(w) > 3
    }
)


@st.composite
def pages(draw: st.DrawFn) -> tuple[str, list[list[str]]]:
    title = " ".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3))).title()
    paragraphs = [
        [" ".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=3, max_size=8))) for _ in range(lines)]
        for lines in draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    ]
    return title, paragraphs


@needs_tesseract
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages())
def test_any_scanned_page_parses_into_valid_blocks_that_hold_its_words(
    page: tuple[str, list[list[str]]],
) -> None:
    title, paragraphs = page
    data = scanned(pdf_bytes([scans.report_page(title, paragraphs)]))
    for parser in (OcrPdfParser(), get_parser("pdf", "layout")):
        parsed: Parsed = parser.parse(data, source="any.pdf")
        check_blocks(parsed)
        assert word_f1(parsed.text, truth_of(title, paragraphs)) >= MIN_WORD_F1


def test_ocr_settings_and_backend_settings_are_checked() -> None:
    from clear_rag.parse.recover import OcrSettings

    for bad in ({"dpi": 0}, {"workers": 0}, {"dpi": True}, {"min_confidence": 101.0}):
        with pytest.raises(ValueError, match="OcrSettings"):
            OcrSettings(**bad)
    with pytest.raises(ValueError, match="dpi=0 must be a whole number"):
        ocr.OcrPdfParser(dpi=0)


@needs_tesseract
def test_a_page_ocr_fails_on_is_named_and_the_other_pages_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    def unrenderable(*args: object) -> object:
        raise RuntimeError("injected")

    monkeypatch.setattr("clear_rag.parse.ocr.render", unrenderable)
    parsed = get_parser("pdf", "layout").parse(scans.mixed_report(), source="mixed.pdf")
    check_blocks(parsed)
    assert parsed.ocr_pages == () and "harbour authority" in parsed.text and "pelicans" not in parsed.text
    assert any(
        w.startswith(
            "mixed.pdf: page 2 could not be read by OCR and left out (page=2: pdfium could not render"
        )
        for w in parsed.warnings
    )
