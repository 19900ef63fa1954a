"""HTML: the text a browser shows, as headings, paragraphs, lists, tables and code.

The stdlib parser is lenient, so malformed markup still gives its text; where the tags do not
balance, a warning names the file, the tag and the line, because a silently wrong structure
(a whole page swallowed by an unclosed ``<h1>``) is otherwise hard to find.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser

from clear_rag.parse.base import Parsed, decode_text
from clear_rag.parse.pieces import Piece, assemble, no_text_error
from clear_rag.types import BLOCK_KINDS, BlockKind

# Elements whose content a reader never sees (a <title> names the browser tab, wherever it is).
_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "title"})
# Elements allowed in <head>; any other start tag ends an unclosed head, as browsers do.
_HEAD_CONTENT = frozenset({"title", "meta", "link", "base", "style", "script", "noscript", "template"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
    | {"param", "keygen", "basefont", "frame"}
)
# End tags HTML lets an author leave out: closing them implicitly is not worth a warning.
_OPTIONAL_END = frozenset(
    {"p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "caption", "colgroup"}
    | {"option", "optgroup", "rb", "rt", "rp", "html", "head", "body"}
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK = frozenset(
    {"address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog", "div"}
    | {"dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr"}
    | {"html", "legend", "li", "main", "menu", "nav", "p", "section", "summary", "caption"}
    | {"thead", "tbody", "tfoot", "tr", "td", "th", "br", "pre", "table"}
)
# Whitespace as HTML collapses it: ASCII only, since a no-break space is content.
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
_LANGUAGE = re.compile(r"\b(?:language|lang)-([\w+#.-]+)")
_MAX_WARNINGS = 5

# A block's content, line by line: TEXT is collapsed and trimmed where it meets RAW or a line end;
# RAW (list markers, indentation, cell separators) and VERBATIM (<pre> lines in a list item) are kept
# as they are; BREAK ends a line.
TEXT, RAW, VERBATIM, BREAK = "text", "raw", "verbatim", "break"
_Token = tuple[str, str]
_KINDS: dict[str, BlockKind] = {kind: kind for kind in BLOCK_KINDS}


@dataclass(slots=True)
class _List:
    ordered: bool
    number: int
    indent: str
    pad: str  # indentation of the current item's continuation lines


class _Reader(HTMLParser):
    """Turns parser events into pieces. ``_mode`` is the kind of the block being collected
    ("" between blocks, or "code" inside a top-level ``<pre>``); inside a list, table or heading,
    nested block elements only break lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[Piece] = []
        self.problems: list[str] = []
        self._open: list[tuple[str, int]] = []  # (tag, line) of each element not yet closed
        # How many of each tag are open: a page of thousands of unclosed <p> must not make every
        # tag scan the whole stack.
        self._open_count: Counter[str] = Counter()
        self._tokens: list[_Token] = []
        self._mode = ""
        self._level = 0
        self._lists: list[_List] = []
        self._tables = self._pres = self._hidden = self._row_cells = 0
        self._code: list[str] = []
        self._language = ""

    # Tag balance: whatever the markup does, _start and _end below are called balanced.

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HEAD_CONTENT and self._open_count["head"]:
            self._close_to("head", None)
        self._start(tag, dict(attrs))
        if tag not in _VOID:
            self._open.append((tag, self.getpos()[0]))
            self._open_count[tag] += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        line = self.getpos()[0]
        if tag == "br":  # browsers read a stray </br> as <br>
            self._start("br", {})
        elif self._open_count[tag]:
            self._close_to(tag, line)
        elif tag not in _VOID:
            self.problems.append(f"</{tag}> at line {line} has no matching <{tag}>; it was ignored")

    def close(self) -> None:
        super().close()
        while self._open:
            tag, line = self._pop()
            if tag not in _OPTIONAL_END:
                self.problems.append(f"<{tag}> opened at line {line} was never closed; {_fate(tag)}")
            self._end(tag)
        self._flush()

    def _close_to(self, tag: str, line: int | None) -> None:
        while self._open:
            name, opened = self._pop()
            if name != tag and name not in _OPTIONAL_END and line is not None:
                self.problems.append(
                    f"<{name}> opened at line {opened} was not closed before </{tag}> at line {line}; "
                    + _fate(name)
                )
            self._end(name)
            if name == tag:
                return

    def _pop(self) -> tuple[str, int]:
        tag, line = self._open.pop()
        self._open_count[tag] -= 1
        return tag, line

    # Content.

    def handle_data(self, data: str) -> None:
        if self._hidden and self._open and self._open[-1][0] == "head" and data.strip():
            self._close_to("head", None)  # text in <head> means the author left out <body>
        if self._hidden:
            return
        if self._mode == "code":
            self._code.append(data)
        elif self._pres and self._mode in ("list", "table"):
            for index, line in enumerate(data.split("\n")):
                if index:
                    self._soft_break()
                self._tokens.append((VERBATIM if self._mode == "list" else TEXT, line))
        elif self._mode or data.strip():
            self._mode = self._mode or "paragraph"
            self._tokens.append((TEXT, data))

    def _start(self, tag: str, attrs: dict[str, str | None]) -> None:
        self._hidden += tag in _HIDDEN
        if self._hidden:
            return
        self._pres += tag == "pre"
        self._tables += tag == "table"
        if self._mode == "code":
            if tag == "br":
                self._code.append("\n")
            self._language = self._language or _language_of(attrs)
            return
        nested = self._mode in ("list", "table", "heading")
        if tag == "pre" and not nested:
            self._flush()
            self._mode, self._language = "code", _language_of(attrs)
        elif tag in ("ul", "ol"):
            self._open_list(tag == "ol", attrs)
        elif tag == "li" and self._mode == "list":
            self._item()
        elif tag == "table" and not nested:
            self._flush()
            self._mode = "table"
        elif tag in ("tr", "caption") and self._mode in ("table", "list"):
            if self._mode == "list":
                self._soft_break()
            else:
                self._row_break()
            self._row_cells = 0
        elif tag in ("td", "th") and self._mode in ("table", "list"):
            if self._row_cells:
                self._tokens.append((RAW, " | "))
            self._row_cells += 1
        elif tag in _HEADINGS and not nested:
            self._flush()
            self._mode, self._level = "heading", _HEADINGS[tag]
        elif tag in _BLOCK or tag in _HEADINGS:
            if nested or tag == "br":
                self._soft_break()
            else:
                self._flush()

    def _end(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden -= 1
        if self._hidden or tag in _HIDDEN:
            return
        self._pres -= tag == "pre"
        self._tables -= tag == "table"
        if self._mode == "code":
            if not self._pres:
                self._flush()
        elif tag == "table" and self._mode == "table":
            if not self._tables:
                self._flush()
        elif tag in ("ul", "ol") and self._mode == "list":
            self._lists.pop()
            if not self._lists:
                self._flush()
            elif self._line_has_text():
                self._soft_break()
            else:
                # The line holds only the closed item's indentation: text after the nested list
                # belongs to the enclosing item.
                self._drop_line()
                self._tokens.append((RAW, self._lists[-1].pad))
        elif tag in _HEADINGS and self._mode == "heading":
            self._flush()
        elif tag in ("td", "th") and self._mode == "list":
            pass  # the next cell's separator, or the row's end, follows
        elif tag in _BLOCK or tag in _HEADINGS:
            if self._mode in ("list", "table", "heading"):
                self._soft_break()
            else:
                self._flush()

    def _open_list(self, ordered: bool, attrs: dict[str, str | None]) -> None:
        if self._mode in ("heading", "table"):
            self._soft_break()  # a list inside a heading or a table cell reads as its lines
            return
        if self._mode == "list":
            self._soft_break()
        else:
            self._flush()
            self._mode = "list"
        start = (attrs.get("start") or "1").strip()
        number = int(start) if start.isdecimal() and start.isascii() else 1
        indent = self._lists[-1].pad if self._lists else ""
        self._lists.append(_List(ordered, number, indent, indent))

    def _item(self) -> None:
        current = self._lists[-1]
        if self._line_has_text():
            self._tokens.append((BREAK, ""))
        else:
            self._drop_line()  # an empty item leaves no marker behind
        marker = f"{current.number}. " if current.ordered else "- "
        current.number += 1
        current.pad = current.indent + " " * len(marker)
        self._tokens.append((RAW, current.indent + marker))

    # Lines.

    def _line_has_text(self) -> bool:
        for kind, value in reversed(self._tokens):
            if kind == BREAK:
                return False
            if kind in (TEXT, VERBATIM) and value.strip():
                return True
        return False

    def _drop_line(self) -> None:
        while self._tokens and self._tokens[-1][0] != BREAK:
            self._tokens.pop()

    def _soft_break(self) -> None:
        """End the current line, unless it is a table row: there a block inside a cell is a space."""
        if self._mode == "table":
            self._tokens.append((TEXT, " "))
        elif self._line_has_text():
            self._tokens.append((BREAK, ""))
            if self._mode == "list" and self._lists:
                self._tokens.append((RAW, self._lists[-1].pad))

    def _row_break(self) -> None:
        if self._line_has_text():
            self._tokens.append((BREAK, ""))
        else:
            self._drop_line()

    def _flush(self) -> None:
        if self._mode == "code":
            text = "".join(self._code)
            # HTML drops a newline right after <pre>; the rest is verbatim.
            text = text[1:] if text.startswith("\n") else text
            meta = {"language": self._language} if self._language else {}
            self.pieces.append(Piece("code", text, meta=meta))
        elif self._mode:
            level = self._level if self._mode == "heading" else int(self._mode == "list")
            self.pieces.append(Piece(_KINDS[self._mode], _render(self._tokens), level=level))
        self._mode, self._tokens, self._code, self._lists, self._row_cells = "", [], [], [], 0


def _render(tokens: list[_Token]) -> str:
    lines: list[list[_Token]] = [[]]
    for kind, value in tokens:
        if kind == BREAK:
            lines.append([])
        elif kind == TEXT and lines[-1] and lines[-1][-1][0] == TEXT:
            lines[-1][-1] = (TEXT, lines[-1][-1][1] + value)  # one run of text, collapsed as one
        else:
            lines[-1].append((kind, value))
    out: list[str] = []
    for line in lines:
        parts = [
            (kind, _HTML_SPACE.sub(" ", value).strip() if kind == TEXT else value) for kind, value in line
        ]
        if any(kind != RAW and value.strip() for kind, value in parts):
            out.append("".join(value for _, value in parts).rstrip())
    return "\n".join(out)


def _language_of(attrs: dict[str, str | None]) -> str:
    match = _LANGUAGE.search(attrs.get("class") or "")
    return match.group(1) if match else ""


def _fate(tag: str) -> str:
    return "its content was dropped" if tag in _HIDDEN else "its text was kept"


class HtmlParser:
    """HTML as a browser shows it: hidden elements dropped, whitespace collapsed, entities decoded."""

    file_type = "html"
    backend = "html"
    version = "1"

    def parse(self, data: bytes, *, source: str) -> Parsed:
        raw, warnings = decode_text(data, source=source)
        reader = _Reader()
        reader.feed(raw)
        reader.close()
        text, blocks = assemble(reader.pieces)
        if not blocks:
            raise no_text_error(source, "only markup, scripts or styles")
        problems = [f"{source}: {problem}" for problem in reader.problems[:_MAX_WARNINGS]]
        if len(reader.problems) > _MAX_WARNINGS:
            more = len(reader.problems) - _MAX_WARNINGS
            problems.append(
                f"{source}: {more} more tags do not balance (not listed); fix the markup to see them"
            )
        return Parsed(text=text, blocks=blocks, media_type="text/html", warnings=(*warnings, *problems))
