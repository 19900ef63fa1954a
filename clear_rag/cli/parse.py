"""``clear-rag parse-eval [FOLDER]``: every PDF parsed by each backend and scored against its ground truth.

A PDF ``<name>.pdf`` is scored against ``<truth>/<name>.json``, or else, for ``<co>-<anything>.pdf``,
against ``<truth>/<co>.json`` (``aapl-two-column.pdf`` against ``truth/aapl.json``), with the metrics of
``clear_rag.eval.parse``; a truth file is written in the format of ``clear_rag.eval.parse.truth``, so
``--truth`` can point at anyone's own truth files. One table per backend is printed;
``--save-results`` writes them to ``results/parse.json``, which ``tests/parse/test_pdf_differential.py``
holds every later parse to.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import shlex
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError, InputError, ModelError
from clear_rag.eval.parse.document import DocumentScore, overall, score_document
from clear_rag.eval.parse.truth import FORMAT, Truth, load_truth
from clear_rag.eval.scanned import SCAN_DPI
from clear_rag.parse.base import Parser

DEFAULT_FOLDER = Path("corpora") / "10k" / "pdf"
# Scanned renders of the default corpus's PDFs, made on demand (git-ignored: about 30 MB a 10-K).
DEFAULT_SCANS = Path("corpora") / "10k" / "scanned"
FIRST = ("layout", "flat")  # the parser and its baseline, then any other registered backend
RESULT_NAME = "parse.json"
BUILD = "Build the corpus with `make corpus-10k`"


def default_backends() -> tuple[str, ...]:
    """Every registered PDF backend, ``layout`` and ``flat`` first: those whose extra is missing are
    then listed as not run, so the result file says what was not measured here."""
    from clear_rag.parse.registry import backends

    registered = backends("pdf")
    return tuple(b for b in FIRST if b in registered) + tuple(b for b in registered if b not in FIRST)


def _truth_dir(folder: Path, truth: Path | None) -> Path:
    return truth if truth is not None else folder.parent / "truth"


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


def evaluate_scans(
    pdfs: Sequence[Path], truth_dir: Path, backends: Sequence[str], root: Path, out: Path, dpi: int
) -> dict[str, Any] | None:
    """The result file's ``scanned`` part: each PDF with a text layer rendered as a scan into ``out``
    (``clear_rag.eval.scanned``) and scored by each backend against the original's truth; ``not_run``
    without tesseract (the backends would only say the pages are images); None where no PDF has a
    text layer (FOLDER holds scans already)."""
    from clear_rag.eval.scanned import write_scans
    from clear_rag.parse.tesseract import available

    engine = available()
    if isinstance(engine, ModelError):
        return {"dpi": dpi, "not_run": str(engine)}
    made = {scan: original for original, scan in write_scans(pdfs, root, out, dpi=dpi)}
    if not made:
        return None
    scores = evaluate(list(made), truth_dir, backends, out, originals=made)
    return {"dpi": dpi, "folder": out.as_posix(), "engine": engine.name, "backends": scores}


def scans_folder(folder: Path, scans: Path | None, no_scans: bool) -> Path | None:
    """Where scanned renders go: ``--scans``, else ``DEFAULT_SCANS`` for the default corpus (unless
    ``--no-scans``); for another FOLDER, nowhere unless asked, so nothing is written beside a person's
    own PDFs unbidden."""
    if no_scans:
        return None
    return scans if scans is not None else (DEFAULT_SCANS if folder == DEFAULT_FOLDER else None)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def result_document(
    backends: dict[str, Any], command: str, scanned: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The result file: when, by what command, with which library and parser versions, on what machine;
    and the ``scanned`` part, where scanned renders were scored."""
    return {
        "suite": "parse",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "versions": {
            "clear-rag": _version("clear-rag"),
            "pdfplumber": _version("pdfplumber"),
            "pdfminer.six": _version("pdfminer.six"),
            "pypdfium2": _version("pypdfium2"),
            "parsers": {name: run["version"] for name, run in backends.items() if "version" in run},
        },
        "machine": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
        },
        "backends": backends,
    } | ({"scanned": scanned} if scanned is not None else {})


COLUMNS = (
    ("P", "words_precision", "{:.4f}"),
    ("R", "words_recall", "{:.4f}"),
    ("F1", "words_f1", "{:.4f}"),
    ("order", "order", "{:.4f}"),
    ("cells in tables", "cells_in_tables", "{:.4f}"),
    ("cells in rows", "cells_in_rows", "{:.4f}"),
    ("cells anywhere", "cells_anywhere", "{:.4f}"),
    ("furniture leak", "furniture_leakage", "{:.4f}"),
    ("headings R", "headings_recall", "{:.4f}"),
    ("headings P", "headings_precision", "{:.4f}"),
    ("pages", "pages", "{}"),
    ("seconds", "seconds", "{:.2f}"),
    ("pages/s", "pages_per_second", "{:.1f}"),
)


def table(backends: dict[str, Any], title: str = "backend") -> str:
    """One text table per backend: a line per document, then the overall (micro) line; a metric not
    measured (headings, where the truth lists none) is a dash."""
    blocks = []
    for name, run in backends.items():
        if "not_run" in run:
            blocks.append(f"{title} {name}: not run: {run['not_run']}")
            continue
        rows = [*run["documents"].items(), ("overall", run["overall"])]
        width = max(len(doc) for doc, _ in rows)
        head = f"{'document':<{width}}  " + "  ".join(
            f"{label:>{max(len(label), 6)}}" for label, _, _ in COLUMNS
        )
        lines = [f"{title} {name} ({run['version']})", head]
        for doc, scores in rows:
            cells = "  ".join(
                f"{'—' if scores[key] is None else form.format(scores[key]):>{max(len(label), 6)}}"
                for label, key, form in COLUMNS
            )
            lines.append(
                f"{doc:<{width}}  {cells}" + (f"  error: {scores['error']}" if "error" in scores else "")
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def command_line(
    folder: Path,
    truth: Path | None,
    backends: Sequence[str],
    results_dir: Path,
    scans: Path | None = DEFAULT_SCANS,
    scan_dpi: int = SCAN_DPI,
) -> str:
    """The command that reproduces a run, with only the options that differ from their defaults."""
    args = ["clear-rag", "parse-eval"]
    if folder != DEFAULT_FOLDER:
        args.append(str(folder))
    if truth is not None:
        args += ["--truth", str(truth)]
    if tuple(backends) != default_backends():
        for name in backends:
            args += ["--backend", name]
    if scans is None and folder == DEFAULT_FOLDER:
        args.append("--no-scans")
    elif scans is not None and scans != scans_folder(folder, None, False):
        args += ["--scans", str(scans)]
    if scans is not None and scan_dpi != SCAN_DPI:
        args += ["--scan-dpi", str(scan_dpi)]
    args.append("--save-results")
    if results_dir != Path("results"):
        args += ["--results-dir", str(results_dir)]
    return shlex.join(args)


@app.command("parse-eval")
def parse_eval_command(
    folder: Annotated[Path, typer.Argument(help="Folder of PDFs named <co>-<layout>.pdf.")] = DEFAULT_FOLDER,
    truth: Annotated[
        Path | None,
        typer.Option(
            "--truth",
            help="Folder of ground truth files (<name>.json for <name>.pdf, else <co>.json for "
            "<co>-*.pdf) in the format of site/parse.md (default: truth/ beside FOLDER).",
        ),
    ] = None,
    backend: Annotated[
        list[str] | None,
        typer.Option("--backend", help="A PDF parser backend (repeatable; default: every registered one)."),
    ] = None,
    save_results: Annotated[
        bool, typer.Option("--save-results", help=f"Write results/{RESULT_NAME}.")
    ] = False,
    results_dir: Annotated[Path, typer.Option("--results-dir", help="Where result files go.")] = Path(
        "results"
    ),
    scans: Annotated[
        Path | None,
        typer.Option(
            "--scans",
            help="Also score a scanned render of each PDF (pages as images, read by OCR), written here "
            f"(default: {DEFAULT_SCANS} for the default FOLDER, none for another).",
        ),
    ] = None,
    no_scans: Annotated[bool, typer.Option("--no-scans", help="Score no scanned renders.")] = False,
    scan_dpi: Annotated[
        int, typer.Option("--scan-dpi", min=36, max=1200, help="The scanned renders' resolution.")
    ] = SCAN_DPI,
) -> None:
    """Score PDF parsers against ground truth: words, reading order, table cells, page furniture, speed;
    on the PDFs as they are and, for the default corpus, on scanned renders of them (OCR)."""
    backends = tuple(backend) if backend else default_backends()
    out = scans_folder(folder, scans, no_scans)
    try:
        pdfs = find_pdfs(folder)
        scores = evaluate(pdfs, _truth_dir(folder, truth), backends, folder)
        typer.echo(table(scores))
        scanned = None
        if out is not None:
            scanned = evaluate_scans(pdfs, _truth_dir(folder, truth), backends, folder, out, scan_dpi)
        if scanned is not None:
            title = f"scanned at {scan_dpi} dpi ({out}), backend"
            typer.echo("\n" + table(scanned.get("backends") or {"all": scanned}, title))
    except ClearRagError as err:
        raise fail(err) from None
    if save_results:
        from clear_rag.results.files import write_result

        command = command_line(folder, truth, backends, results_dir, out, scan_dpi)
        target = results_dir / RESULT_NAME
        write_result(target, result_document(scores, command, scanned))
        typer.echo(f"written to {target}")
