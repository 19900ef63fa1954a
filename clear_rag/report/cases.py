"""``results/parse.json``'s drawn cases (``clear_rag.eval.drawn.suite``): one row per case and backend,
the backends of a case side by side, with the metrics each case measures (a dash where it measures
nothing: the cells where no table was drawn, the furniture where the pages print none, the headings
where the case lists none)."""

from __future__ import annotations

from typing import Any

from clear_rag.errors import InputError
from clear_rag.report.tables import markdown_table

CASE_COLUMNS = (
    ("words_f1", "word F1"),
    ("order", "reading order"),
    ("cells_in_tables", "cells in tables"),
    ("cells_in_rows", "cells in whole rows"),
    ("headings_recall", "headings R"),
    ("headings_precision", "headings P"),
    ("furniture_leakage", "furniture leaked"),
)


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def cases_table(result: dict[str, Any], source: str) -> str:
    """The cases part of a parse result file as a Markdown table, then what each case draws, the
    backends not run and the cases not drawn (with why), and where the figures came from."""
    cases = result.get("cases")
    if not cases:
        raise InputError(
            "holds no drawn cases",
            path=source,
            fix="Run `clear-rag parse-eval --save-results` (the default corpus scores the drawn cases too)",
        )
    scored = {name: run for name, run in cases["backends"].items() if "not_run" not in run}
    rows, refused = [], []
    for case in cases["cases"]:
        first = True
        for backend, run in scored.items():
            values = run["documents"].get(f"{case}.pdf")
            if values is None:
                continue
            rows.append(
                [
                    f"**{case}**" if first else "",
                    backend,
                    *(_figure(values.get(key)) for key, _ in CASE_COLUMNS),
                ]
            )
            first = False
            if values.get("error"):
                refused.append(f"{backend} refused {case} (scored as an empty parse): {values['error']}")
    head = ["case", "backend", *(label for _, label in CASE_COLUMNS)]
    notes = [
        "What each case draws: " + "; ".join(f"**{c}**: {what}" for c, what in cases["cases"].items()) + "."
    ]
    notes += [
        f"Not run: {name} ({run['not_run']})" for name, run in cases["backends"].items() if "not_run" in run
    ]
    notes += refused
    notes += [f"Not drawn: {name} ({why})" for name, why in (cases.get("not_drawn") or {}).items()]
    versions = result.get("versions", {}).get("parsers", {})
    if cases.get("command"):  # written alone (--cases-only): its own parsers, date and command
        versions = {name: run["version"] for name, run in scored.items()}
    date, command = cases.get("date") or result["date"], cases.get("command") or result.get("command", "")
    notes.append(
        f"Parsers {', '.join(f'{n} {v}' for n, v in versions.items())}; run {date[:10]} with "
        f"`{command}`; the cases drawn into `{cases['folder']}`; from `{source}`."
    )
    return markdown_table(head, rows) + "\n\n" + "\n\n".join(notes) + "\n"
