"""Properties every text parser keeps, on random documents.

The chunkers rely on the block invariant: blocks are in order, never overlap, neither start nor
end with whitespace, and together cover every visible character of the canonical text.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import InputError
from clear_rag.parse.base import Parsed, Parser
from clear_rag.parse.html import HtmlParser
from clear_rag.parse.markdown import MarkdownParser
from clear_rag.parse.text import TextParser

# Letters only, so a word never forms markup; accented and CJK letters included on purpose.
LETTERS = "abcdefghijklmnopqrstuvwxyz" + "éèêñüößøçåœ" + "漢字日本語中文한국어"
HIDDEN_WORD = "SCRIPTONLY"  # upper case: no generated word can contain it
SETTINGS = settings(max_examples=120, deadline=None)

words = st.text(alphabet=LETTERS, min_size=1, max_size=8)
Draw = Callable[[st.SearchStrategy[object]], object]


def check_blocks(parsed: Parsed) -> None:
    text = parsed.text
    covered = [False] * len(text)
    previous_end = 0
    for block in parsed.blocks:
        assert previous_end <= block.start < block.end <= len(text), (block, previous_end, len(text))
        piece = text[block.start : block.end]
        assert piece == piece.strip(), f"{block} has surrounding whitespace: {piece!r}"
        if block.kind == "heading":
            assert 1 <= block.level <= 6
        if block.kind == "list":
            assert block.level >= 1
        covered[block.start : block.end] = [True] * (block.end - block.start)
        previous_end = block.end
    uncovered = [(i, ch) for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert uncovered == [], f"characters outside every block: {uncovered[:5]} in {text!r}"


def check_words(parsed: Parsed, expected: list[str]) -> None:
    missing = [word for word in expected if word not in parsed.text]
    assert missing == [], f"{missing} missing from {parsed.text!r}"


# --- plain text ---

SPACES = st.sampled_from(["", " ", "  ", "\t", "\u00a0", "\u3000", "\f", "\u2028"])
MARKERS = st.sampled_from(["", "", "- ", "* ", "+ ", "1. ", "12) ", "  - "])


@st.composite
def text_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    lines: list[str] = []
    used: list[str] = []
    for index in range(draw(st.integers(1, 12))):
        if index and draw(st.integers(0, 3)) == 0:
            lines.append(draw(SPACES))  # a blank line, perhaps of unusual whitespace
            continue
        line_words = draw(st.lists(words, min_size=1, max_size=6))
        used += line_words
        separator = draw(st.sampled_from([" ", "  ", "\t", "\u3000"]))
        lines.append(draw(SPACES) + draw(MARKERS) + separator.join(line_words) + draw(SPACES))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"])), used


@SETTINGS
@given(text_documents())
def test_text_blocks_cover_the_text_and_the_text_is_the_file(document: tuple[str, list[str]]) -> None:
    source, used = document
    parsed = TextParser().parse(source.encode("utf-8"), source="p.txt")
    assert parsed.text == source
    check_blocks(parsed)
    check_words(parsed, used)


# --- Markdown ---


@st.composite
def md_inline(draw: st.DrawFn, used: list[str]) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        word = draw(words)
        used.append(word)
        wrap = draw(
            st.sampled_from(["{}", "{}", "*{}*", "**{}**", "`{}`", "[{}](https://e.org/x)", "![{}](i.png)"])
        )
        parts.append(wrap.format(word))
    return " ".join(parts)


@st.composite
def md_block(draw: st.DrawFn, used: list[str]) -> str:
    kind = draw(
        st.sampled_from(["heading", "paragraph", "list", "fence", "indented", "table", "quote", "html"])
    )
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(md_inline(used))
    if kind == "paragraph":
        return "\n".join(draw(md_inline(used)) for _ in range(draw(st.integers(1, 3))))
    if kind == "list":
        ordered = draw(st.booleans())
        items = []
        for index in range(draw(st.integers(1, 4))):
            marker = f"{index + 1}. " if ordered else "- "
            items.append(marker + draw(md_inline(used)))
            if draw(st.booleans()):
                items.append(" " * len(marker) + "- " + draw(md_inline(used)))
        return "\n".join(items)
    if kind in ("fence", "indented"):
        lines = [
            " " * draw(st.integers(0, 4)) + " ".join(draw(st.lists(words, min_size=1, max_size=4)))
            for _ in range(3)
        ]
        used.extend(word for line in lines for word in line.split())
        if kind == "indented":
            return "\n".join("    " + line for line in lines)
        return "```" + draw(st.sampled_from(["", "python", "sh"])) + "\n" + "\n".join(lines) + "\n```"
    if kind == "table":
        columns = draw(st.integers(1, 3))
        rows = [[draw(words) for _ in range(columns)] for _ in range(draw(st.integers(1, 3)))]
        used.extend(word for row in rows for word in row)
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join([lines[0], "|" + "---|" * columns, *lines[1:]])
    if kind == "quote":
        return "> " + draw(md_inline(used))
    word = draw(words)
    used.append(word)
    return f"<div>\n{word}\n</div>"


@st.composite
def markdown_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    used: list[str] = []
    parts: list[str] = []
    if draw(st.booleans()):
        parts.append("---\ntitle: front matter\n---\n")
    for _ in range(draw(st.integers(1, 8))):
        block = draw(md_block(used))
        parts.append(block)
        # A table runs on to the next blank line, and a row wider than its header loses cells.
        ends = ["\n\n", "\n\n\n", "\n \n"] if block.startswith("|") else ["\n\n", "\n\n\n", "\n \n", "\n"]
        parts.append(draw(st.sampled_from(ends)))
    return "".join(parts), used


@SETTINGS
@given(markdown_documents())
def test_markdown_blocks_cover_the_text_and_keep_every_word(document: tuple[str, list[str]]) -> None:
    source, used = document
    parsed = MarkdownParser().parse(source.encode("utf-8"), source="p.md")
    check_blocks(parsed)
    check_words(parsed, used)
    assert "front matter" not in parsed.text


# --- HTML ---


@st.composite
def html_inline(draw: st.DrawFn, used: list[str]) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        word = draw(words)
        used.append(word)
        wrap = draw(
            st.sampled_from(
                ["{}", "{}", "<b>{}</b>", "<i>{}", '<a href="/x">{}</a>', "<code>{}</code>", "{}<br>"]
            )
        )
        parts.append(wrap.format(word))
    return draw(st.sampled_from([" ", "\n  ", "\t"])).join(parts)


@st.composite
def html_block(draw: st.DrawFn, used: list[str], depth: int = 0) -> str:
    kinds = ["heading", "p", "list", "pre", "table", "quote", "div", "loose", "script"]
    kind = draw(st.sampled_from(kinds if depth < 2 else kinds[:2]))
    close = draw(st.booleans()) or draw(st.booleans())  # mostly closed, sometimes left open
    if kind == "heading":
        level = draw(st.integers(1, 6))
        return f"<h{level}>" + draw(html_inline(used)) + (f"</h{level}>" if close else "")
    if kind == "p":
        return "<p>" + draw(html_inline(used)) + ("</p>" if close else "")
    if kind == "list":
        tag = draw(st.sampled_from(["ul", "ol"]))
        items = "".join(
            "<li>"
            + draw(html_inline(used))
            + (draw(html_block(used, depth + 1)) if draw(st.booleans()) else "")
            for _ in range(draw(st.integers(1, 4)))
        )
        return f"<{tag}>{items}" + (f"</{tag}>" if close else "")
    if kind == "pre":
        lines = [
            " " * draw(st.integers(0, 4)) + " ".join(draw(st.lists(words, min_size=1, max_size=3)))
            for _ in range(2)
        ]
        used.extend(word for line in lines for word in line.split())
        return "<pre><code>" + "\n".join(lines) + "</code></pre>"
    if kind == "table":
        rows = "".join(
            "<tr>" + "".join("<td>" + draw(html_inline(used)) for _ in range(draw(st.integers(1, 3))))
            for _ in range(draw(st.integers(1, 3)))
        )
        return "<table>" + rows + ("</table>" if close else "")
    if kind in ("quote", "div"):
        tag = "blockquote" if kind == "quote" else "div"
        return f"<{tag}>" + draw(html_block(used, depth + 1)) + (f"</{tag}>" if close else "")
    if kind == "loose":
        return draw(html_inline(used))
    return f"<script>var {HIDDEN_WORD} = '<p>{HIDDEN_WORD}</p>';</script><style>p {{ }}</style>"


@st.composite
def html_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    used: list[str] = []
    head = draw(
        st.sampled_from(["", f"<head><title>{HIDDEN_WORD}</title></head>", f"<title>{HIDDEN_WORD}</title>"])
    )
    body = "\n".join(draw(html_block(used)) for _ in range(draw(st.integers(1, 6))))
    word = draw(words)  # at least one visible word, so the page is never empty
    used.append(word)
    return f"<html>{head}<body>{body}\n<p>{word}</p></body></html>", used


@SETTINGS
@given(html_documents())
def test_html_blocks_cover_the_text_keep_every_word_and_drop_hidden_text(
    document: tuple[str, list[str]],
) -> None:
    source, used = document
    parsed = HtmlParser().parse(source.encode("utf-8"), source="p.html")
    check_blocks(parsed)
    check_words(parsed, used)
    assert HIDDEN_WORD not in parsed.text


# --- any input at all: a result that keeps the invariant, or an InputError naming the file ---

MARKUP = st.text(
    alphabet=LETTERS[:6] + " \t\n\u00a0<>/&#;*-_`[]()!|#=>.1234567890abpulihtrdcs\"'", max_size=200
)
PARSERS: list[Parser] = [TextParser(), MarkdownParser(), HtmlParser()]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PARSERS), MARKUP)
def test_any_input_keeps_the_invariant_or_is_refused_by_name(parser: Parser, source: str) -> None:
    outcome: Parsed | InputError
    try:
        outcome = parser.parse(source.encode("utf-8"), source="fuzz.file")
    except InputError as err:
        outcome = err
    if isinstance(outcome, InputError):
        assert str(outcome).startswith("fuzz.file: ")
    else:
        check_blocks(outcome)
        assert outcome.blocks, "a parse that succeeds has at least one block"
