"""``clear-rag report`` and ``clear-rag check-report``: tables in pages come from results/ only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError
from clear_rag.report.tables import render_page, result_numbers, stale_blocks, unmatched_numbers

PagesArgument = Annotated[
    list[Path] | None, typer.Argument(help="Pages to process (default: README.md and the pages under site/).")
]
ResultsOption = Annotated[Path, typer.Option(help="Folder of result files.")]


def _pages(pages: list[Path] | None) -> list[Path]:
    return pages if pages else [Path("README.md"), *sorted(Path("site").rglob("*.md"))]


@app.command("report")
def report_command(pages: PagesArgument = None, results_dir: ResultsOption = Path("results")) -> None:
    """Re-render every marked results table in the pages from the result files."""
    given = _pages(pages)
    changed = []
    for page in given:
        text = page.read_text(encoding="utf-8")
        try:
            rendered = render_page(text, results_dir)
        except ClearRagError as err:
            raise fail(err) from None
        if rendered != text:
            page.write_text(rendered, encoding="utf-8")
            changed.append(page)
            typer.echo(f"rendered {page}")
    # Its predecessor said nothing when every page already matched, which read like a silent failure.
    if changed:
        rest = len(given) - len(changed)
        count = f"{len(changed)} page" if len(changed) == 1 else f"{len(changed)} pages"
        matched = f" ({rest} already matched)" if rest else ""
        typer.echo(f"report: rendered {count} from {results_dir}/{matched}")
    else:
        which = "README.md and the pages under site/" if not pages else ", ".join(str(page) for page in given)
        verb = "matches" if pages and len(given) == 1 else "match"
        typer.echo(f"report: {which} already {verb} {results_dir}/")


@app.command("check-report")
def check_report_command(pages: PagesArgument = None, results_dir: ResultsOption = Path("results")) -> None:
    """Fail when a results table differs from its result file or a number in prose matches no result."""
    known = result_numbers(results_dir)
    problems = []
    for page in _pages(pages):
        text = page.read_text(encoding="utf-8")
        try:
            stale = stale_blocks(text, results_dir)
        except ClearRagError as err:
            raise fail(err) from None
        problems += [
            f"{page}: table {name!r} differs from results/{name}.json (edited by hand, or stale): "
            "run `clear-rag report`"
            for name in stale
        ]
        problems += [
            f"{page}: the number {n} matches no value in {results_dir}/: quote results, do not type them"
            for n in unmatched_numbers(text, results_dir, known)
        ]
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo("report: every table and number matches results/")
