"""``clear-rag results``: SQL over the result files (DuckDB views), the views' columns, and named queries."""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError

results_app = typer.Typer(help="Query the result files (results/*.json) with SQL.", no_args_is_help=True)
app.add_typer(results_app, name="results")

ResultsOption = Annotated[Path, typer.Option(help="Folder of result files.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object per row instead of a table.")]


def _need_duckdb() -> None:
    # The queries module is imported inside each command so that the other commands work without duckdb.
    if importlib.util.find_spec("duckdb") is None:
        typer.echo("error: the results commands need DuckDB. Install it: pip install duckdb", err=True)
        raise typer.Exit(2)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        # The files round to 4-6 places; an average computed in SQL should not print 17 digits.
        return repr(round(value, 6)) if math.isfinite(value) else repr(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, default=_plain, ensure_ascii=False)
    return str(value)


def _plain(value: Any) -> Any:
    """JSON for what DuckDB returns beyond str/int/float/bool/None/list/dict."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned text table: numbers right-aligned, everything else left; a count of rows under it."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    numeric = [
        bool(rows) and all(isinstance(r[i], int | float | Decimal) or r[i] is None for r in rows)
        for i in range(len(columns))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths), *(line(r) for r in cells)]
    out.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(out)


def _print(columns: list[str], rows: list[tuple[Any, ...]], as_json: bool) -> None:
    if as_json:
        for row in rows:
            typer.echo(json.dumps(dict(zip(columns, row, strict=True)), default=_plain, ensure_ascii=False))
    elif columns:
        typer.echo(table(columns, rows))


@results_app.command("sql")
def sql_command(
    sql: Annotated[str, typer.Argument(help="A query over the views, e.g. 'SELECT * FROM rows'.")],
    as_json: JsonOption = False,
    results_dir: ResultsOption = Path("results"),
) -> None:
    """Run a SQL query against the views (see `clear-rag results views`)."""
    _need_duckdb()
    from clear_rag.results import queries

    try:
        columns, rows = queries.run_sql(sql, results_dir)
    except ClearRagError as err:
        raise fail(err) from None
    _print(columns, rows, as_json)


@results_app.command("views")
def views_command(results_dir: ResultsOption = Path("results")) -> None:
    """List the views with their columns, and the named queries."""
    _need_duckdb()
    from clear_rag.results import queries, views

    try:
        con = queries.connect(results_dir)
    except ClearRagError as err:
        raise fail(err) from None
    try:
        described = queries.describe(con)
    finally:
        con.close()
    for name, columns in described.items():
        typer.echo(f"{name}: {queries.doc(views.VIEWS[name])}")
        width = max(len(c) for c, _ in columns)
        for column, kind in columns:
            typer.echo(f"  {column:<{width}}  {kind}")
    typer.echo("named queries (clear-rag results show NAME):")
    width = max(len(n) for n in views.QUERIES)
    for name, build in views.QUERIES.items():
        typer.echo(f"  {name:<{width}}  {queries.doc(build)}")
    typer.echo("the files as read, nested: result_files() (one row per file), result_rows() (a row each, r)")


@results_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="A named query (e.g. best_rows) or a view (e.g. rows).")],
    as_json: JsonOption = False,
    results_dir: ResultsOption = Path("results"),
) -> None:
    """Run a named query, or print a whole view."""
    _need_duckdb()
    from clear_rag.results import queries

    try:
        columns, rows = queries.run_named(name, results_dir)
    except ClearRagError as err:
        raise fail(err) from None
    _print(columns, rows, as_json)
