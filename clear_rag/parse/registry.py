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
}
_defaults: dict[str, str] = {"text": "plain", "markdown": "markdown-it", "html": "html"}


def register(file_type: str, backend: str, factory: Callable[[], Parser], *, default: bool = False) -> None:
    """Add a parser backend; ``default`` makes it the one used when no backend is named."""
    _factories[(file_type, backend)] = factory
    if default or file_type not in _defaults:
        _defaults[file_type] = backend


def backends(file_type: str) -> list[str]:
    """The backend names registered for a file type, sorted."""
    return sorted(backend for kind, backend in _factories if kind == file_type)


def file_type_of(path: str | PurePath) -> str:
    """The file type a path's extension names, e.g. ``"markdown"`` for ``notes.md``."""
    suffix = PurePath(path).suffix.lower()
    try:
        return EXTENSIONS[suffix]
    except KeyError:
        known = ", ".join(sorted(EXTENSIONS))
        raise UnsupportedFileError(
            "has a file type clear-rag does not parse",
            path=str(path),
            field="extension",
            value=suffix or "(none)",
            fix=f"Use one of {known}, or leave the file out",
        ) from None


def get_parser(file_type: str, backend: str | None = None) -> Parser:
    """A parser for ``file_type``; its default backend unless ``backend`` names another."""
    name = backend if backend is not None else _defaults.get(file_type)
    factory = _factories.get((file_type, name)) if name is not None else None
    if factory is None:
        available = ", ".join(backends(file_type)) or "none yet"
        raise UnsupportedFileError(
            f"no parser backend {name!r} for {file_type} files",
            field="backend",
            value=name,
            fix=f"Choose one of: {available}",
        )
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        parser: Parser = getattr(importlib.import_module(module_name), attr)()
        return parser
    return factory()
