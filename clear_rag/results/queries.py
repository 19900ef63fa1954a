"""Named SQL views over the result files, run by DuckDB.

Every file under ``results/*.json`` has one shape (``clear_rag.results.document``): a suite's rows,
each with its metrics, per category and per question, and its comparisons; a BEIR suite is a suite
like the others. Sub-folders such as ``results/bench/`` and ``results/generations/`` are not matched
by the glob, so benchmark outputs and cached generations stay out of the views.

Every view carries ``file`` (the file name without ``.json``) as well as ``suite``: two files may hold the
same suite (``baseline-fake.json`` and ``tech.json`` both say ``"suite": "tech"``), so ``suite`` alone does
not identify a row.

Each view and named query is a small function whose docstring describes it; ``connect`` creates the views,
``run_sql`` runs one statement against them. This is the only module of the project that imports
duckdb, and only when a query runs: DuckDB is an extra (``clear-rag[results]``).
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from clear_rag.errors import ResultsQueryError
from clear_rag.eval.answers import CHECK_METRICS, OUTCOMES
from clear_rag.eval.loss import VERDICTS

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
SNAPSHOT = "snapshot"  # the attached, read-only database of the files read (see ``_snapshot``)
HEADLINE = "ndcg@10"  # the span metric's column always exists; a file's own headline is in `headline`


@dataclass(frozen=True, slots=True)
class MetricNames:
    """Metric names found in the files, in order: aggregate ones (rows) and per-question ones (questions)."""

    aggregate: tuple[str, ...]
    per_question: tuple[str, ...]


ViewSql = Callable[[MetricNames], str]
VIEWS: dict[str, ViewSql] = {}
QUERIES: dict[str, Callable[[], str]] = {}


def _view(fn: ViewSql) -> ViewSql:
    VIEWS[fn.__name__] = fn
    return fn


def _query(fn: Callable[[], str]) -> Callable[[], str]:
    QUERIES[fn.__name__] = fn
    return fn


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(source: str, names: Sequence[str]) -> str:
    """One column per metric, ``source['ndcg@10'] AS "ndcg@10"``; a name missing from a row reads NULL."""
    return "".join(f", {source}[{_literal(n)}] AS {_identifier(n)}" for n in names)


@_view
def suites(metrics: MetricNames) -> str:
    """One row per result file: file, suite, date, embedder, baseline, headline metric, row_count."""
    return """
SELECT file, suite, date, embedder, baseline, headline, len(rows) AS row_count FROM result_files()
ORDER BY file"""


@_view
def rows(metrics: MetricNames) -> str:
    """One row per (file, row): config hash, models (``support`` the support check's, where answers were
    checked), date, questions, median seconds per question, the file's headline metric (``headline``),
    each metric."""
    return f"""
SELECT file, suite, r.name AS row, position, r.config_hash AS config_hash,
    r.models['embedder'] AS embedder, r.models['reranker'] AS reranker, r.models['chat'] AS chat,
    r.models['support'] AS support,
    coalesce(r.date, file_date) AS date, len(r.questions) AS questions,
    r.seconds_per_question AS seconds_per_question, r.metrics[headline] AS headline
    {_columns("r.metrics", metrics.aggregate)}, r.config AS config
FROM result_rows() ORDER BY file, position"""


@_view
def questions(metrics: MetricNames) -> str:
    """One row per (file, row, question): category, first covering rank, trace id, where the answer was
    lost (``verdict``, the ``lost_stage`` it names; NULL for a question without span labels or a file
    from before verdicts), how its answer was graded (``outcome``, NULL where a suite grades no
    answers), the file's headline metric, each per-question metric (NULL where a question
    has none: a span metric of a BEIR query without span labels)."""
    return f"""
SELECT file, suite, row, question, category, first_rank, trace, verdict, lost_stage, outcome,
    m[headline] AS headline
    {_columns("m", metrics.per_question)}
FROM (
    SELECT file, suite, headline, r.name AS row, position, q.n, q.q.id AS question, q.q.category AS category,
        q.q.first_rank AS first_rank, q.q.trace AS trace, q.q.metrics AS m, q.q.lost.verdict AS verdict,
        q.q.lost.stage AS lost_stage, q.q.graded.outcome AS outcome
    FROM result_rows(), unnest(r.questions) WITH ORDINALITY AS q(q, n)
) ORDER BY file, position, n"""


@_view
def by_category(metrics: MetricNames) -> str:
    """One row per (file, row, category, metric) with its value."""
    return """
SELECT file, suite, r.name AS row, c.e.key AS category, m.e.key AS metric, m.e.value AS value
FROM result_rows(),
    unnest(map_entries(r.by_category)) WITH ORDINALITY AS c(e, n),
    unnest(map_entries(c.e.value)) WITH ORDINALITY AS m(e, n)
ORDER BY file, position, c.n, m.n"""


@_view
def comparisons(metrics: MetricNames) -> str:
    """One row per (file, row, against, metric): the paired difference to the baseline or previous row.

    ``against`` is ``baseline`` or ``previous``; ``against_row`` names that row. ``ci_low``/``ci_high`` bound
    the bootstrap interval of the difference, ``p_sign`` is the sign test, ``up``/``down``/``ties`` count
    questions.
    """
    return """
SELECT file, suite, r.name AS row, k.e.key AS against, v.e.value.against AS against_row, v.e.key AS metric,
    v.e.value.difference AS difference, v.e.value.ci_low AS ci_low, v.e.value.ci_high AS ci_high,
    v.e.value.p_sign AS p_sign, v.e.value.up AS up, v.e.value.down AS down, v.e.value.ties AS ties
FROM result_rows(),
    unnest(map_entries(r.comparisons)) WITH ORDINALITY AS k(e, n),
    unnest(map_entries(k.e.value)) WITH ORDINALITY AS v(e, n)
ORDER BY file, position, k.n, v.n"""


@_query
def best_rows() -> str:
    """Per result file, the row with the best headline metric (span nDCG@10, else document nDCG@10; a tie
    goes to the row listed first)."""
    return """
SELECT r.file, r.suite, row, config_hash, r.embedder, s.headline AS metric, r.headline AS value
FROM rows AS r JOIN suites AS s USING (file) WHERE r.headline IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY r.file ORDER BY r.headline DESC, position) = 1 ORDER BY r.file"""


@_query
def significant() -> str:
    """Comparisons whose confidence interval excludes zero, largest differences first."""
    return """
SELECT file, row, against, against_row, metric, difference, ci_low, ci_high, p_sign, up, down
FROM comparisons WHERE ci_low > 0 OR ci_high < 0 ORDER BY file, abs(difference) DESC, row, metric"""


@_query
def missed_by_all() -> str:
    """Questions no row of their file ranked anything relevant for in the top 10 (headline 0 everywhere)."""
    return """
SELECT file, suite, question, any_value(category) AS category, count(*) AS rows_tried FROM questions
GROUP BY file, suite, question HAVING max(headline) = 0 ORDER BY file, question"""


def _counts_per_row(column: str, values: Sequence[str]) -> str:
    """Per (file, row), how many of its questions have each of ``values`` in ``column`` (questions
    where it is NULL left out), in the file's row order."""
    columns = ",\n    ".join(
        f"count(*) FILTER (WHERE {column} = {_literal(v)}) AS {_identifier(v)}" for v in values
    )
    return f"""
SELECT file, suite, row, count(*) AS questions,
    {columns}
FROM questions JOIN rows USING (file, suite, row) WHERE {column} IS NOT NULL
GROUP BY file, suite, row, position ORDER BY file, position"""


@_query
def lost() -> str:
    """Per (file, row), how many questions were lost at each stage: ``found``, ``cut by the token
    budget``, ``lost in rerank``, ``lost in fusion``, ``retrieved too low``, ``never retrieved``
    (questions with span labels only)."""
    return _counts_per_row("verdict", VERDICTS)


@_query
def answers() -> str:
    """Per (file, row) of a suite that grades answers, how many answers had each outcome
    (``clear_rag.eval.answers.OUTCOMES``): correct and cited right or wrong, missing a term, bleed,
    false refusal, refused with the answer not in the context, correct refusal, answered where the
    corpus does not say."""
    return _counts_per_row("outcome", OUTCOMES)


@_query
def check() -> str:
    """Per (file, row) whose answers the support check read (``clear_rag.eval.answers``): the answers
    that are not refusals, those graded wrong, those the check flagged, its precision beside the share
    graded wrong (what flagging every answer scores), its recall, and the share of the answers graded
    right that it left unflagged (its specificity), and its precision and recall where "wrong" takes in
    answers right but not cited right; the questions it called weak, those
    whose context held no labelled span (or that the corpus does not answer), and its precision and
    recall on those."""
    refused = ", ".join(_literal(o) for o in ("false refusal", "refused, not in context", "correct refusal"))
    return f"""
SELECT file, suite, row, any_value(support) AS support,
    count(*) FILTER (WHERE outcome NOT IN ({refused})) AS answered,
    count(q."check recall") AS "graded wrong",
    count(q."check precision") AS flagged,
    round(avg(q."check precision"), 4) AS "check precision",
    round(count(q."check recall") / nullif(answered, 0), 4) AS "wrong share",
    round(avg(q."check recall"), 4) AS "check recall",
    answered - "graded wrong" AS "graded right",
    round(1 - (flagged - count(*) FILTER (WHERE q."check precision" = 1)) / nullif("graded right", 0), 4)
        AS "right left unflagged",
    round(avg(q."check precision (cites)"), 4) AS "check precision (cites)",
    round(avg(q."check recall (cites)"), 4) AS "check recall (cites)",
    count(q."weak precision") AS "called weak",
    count(q."weak recall") AS "no span in context",
    round(avg(q."weak precision"), 4) AS "weak precision",
    round(count(q."weak recall") / count(*), 4) AS "no span share",
    round(avg(q."weak recall"), 4) AS "weak recall"
FROM questions AS q JOIN (SELECT file, suite, row, position, support FROM rows) USING (file, suite, row)
WHERE support IS NOT NULL AND outcome IS NOT NULL
GROUP BY file, suite, row, position ORDER BY file, position"""


_FILES_TABLE = "CREATE TABLE files (file VARCHAR, path VARCHAR, {})".format(
    ", ".join(f"{name} {kind}" for name, kind in _FILE_COLUMNS.items())
)


def _insert_sql(path: Path) -> str:
    """The statement that reads one result file into the table ``files``. One file at a time, so that
    a file DuckDB cannot read is left out alone: read with a glob, one broken file failed them all."""
    declared = ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in _FILE_COLUMNS.items())
    return f"""INSERT INTO files
SELECT parse_filename(filename, true) AS file, filename AS path, suite, date, embedder, baseline,
    coalesce(headline, 'ndcg@10') AS headline, rows
FROM read_json({_literal(str(path))}, filename = true, format = 'auto',
    maximum_object_size = {_MAX_OBJECT_BYTES}, columns = {{{declared}}})
WHERE rows IS NOT NULL  -- a suite's file; others (results/parse.json's parse metrics) are not rows"""


def _macros(table: str) -> list[str]:
    """The two table macros every view is built on, over the snapshot's table of files ``table``."""
    return [
        f"CREATE MACRO result_files() AS TABLE SELECT * FROM {table}",
        """CREATE MACRO result_rows() AS TABLE
SELECT f.file, f.suite, f.headline, f.date AS file_date, u.r, u.position
FROM result_files() AS f, unnest(f.rows) WITH ORDINALITY AS u(r, position)""",
    ]


@dataclass(frozen=True)
class _Snapshot:
    """The result files of one folder read once into a DuckDB file, with what was read: each file's
    name and a digest of its bytes, and the files DuckDB could not read with its reason. Queries
    attach it read-only; a file changed, added or removed makes the next ``connect`` read them again."""

    signature: tuple[tuple[str, str], ...]
    database: Path
    metrics: MetricNames
    unreadable: tuple[tuple[str, str], ...] = ()


_SNAPSHOTS: dict[Path, _Snapshot] = {}
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


def _duckdb() -> ModuleType:
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


def _snapshot(folder: Path) -> _Snapshot:
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
        db = _duckdb()
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
            for statement in _macros("files"):
                con.execute(statement)
            metrics = _metric_names(con)
        finally:
            con.close()
        made = _Snapshot(signature, database, metrics, tuple(unreadable))
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


def unreadable(results_dir: Path | str = "results") -> list[tuple[str, str]]:
    """The files of ``results_dir`` DuckDB cannot read as result files, each with DuckDB's reason: what
    ``connect(..., skip_unreadable=True)`` leaves out of the views."""
    folder = Path(results_dir).resolve()
    return list(_snapshot(folder).unreadable) if any(folder.glob("*.json")) else []


def connect(
    results_dir: Path | str = "results", *, skip_unreadable: bool = False
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view of ``VIEWS`` over ``results_dir/*.json``.

    The views read a snapshot of the files taken when one of them last changed (``_snapshot``), attached
    read-only, so that a page of dozens of queries reads the files once; a file rewritten after
    ``connect`` is seen by the next ``connect``. The connection may read only ``results_dir``: SQL typed
    by a user (CLI, web page) cannot read or write other files, nor change the snapshot. A file DuckDB
    cannot read is an error naming it, or with ``skip_unreadable`` left out (``unreadable`` names it).
    """
    folder = Path(results_dir).resolve()
    if not any(folder.glob("*.json")):
        raise ResultsQueryError(
            "no result files (*.json) here",
            path=str(folder),
            fix="Write one with `clear-rag ablate SUITE --save-results`, or pass --results-dir",
        )
    db = _duckdb()
    try:
        snapshot = _snapshot(folder)
    except db.Error as err:
        raise _cannot_read(folder, err) from err
    if snapshot.unreadable and not skip_unreadable:
        raise _cannot_read(folder, snapshot.unreadable[0][1])
    con: duckdb.DuckDBPyConnection = db.connect()
    try:
        # Dates print in UTC whatever the machine's zone, as the files write them.
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"ATTACH {_literal(str(snapshot.database))} AS {SNAPSHOT} (READ_ONLY)")
        for statement in _macros(f"{SNAPSHOT}.main.files"):
            con.execute(statement)
        for name, build in VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {build(snapshot.metrics)}")
        con.execute(f"SET allowed_directories = [{_literal(str(folder) + '/')}]")
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
    db = _duckdb()
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
