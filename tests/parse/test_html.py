"""HTML: the text a browser shows, typed blocks, and warnings for markup that does not balance."""

from __future__ import annotations

import pytest

from clear_rag.errors import BinaryFileError, EmptyFileError
from clear_rag.parse.base import Parsed
from clear_rag.parse.html import HtmlParser
from clear_rag.parse.registry import get_parser


def _parse(source: str, name: str = "page.html") -> Parsed:
    return HtmlParser().parse(source.encode("utf-8"), source=name)


def _blocks(parsed: Parsed) -> list[tuple[str, int, str]]:
    return [(b.kind, b.level, parsed.text[b.start : b.end]) for b in parsed.blocks]


def test_the_registry_builds_the_html_parser() -> None:
    parser = get_parser("html")
    assert isinstance(parser, HtmlParser)
    assert (parser.file_type, parser.backend, parser.version) == ("html", "html", "1")


def test_a_page_gives_headings_and_paragraphs_with_exact_spans() -> None:
    parsed = _parse(
        "<!DOCTYPE html><html><head><title>Tab title</title><style>p { color: red }</style></head>"
        "<body><h2>Chains</h2>\n<p>Replace a chain\n   at <b>0.5%</b> stretch.</p></body></html>"
    )
    assert parsed.text == "Chains\n\nReplace a chain at 0.5% stretch."
    assert [(b.kind, b.start, b.end, b.level) for b in parsed.blocks] == [
        ("heading", 0, 6, 2),
        ("paragraph", 8, 40, 0),
    ]
    assert parsed.warnings == ()
    assert parsed.media_type == "text/html"


def test_entities_are_decoded_and_br_breaks_a_line() -> None:
    parsed = _parse("<p>Fish &amp; chips&nbsp;&#8212; &lt;tag&gt;<br>next line</p>")
    assert parsed.text == "Fish & chips\u00a0— <tag>\nnext line"


def test_loose_text_and_divs_become_paragraphs() -> None:
    parsed = _parse("before <div>in <span>div</span></div> after <section><p>one</p><p>two</p></section>")
    assert _blocks(parsed) == [
        ("paragraph", 0, "before"),
        ("paragraph", 0, "in div"),
        ("paragraph", 0, "after"),
        ("paragraph", 0, "one"),
        ("paragraph", 0, "two"),
    ]


def test_hidden_elements_are_dropped() -> None:
    parsed = _parse(
        "<p>shown</p><script>var hidden = '<p>no</p>';</script><noscript>enable js</noscript>"
        "<template><p>later</p></template><style>.x{}</style><p>also shown</p>"
    )
    assert parsed.text == "shown\n\nalso shown"


def test_nested_lists_are_one_block_with_markers() -> None:
    parsed = _parse(
        "<ul><li>a<ul><li>b</li><li><p>c</p><p>c2</p></li></ul>tail</li><li></li><li>d</li></ul>"
        '<ol start="3"><li>x<li>y</ol>'
    )
    assert _blocks(parsed) == [
        ("list", 1, "- a\n  - b\n  - c\n    c2\n  tail\n- d"),
        ("list", 1, "3. x\n4. y"),
    ]


def test_pre_in_a_list_item_keeps_its_lines() -> None:
    parsed = _parse("<ul><li>Run:<pre>make\n  --fast</pre>done</li></ul>")
    assert parsed.text == "- Run:\n  make\n    --fast\n  done"


def test_tables_are_rows_of_cells() -> None:
    parsed = _parse(
        "<table><caption>Sizes</caption><thead><tr><th>Part</th><th>Size</th></tr></thead>"
        "<tbody><tr><td>pad</td><td><p>1.5</p><p>mm</p></td></tr><tr><td></td><td></td></tr>"
        "<tr><td>rotor<td><td>x</tbody></table>"
    )
    assert _blocks(parsed) == [("table", 0, "Sizes\nPart | Size\npad | 1.5 mm\nrotor |  | x")]


def test_pre_is_verbatim_code_with_its_language() -> None:
    parsed = _parse('<pre><code class="language-python">\ndef f():\n    return  1 &lt; 2\n</code></pre>')
    assert parsed.text == "def f():\n    return  1 < 2"
    assert [(b.kind, dict(b.meta)) for b in parsed.blocks] == [("code", {"language": "python"})]


def test_code_span_starts_at_its_first_visible_character() -> None:
    parsed = _parse("<p>x</p><pre>   indented\n</pre>")
    assert parsed.text == "x\n\n   indented"
    assert parsed.text[parsed.blocks[1].start : parsed.blocks[1].end] == "indented"


def test_blockquotes_give_their_paragraphs() -> None:
    parsed = _parse("<blockquote><p>one</p><p>two</p></blockquote>")
    assert _blocks(parsed) == [("paragraph", 0, "one"), ("paragraph", 0, "two")]


def test_a_head_left_open_ends_at_the_first_body_content() -> None:
    parsed = _parse("<head><title>Title</title>\nHello <b>there</b><p>more</p>")
    assert parsed.text == "Hello there\n\nmore"
    assert parsed.warnings == ()


def test_optional_end_tags_need_no_warning() -> None:
    parsed = _parse("<p>one<p>two<ul><li>a<li>b</ul><table><tr><td>c<td>d</table>")
    assert parsed.text == "one\n\ntwo\n\n- a\n- b\n\nc | d"
    assert parsed.warnings == ()


def test_an_unclosed_table_keeps_its_text_and_warns_with_the_line() -> None:
    parsed = _parse("<html><body>\n<p>Intro</p>\n<table><tr><td>Hours<td>9 to 5\n", name="f.html")
    assert parsed.text == "Intro\n\nHours | 9 to 5"
    assert parsed.warnings == ("f.html: <table> opened at line 3 was never closed; its text was kept",)


def test_mismatched_and_stray_tags_keep_text_and_warn() -> None:
    parsed = _parse("<p>Open <b>bold <i>both</b> after</i></p>\n</div>", name="m.html")
    assert parsed.text == "Open bold both after"
    assert parsed.warnings == (
        "m.html: <i> opened at line 1 was not closed before </b> at line 1; its text was kept",
        "m.html: </i> at line 1 has no matching <i>; it was ignored",
        "m.html: </div> at line 2 has no matching <div>; it was ignored",
    )


def test_an_unclosed_heading_swallows_the_rest_but_says_so() -> None:
    parsed = _parse("<h1>Title\n<p>Body</p>", name="h.html")
    assert _blocks(parsed) == [("heading", 1, "Title\nBody")]
    assert parsed.warnings == ("h.html: <h1> opened at line 1 was never closed; its text was kept",)


def test_an_unclosed_script_drops_its_content_and_warns() -> None:
    parsed = _parse("<p>kept</p>\n<script>var x = 1;\n<p>inside the script</p>", name="s.html")
    assert parsed.text == "kept"
    assert parsed.warnings == ("s.html: <script> opened at line 2 was never closed; its content was dropped",)


def test_many_problems_are_summarised() -> None:
    parsed = _parse("<p>text</p>" + "</span>" * 9, name="x.html")
    assert len(parsed.warnings) == 6
    assert (
        parsed.warnings[-1] == "x.html: 4 more tags do not balance (not listed); fix the markup to see them"
    )


def test_non_utf8_html_warns_and_keeps_the_text() -> None:
    parsed = HtmlParser().parse("<p>Crème brûlée</p>".encode("cp1252"), source="menu.html")
    assert parsed.text == "Crème brûlée"
    assert parsed.warnings[0].startswith("menu.html: is not valid UTF-8")


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert('only a script')</script>",
        "<html><head><title>Only a title</title></head><body>  </body></html>",
        "<p> \n </p><br><hr><img src=x alt=y>",
    ],
)
def test_a_page_without_text_is_refused_by_name(source: str) -> None:
    with pytest.raises(EmptyFileError, match=r"blank\.html: has no text once parsed"):
        _parse(source, name="blank.html")


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(EmptyFileError, match=r"zero\.html"):
        HtmlParser().parse(b"", source="zero.html")


def test_a_binary_file_is_refused() -> None:
    with pytest.raises(BinaryFileError, match=r"img\.html"):
        HtmlParser().parse(b"\x89PNG\r\n\x1a\n\x00\x00", source="img.html")
