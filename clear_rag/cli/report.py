"""``clear-rag report`` and ``clear-rag check-report``: tables, caveats and plots in pages come from results/.

Both take the README and every page under site/ unless pages are named; ``report`` rewrites what
drifted, ``check-report`` names each drift by file and line and exits 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError
from clear_rag.report import publish
from clear_rag.report.blocks import check_page, result_numbers
from clear_rag.report.sources import Results

PagesArgument = Annotated[
    list[Path] | None, typer.Argument(help="Pages to process (default: README.md and the pages under site/).")
]
ResultsOption = Annotated[Path, typer.Option(help="Folder of result files.")]


@app.command("report")
def report_command(pages: PagesArgument = None, results_dir: ResultsOption = Path("results")) -> None:
    """Re-render every marked block (tables, caveats, plots) in the pages from the result files."""
    given = pages or publish.pages()
    results = Results.at(results_dir)
    changed: list[Path] = []
    for page in given:
        try:
            written = publish.publish_page(page, results)
        except ClearRagError as err:
            raise fail(err) from None
        for path in written:
            typer.echo(f"rendered {path}")
        changed += written
    # Its predecessor said nothing when every page already matched, which read like a silent failure.
    rendered = [path for path in changed if path.suffix == ".md"]
    if changed:
        rest = len(given) - len(rendered)
        count = _count(len(rendered), "page") + (
            f" and {_count(len(changed) - len(rendered), 'plot')}" if len(changed) > len(rendered) else ""
        )
        matched = f" ({rest} already matched)" if rest else ""
        typer.echo(f"report: rendered {count} from {results_dir}/{matched}")
    else:
        which = "README.md and the pages under site/" if not pages else ", ".join(map(str, given))
        verb = "matches" if pages and len(given) == 1 else "match"
        typer.echo(f"report: {which} already {verb} {results_dir}/")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@app.command("check-report")
def check_report_command(pages: PagesArgument = None, results_dir: ResultsOption = Path("results")) -> None:
    """Fail when a block or plot differs from its result file or a number in prose matches no result."""
    results = Results.at(results_dir)
    known = result_numbers(results)
    problems = []
    for page in pages or publish.pages():
        try:
            problems += check_page(page.read_text(encoding="utf-8"), page, results, known)
        except ClearRagError as err:
            raise fail(err) from None
    for problem in problems:
        typer.echo(str(problem), err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo("report: every table, plot and number matches results/")
