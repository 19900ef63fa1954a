"""The technique check's agreement with real questions (``results/check/agreement.json``) as tables.

One summary table (per suite: the Kendall tau between the row orders and how many verdicts agree),
then per suite each technique's difference from hybrid rrf on the real questions and on the probes,
side by side, each with its interval and verdict.
"""

from __future__ import annotations

from typing import Any

from clear_rag.report.tables import markdown_table


def _difference(entry: dict[str, Any]) -> str:
    if "skipped" in entry:
        return "not run"
    if "verdict" not in entry:
        return "baseline"
    low, high = entry["ci"]
    return f"{entry['difference']:+.4f} [{low:+.3f}, {high:+.3f}] {entry['verdict']}"


def agreement_table(result: dict[str, Any], source: str) -> str:
    head = ["suite", "questions", "probes", "rows", "Kendall tau", "verdicts agree", "helps / hurts agree"]
    rows = []
    for entry in result["suites"]:
        a = entry["agreement"]
        rows.append(
            [
                entry["suite"],
                str(entry["questions"]),
                str(entry["probes"]),
                str(a["rows"]),
                f"{a['kendall_tau']:+.4f}",
                f"{a['verdicts_agree']} of {a['verdicts']}",
                str(a["helps_or_hurts_agree"]),
            ]
        )
    parts = [markdown_table(head, rows)]
    for entry in result["suites"]:
        probes = {p["name"]: p for p in entry["probe"]}
        detail = [
            [real["name"], _difference(real), _difference(probes.get(real["name"], {"skipped": ""}))]
            for real in entry["real"]
        ]
        parts.append(
            f"**{entry['suite']}** ({entry['metric']} on its real questions, span nDCG@10 on the probes):\n\n"
            + markdown_table(["row", "real questions vs hybrid rrf", "probes vs hybrid rrf"], detail)
        )
    settings = result["settings"]
    parts.append(
        f"{settings['probes']} probes asked per store, {settings['mask']} rarest words masked, seed "
        f"{settings['seed']}; embedder {result['embedder']}, reranker {result['reranker']}; run "
        f"{result['date'][:10]} by `{result['command']}`; from `{source}`."
    )
    return "\n\n".join(parts) + "\n"
