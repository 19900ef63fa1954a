"""The ``docling`` PDF backend: IBM's Docling (layout and table-structure models), an optional extra.

Install with ``pip install 'clear-rag[docling]'``. Docling downloads its models from Hugging Face
on first use, so the first parse takes minutes and needs the network; later ones run offline.
Its ``DoclingDocument`` is turned into pieces item by item (``pieces_from_docling``): headings,
paragraphs, list items (consecutive ones make one list), tables (one row per line, cells joined by
" | ") and code, with page headers and footers as ``furniture`` after all body blocks.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from functools import cache
from io import BytesIO
from pathlib import PurePath
from typing import Any

from clear_rag.errors import PdfError
from clear_rag.parse.base import Parsed
from clear_rag.parse.pdf import MEDIA_TYPE, check_bytes, missing_backend, no_text_layer
from clear_rag.parse.pieces import Piece, assemble

_FURNITURE = frozenset({"page_header", "page_footer"})
_SKIPPED = frozenset({"picture", "chart"})


class DoclingPdfParser:
    """PDF through Docling's conversion pipeline."""

    file_type = "pdf"
    backend = "docling"
    version = "1"

    def __init__(self) -> None:
        if importlib.util.find_spec("docling") is None:
            raise missing_backend("docling", "docling", "docling", "its layout and table-structure models")

    def parse(self, data: bytes, *, source: str) -> Parsed:
        check_bytes(data, source)
        from docling.datamodel.base_models import DocumentStream
        from docling_core.types.doc import ContentLayer

        try:
            result = _converter().convert(DocumentStream(name=PurePath(source).name, stream=BytesIO(data)))
            items = list(
                result.document.iterate_items(
                    included_content_layers={ContentLayer.BODY, ContentLayer.FURNITURE}
                )
            )
        except Exception as err:  # docling wraps its many failure modes in several exception types
            raise PdfError(
                f"could not be converted by docling ({type(err).__name__}: {str(err)[:200]})",
                path=source,
                fix="Try the `layout` backend, or re-save the file in a PDF viewer",
            ) from None
        text, blocks = assemble(pieces_from_docling(item for item, _ in items))
        if not blocks:
            raise no_text_layer(source, int(result.document.num_pages()))
        return Parsed(text=text, blocks=blocks, media_type=MEDIA_TYPE)


@cache
def _converter() -> Any:
    """One converter per process: building one loads Docling's models."""
    from docling.document_converter import DocumentConverter

    return DocumentConverter()


def pieces_from_docling(items: Iterable[Any]) -> list[Piece]:
    """Docling items (in reading order) as pieces, furniture last.

    Read by attribute, as Docling documents them: ``label`` (a ``DocItemLabel``, compared by its
    value), ``text``, ``level`` (section headers), ``marker`` (list items), ``data.grid`` (tables:
    rows of cells with ``text``), ``content_layer`` and ``prov[0].page_no``.
    """
    body: list[Piece] = []
    furniture: list[Piece] = []
    items_of_list: list[str] = []
    list_page = ""
    for item in items:
        label = str(getattr(getattr(item, "label", ""), "value", getattr(item, "label", "")))
        page = _page_of(item)
        if label == "list_item":
            marker = str(getattr(item, "marker", "") or "-")
            items_of_list.append(f"{marker} {_text_of(item)}".strip())
            list_page = list_page or page
            continue
        if items_of_list:
            body.append(Piece("list", "\n".join(items_of_list), level=1, meta={"page": list_page}))
            items_of_list, list_page = [], ""
        meta = {"page": page} if page else {}
        layer = str(getattr(getattr(item, "content_layer", ""), "value", ""))
        if label in _FURNITURE or layer == "furniture":
            furniture.append(Piece("furniture", _text_of(item), meta=meta))
        elif label == "table":
            body.append(Piece("table", _table_text(item), meta=meta))
        elif label == "title":
            body.append(Piece("heading", _text_of(item), level=1, meta=meta))
        elif label == "section_header":
            level = min(6, max(1, int(getattr(item, "level", 1) or 1) + 1))
            body.append(Piece("heading", _text_of(item), level=level, meta=meta))
        elif label == "code":
            body.append(Piece("code", _text_of(item), meta=meta))
        elif label not in _SKIPPED:
            body.append(Piece("paragraph", _text_of(item), meta=meta))
    if items_of_list:
        body.append(Piece("list", "\n".join(items_of_list), level=1, meta={"page": list_page}))
    return [*body, *furniture]


def _text_of(item: Any) -> str:
    return str(getattr(item, "text", "") or "")


def _page_of(item: Any) -> str:
    provenance = getattr(item, "prov", None) or []
    return str(getattr(provenance[0], "page_no", "")) if provenance else ""


def _table_text(item: Any) -> str:
    grid = getattr(getattr(item, "data", None), "grid", None) or []
    rows = []
    for row in grid:
        cells = [str(getattr(cell, "text", "") or "").strip() for cell in row]
        # A cell spanning several columns appears once per column it covers: keep it once.
        kept = [cell for index, cell in enumerate(cells) if cell and (index == 0 or cell != cells[index - 1])]
        if kept:
            rows.append(" | ".join(kept))
    return "\n".join(rows)
