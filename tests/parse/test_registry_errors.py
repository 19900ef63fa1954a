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
from clear_rag.parse.registry import backends, file_type_of, get_parser, register, supported
from clear_rag.parse.text import TextParser
from clear_rag.store import Store

SUPPORTED = "Supported types: html (.htm, .html); markdown (.markdown, .md); pdf (.pdf); text (.text, .txt)"


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made in a test end with it."""
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    monkeypatch.setattr(registry, "_defaults", dict(registry._defaults))
    monkeypatch.setattr(registry, "EXTENSIONS", dict(registry.EXTENSIONS))


def test_a_pdf_is_parsed_by_the_layout_backend_unless_another_is_named() -> None:
    assert file_type_of("manuals/brakes.pdf") == "pdf"
    assert backends("pdf") == ["docling", "flat", "layout", "marker", "ocr"]
    assert get_parser("pdf").backend == "layout"
    assert get_parser("pdf", "flat").backend == "flat"


def test_an_unknown_type_lists_only_the_types_that_have_a_parser() -> None:
    with pytest.raises(UnsupportedFileError) as caught:
        file_type_of("notes.DOCX")
    assert str(caught.value) == (
        "notes.DOCX: extension='.docx': has a file type clear-rag does not parse. "
        f"{SUPPORTED}. Leave the file out, or convert it to one of those"
    )
    with pytest.raises(UnsupportedFileError, match=r"^Makefile: extension='\(none\)'"):
        file_type_of("Makefile")


def test_asking_for_a_type_without_a_parser_says_so_without_a_file() -> None:
    for backend in (None, "layout"):
        with pytest.raises(UnsupportedFileError, match="is a epub file, and no epub parser") as caught:
            get_parser("epub", backend)
        assert "None" not in str(caught.value)  # the predecessor said "no parser backend None"


def test_an_unknown_backend_of_a_parsed_type_names_the_choices() -> None:
    with pytest.raises(UnsupportedFileError, match=r"backend='nope': .* Choose one of: plain$"):
        get_parser("text", "nope")


@pytest.mark.usefixtures("fresh_registry")
def test_a_registered_parser_makes_its_type_supported() -> None:
    registry.EXTENSIONS[".rst"] = "rst"
    assert "rst" not in supported()
    register("rst", "plain", TextParser)
    assert supported()["rst"] == [".rst"]
    assert file_type_of("brakes.rst") == "rst"
    assert isinstance(get_parser("rst"), TextParser)


def test_ingesting_an_unparsed_type_fails_that_file_by_name(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    (corpus / "manual.docx").write_bytes(b"PK\x03\x04")  # named on its own: a folder walk skips it
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus, corpus / "manual.docx"], chunker)
    (failed,) = [o for o in report.outcomes if o.action == "failed"]
    assert (failed.message or "").startswith(f"{corpus / 'manual.docx'}: extension='.docx'")
    assert "has a file type clear-rag does not parse" in (failed.message or "")
    assert report.count("added") == 3


def test_clear_rag_ingest_of_an_unparsed_type_prints_one_line_naming_it(tmp_path: Path) -> None:
    doc = tmp_path / "some.docx"
    doc.write_bytes(b"PK\x03\x04")
    result = CliRunner().invoke(app, ["ingest", str(doc), "--store", str(tmp_path / "s"), "--no-index"])
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if "failed " in line]
    assert line.split() == ["failed", f"{doc}:", "extension='.docx':", *line.split()[3:]]
    assert "does not parse" in line and SUPPORTED in line
