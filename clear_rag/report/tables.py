"""Markdown tables rendered from result files, and the marked blocks of pages that hold them.

A page marks where a table goes:

    <!-- results: tech -->
    (rendered table, never edited by hand)
    <!-- /results -->

``<!-- results: tech lost -->`` marks the table of where each row's answers were lost instead, read
through the named DuckDB query ``lost`` (what ``clear-rag results show lost`` prints).

``render_page`` refills every marked block from ``results/<name>.json``; ``stale_blocks`` says which
blocks differ from what the results render to, which is how CI catches a table edited by hand or
left behind by a newer result file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError

BLOCK = re.compile(
    r"(<!-- results: (?P<name>[\w.-]+)(?: (?P<kind>lost))? -->\n)(?P<body>.*?)(<!-- /results -->)", re.S
)


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def suite_table(result: dict[str, Any]) -> str:
    """A suite: one row per config, its metrics, and the paired change of the headline metric against
    the baseline; under it, the questions each metric was taken over, the models, the date, the file."""
    names = result["metric_names"]
    main = result.get("headline") or ("ndcg@10" if "ndcg@10" in names else names[0])
    paraphrase = any("paraphrase" in row.get("by_category", {}) for row in result["rows"])
    extra = [f"paraphrase {main}"] if paraphrase else []
    head = ["row", *names, *extra, "s / question", f"{main} vs baseline [95% CI]", "sign test p", "up / down"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["rows"]:
        versus = row.get("comparisons", {}).get("baseline", {}).get(main)
        change = (
            [
                f"{versus['difference']:+.4f} [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}]",
                _p(versus["p_sign"]),
                f"{versus['up']} / {versus['down']}",
            ]
            if versus
            else ["baseline", "", ""]
        )
        by_category = row.get("by_category", {})
        para = (
            [f"{by_category['paraphrase'][main]:.4f}" if main in by_category.get("paraphrase", {}) else ""]
            if extra
            else []
        )
        seconds = f"{row.get('seconds_per_question', 0.0):.3f}"
        metrics = [f"{row['metrics'][n]:.4f}" if n in row["metrics"] else "" for n in names]
        lines.append("| " + " | ".join([row["name"], *metrics, *para, seconds, *change]) + " |")
    notes = [_questions_note(result, names)]
    notes += [f"Not run: {s['name']} ({s['reason']})" for s in result.get("skipped", [])]
    models = sorted({v for row in result["rows"] for v in row.get("models", {}).values()})
    source = f"`results/{result['suite']}.json`"
    notes.append(f"models: {', '.join(models) or 'none'}; run {result['date'][:10]}; from {source}.")
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes) + "\n"


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


def lost_table(result: dict[str, Any], results_dir: Path) -> str:
    """Per row, how many questions were found and where the others were lost (``clear_rag.eval.loss``),
    from the named query ``lost``; the file's own rows, in its order."""
    from clear_rag.results.queries import run_named

    columns, rows = run_named("lost", results_dir)
    mine = [row for row in rows if row[0] == result["file"]]
    if not mine:
        raise InputError(
            "holds no loss verdicts",
            path=str(results_dir / f"{result['file']}.json"),
            fix=f"Run the suite again with this version (clear-rag ablate {result['suite']} --save-results)",
        )
    head = ["row", *columns[3:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(v) for v in row[2:]) + " |" for row in mine]
    models = sorted({v for row in result["rows"] for v in row.get("models", {}).values()})
    source = f"`results/{result['file']}.json`"
    note = f"models: {', '.join(models) or 'none'}; run {result['date'][:10]}; from {source}."
    return "\n".join(lines) + "\n\n" + note + "\n"


def render(name: str, results_dir: Path, kind: str | None = None) -> str:
    path = results_dir / f"{name}.json"
    if not path.is_file():
        raise InputError(
            "is named by a results table but does not exist",
            path=str(path),
            fix="Write it with the command that produces it (e.g. clear-rag ablate NAME --save-results)",
        )
    result = json.loads(path.read_text(encoding="utf-8"))
    if kind == "lost":
        return lost_table({**result, "file": name}, results_dir)
    return suite_table(result)


def render_page(text: str, results_dir: Path) -> str:
    """``text`` with every marked block refilled from its result file."""
    return BLOCK.sub(
        lambda m: m.group(1) + render(m.group("name"), results_dir, m.group("kind")) + m.group(5), text
    )


def stale_blocks(text: str, results_dir: Path) -> list[str]:
    """Names of the marked blocks whose content is not what their result file renders to."""
    return [
        m.group("name") + (f" {m.group('kind')}" if m.group("kind") else "")
        for m in BLOCK.finditer(text)
        if m.group("body") != render(m.group("name"), results_dir, m.group("kind"))
    ]


NUMBER = re.compile(r"(?<![\w.])\d+\.\d{3,}(?!\w|\.\d)")


def result_numbers(results_dir: Path) -> set[str]:
    """Every number in every result file, written at each precision from 3 to 6 decimals."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, float | int) and not isinstance(value, bool):
            found.update(f"{abs(value):.{digits}f}" for digits in range(3, 7))

    for path in sorted(results_dir.rglob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def unmatched_numbers(text: str, results_dir: Path, known: set[str] | None = None) -> list[str]:
    """Numbers with three or more decimals in prose (outside tables and code) that no result holds."""
    prose = BLOCK.sub("", text)
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    known = known if known is not None else result_numbers(results_dir)
    return [n for n in NUMBER.findall(prose) if n not in known]
