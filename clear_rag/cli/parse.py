"""``clear-rag parse-eval [FOLDER]``: every PDF parsed by each backend and scored against its ground truth.

A PDF ``<name>.pdf`` is scored against ``<truth>/<name>.json``, or else, for ``<co>-<anything>.pdf``,
against ``<truth>/<co>.json`` (``aapl-two-column.pdf`` against ``truth/aapl.json``), with the metrics of
``clear_rag.eval.parse``; a truth file is written in the format of ``clear_rag.eval.parse.truth``, so
``--truth`` can point at anyone's own truth files. With the default corpus, scanned renders of its PDFs
(``scanned``) and the parse suite's drawn cases (``cases``, ``clear_rag.eval.drawn.suite``: one row
per case and backend) are scored too. One table per backend is printed; ``--save-results`` writes them
to ``results/parse.json``, which ``tests/parse/test_pdf_differential.py`` holds every later parse to.
"""

from __future__ import annotations

import os
import platform
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError, ModelError
from clear_rag.eval.drawn.suite import evaluate_cases
from clear_rag.eval.parse.corpus import default_backends, evaluate, find_pdfs
from clear_rag.eval.scanned import SCAN_DPI

DEFAULT_FOLDER = Path("corpora") / "10k" / "pdf"
# Scanned renders of the default corpus's PDFs, made on demand (git-ignored: about 30 MB a 10-K).
DEFAULT_SCANS = Path("corpora") / "10k" / "scanned"
# The drawn cases (clear_rag.eval.drawn.suite), written on each run (git-ignored: about 2 MB).
DEFAULT_SUITE = Path("corpora") / "parse-suite"
RESULT_NAME = "parse.json"


def _truth_dir(folder: Path, truth: Path | None) -> Path:
    return truth if truth is not None else folder.parent / "truth"


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


def suite_folder(folder: Path, suite: Path | None, no_suite: bool) -> Path | None:
    """Where the drawn cases go: ``--suite``, else ``DEFAULT_SUITE`` with the default corpus (unless
    ``--no-suite``); with another FOLDER, nowhere unless asked."""
    if no_suite:
        return None
    return suite if suite is not None else (DEFAULT_SUITE if folder == DEFAULT_FOLDER else None)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def result_document(
    backends: dict[str, Any],
    command: str,
    scanned: dict[str, Any] | None = None,
    cases: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The result file: when, by what command, with which library and parser versions, on what machine;
    the ``scanned`` part, where scanned renders were scored; the ``cases`` part, where the drawn cases
    were (``clear_rag.eval.drawn.suite.evaluate_cases``)."""
    return (
        {
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
        }
        | ({"scanned": scanned} if scanned is not None else {})
        | ({"cases": cases} if cases is not None else {})
    )


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
    suite: Path | None = DEFAULT_SUITE,
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
    if (scans is not None or suite is not None) and scan_dpi != SCAN_DPI:
        args += ["--scan-dpi", str(scan_dpi)]
    if suite is None and folder == DEFAULT_FOLDER:
        args.append("--no-suite")
    elif suite is not None and suite != suite_folder(folder, None, False):
        args += ["--suite", str(suite)]
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
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            help="Also draw the parse suite's cases (headings, furniture, rotated and right-to-left text, "
            "tables, a scan) with their truth here and score each "
            f"(default: {DEFAULT_SUITE} for the default FOLDER, none for another).",
        ),
    ] = None,
    no_suite: Annotated[bool, typer.Option("--no-suite", help="Score no drawn cases.")] = False,
    cases_only: Annotated[
        bool,
        typer.Option(
            "--cases-only",
            help="Score the drawn cases alone; with --save-results, replace only the cases part of the "
            "results file, its other parts kept as they were (the part records its own command).",
        ),
    ] = False,
) -> None:
    """Score PDF parsers against ground truth: words, reading order, table cells, page furniture, speed;
    on the PDFs as they are and, for the default corpus, on scanned renders of them (OCR) and on the
    drawn cases of the parse suite, one row per case."""
    backends = tuple(backend) if backend else default_backends()
    if cases_only:
        return _cases_only(suite or DEFAULT_SUITE, backends, save_results, results_dir, scan_dpi)
    out = scans_folder(folder, scans, no_scans)
    drawn = suite_folder(folder, suite, no_suite)
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
        cases = None
        if drawn is not None:
            cases = evaluate_cases(drawn, backends, dpi=scan_dpi)
            typer.echo("\n" + table(cases["backends"], f"drawn cases ({drawn}), backend"))
            for name, reason in cases.get("not_drawn", {}).items():
                typer.echo(f"not drawn: {name}: {reason}")
    except ClearRagError as err:
        raise fail(err) from None
    if save_results:
        from clear_rag.results.files import write_result

        command = command_line(folder, truth, backends, results_dir, out, scan_dpi, drawn)
        target = results_dir / RESULT_NAME
        write_result(target, result_document(scores, command, scanned, cases))
        typer.echo(f"written to {target}")


def _cases_only(folder: Path, backends: Sequence[str], save: bool, results_dir: Path, dpi: int) -> None:
    """``--cases-only``: the drawn cases scored, printed and, with ``save``, put in the existing results
    file as its ``cases`` part with the command and date that made it; the file's other parts (the
    10-K renders and their scans, whose OCR takes an hour on a busy machine) are kept as they were."""
    from clear_rag.results.files import read_document, write_result

    target = results_dir / RESULT_NAME
    try:
        document = read_document(target) if save else {}
        cases = evaluate_cases(folder, backends, dpi=dpi)
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(table(cases["backends"], f"drawn cases ({folder}), backend"))
    if save:
        args = ["clear-rag", "parse-eval", "--cases-only"]
        args += [a for name in backends if tuple(backends) != default_backends() for a in ("--backend", name)]
        args += ["--suite", str(folder)] if folder != DEFAULT_SUITE else []
        args += ["--scan-dpi", str(dpi)] if dpi != SCAN_DPI else []
        args += [
            "--save-results",
            *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
        ]
        when = datetime.now(UTC).isoformat(timespec="seconds")
        write_result(target, document | {"cases": cases | {"command": shlex.join(args), "date": when}})
        typer.echo(f"written to {target} (its cases part)")
