"""Markdown: block structure from markdown-it, canonical text rendered as plain prose."""

from __future__ import annotations

import pytest

from clear_rag.errors import BinaryFileError, EmptyFileError
from clear_rag.parse.markdown import MarkdownParser
from clear_rag.parse.registry import get_parser


def _parse(source: str) -> tuple[str, list[tuple[str, int, str]]]:
    parsed = MarkdownParser().parse(source.encode("utf-8"), source="doc.md")
    return parsed.text, [(b.kind, b.level, parsed.text[b.start : b.end]) for b in parsed.blocks]


def test_the_registry_builds_the_markdown_parser() -> None:
    parser = get_parser("markdown")
    assert isinstance(parser, MarkdownParser)
    assert (parser.file_type, parser.backend, parser.version) == ("markdown", "markdown-it", "1")


def test_headings_lose_their_markers_and_keep_their_level() -> None:
    text, blocks = _parse("# One\n\n### Three ###\n\nSetext\n------\n")
    assert text == "One\n\nThree\n\nSetext"
    assert blocks == [("heading", 1, "One"), ("heading", 3, "Three"), ("heading", 2, "Setext")]


def test_inline_markup_reads_as_plain_text() -> None:
    text, blocks = _parse(
        'Some *emphasis*, __strong__, [a link](https://x.org "t"), `x = 1`,\n'
        "![a *cat*](cat.png) and 5 &lt; 6 \\* 2.  \nHard break<br>and html break."
    )
    assert text == (
        "Some emphasis, strong, a link, x = 1,\na cat and 5 < 6 * 2.\nHard break\nand html break."
    )
    assert [kind for kind, _, _ in blocks] == ["paragraph"]


def test_blocks_are_separated_by_one_blank_line_and_spans_are_exact() -> None:
    parsed = MarkdownParser().parse(b"# T\n\n\n\nPara one\n\nPara two\n", source="doc.md")
    assert parsed.text == "T\n\nPara one\n\nPara two"
    assert [(b.kind, b.start, b.end) for b in parsed.blocks] == [
        ("heading", 0, 1),
        ("paragraph", 3, 11),
        ("paragraph", 13, 21),
    ]


def test_a_nested_list_is_one_block_with_markers_and_indentation() -> None:
    text, blocks = _parse("* a\n* b\n  1. c\n  2. d\n\n     more d\n+ next list\n")
    assert text == "- a\n- b\n  1. c\n  2. d\n     more d\n\n- next list"
    assert blocks == [("list", 1, "- a\n- b\n  1. c\n  2. d\n     more d"), ("list", 1, "- next list")]


@pytest.mark.parametrize(
    ("source", "text"), [("3) three\n4) four\n", "3. three\n4. four"), ("0. zero\n1. one", "0. zero\n1. one")]
)
def test_ordered_lists_keep_their_start_number(source: str, text: str) -> None:
    assert _parse(source)[0] == text


def test_fenced_and_indented_code_is_verbatim_with_its_language() -> None:
    parsed = MarkdownParser().parse(
        b"```python title\ndef f():\n\n    return 1\n```\n\n    indented  code\n", source="doc.md"
    )
    assert parsed.text == "def f():\n\n    return 1\n\nindented  code"
    assert [(b.kind, dict(b.meta)) for b in parsed.blocks] == [("code", {"language": "python"}), ("code", {})]


def test_tables_are_rows_of_cells_joined_with_bars() -> None:
    text, blocks = _parse("| Part | *Size* |\n|:-----|------:|\n| pad | 1.5 mm |\n| rotor | |\n")
    assert text == "Part | Size\npad | 1.5 mm\nrotor |"
    assert [kind for kind, _, _ in blocks] == ["table"]


def test_blockquotes_become_their_inner_blocks() -> None:
    _, blocks = _parse("> quoted *text*\n>\n> - in a list\n")
    assert blocks == [("paragraph", 0, "quoted text"), ("list", 1, "- in a list")]


def test_html_blocks_are_kept_as_paragraphs() -> None:
    assert _parse('<div class="note">\nRaw\n</div>\n')[1] == [
        ("paragraph", 0, '<div class="note">\nRaw\n</div>')
    ]


def test_front_matter_is_dropped() -> None:
    text, _ = _parse("---\ntitle: Brakes\ntags: [a]\n---\n# Brakes\n")
    assert text == "Brakes"


def test_a_lone_rule_at_the_top_is_not_front_matter() -> None:
    assert _parse("---\n\nText after a rule\n")[0] == "Text after a rule"


def test_list_items_holding_code_and_paragraphs() -> None:
    text, _ = _parse("1. Run:\n\n   ```sh\n   make test\n     --fast\n   ```\n2. Done\n")
    assert text == "1. Run:\n   make test\n     --fast\n2. Done"


def test_non_utf8_markdown_warns_and_keeps_the_text() -> None:
    parsed = MarkdownParser().parse("# Café".encode("cp1252"), source="cafe.md")
    assert parsed.text == "Café"
    assert len(parsed.warnings) == 1
    assert "cafe.md" in parsed.warnings[0]


@pytest.mark.parametrize("source", ["", "---\ntitle: x\n---\n", "***\n\n- \n"])
def test_a_document_without_text_is_refused_by_name(source: str) -> None:
    with pytest.raises(EmptyFileError, match=r"empty\.md"):
        MarkdownParser().parse(source.encode(), source="empty.md")


def test_binary_markdown_is_refused() -> None:
    with pytest.raises(BinaryFileError):
        MarkdownParser().parse(b"\x00\x01\x02", source="x.md")


def test_quotes_nested_past_the_limit_are_flattened_with_their_text() -> None:
    parsed = MarkdownParser().parse((">" * 100_000 + " deep *text*\n\nafter").encode(), source="q.md")
    assert parsed.text == "deep text\n\nafter"
    assert parsed.warnings == (
        "q.md: line 1: quotes or lists nested deeper than 32 levels were flattened into plain lines; "
        "their text is kept",
    )


def test_a_list_nested_past_the_limit_keeps_every_item_in_order() -> None:
    source = "".join("  " * depth + f"- item{depth}\n" for depth in range(100)) + "\nafter the list\n"
    parsed = MarkdownParser().parse(source.encode(), source="l.md")
    words = [w for w in parsed.text.split() if w != "-"]
    assert words == [f"item{depth}" for depth in range(100)] + ["after", "the", "list"]
    assert len(parsed.warnings) == 1 and "l.md: line 16:" in parsed.warnings[0]


def test_nesting_within_the_limit_is_parsed_as_usual() -> None:
    parsed = MarkdownParser().parse((">" * 20 + " twenty deep").encode(), source="ok.md")
    assert (parsed.text, parsed.warnings) == ("twenty deep", ())


def test_line_numbers_in_warnings_count_front_matter_lines() -> None:
    source = "---\ntitle: x\n---\n" + ">" * 40 + " deep\n"
    parsed = MarkdownParser().parse(source.encode(), source="f.md")
    assert parsed.text == "deep"
    assert "f.md: line 4:" in parsed.warnings[0]
