"""Markdown: markdown-it-py finds the block structure; the canonical text is rendered here as plain prose.

Markup a reader does not see is dropped (``#``, emphasis markers, link targets, code fences, table
rules, front matter), so golden-set quotes copied from a rendered page match the canonical text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from clear_rag.parse.base import Parsed, decode_text
from clear_rag.parse.pieces import Piece, assemble, no_text_error

_LIST_OPEN = {"bullet_list_open": "bullet_list_close", "ordered_list_open": "ordered_list_close"}
_INLINE_BREAKS = {"<br>", "<br/>", "<br />"}

# Containers nested deeper than this are flattened into plain lines. markdown-it counts a quote as
# one level and a list item as two (its list and itself), so 32 is 32 quotes or 16 nested lists.
MAX_DEPTH = 32
# markdown-it's own limit, past which it silently drops the rest of a container (its default of 20
# kept 134 characters of a list nested 3,000 deep); set above MAX_DEPTH so flattening comes first.
# It also bounds inline nesting (links in links), which is why it is not simply made huge.
_MARKDOWN_IT_NESTING = MAX_DEPTH + 8
# Quote markers, bullets and item numbers at the start of a line that is flattened.
_CONTAINER_MARKERS = re.compile(r"(?:>[ \t]*|(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$))*")
_FLATTENED = "clear_rag_flattened"  # key in markdown-it's env: the lines where flattening began


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    md.options.maxNesting = _MARKDOWN_IT_NESTING
    md.block.ruler.before("table", "flatten_deep", _flatten_deep)
    return md


class MarkdownParser:
    """CommonMark plus GFM tables, rendered to plain text with one block per heading, paragraph,
    top-level list, table and code block."""

    file_type = "markdown"
    backend = "markdown-it"
    version = "1"

    def __init__(self) -> None:
        self._md = _markdown()

    def parse(self, data: bytes, *, source: str) -> Parsed:
        raw, warnings = decode_text(data, source=source)
        env: dict[str, list[int]] = {_FLATTENED: []}
        tokens = self._md.parse(_blank_front_matter(raw), env)
        text, blocks = assemble(_pieces(tokens))
        if not blocks:
            raise no_text_error(source, "only front matter, rules or empty markup")
        return Parsed(
            text=text,
            blocks=blocks,
            media_type="text/markdown",
            warnings=(*warnings, *_flattened_warning(source, env[_FLATTENED])),
        )


def _blank_front_matter(text: str) -> str:
    """Blank out a YAML front matter block: a first line ``---`` up to the next ``---`` or ``...``.

    Its lines become empty rather than removed, so line numbers in warnings are the file's. Without
    a closing line the ``---`` is an ordinary thematic break and the text is kept.
    """
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return text
    for index, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return "\n" * (index + 1) + "\n".join(lines[index + 1 :])
    return text


def _flatten_deep(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A block rule that runs first: at ``MAX_DEPTH`` it takes the container's remaining lines as one
    paragraph, their quote markers and bullets stripped, instead of letting markdown-it recurse on.

    It takes the lines markdown-it's own loop would (up to the first line indented less than the
    container needs), so whatever it leaves is parsed by the enclosing container as usual.
    """
    if state.level < MAX_DEPTH:
        return False
    if silent:
        return True
    line, lines = start, []
    while line < end and (state.isEmpty(line) or not 0 <= state.sCount[line] < state.blkIndent):
        content = state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
        kept = _CONTAINER_MARKERS.sub("", content, count=1).strip()
        if kept:
            lines.append(kept)
        line += 1
    state.env[_FLATTENED].append(start + 1)
    state.line = line
    if lines:
        opening = state.push("paragraph_open", "p", 1)
        opening.map = [start, line]
        inline = state.push("inline", "", 0)
        inline.content, inline.map, inline.children = "\n".join(lines), [start, line], []
        state.push("paragraph_close", "p", -1)
    return True


def _flattened_warning(source: str, lines: list[int]) -> tuple[str, ...]:
    if not lines:
        return ()
    more = f" (and {len(lines) - 1} more places)" if len(lines) > 1 else ""
    return (
        f"{source}: line {lines[0]}{more}: quotes or lists nested deeper than {MAX_DEPTH} levels "
        "were flattened into plain lines; their text is kept",
    )


def _pieces(tokens: Sequence[Token]) -> list[Piece]:
    pieces: list[Piece] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            pieces.append(Piece("heading", _inline(tokens[i + 1]), level=int(token.tag[1:])))
            i += 3
        elif token.type == "paragraph_open":
            pieces.append(Piece("paragraph", _inline(tokens[i + 1])))
            i += 3
        elif token.type in _LIST_OPEN:
            lines, i = _list_lines(tokens, i)
            pieces.append(Piece("list", "\n".join(lines), level=1))
        elif token.type == "table_open":
            lines, i = _table_lines(tokens, i)
            pieces.append(Piece("table", "\n".join(lines)))
        elif token.type in ("fence", "code_block"):
            language = token.info.split()[0] if token.info.strip() else ""
            pieces.append(Piece("code", token.content, meta={"language": language} if language else {}))
            i += 1
        elif token.type == "html_block":
            pieces.append(Piece("paragraph", token.content))
            i += 1
        else:
            # Blockquote open/close and thematic breaks: a quote's inner blocks stand on their own.
            i += 1
    return pieces


def _inline(token: Token) -> str:
    """Inline markup as a reader sees it; line breaks stay, empty lines are dropped."""
    text = _inline_text(token.children or [])
    return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())


def _inline_text(children: Sequence[Token]) -> str:
    out: list[str] = []
    for child in children:
        if child.type in ("text", "text_special", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(_inline_text(child.children or []))
        elif child.type == "html_inline" and child.content.lower() in _INLINE_BREAKS:
            out.append("\n")
        # Emphasis, link and other inline HTML tokens are markup only: their text is in `text` tokens.
    return "".join(out)


def _close_index(tokens: Sequence[Token], i: int, close_type: str) -> int:
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        if tokens[j].type == close_type and tokens[j].level == level:
            return j
    raise ValueError(f"markdown-it token {tokens[i].type!r} at {i} has no {close_type!r}; this is a bug")


def _list_lines(tokens: Sequence[Token], i: int) -> tuple[list[str], int]:
    """Render the list opening at ``i`` as marked lines; return them and the index after its close.

    Lines are relative to the list's own indentation: an enclosing item indents them by the width
    of its marker, as Markdown itself nests lists.
    """
    opening = tokens[i]
    close = _close_index(tokens, i, _LIST_OPEN[opening.type])
    ordered = opening.type == "ordered_list_open"
    start = opening.attrGet("start")  # set only when it is not 1; it may be 0
    number = int(start) if start is not None else 1
    lines: list[str] = []
    i += 1
    while i < close:
        item_close = _close_index(tokens, i, "list_item_close")
        marker = f"{number}. " if ordered else "- "
        number += 1
        content = _region_lines(tokens, i + 1, item_close)
        pad = " " * len(marker)
        for index, line in enumerate(content):
            lines.append(marker + line if index == 0 else (pad + line if line else ""))
        i = item_close + 1
    return lines, close + 1


def _table_lines(tokens: Sequence[Token], i: int) -> tuple[list[str], int]:
    close = _close_index(tokens, i, "table_close")
    rows: list[list[str]] = []
    for token in tokens[i:close]:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(" ".join(_inline(token).split("\n")).strip())
    return [" | ".join(row) for row in rows if any(row)], close + 1


def _region_lines(tokens: Sequence[Token], i: int, stop: int) -> list[str]:
    """The blocks inside a list item, as lines without the item's own indentation."""
    lines: list[str] = []
    while i < stop:
        token = tokens[i]
        if token.type in ("paragraph_open", "heading_open"):
            lines.extend(_inline(tokens[i + 1]).split("\n"))
            i += 3
        elif token.type in _LIST_OPEN:
            nested, i = _list_lines(tokens, i)
            lines.extend(nested)
        elif token.type == "table_open":
            rows, i = _table_lines(tokens, i)
            lines.extend(rows)
        elif token.type in ("fence", "code_block", "html_block"):
            lines.extend(line.rstrip() for line in token.content.rstrip().split("\n"))
            i += 1
        else:
            i += 1
    # An empty line at the start would leave the item's marker alone on its line.
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines
