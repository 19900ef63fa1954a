"""``clear-rag text``: the canonical text of a file or a stored document, and its blocks."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.chunk.base import Chunker
from clear_rag.cli import app
from clear_rag.cli.text import PREVIEW, block_lines
from clear_rag.eval.golden import normalise
from clear_rag.ingest import ingest, parse_file
from clear_rag.store import Store
from clear_rag.types import Block

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path, corpus: Path, chunker: Chunker) -> Path:
    """A store over the toy corpus, with ids relative to ``tmp_path`` (``docs/a.md`` and so on)."""
    with Store(tmp_path / "store", root=tmp_path) as opened:
        ingest(opened, [corpus], chunker)
    return tmp_path / "store"


def test_a_file_prints_its_canonical_text(corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["text", str(corpus / "a.md"), "--store", str(tmp_path / "none")])
    assert result.exit_code == 0, result.output
    text = parse_file(corpus / "a.md", "docs/a.md").document.text
    assert not text.endswith("\n") and result.output == text + "\n"  # a newline only where it lacks one
    assert "*new pads*" not in result.output  # markup is not part of the text quotes match
    assert normalise("Disc brakes need new pads at 1.5 mm.") in normalise(result.output)
    assert not (tmp_path / "none").exists(), "reading a file must not create a store"


def test_blocks_show_kind_level_span_and_preview(corpus: Path) -> None:
    result = runner.invoke(app, ["text", str(corpus / "a.md"), "--blocks"])
    assert result.exit_code == 0, result.output
    doc = parse_file(corpus / "a.md", "docs/a.md").document
    lines = result.output.splitlines()
    assert lines[0].split() == ["kind", "level", "span", "text"]
    assert len(lines) == 1 + len(doc.blocks)
    for line, block in zip(lines[1:], doc.blocks, strict=True):
        kind, level, start, end, *words = line.split()
        assert (kind, int(level)) == (block.kind, block.level)
        assert (start, end) == (f"[{block.start},", f"{block.end})")
        assert " ".join(words) == " ".join(doc.text[block.start : block.end].split())
    assert lines[1].split()[:2] == ["heading", "1"]


def test_a_long_block_is_cut_to_the_preview_width() -> None:
    text = "word " * 40
    (line,) = block_lines(text, (Block("paragraph", 0, len(text)),))[1:]
    preview = line.split(")  ", 1)[1]
    assert len(preview) == PREVIEW and preview.endswith("...")
    assert block_lines("", ()) == [block_lines("", ())[0]]  # no blocks: the header alone


def test_a_document_id_prints_the_stored_text(store: Path, corpus: Path) -> None:
    stored = (corpus / "b.txt").read_text(encoding="utf-8")
    (corpus / "b.txt").unlink()  # only the store has it now
    result = runner.invoke(app, ["text", "docs/b.txt"], env={"CLEAR_RAG_STORE": str(store)})
    assert result.exit_code == 0, result.output
    with Store(store) as opened:
        assert result.output == opened.document_text("docs/b.txt")
    assert normalise(result.output) == normalise(stored)
    blocks = runner.invoke(app, ["text", "docs/b.txt", "--blocks", "--store", str(store)])
    assert blocks.exit_code == 0, blocks.output
    assert "paragraph" in blocks.output and "Gravel tyres run lower." in blocks.output


def test_an_unknown_id_names_it_and_the_closest_ids(store: Path) -> None:
    result = runner.invoke(app, ["text", "docs/a.mdx", "--store", str(store)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith(
        f"error: docs/a.mdx: is neither a file nor a document id in the store at {store}"
    )
    assert "did you mean docs/a.md" in result.output


def test_an_id_like_none_lists_a_few_that_exist(store: Path) -> None:
    result = runner.invoke(app, ["text", "zzz", "--store", str(store)])
    assert result.exit_code == 2
    assert "such as docs/a.md, docs/b.txt, docs/sub/c.html (3 in the store)" in result.output


def test_an_empty_store_says_to_ingest(tmp_path: Path) -> None:
    Store(tmp_path / "empty").close()
    result = runner.invoke(app, ["text", "docs/a.md", "--store", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "holds no documents: run `clear-rag ingest PATH` first" in result.output


def test_a_missing_file_without_a_store_says_so_and_creates_nothing(tmp_path: Path) -> None:
    missing, none = tmp_path / "gone.md", tmp_path / "no-store"
    result = runner.invoke(app, ["text", str(missing), "--store", str(none)])
    assert result.exit_code == 2
    assert f"error: {missing}: is not a file, and there is no store at {none}" in result.output
    assert "--store" in result.output and not none.exists()


def test_a_folder_or_an_unparsed_type_is_an_error(tmp_path: Path, corpus: Path) -> None:
    folder = runner.invoke(app, ["text", str(corpus)])
    assert folder.exit_code == 2 and f"{corpus}: is a folder" in folder.output
    unparsed = tmp_path / "manual.docx"
    unparsed.write_bytes(b"PK\x03\x04")
    result = runner.invoke(app, ["text", str(unparsed)])
    assert result.exit_code == 2
    assert f"{unparsed}: extension='.docx'" in result.output
    assert "has a file type clear-rag does not parse" in result.output
