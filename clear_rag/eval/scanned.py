"""Scanned renders of PDFs: every page rasterised and saved as an image-only PDF, without a text layer.

What a scanner makes of the printed pages: each page rendered by pdfium at ``dpi`` (300 by default,
the resolution archives and tesseract's documentation ask for) in 8-bit grey, stored as a JPEG
(quality 75, Pillow's default and a usual scanner setting, so the OCR sees compression artefacts as
it would on a real scan) drawn over the whole page. Nothing of the original's text, fonts or vector
drawing is kept, so a parser has only the pixels.

The bytes are a function of the input alone: the file is written here object by object (no dates,
no random identifiers), so the same PDF, dpi and library versions make the same file. ``parse-eval``
scores these renders against the original's ground truth (``clear-rag parse-eval``'s ``scanned``
part); ``clear-rag scan-pdfs`` writes them to a folder to look at or to give to other tools.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from PIL import Image

from clear_rag.parse.pdfium import Document, opened, page_size, page_text, render

SCAN_DPI = 300
JPEG_QUALITY = 75


def scan_pdf(data: bytes, *, source: str, dpi: int = SCAN_DPI, quality: int = JPEG_QUALITY) -> bytes:
    """``data``'s pages as images only: a PDF whose every page is one greyscale JPEG of the original."""
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 36 <= dpi <= 1200:
        raise ValueError(f"dpi={dpi!r} must be a whole number from 36 to 1200, e.g. {SCAN_DPI}")
    if isinstance(quality, bool) or not isinstance(quality, int) or not 1 <= quality <= 95:
        raise ValueError(f"quality={quality!r} must be a whole number from 1 to 95, e.g. {JPEG_QUALITY}")
    with opened(data, source) as document:
        pages = [_page(document, number, dpi, quality) for number in range(1, len(document) + 1)]
    return image_pdf(pages)


def has_text(data: bytes, *, source: str) -> bool:
    """Whether any page of the PDF has a text layer (a render of a render would measure nothing new)."""
    with opened(data, source) as document:
        return any(page_text(document, number).strip() for number in range(1, len(document) + 1))


def _page(document: Document, number: int, dpi: int, quality: int) -> tuple[float, float, int, int, bytes]:
    width, height = page_size(document, number)
    image = render(document, number, dpi)
    buffer = io.BytesIO()
    Image.frombytes("L", (image.width, image.height), image.pixels).save(
        buffer, "JPEG", quality=quality, dpi=(dpi, dpi)
    )
    return width, height, image.width, image.height, buffer.getvalue()


def image_pdf(pages: Sequence[tuple[float, float, int, int, bytes]]) -> bytes:
    """A PDF of one greyscale JPEG per page: ``(width pt, height pt, width px, height px, jpeg)``."""
    bodies: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids: list[int] = []
    for width, height, pixels_wide, pixels_high, jpeg in pages:
        image = len(bodies) + 1
        bodies.append(
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
            b"/BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream"
            % (pixels_wide, pixels_high, len(jpeg), jpeg)
        )
        draw = b"q %s 0 0 %s 0 0 cm /Scan Do Q" % (_number(width), _number(height))
        bodies.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(draw), draw))
        bodies.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] "
            b"/Resources << /XObject << /Scan %d 0 R >> >> /Contents %d 0 R >>"
            % (_number(width), _number(height), image, image + 1)
        )
        kids.append(len(bodies))
    bodies[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % kid for kid in kids),
        len(kids),
    )
    bodies.append(b"<< /Producer (clear-rag scanned render) >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(bodies) + 1,
        len(bodies),
        xref,
    )
    return bytes(out)


def _number(value: float) -> bytes:
    return f"{value:.3f}".rstrip("0").rstrip(".").encode()


def write_scans(
    pdfs: Sequence[Path], root: Path, out: Path, *, dpi: int = SCAN_DPI
) -> Iterator[tuple[Path, Path]]:
    """Each PDF with a text layer rendered to ``out``, at its path below ``root``; ``(original, scan)``
    pairs as they are written. A scan whose bytes are already there is left as it is."""
    for pdf in pdfs:
        data = pdf.read_bytes()
        if not has_text(data, source=str(pdf)):
            continue
        target = out / (pdf.relative_to(root) if pdf.is_relative_to(root) else Path(pdf.name))
        scan = scan_pdf(data, source=str(pdf), dpi=dpi)
        if not target.is_file() or target.read_bytes() != scan:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(scan)
        yield pdf, target
