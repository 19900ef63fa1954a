"""Markdown tables rendered from one result file: what the marked blocks of pages hold (``blocks``).

- ``suite_table``: every row's metrics and its paired change against the baseline;
- ``previous_table``: each row's paired change against the row before it, metric by metric;
- ``categories_table``: the headline metric per question category;
- ``lost_table``: where each row's answers were lost, read through the named DuckDB query ``lost``
  (what ``clear-rag results show lost`` prints).

Each ends with the models, the date and the file it came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.answers import CHECK_METRICS


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """The one Markdown table writer: a header, its rule, and the rows (a ``|`` in a cell escaped)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def table_metrics(result: dict[str, Any]) -> list[str]:
    """The metrics the row tables show: all but the support check's agreement with the grades, which
    has a table of its own (the ``check`` block) and is not a score of the rows' answers."""
    return [n for n in result["metric_names"] if n not in CHECK_METRICS]


def headline(result: dict[str, Any]) -> str:
    names = result["metric_names"]
    return str(result.get("headline") or ("ndcg@10" if "ndcg@10" in names else names[0]))


def footer(result: dict[str, Any], source: str) -> str:
    """The line under every table: the models, the date of the run, the file."""
    models = sorted({v for row in result["rows"] for v in row.get("models", {}).values()})
    return f"models: {', '.join(models) or 'none'}; run {result['date'][:10]}; from `{source}`."


def _change(versus: dict[str, Any]) -> list[str]:
    """A paired comparison as three cells: difference [interval], sign-test p, questions up / down."""
    return [
        f"{versus['difference']:+.4f} [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}]",
        _p(versus["p_sign"]),
        f"{versus['up']} / {versus['down']}",
    ]


def suite_table(result: dict[str, Any], source: str) -> str:
    """A suite: one row per config, its metrics, and the paired change of the headline metric against
    the baseline; under it, the questions each metric was taken over, the models, the date, the file."""
    names = table_metrics(result)
    main = headline(result)
    paraphrase = any("paraphrase" in row.get("by_category", {}) for row in result["rows"])
    extra = [f"paraphrase {main}"] if paraphrase else []
    split = bool(result.get("training"))  # the suite names the split its trained models saw
    seen = [f"{main} seen", f"{main} unseen"] if split else []
    unseen_change = [f"unseen {main} vs baseline [95% CI]"] if split else []
    head = [
        "row",
        *names,
        *extra,
        *seen,
        "s / question",
        f"{main} vs baseline [95% CI]",
        "sign test p",
        "up / down",
        *unseen_change,
    ]
    lines = []
    for row in result["rows"]:
        versus = row.get("comparisons", {}).get("baseline", {}).get(main)
        change = _change(versus) if versus else ["baseline", "", ""]
        by_category = row.get("by_category", {})
        para = (
            [f"{by_category['paraphrase'][main]:.4f}" if main in by_category.get("paraphrase", {}) else ""]
            if extra
            else []
        )
        seconds = f"{row.get('seconds_per_question', 0.0):.3f}" + ("†" if row.get("rerank_reused") else "")
        metrics = [f"{row['metrics'][n]:.4f}" if n in row["metrics"] else "" for n in names]
        subsets = row.get("by_subset", {})
        by_seen = (
            [_figure(subsets.get(s, {}).get("metrics", {}), main) for s in ("seen", "unseen")]
            if split
            else []
        )
        unseen = subsets.get("unseen", {}).get("comparisons", {}).get("baseline", {}).get(main)
        by_unseen = [_change(unseen)[0] if unseen else "baseline"] if split else []
        lines.append([row["name"], *metrics, *para, *by_seen, seconds, *change, *by_unseen])
    notes = [_questions_note(result, names)]
    notes += _training_note(result, main)
    notes += _reused_note(result)
    notes += [f"Not run: {s['name']} ({s['reason']})" for s in result.get("skipped", [])]
    notes.append(footer(result, source))
    return markdown_table(head, lines) + "\n\n" + "\n\n".join(notes) + "\n"


def _figure(metrics: dict[str, Any], name: str) -> str:
    return f"{metrics[name]:.4f}" if name in metrics else ""


def _training_note(result: dict[str, Any], main: str) -> list[str]:
    """Under a suite that names its training split: how many questions that training saw, and the best
    figure with the number of rows measured on the same questions (the best of many is flattered)."""
    training = result.get("training")
    if not training:
        return []
    counts = training["questions"]
    total = counts["seen"] + counts["unseen"]
    note = (
        f"Seen in training: {counts['seen']} of the {total} questions have a relevant document that was a "
        f"positive of the `{training['split']}` split (`{training['path']}`) the models trained here "
        f"learnt from; the other {counts['unseen']} are unseen. A gain on the seen questions alone is an "
        "in-domain gain, not a general one."
    )
    first = result["rows"][0].get("questions", []) if result["rows"] else []
    having = {s: sum(q.get("subset") == s and main in q["metrics"] for q in first) for s in counts}
    if first and having != counts:  # a span metric: over the questions with span labels in each
        note += f" {main} is taken over {having['seen']} seen and {having['unseen']} unseen of them."
    measured = [row for row in result["rows"] if main in row["metrics"]]
    if measured:
        best = max(measured, key=lambda row: row["metrics"][main])
        over = result.get("metric_questions", {}).get(main, result["golden"]["questions"])
        note += (
            f" Best {main}: {best['metrics'][main]:.4f} ({best['name']}), the highest of {len(measured)} "
            f"rows measured on the same {over} questions."
        )
    return [note]


def _reused_note(result: dict[str, Any]) -> list[str]:
    """What a time marked † means: the share of the row's reranker logits an earlier row computed."""
    shares = [
        (row["name"], row["rerank_reused"]["reused"] / row["rerank_reused"]["logits"])
        for row in result["rows"]
        if row.get("rerank_reused", {}).get("logits")
    ]
    if not shares:
        return []
    listed = "; ".join(f"{name}: {share:.0%}" for name, share in shares)
    return [
        "† Some of the row's reranker logits were computed by an earlier row of the same run and reused "
        "(a logit depends only on its question and passage, so the ranking is the same either way): its "
        f"seconds per question are less than the row would take alone. Reused: {listed}."
    ]


def _questions_note(result: dict[str, Any], names: list[str]) -> str:
    """How many questions each metric was taken over, where that differs between metrics."""
    total = result["golden"]["questions"]
    counts = result.get("metric_questions", {})
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(int(counts.get(name, total)), []).append(name)
    if len(groups) <= 1:
        return f"{total} questions."
    parts = [f"{', '.join(group)} over {n} of the {total} questions" for n, group in sorted(groups.items())]
    return (
        "; ".join(parts)
        + " (span metrics are taken over the questions with span labels, document metrics over all of them)."
    )


def previous_table(result: dict[str, Any], source: str) -> str:
    """Each row against the row before it, on every metric: what one step of the suite changed."""
    names = table_metrics(result)
    head = ["row", "against the row before", *(f"{n} change [95% CI], p" for n in names)]
    lines = []
    for row in result["rows"][1:]:
        previous = row.get("comparisons", {}).get("previous", {})
        against = next((c["against"] for c in previous.values()), "")
        cells = []
        for name in names:
            change = _change(previous[name]) if name in previous else ["", "", ""]
            cells.append(f"{change[0]}, {change[1]}" if name in previous else "")
        lines.append([row["name"], against, *cells])
    note = (
        "Paired over the same questions: the bootstrap interval of the mean difference and the sign test's p."
    )
    return markdown_table(head, lines) + "\n\n" + note + "\n\n" + footer(result, source) + "\n"


def category_counts(result: dict[str, Any]) -> dict[str, int]:
    """How many questions each category holds, from the first row's per-question records."""
    counts: dict[str, int] = {}
    for question in result["rows"][0].get("questions", []) if result["rows"] else []:
        category = question.get("category")
        if category:
            counts[category] = counts.get(category, 0) + 1
    return counts


def categories_table(result: dict[str, Any], source: str) -> str:
    """The headline metric per question category, one column per category with its question count."""
    main = headline(result)
    counts = category_counts(result)
    every = sorted({c for row in result["rows"] for c in row.get("by_category", {})})
    categories = [
        c for c in every if any(main in row.get("by_category", {}).get(c, {}) for row in result["rows"])
    ]
    if not categories:
        return f"No question categories in this suite.\n\n{footer(result, source)}\n"
    head = ["row", *(f"{c} ({counts[c]})" if c in counts else c for c in categories)]
    lines = []
    for row in result["rows"]:
        by = row.get("by_category", {})
        cells = [f"{by[c][main]:.4f}" if main in by.get(c, {}) else "" for c in categories]
        lines.append([row["name"], *cells])
    note = f"{main} per category; the number of questions beside each."
    if unmeasured := [c for c in every if c not in categories]:
        note += f" Not shown: {', '.join(unmeasured)} (no question there has what {main} is taken over)."
    return markdown_table(head, lines) + "\n\n" + note + "\n\n" + footer(result, source) + "\n"


def query_rows(query: str, results_dir: Path, name: str) -> tuple[list[str], list[list[Any]]]:
    """A per-row named query (``lost``, ``answers``) for one file: its columns from ``row`` on, and the
    file's rows in its order."""
    from clear_rag.results.queries import run_named

    columns, rows = run_named(query, results_dir)
    return columns[2:], [list(row[2:]) for row in rows if row[0] == name]


def query_table(query: str, result: dict[str, Any], results_dir: Path, name: str) -> str:
    """Per row of one file, a named query's counts: where answers were lost (``lost``,
    ``clear_rag.eval.loss``) or how they were graded (``answers``, ``clear_rag.eval.answers``)."""
    columns, mine = query_rows(query, results_dir, name)
    path = results_dir / f"{name}.json"
    if not mine:
        what = {"lost": "loss verdicts", "check": "answers read by the support check"}.get(
            query, "graded answers"
        )
        raise InputError(
            f"holds no {what}",
            path=str(path),
            fix=f"Run the suite again with this version (clear-rag ablate {result['suite']} --save-results)",
        )
    return (
        markdown_table(columns, [[str(v) for v in row] for row in mine])
        + "\n\n"
        + footer(result, path.as_posix())
        + "\n"
    )


# Written since issue 31 (headings only where a truth lists them): shown when a file holds them, so a
# file written before still renders.
PARSE_OPTIONAL = frozenset({"cells_in_rows", "headings_recall", "headings_precision"})
PARSE_COLUMNS = (
    ("words_precision", "word P"),
    ("words_recall", "word R"),
    ("words_f1", "word F1"),
    ("order", "reading order"),
    ("cells_in_tables", "cells in tables"),
    ("cells_in_rows", "cells in whole rows"),
    ("cells_anywhere", "cells anywhere"),
    ("furniture_leakage", "furniture leaked"),
    ("headings_recall", "headings R"),
    ("headings_precision", "headings P"),
    ("pages_per_second", "pages/s"),
)


def _parse_figure(key: str, value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}" if key == "pages_per_second" else f"{value:.4f}"


def parse_table(result: dict[str, Any], source: str) -> str:
    """``results/parse.json``: each PDF parser backend on each document and overall (``clear_rag.eval.parse``
    says what each metric is), and the backends that did not run with why; then, where the file has
    them, the backends on scanned renders of the same PDFs (``scanned``), named "layout on scans"."""
    scanned = result.get("scanned") or {}
    scored_runs = [
        run
        for run in [*result["backends"].values(), *(scanned.get("backends") or {}).values()]
        if "not_run" not in run
    ]
    held = {
        key
        for run in scored_runs
        for values in [*run["documents"].values(), run["overall"]]
        for key, value in values.items()
        if value is not None
    }
    columns = [(key, label) for key, label in PARSE_COLUMNS if key not in PARSE_OPTIONAL or key in held]
    head = ["backend", "document", *(label for _, label in columns)]
    rows, skipped = [], []
    scanned = result.get("scanned") or {}
    runs = [*result["backends"].items()]
    runs += [(f"{backend} on scans", scored) for backend, scored in (scanned.get("backends") or {}).items()]
    if "not_run" in scanned:
        runs.append(("scanned renders", {"not_run": scanned["not_run"]}))
    for backend, scored in runs:
        if "not_run" in scored:
            skipped.append(f"Not run: {backend} ({scored['not_run']})")
            continue
        for document, values in [*scored["documents"].items(), ("overall", scored["overall"])]:
            cells = [_parse_figure(key, values.get(key)) for key, _ in columns]
            rows.append([backend, f"**{document}**" if document == "overall" else document, *cells])
    versions = ", ".join(f"{name} {version}" for name, version in result.get("versions", {}).items())
    run = f"run {result['date'][:10]} with `{result.get('command', '')}`"
    if scanned.get("backends"):
        skipped.append(
            f"On scans: every page of each PDF rendered at {scanned['dpi']} dpi as a greyscale JPEG without "
            f"a text layer (`{scanned.get('folder')}`), read by {scanned.get('engine')}."
        )
    notes = [*skipped, f"Versions: {versions}; {run}; from `{source}`."]
    return markdown_table(head, rows) + "\n\n" + "\n\n".join(notes) + "\n"
