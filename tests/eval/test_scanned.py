"""Scanned renders (``clear_rag.eval.scanned``) and the ``scanned`` part of ``clear-rag parse-eval``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pypdfium2  # type: ignore[import-untyped]
import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.cli.parse import DEFAULT_FOLDER, DEFAULT_SCANS, command_line, scans_folder
from clear_rag.errors import ScannedPdfError
from clear_rag.eval.scanned import has_text, scan_pdf, write_scans
from clear_rag.parse import pdf, tesseract
from clear_rag.parse.layout.parser import LayoutPdfParser
from clear_rag.report.tables import parse_table
from clear_rag.results.schema import check_document
from tests.eval.test_parse_eval_cli import corpus, scripted  # noqa: F401  (fixtures)
from tests.parse.pdfs import report_pdf
from tests.parse.scans import needs_tesseract

runner = CliRunner()
REPORT = report_pdf()


def sizes(data: bytes) -> list[tuple[float, float]]:
    document = pypdfium2.PdfDocument(data)
    try:
        return [(round(page.get_width(), 3), round(page.get_height(), 3)) for page in document]
    finally:
        document.close()


def test_a_scan_is_the_same_pages_as_images_only_and_the_same_bytes_every_time() -> None:
    scan = scan_pdf(REPORT, source="report.pdf", dpi=100)
    assert scan == scan_pdf(REPORT, source="report.pdf", dpi=100)
    assert sizes(scan) == sizes(REPORT)
    assert has_text(REPORT, source="report.pdf") and not has_text(scan, source="scan.pdf")
    read = pdf.read_pages(scan, "scan.pdf", lambda page: len(page.chars))
    assert [(page.value, page.scanned) for page in read] == [(0, True)] * len(sizes(REPORT))
    with pytest.raises(ScannedPdfError, match=r"scan\.pdf: has no text layer on any of its 2 pages"):
        LayoutPdfParser(ocr=None).parse(scan, source="scan.pdf")


@pytest.mark.parametrize(("dpi", "quality"), [(35, 75), (1201, 75), (300, 0), (300, 96), (True, 75)])
def test_a_resolution_or_quality_out_of_range_is_refused(dpi: int, quality: int) -> None:
    with pytest.raises(ValueError, match="must be a whole number from"):
        scan_pdf(REPORT, source="report.pdf", dpi=dpi, quality=quality)


def test_writing_scans_skips_scans_and_keeps_paths(tmp_path: Path) -> None:
    source = tmp_path / "pdf"
    (source / "one-column").mkdir(parents=True)
    (source / "one-column" / "acme.pdf").write_bytes(REPORT)
    (source / "already.pdf").write_bytes(scan_pdf(REPORT, source="x", dpi=72))
    out = tmp_path / "scanned"
    made = list(write_scans(sorted(source.rglob("*.pdf")), source, out, dpi=72))
    assert made == [(source / "one-column" / "acme.pdf", out / "one-column" / "acme.pdf")]
    written = (out / "one-column" / "acme.pdf").stat().st_mtime_ns
    assert list(write_scans([source / "one-column" / "acme.pdf"], source, out, dpi=72)) == made
    assert (out / "one-column" / "acme.pdf").stat().st_mtime_ns == written  # the same bytes: left alone


def test_scans_go_beside_the_default_corpus_only_unless_asked() -> None:
    assert scans_folder(DEFAULT_FOLDER, None, False) == DEFAULT_SCANS
    assert scans_folder(DEFAULT_FOLDER, None, True) is None
    assert scans_folder(Path("mine"), None, False) is None
    assert scans_folder(Path("mine"), Path("out"), False) == Path("out")
    backends = ("layout",)
    assert "--no-scans" in command_line(DEFAULT_FOLDER, None, backends, Path("results"), None)
    assert "--scans" not in command_line(DEFAULT_FOLDER, None, backends, Path("results"), DEFAULT_SCANS)
    mine = shlex.split(command_line(Path("mine"), None, backends, Path("results"), Path("out"), 200))
    assert mine[mine.index("--scans") + 1] == "out" and mine[mine.index("--scan-dpi") + 1] == "200"


def _run(folder: Path, *extra: str) -> dict[str, Any]:
    results = folder / "results"
    args = ["parse-eval", str(folder / "pdf"), "--backend", "scripted", "--scans", str(folder / "scans")]
    result = runner.invoke(app, [*args, *extra, "--save-results", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    check_document(document, "parse.json")  # the result schema takes it
    command = shlex.split(document["command"])
    assert command[command.index("--scans") + 1] == str(folder / "scans")
    return document


@needs_tesseract
def test_parse_eval_scores_scanned_renders_apart_from_the_pdfs(scripted: None, corpus: Path) -> None:  # noqa: F811
    document = _run(corpus, "--scan-dpi", "100")
    scanned = document["scanned"]
    assert scanned["dpi"] == 100 and scanned["folder"] == (corpus / "scans").as_posix()
    assert scanned["engine"].startswith("tesseract ")
    assert set(scanned["backends"]["scripted"]["documents"]) == {"acme-one-column.pdf"}
    assert (corpus / "scans" / "acme-one-column.pdf").is_file()
    # the original's pages and furniture are counted, not the scan's (which has no text to count)
    scores = scanned["backends"]["scripted"]["documents"]["acme-one-column.pdf"]
    assert scores["pages"] == 1 and scores["counts"]["furniture_on_pages"] == 2
    assert set(document["backends"]["scripted"]["documents"]) == {"acme-one-column.pdf"}  # the PDFs alone
    assert "| scripted on scans | acme-one-column.pdf |" in parse_table(document, "parse.json")
    assert "rendered at 100 dpi" in parse_table(document, "parse.json")


def test_without_tesseract_the_scanned_part_says_why_it_was_not_run(
    scripted: None,  # noqa: F811
    corpus: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tesseract, "TESSERACT", str(corpus / "no-tesseract"))
    document = _run(corpus)
    assert (
        document["scanned"]["dpi"] == 300
        and "apt-get install tesseract-ocr" in document["scanned"]["not_run"]
    )
    assert not (corpus / "scans").exists()
    assert "Not run: scanned renders (tesseract=" in parse_table(document, "parse.json")
