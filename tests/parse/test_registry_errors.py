"""A file no parser handles is an error naming the file and the types that are supported."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.chunk.base import Chunker
from clear_rag.cli import app
from clear_rag.errors import UnsupportedFileError
from clear_rag.ingest import ingest
from clear_rag.parse import registry
from clear_rag.parse.registry import file_type_of, get_parser, register, supported
from clear_rag.parse.text import TextParser
from clear_rag.store import Store

SUPPORTED = "Supported types: html (.htm, .html); markdown (.markdown, .md); text (.text, .txt)"


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made in a test end with it."""
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    monkeypatch.setattr(registry, "_defaults", dict(registry._defaults))


def test_a_pdf_names_the_file_and_says_pdf_is_not_available_yet() -> None:
    with pytest.raises(UnsupportedFileError) as caught:
        file_type_of("manuals/brakes.pdf")
    message = str(caught.value)
    assert message.startswith("manuals/brakes.pdf: extension='.pdf': ")
    assert "PDF parsing is not available yet" in message
    assert SUPPORTED in message and ".pdf" not in message.split("Supported types:")[1]


def test_an_unknown_type_lists_only_the_types_that_have_a_parser() -> None:
    with pytest.raises(UnsupportedFileError) as caught:
        file_type_of("notes.DOCX")
    assert str(caught.value) == (
        "notes.DOCX: extension='.docx': has a file type clear-rag does not parse. "
        f"{SUPPORTED}. Leave the file out, or convert it to one of those"
    )
    with pytest.raises(UnsupportedFileError, match=r"^Makefile: extension='\(none\)'"):
        file_type_of("Makefile")


def test_asking_for_a_pdf_parser_says_the_same_without_a_file() -> None:
    for backend in (None, "layout"):
        with pytest.raises(UnsupportedFileError, match="PDF parsing is not available yet") as caught:
            get_parser("pdf", backend)
        assert "None" not in str(caught.value)  # the predecessor said "no parser backend None"


def test_an_unknown_backend_of_a_parsed_type_names_the_choices() -> None:
    with pytest.raises(UnsupportedFileError, match=r"backend='nope': .* Choose one of: plain$"):
        get_parser("text", "nope")


@pytest.mark.usefixtures("fresh_registry")
def test_a_registered_pdf_parser_makes_pdf_supported() -> None:
    assert "pdf" not in supported()
    register("pdf", "flat", TextParser)
    assert supported()["pdf"] == [".pdf"]
    assert file_type_of("brakes.pdf") == "pdf"
    assert isinstance(get_parser("pdf"), TextParser)


def test_ingesting_a_pdf_fails_that_file_by_name(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    (corpus / "manual.pdf").write_bytes(b"%PDF-1.4\n")
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus], chunker)
    (failed,) = [o for o in report.outcomes if o.action == "failed"]
    assert (failed.message or "").startswith(f"{corpus / 'manual.pdf'}: extension='.pdf'")
    assert "PDF parsing is not available yet" in (failed.message or "")
    assert report.count("added") == 3


def test_clear_rag_ingest_of_a_pdf_prints_one_line_naming_it(tmp_path: Path) -> None:
    pdf = tmp_path / "some.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    result = CliRunner().invoke(app, ["ingest", str(pdf), "--store", str(tmp_path / "s"), "--no-index"])
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if "failed " in line]
    assert line.split() == ["failed", f"{pdf}:", "extension='.pdf':", *line.split()[3:]]
    assert "PDF parsing is not available yet" in line and SUPPORTED in line
