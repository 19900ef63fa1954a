"""The parser interface and the text decoding every text-based parser shares."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Protocol

from clear_rag.errors import BinaryFileError, EmptyFileError
from clear_rag.types import Block


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a parser returns: the canonical text, its blocks, and warnings a person should see.

    A warning is a whole sentence naming the file and what was recovered, e.g. a decoding fallback.
    """

    text: str
    blocks: tuple[Block, ...]
    media_type: str
    warnings: tuple[str, ...] = ()


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

    UTF-8 first (UTF-16 and UTF-32 when a byte-order mark says so). A file that is not valid UTF-8
    is decoded as Windows-1252, or Latin-1 where 1252 has holes, and a warning names the first bad
    byte and the encoding used, so nothing is silently mangled and nothing is lost.
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
    except UnicodeDecodeError as err:
        bad = f"byte 0x{data[err.start]:02x} at offset {err.start}"
    try:
        text, used = data.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "Latin-1"
    warning = f"{source}: is not valid UTF-8 ({bad}); decoded as {used}. Save it as UTF-8 to silence this"
    return _normalise(text), (warning,)


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
