"""Named SQL views over the result files, run by DuckDB.

``connect`` creates the views and named queries of ``clear_rag.results.views`` over a snapshot of the
files (``clear_rag.results.snapshot``); ``run_sql`` runs one statement against them. This module and the
snapshot are the only ones of the project that import duckdb, and only when a query runs: DuckDB is an
extra (``clear-rag[results]``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clear_rag.errors import ResultsQueryError
from clear_rag.results.snapshot import duckdb_module, snapshot_of
from clear_rag.results.views import QUERIES, VIEWS, literal, macros

if TYPE_CHECKING:
    import duckdb

SNAPSHOT = "snapshot"  # the attached, read-only database of the files read (``snapshot_of``)


def unreadable(results_dir: Path | str = "results") -> list[tuple[str, str]]:
    """The files of ``results_dir`` DuckDB cannot read as result files, each with DuckDB's reason: what
    ``connect(..., skip_unreadable=True)`` leaves out of the views."""
    folder = Path(results_dir).resolve()
    return list(snapshot_of(folder).unreadable) if any(folder.glob("*.json")) else []


def connect(
    results_dir: Path | str = "results", *, skip_unreadable: bool = False
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view of ``VIEWS`` over ``results_dir/*.json``.

    The views read a snapshot of the files taken when one of them last changed
    (``clear_rag.results.snapshot``), attached read-only, so that a page of dozens of queries reads the
    files once; a file rewritten after ``connect`` is seen by the next ``connect``. The connection may
    read only ``results_dir``: SQL typed by a user (CLI, web page) cannot read or write other files, nor
    change the snapshot. A file DuckDB cannot read is an error naming it, or with ``skip_unreadable``
    left out (``unreadable`` names it).
    """
    folder = Path(results_dir).resolve()
    if not any(folder.glob("*.json")):
        raise ResultsQueryError(
            "no result files (*.json) here",
            path=str(folder),
            fix="Write one with `clear-rag ablate SUITE --save-results`, or pass --results-dir",
        )
    db = duckdb_module()
    try:
        snapshot = snapshot_of(folder)
    except db.Error as err:
        raise _cannot_read(folder, err) from err
    if snapshot.unreadable and not skip_unreadable:
        raise _cannot_read(folder, snapshot.unreadable[0][1])
    con: duckdb.DuckDBPyConnection = db.connect()
    try:
        # Dates print in UTC whatever the machine's zone, as the files write them.
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"ATTACH {literal(str(snapshot.database))} AS {SNAPSHOT} (READ_ONLY)")
        for statement in macros(f"{SNAPSHOT}.main.files"):
            con.execute(statement)
        for name, build in VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {build(snapshot.metrics)}")
        con.execute(f"SET allowed_directories = [{literal(str(folder) + '/')}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except db.Error as err:
        con.close()
        raise _cannot_read(folder, err) from err
    return con


def _cannot_read(folder: Path, reason: object) -> ResultsQueryError:
    return ResultsQueryError(
        f"DuckDB cannot read the result files: {reason}",
        path=str(folder),
        fix="Check that every *.json there is a result file, or move the others aside",
    )


def run_sql(
    sql: str, results_dir: Path | str = "results", *, skip_unreadable: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` against the views; the column names and the rows (none for a statement without output)."""
    con = connect(results_dir, skip_unreadable=skip_unreadable)
    db = duckdb_module()
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description or []]
        return columns, cursor.fetchall() if columns else []
    except db.Error as err:
        # DuckDB's first line says what is wrong; the rest (candidate columns, the line with a caret under
        # the culprit) reads best after the advice, where the caret still lines up.
        first, _, context = str(err).partition("\n")
        hint = 'See `clear-rag results views` for the views and their columns; quote metric names: "ndcg@10"'
        raise ResultsQueryError(
            f"the query failed: {first.rstrip('.!')}", fix=f"{hint}\n{context.strip()}".strip()
        ) from err
    finally:
        con.close()


def run_named(
    name: str, results_dir: Path | str = "results", *, skip_unreadable: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run a named query of ``QUERIES``, or ``SELECT *`` from a view of ``VIEWS``."""
    if name in QUERIES:
        return run_sql(QUERIES[name](), results_dir, skip_unreadable=skip_unreadable)
    if name in VIEWS:
        return run_sql(f"SELECT * FROM {name}", results_dir, skip_unreadable=skip_unreadable)
    raise ResultsQueryError(
        "no such named query or view",
        value=name,
        fix=f"Use one of: {', '.join([*QUERIES, *VIEWS])}",
    )


def describe(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """Each view's columns as (name, DuckDB type), in ``VIEWS`` order."""
    return {name: [(c, t) for c, t, *_ in con.execute(f"DESCRIBE {name}").fetchall()] for name in VIEWS}


def doc(fn: Callable[..., str]) -> str:
    """The first line of a view's or named query's docstring."""
    return (fn.__doc__ or "").strip().splitlines()[0]
