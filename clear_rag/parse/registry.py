"""Parsers keyed by file type and backend name.

Built-in parsers are named by import path and imported on first use, so a heavy backend (a PDF
library, say) costs nothing until a file of its type is parsed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import PurePath

from clear_rag.errors import UnsupportedFileError
from clear_rag.parse.base import Parser

EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}

_factories: dict[tuple[str, str], Callable[[], Parser] | str] = {
    ("text", "plain"): "clear_rag.parse.text:TextParser",
    ("markdown", "markdown-it"): "clear_rag.parse.markdown:MarkdownParser",
    ("html", "html"): "clear_rag.parse.html:HtmlParser",
    ("pdf", "flat"): "clear_rag.parse.flat:FlatPdfParser",
    ("pdf", "layout"): "clear_rag.parse.layout.parser:LayoutPdfParser",
    ("pdf", "ocr"): "clear_rag.parse.ocr:OcrPdfParser",
    ("pdf", "docling"): "clear_rag.parse.docling:DoclingPdfParser",
    ("pdf", "marker"): "clear_rag.parse.marker:MarkerPdfParser",
}
_defaults: dict[str, str] = {"text": "plain", "markdown": "markdown-it", "html": "html", "pdf": "layout"}


def register(file_type: str, backend: str, factory: Callable[[], Parser], *, default: bool = False) -> None:
    """Add a parser backend; ``default`` makes it the one used when no backend is named."""
    _factories[(file_type, backend)] = factory
    if default or file_type not in _defaults:
        _defaults[file_type] = backend


def backends(file_type: str) -> list[str]:
    """The backend names registered for a file type, sorted."""
    return sorted(backend for kind, backend in _factories if kind == file_type)


def default_backend(file_type: str) -> str:
    """The backend ``get_parser`` uses for ``file_type`` when none is named."""
    return _defaults.get(file_type) or backends(file_type)[0]


def supported() -> dict[str, list[str]]:
    """The file types some registered parser handles, each with its extensions, sorted."""
    parsed = {kind for kind, _ in _factories}
    found: dict[str, list[str]] = {}
    for suffix, kind in sorted(EXTENSIONS.items()):
        if kind in parsed:
            found.setdefault(kind, []).append(suffix)
    return dict(sorted(found.items()))


def file_type_of(path: str | PurePath) -> str:
    """The file type a path's extension names, e.g. ``"markdown"`` for ``notes.md``.

    Raises ``UnsupportedFileError`` naming the file when no registered parser handles that type, so
    the message says which file it is even where the caller reports it without the path.
    """
    suffix = PurePath(path).suffix.lower()
    kind = EXTENSIONS.get(suffix)
    if kind is not None and backends(kind):
        return kind
    raise _unsupported(kind, path=str(path), field="extension", value=suffix or "(none)")


def get_parser(file_type: str, backend: str | None = None) -> Parser:
    """A parser for ``file_type``; its default backend unless ``backend`` names another."""
    available = backends(file_type)
    if not available:
        raise _unsupported(file_type, field="file type", value=file_type)
    name = backend if backend is not None else default_backend(file_type)
    factory = _factories.get((file_type, name))
    if factory is None:
        raise UnsupportedFileError(
            f"no parser backend {name!r} for {file_type} files",
            field="backend",
            value=name,
            fix=f"Choose one of: {', '.join(available)}",
        )
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        parser: Parser = getattr(importlib.import_module(module_name), attr)()
        return parser
    return factory()


def _unsupported(
    file_type: str | None, *, field: str, value: str, path: str | None = None
) -> UnsupportedFileError:
    """The error for a file type no registered parser handles (``None``: an extension nobody knows).

    Its predecessor said "no parser backend None" without the file, and offered every extension in
    EXTENSIONS, ``.pdf`` included, as a way out although nothing parsed PDFs.
    """
    if file_type is None:
        what = "has a file type clear-rag does not parse"
    else:
        what = f"is a {file_type} file, and no {file_type} parser is registered"
    types = "; ".join(f"{kind} ({', '.join(suffixes)})" for kind, suffixes in supported().items())
    return UnsupportedFileError(
        what,
        path=path,
        field=field,
        value=value,
        fix=f"Supported types: {types}. Leave the file out, or convert it to one of those",
    )
