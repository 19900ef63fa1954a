"""Plain text: the decoded file is the canonical text; blank lines separate its blocks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from clear_rag.parse.base import Parsed, decode_text
from clear_rag.parse.pieces import no_text_error
from clear_rag.types import Block

# A list item starts with a bullet or a number, then a space: `- a`, `* a`, `+ a`, `1. a`, `1) a`.
# ASCII digits only: `\d` would also take other scripts' digits, which nobody numbers a list with.
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]")


class TextParser:
    """Plain text as written: runs of lines between blank lines become paragraphs or lists."""

    file_type = "text"
    backend = "plain"
    version = "1"

    def parse(self, data: bytes, *, source: str) -> Parsed:
        text, warnings = decode_text(data, source=source)
        blocks = tuple(_blocks(text))
        if not blocks:
            raise no_text_error(source, "only whitespace")
        return Parsed(text=text, blocks=blocks, media_type="text/plain", warnings=warnings)


def _blocks(text: str) -> Iterable[Block]:
    # Split on "\n" only: str.splitlines would also break at form feeds and U+2028, and the
    # offsets it implies would then disagree with the text.
    run: list[str] = []
    run_start = offset = 0
    for line in [*text.split("\n"), ""]:
        if line.strip():
            if not run:
                run_start = offset
            run.append(line)
        elif run:
            yield _run_block(run, run_start)
            run = []
        offset += len(line) + 1


def _run_block(lines: list[str], start: int) -> Block:
    body = "\n".join(lines)
    lead = len(body) - len(body.lstrip())
    end = start + len(body.rstrip())
    if all(_LIST_ITEM.match(line) for line in lines):
        return Block("list", start + lead, end, level=1)
    return Block("paragraph", start + lead, end)
