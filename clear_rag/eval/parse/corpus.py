"""A folder of PDFs scored against their truth files by each PDF backend: the runner ``clear-rag
parse-eval`` calls for the 10-K renders, their scans and the drawn cases (``clear_rag.eval.drawn``).

A PDF ``<name>.pdf`` is scored against ``<truth>/<name>.json``, or else, for ``<co>-<anything>.pdf``,
against ``<truth>/<co>.json`` (``aapl-two-column.pdf`` against ``truth/aapl.json``), with the metrics of
``clear_rag.eval.parse``; a truth file is written in the format of ``clear_rag.eval.parse.truth``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError, ModelError
from clear_rag.eval.parse.document import DocumentScore, overall, score_document
from clear_rag.eval.parse.truth import FORMAT, Truth, load_truth
from clear_rag.parse.base import Parser

FIRST = ("layout", "flat")  # the parser and its baseline, then any other registered backend
BUILD = "Build the corpus with `make corpus-10k`"


def default_backends() -> tuple[str, ...]:
    """Every registered PDF backend, ``layout`` and ``flat`` first: those whose extra is missing are
    then listed as not run, so the result file says what was not measured here."""
    from clear_rag.parse.registry import backends

    registered = backends("pdf")
    return tuple(b for b in FIRST if b in registered) + tuple(b for b in registered if b not in FIRST)


def find_pdfs(folder: Path) -> list[Path]:
    """The PDFs under ``folder`` (one sub-folder per render), sorted; an error naming the folder when
    there are none."""
    if not folder.is_dir():
        raise InputError("does not exist or is not a folder", path=str(folder), fix=BUILD)
    found = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    if not found:
        raise InputError("holds no PDF files (*.pdf)", path=str(folder), fix=BUILD)
    return found


def _name(pdf: Path, root: Path) -> str:
    """A PDF's name in the results: its path below the corpus folder (``two-column/aapl.pdf``)."""
    return pdf.relative_to(root).as_posix() if pdf.is_relative_to(root) else pdf.name


def truth_path(pdf: Path, truth_dir: Path) -> Path:
    """``<truth_dir>/<name>.json`` for ``<name>.pdf`` where it exists, else ``<truth_dir>/<co>.json`` for
    ``<co>-anything.pdf`` (the name before the first ``-``: one truth for each render of a document)."""
    exact = truth_dir / f"{pdf.stem}.json"
    return exact if exact.is_file() else truth_dir / f"{pdf.stem.split('-', 1)[0]}.json"


def truth_of(pdf: Path, truth_dir: Path) -> Truth:
    """The truth ``pdf`` is scored against; a missing one is an error naming both names it may have."""
    path = truth_path(pdf, truth_dir)
    names = {f"{pdf.stem}.json", path.name}
    build = BUILD[0].lower() + BUILD[1:]
    fix = f"Write {' or '.join(sorted(names))} there ({FORMAT}); for the 10-K renders, {build}"
    return load_truth(path, fix=fix)


def pdf_pages(data: bytes, *, source: str) -> tuple[int, str]:
    """The page count and the full text of a PDF, read with pdfium: an extractor neither backend under
    test uses, which counts the furniture the pages carry (``furniture_leakage``'s denominator)."""
    from clear_rag.parse.pdfium import document_text

    try:
        return document_text(data, source=source)
    except InputError as err:
        raise InputError(err.what, path=source, fix=BUILD) from None


def evaluate(
    pdfs: Sequence[Path],
    truth_dir: Path,
    backends: Sequence[str],
    root: Path,
    *,
    originals: Mapping[Path, Path] | None = None,
) -> dict[str, Any]:
    """Each backend's scores over ``pdfs``, as the ``backends`` part of the result file: per backend
    ``{"version", "overall", "documents": {path below root: scores}}``, or ``{"not_run": reason}`` for one
    whose package is not installed (``ModelError``). An unknown backend name is an error. ``originals``
    maps a scanned render to the PDF it was made from, whose text counts the pages' furniture."""
    from clear_rag.parse.registry import get_parser

    truths = {pdf: truth_of(pdf, truth_dir) for pdf in pdfs}
    # a scanned render's furniture is counted on the text of the PDF it was made from
    pages = {
        pdf: pdf_pages(source.read_bytes(), source=str(source))
        for pdf in pdfs
        for source in [(originals or {}).get(pdf, pdf)]
    }
    out: dict[str, Any] = {}
    for name in backends:
        try:
            parser = get_parser("pdf", name)
            documents = {_name(pdf, root): _score(parser, pdf, truths[pdf], *pages[pdf]) for pdf in pdfs}
        except ModelError as err:  # its extra is not installed: what was not measured, and why
            out[name] = {"not_run": str(err)}
            continue
        total = overall(score for score, _ in documents.values())
        out[name] = {
            "version": parser.version,
            "overall": total.to_dict() if total is not None else {},
            "documents": {
                pdf: score.to_dict() | ({"error": error} if error else {})
                for pdf, (score, error) in documents.items()
            },
        }
    return out


def _score(parser: Parser, pdf: Path, truth: Truth, pages: int, printed: str) -> tuple[DocumentScore, str]:
    """One PDF parsed and scored, with the parse's seconds; a file the parser refuses is scored as an
    empty parse (nothing recovered) and its error returned beside the score."""
    data = pdf.read_bytes()
    error = ""
    started = time.perf_counter()
    try:
        parsed = parser.parse(data, source=str(pdf))
        text, blocks = parsed.text, parsed.blocks
    except InputError as err:
        text, blocks, error = "", (), str(err)
    seconds = time.perf_counter() - started
    score = score_document(text, blocks, truth, pages=printed)
    return dataclasses.replace(score, pages=pages, seconds=seconds), error
