"""The named SQL views over the result files, and the named queries over those views.

Every view carries ``file`` (the file name without ``.json``) as well as ``suite``: two files may hold the
same suite (``baseline-fake.json`` and ``tech.json`` both say ``"suite": "tech"``), so ``suite`` alone does
not identify a row.

Each view and named query is a small function whose docstring describes it; ``clear_rag.results.queries``
creates the views on a connection and runs the queries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clear_rag.eval.answers import OUTCOMES
from clear_rag.eval.loss import VERDICTS


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


def literal(text: str) -> str:
    """``text`` as an SQL string literal, its quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(source: str, names: Sequence[str]) -> str:
    """One column per metric, ``source['ndcg@10'] AS "ndcg@10"``; a name missing from a row reads NULL."""
    return "".join(f", {source}[{literal(n)}] AS {_identifier(n)}" for n in names)


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
        f"count(*) FILTER (WHERE {column} = {literal(v)}) AS {_identifier(v)}" for v in values
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
    refused = ", ".join(literal(o) for o in ("false refusal", "refused, not in context", "correct refusal"))
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


def macros(table: str) -> list[str]:
    """The two table macros every view is built on, over the snapshot's table of files ``table``."""
    return [
        f"CREATE MACRO result_files() AS TABLE SELECT * FROM {table}",
        """CREATE MACRO result_rows() AS TABLE
SELECT f.file, f.suite, f.headline, f.date AS file_date, u.r, u.position
FROM result_files() AS f, unnest(f.rows) WITH ORDINALITY AS u(r, position)""",
    ]
