"""The result files of one folder read once into a DuckDB file, read again only when one of them changes.

Every file under ``results/*.json`` has one shape (``clear_rag.results.document``): a suite's rows,
each with its metrics, per category and per question, and its comparisons; a BEIR suite is a suite
like the others. Sub-folders such as ``results/bench/`` and ``results/generations/`` are not matched
by the glob, so benchmark outputs and cached generations stay out of the views.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from clear_rag.errors import ResultsQueryError
from clear_rag.eval.answers import CHECK_METRICS
from clear_rag.results.views import MetricNames, literal, macros

if TYPE_CHECKING:
    import duckdb

# The file schema is declared rather than inferred: DuckDB turns an object with more than 200 keys into a
# MAP and a smaller one into a STRUCT (map_inference_threshold), so by_category / comparisons / metrics
# would become structs whose fields depend on the data. Declared MAPs give the same SQL for every file;
# keys not declared are ignored.
_METRICS = "MAP(VARCHAR, DOUBLE)"
_COMPARISON = (
    "STRUCT(against VARCHAR, difference DOUBLE, ci_low DOUBLE, ci_high DOUBLE, p_sign DOUBLE, "
    "up BIGINT, down BIGINT, ties BIGINT)"
)
_LOSS = "STRUCT(verdict VARCHAR, stage VARCHAR)"  # where the answer was lost (clear_rag.eval.loss)
_GRADED = "STRUCT(outcome VARCHAR, verdict VARCHAR)"  # how an answer was graded (clear_rag.eval.answers)
_QUESTION = (
    "STRUCT(id VARCHAR, category VARCHAR, first_rank BIGINT, trace VARCHAR, "
    f"metrics {_METRICS}, lost {_LOSS}, graded {_GRADED})"
)
_ROW = (
    "STRUCT(name VARCHAR, config JSON, config_hash VARCHAR, models MAP(VARCHAR, VARCHAR), date TIMESTAMPTZ, "
    f"metrics {_METRICS}, by_category MAP(VARCHAR, {_METRICS}), seconds_per_question DOUBLE, "
    f"questions {_QUESTION}[], comparisons MAP(VARCHAR, MAP(VARCHAR, {_COMPARISON})))"
)
_FILE_COLUMNS = {
    "suite": "VARCHAR",
    "date": "TIMESTAMPTZ",
    "embedder": "VARCHAR",
    "baseline": "VARCHAR",
    "headline": "VARCHAR",
    "rows": f"{_ROW}[]",
}
# DuckDB refuses a JSON object over 16 MB by default; one suite file is one object, and a large golden set
# with per-question retrieved lists can pass that.
_MAX_OBJECT_BYTES = 1 << 30
HEADLINE = "ndcg@10"  # the span metric's column always exists; a file's own headline is in `headline`


_FILES_TABLE = "CREATE TABLE files (file VARCHAR, path VARCHAR, {})".format(
    ", ".join(f"{name} {kind}" for name, kind in _FILE_COLUMNS.items())
)


def _insert_sql(path: Path) -> str:
    """The statement that reads one result file into the table ``files``. One file at a time, so that
    a file DuckDB cannot read is left out alone: read with a glob, one broken file failed them all."""
    declared = ", ".join(f"{literal(k)}: {literal(v)}" for k, v in _FILE_COLUMNS.items())
    return f"""INSERT INTO files
SELECT parse_filename(filename, true) AS file, filename AS path, suite, date, embedder, baseline,
    coalesce(headline, 'ndcg@10') AS headline, rows
FROM read_json({literal(str(path))}, filename = true, format = 'auto',
    maximum_object_size = {_MAX_OBJECT_BYTES}, columns = {{{declared}}})
WHERE rows IS NOT NULL  -- a suite's file; others (results/parse.json's parse metrics) are not rows"""


@dataclass(frozen=True)
class Snapshot:
    """The result files of one folder read once into a DuckDB file, with what was read: each file's
    name and a digest of its bytes, and the files DuckDB could not read with its reason. Queries
    attach it read-only; a file changed, added or removed makes the next ``connect`` read them again."""

    signature: tuple[tuple[str, str], ...]
    database: Path
    metrics: MetricNames
    unreadable: tuple[tuple[str, str], ...] = ()


_SNAPSHOTS: dict[Path, Snapshot] = {}
_UNREADABLE = "cannot be read: "  # a signature's digest of a file the OS would not read
_SNAPSHOT_LOCK = threading.Lock()


def _signature(folder: Path) -> tuple[tuple[str, str], ...]:
    """Each file's name and a digest of its bytes (a modification time can stay the same across a
    rewrite on a coarse clock; reading the bytes costs a small part of what DuckDB's parse does)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append((path.name, hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()))
        except FileNotFoundError:  # removed since the glob: the next call's signature says so
            continue
        except OSError as err:  # a folder named x.json, say: left out with its reason
            found.append((path.name, f"{_UNREADABLE}{err.strerror}"))
    return tuple(found)


def duckdb_module() -> ModuleType:
    """DuckDB, an extra (``clear-rag[results]``, which ``make run`` installs): without it, everything but
    the result views runs, and these say what to install."""
    try:
        import duckdb
    except ImportError:
        raise ResultsQueryError(
            "needs DuckDB to query the result files, and it is not installed",
            fix="pip install 'clear-rag[results]' (`make run` installs it)",
        ) from None
    return duckdb


def snapshot_of(folder: Path) -> Snapshot:
    """The folder's snapshot, read again only when its signature changed. Reading the files costs most of
    a query (the SciFact files carry every question of every row); a page renders dozens of queries."""
    signature = _signature(folder)
    with _SNAPSHOT_LOCK:
        known = _SNAPSHOTS.get(folder)
        if known is not None and known.signature == signature:
            return known
        place = Path(tempfile.mkdtemp(prefix="clear-rag-results-"))
        atexit.register(shutil.rmtree, place, ignore_errors=True)
        database = place / "snapshot.duckdb"
        db = duckdb_module()
        con = db.connect(str(database))
        unreadable = []
        try:
            con.execute("SET TimeZone = 'UTC'")
            con.execute(_FILES_TABLE)
            for name, digest in signature:
                if digest.startswith(_UNREADABLE):
                    unreadable.append((name, digest.removeprefix(_UNREADABLE)))
                    continue
                try:
                    con.execute(_insert_sql(folder / name))
                except db.Error as err:
                    unreadable.append((name, str(err).partition("\n")[0].strip().rstrip(".").strip()))
            for statement in macros("files"):
                con.execute(statement)
            metrics = _metric_names(con)
        finally:
            con.close()
        made = Snapshot(signature, database, metrics, tuple(unreadable))
        if known is not None:
            shutil.rmtree(known.database.parent, ignore_errors=True)  # open connections keep their copy
        _SNAPSHOTS[folder] = made
        return made


def _metric_names(con: duckdb.DuckDBPyConnection) -> MetricNames:
    aggregate: list[str] = []
    listed = con.execute("SELECT map_keys(r.metrics) FROM result_rows() ORDER BY file, position").fetchall()
    for (keys,) in listed:
        aggregate += [k for k in keys or [] if k not in aggregate]
    if HEADLINE not in aggregate:
        aggregate.append(HEADLINE)
    found = con.execute(
        "SELECT DISTINCT unnest(map_keys(q.metrics)) FROM result_rows(), unnest(r.questions) AS u(q)"
    ).fetchall()
    # The aggregate order (the files' own) where it applies, then any per-question-only name alphabetically.
    # the check query's columns exist even where no file has them, so it finds no rows rather than failing
    names = {k for (k,) in found} | {HEADLINE, *CHECK_METRICS}
    per_question = [k for k in aggregate if k in names] + sorted(names - set(aggregate))
    return MetricNames(tuple(aggregate), tuple(per_question))
