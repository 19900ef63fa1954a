"""``decode_text``: valid UTF-8 is kept around bad bytes; Windows-1252 only for a file that is not UTF-8."""

from __future__ import annotations

import pytest

from clear_rag.parse.base import SHOWN_OFFSETS, decode_text

ZH = "检索增强生成。"  # 7 characters, 21 bytes


def test_one_stray_byte_is_replaced_alone_and_named_by_offset() -> None:
    data = (ZH * 10).encode() + b"\xff" + (ZH * 10).encode()
    text, (warning,) = decode_text(data, source="zh.txt")
    assert text == ZH * 10 + "\ufffd" + ZH * 10
    assert warning == (
        "zh.txt: is not valid UTF-8 at 1 byte (offset 210); replaced with U+FFFD, the rest decoded as "
        "UTF-8. Fix or re-save the file as UTF-8 to silence this"
    )


def test_many_bad_bytes_list_the_first_offsets_and_count_the_rest() -> None:
    chunk = ZH.encode()
    data = b"".join(chunk + b"\x80" for _ in range(SHOWN_OFFSETS + 3))
    text, (warning,) = decode_text(data, source="zh.txt")
    assert text == (ZH + "\ufffd") * (SHOWN_OFFSETS + 3)
    offsets = ", ".join(str(22 * i + 21) for i in range(SHOWN_OFFSETS))
    assert f"at {SHOWN_OFFSETS + 3} bytes (offsets {offsets} and 3 more)" in warning


def test_offsets_count_the_byte_order_mark() -> None:
    text, (warning,) = decode_text(b"\xef\xbb\xbfab \xfe cd", source="b.txt")
    assert text == "ab \ufffd cd"
    assert "(offset 6)" in warning


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        # Every non-ASCII byte fails: a Windows-1252 file.
        ("café crème".encode("cp1252"), "Windows-1252"),
        # 0x81 is a hole in Windows-1252, so Latin-1 takes the whole file.
        (b"caf\xe9 \x81", "Latin-1"),
        # 3 of 5 non-ASCII bytes fail (an "é" in UTF-8, three lone bytes): more than half.
        ("é".encode() + b" \xe9 \xe8 \xe0", "Windows-1252"),
    ],
)
def test_a_file_that_is_not_utf8_is_decoded_whole_in_windows_1252(data: bytes, encoding: str) -> None:
    text, (warning,) = decode_text(data, source="w.txt")
    assert f"decoded as {encoding}" in warning
    assert text == data.decode("cp1252" if encoding == "Windows-1252" else "latin-1")


def test_half_the_non_ascii_bytes_failing_is_still_utf8() -> None:
    # 4 non-ASCII bytes: "éé" in UTF-8 is valid, the 2 stray ones fail: exactly half, so UTF-8 wins.
    data = "éé".encode() + b" \xe9\xe9"
    text, (warning,) = decode_text(data, source="h.txt")
    assert text == "éé \ufffd\ufffd"
    assert "at 2 bytes (offsets 5, 6)" in warning


def test_valid_utf8_has_no_warning() -> None:
    assert decode_text((ZH * 3).encode(), source="ok.txt") == (ZH * 3, ())
