"""The ``marker`` PDF backend: Marker (datalab's ``marker-pdf``), an optional extra.

Install with ``pip install 'clear-rag[marker]'``. Marker downloads its layout, OCR and table
models from Hugging Face on first use, so the first parse takes minutes and needs the network.
It renders a PDF to Markdown, which the Markdown parser turns into blocks; Marker drops page
headers and footers itself, so this backend emits no furniture.
"""

from __future__ import annotations

import importlib.util
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from clear_rag.errors import PdfError
from clear_rag.parse.base import Parsed
from clear_rag.parse.markdown import MarkdownParser
from clear_rag.parse.pdf import MEDIA_TYPE, check_bytes, missing_backend


class MarkerPdfParser:
    """PDF through Marker's converter, read back as Markdown."""

    file_type = "pdf"
    backend = "marker"
    version = "1"

    def __init__(self) -> None:
        if importlib.util.find_spec("marker") is None:
            raise missing_backend("marker-pdf", "marker", "marker", "its layout, OCR and table models")

    def parse(self, data: bytes, *, source: str) -> Parsed:
        check_bytes(data, source)
        from marker.output import text_from_rendered

        # Marker reads a path, not bytes.
        with tempfile.TemporaryDirectory(prefix="clear-rag-marker-") as folder:
            path = Path(folder) / "input.pdf"
            path.write_bytes(data)
            try:
                markdown, _, _ = text_from_rendered(_converter()(str(path)))
            except Exception as err:  # marker surfaces pdfium, torch and its own errors alike
                raise PdfError(
                    f"could not be converted by marker ({type(err).__name__}: {str(err)[:200]})",
                    path=source,
                    fix="Try the `layout` backend, or re-save the file in a PDF viewer",
                ) from None
        parsed = MarkdownParser().parse(str(markdown).encode("utf-8"), source=source)
        return replace(parsed, media_type=MEDIA_TYPE)


@cache
def _converter() -> Any:
    """One converter per process: building one loads Marker's models."""
    from marker.converters.pdf import PdfConverter
    from marker.models import create_model_dict

    return PdfConverter(artifact_dict=create_model_dict())
