"""Plain text: the canonical text is the decoded file; blank lines separate blocks."""

from __future__ import annotations

import pytest

from clear_rag.errors import BinaryFileError, EmptyFileError
from clear_rag.parse.pieces import Piece, assemble
from clear_rag.parse.registry import get_parser
from clear_rag.parse.text import TextParser
from clear_rag.types import Block


def _parse(text: str) -> tuple[str, list[tuple[str, str]]]:
    parsed = TextParser().parse(text.encode("utf-8"), source="notes.txt")
    return parsed.text, [(b.kind, parsed.text[b.start : b.end]) for b in parsed.blocks]


def test_the_registry_builds_the_text_parser() -> None:
    parser = get_parser("text")
    assert isinstance(parser, TextParser)
    assert (parser.file_type, parser.backend, parser.version) == ("text", "plain", "1")


def test_canonical_text_is_the_file_and_blank_lines_separate_paragraphs() -> None:
    source = "First line\nsecond line\n\n\nNext paragraph.\n"
    text, blocks = _parse(source)
    assert text == source
    assert blocks == [("paragraph", "First line\nsecond line"), ("paragraph", "Next paragraph.")]


def test_spans_skip_surrounding_whitespace() -> None:
    parsed = TextParser().parse(b"  indented start  \nend  \n \t \nnext", source="a.txt")
    assert parsed.blocks == (Block("paragraph", 2, 22), Block("paragraph", 29, 33))


def test_a_run_of_marked_lines_is_a_list() -> None:
    _, blocks = _parse("- a\n* b\n  + nested\n1. one\n2) two\n\nintro\n- item\n")
    assert blocks == [("list", "- a\n* b\n  + nested\n1. one\n2) two"), ("paragraph", "intro\n- item")]


def test_a_list_block_has_level_one() -> None:
    parsed = TextParser().parse(b"- a\n- b", source="a.txt")
    assert [(b.kind, b.level) for b in parsed.blocks] == [("list", 1)]


@pytest.mark.parametrize("line", ["-no space", "1.5 mm of pad", "*emphasis* first", "--- rule"])
def test_lines_that_only_look_like_markers_are_a_paragraph(line: str) -> None:
    assert _parse(line)[1] == [("paragraph", line)]


def test_form_feed_and_unicode_space_lines_separate_blocks_without_moving_offsets() -> None:
    source = "page one\n\f\npage two\u2028still two\n\u3000\nthree"
    text, blocks = _parse(source)
    assert text == source
    assert blocks == [
        ("paragraph", "page one"),
        ("paragraph", "page two\u2028still two"),
        ("paragraph", "three"),
    ]


def test_crlf_is_normalised_and_spans_point_into_the_normalised_text() -> None:
    parsed = TextParser().parse(b"a\r\nb\r\n\r\nc", source="a.txt")
    assert parsed.text == "a\nb\n\nc"
    assert [parsed.text[b.start : b.end] for b in parsed.blocks] == ["a\nb", "c"]


def test_non_utf8_text_is_decoded_with_a_warning() -> None:
    parsed = TextParser().parse("café crème".encode("cp1252"), source="menu.txt")
    assert parsed.text == "café crème"
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith("menu.txt: is not valid UTF-8")


@pytest.mark.parametrize("data", [b"", b"  \n\t\n"])
def test_empty_files_are_refused_by_name(data: bytes) -> None:
    with pytest.raises(EmptyFileError, match=r"empty\.txt"):
        TextParser().parse(data, source="empty.txt")


def test_unicode_whitespace_only_is_empty_too() -> None:
    with pytest.raises(EmptyFileError, match=r"ws\.txt: has no text once parsed"):
        TextParser().parse("\u3000\u00a0\n".encode(), source="ws.txt")


def test_binary_files_are_refused() -> None:
    with pytest.raises(BinaryFileError, match=r"blob\.txt"):
        TextParser().parse(b"PK\x03\x04\x00\x00binary", source="blob.txt")


def test_assemble_joins_pieces_with_a_blank_line_and_drops_empty_ones() -> None:
    text, blocks = assemble(
        [
            Piece("heading", "  Title \n", level=2),
            Piece("paragraph", " \n "),
            Piece("code", "\n\n    indented()\n  \n", meta={"language": "py"}),
        ]
    )
    assert text == "Title\n\n    indented()"
    assert blocks == (Block("heading", 0, 5, 2), Block("code", 11, 21, 0, {"language": "py"}))
