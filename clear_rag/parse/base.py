"""The parser interface and the text decoding every text-based parser shares."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Protocol

from clear_rag.errors import BinaryFileError, EmptyFileError
from clear_rag.types import Block


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a parser returns: the canonical text, its blocks, and warnings a person should see.

    A warning is a whole sentence naming the file and what was recovered, e.g. a decoding fallback.
    ``ocr_pages`` are the pages (1-based) of a PDF whose text was read from their pixels by OCR; their
    blocks say so too (``meta["ocr"]``, the engine that read them).
    """

    text: str
    blocks: tuple[Block, ...]
    media_type: str
    warnings: tuple[str, ...] = ()
    ocr_pages: tuple[int, ...] = ()


class Parser(Protocol):
    """Turns one file's bytes into canonical text and blocks.

    ``file_type`` and ``backend`` key the registry; ``version`` is recorded with each document, and
    a changed version makes the next ingest parse the file again.
    """

    file_type: str
    backend: str
    version: str

    def parse(self, data: bytes, *, source: str) -> Parsed: ...


# Control characters other than tab, newline, form feed and carriage return: many of them mean binary.
_CONTROL = frozenset(range(0x00, 0x20)) - {0x09, 0x0A, 0x0C, 0x0D}
_SNIFF = 8192
SHOWN_OFFSETS = 5  # bad-byte offsets a warning lists; the rest are counted
_ESCAPED = re.compile("[\udc80-\udcff]")
_NON_ASCII = bytes(range(0x80, 0x100))


def _sniff_binary(data: bytes, source: str) -> None:
    head = data[:_SNIFF]
    nul = head.find(b"\x00")
    if nul >= 0:
        raise BinaryFileError(
            f"looks binary, not text (a NUL byte at offset {nul})",
            path=source,
            fix="Give it the extension of its real format, or remove it from the folder",
        )
    controls = sum(1 for byte in head if byte in _CONTROL)
    if head and controls / len(head) > 0.05:
        raise BinaryFileError(
            f"looks binary, not text ({controls} control bytes in the first {len(head)})",
            path=source,
            fix="Give it the extension of its real format, or remove it from the folder",
        )


def decode_text(data: bytes, *, source: str) -> tuple[str, tuple[str, ...]]:
    """Decode file bytes to text with newlines normalised to ``\\n`` and no byte-order mark.

    UTF-8 first (UTF-16 and UTF-32 when a byte-order mark says so). Bytes that are not valid UTF-8
    are replaced one by one with U+FFFD and a warning gives their count and first offsets; the
    predecessor re-decoded the whole file as Windows-1252 for one stray byte, which turned a UTF-8
    file's Chinese text into mojibake that no query could find.

    Windows-1252 (or Latin-1 where 1252 has holes) is used only for a file that is clearly not
    UTF-8: more than half of its non-ASCII bytes fail to decode. In such a file nearly every
    non-ASCII byte fails, since a byte from 0x80 up followed by ASCII is never valid UTF-8, while a
    damaged UTF-8 file still has most of its non-ASCII bytes in valid sequences.
    """
    if not data.strip():
        raise EmptyFileError(
            "is empty (no text in it)" if data else "is empty (0 bytes)",
            path=source,
            fix="Add text to it or remove it from the folder",
        )
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return _normalise(data.decode(encoding, errors="replace")), ()
    _sniff_binary(data, source)
    try:
        return _normalise(data.decode("utf-8-sig")), ()
    except UnicodeDecodeError:
        pass
    # surrogateescape turns each undecodable byte into one lone surrogate, U+DC80 to U+DCFF, so the
    # bad bytes can be counted and located in one linear pass.
    escaped = data.decode("utf-8", errors="surrogateescape")
    bad = len(escaped) - len(_ESCAPED.sub("", escaped))
    non_ascii = len(data) - len(data.translate(None, _NON_ASCII))
    if 2 * bad > non_ascii:
        return _windows_1252(data, source, bad, non_ascii, escaped)
    text = _ESCAPED.sub("\ufffd", escaped)
    if data.startswith(codecs.BOM_UTF8):
        text = text[1:]
    offsets = _bad_offsets(escaped, SHOWN_OFFSETS)
    listed = ", ".join(str(offset) for offset in offsets)
    if bad > len(offsets):
        listed += f" and {bad - len(offsets)} more"
    what = f"1 byte (offset {listed})" if bad == 1 else f"{bad} bytes (offsets {listed})"
    warning = (
        f"{source}: is not valid UTF-8 at {what}; replaced with U+FFFD, the rest decoded as UTF-8. "
        "Fix or re-save the file as UTF-8 to silence this"
    )
    return _normalise(text), (warning,)


def _windows_1252(
    data: bytes, source: str, bad: int, non_ascii: int, escaped: str
) -> tuple[str, tuple[str, ...]]:
    """The whole file as Windows-1252 (Latin-1 where 1252 has holes), with a warning saying why."""
    try:
        text, used = data.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "Latin-1"
    (first,) = _bad_offsets(escaped, 1)
    warning = (
        f"{source}: is not valid UTF-8 ({bad} of its {non_ascii} non-ASCII bytes do not decode, "
        f"the first at offset {first}); decoded as {used}. Save it as UTF-8 to silence this"
    )
    return _normalise(text), (warning,)


def _bad_offsets(escaped: str, limit: int) -> list[int]:
    """File offsets of the first ``limit`` undecodable bytes in a surrogateescape-decoded text."""
    offsets: list[int] = []
    position = offset = 0
    for match in _ESCAPED.finditer(escaped):
        offset += len(escaped[position : match.start()].encode("utf-8", "surrogateescape"))
        offsets.append(offset)
        offset, position = offset + 1, match.end()
        if len(offsets) == limit:
            break
    return offsets


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
