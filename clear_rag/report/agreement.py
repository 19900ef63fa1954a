"""The technique check's agreement with real questions (``results/check/agreement.json``) as tables.

One summary table (per suite: the Kendall tau between the row orders and how many verdicts agree),
then per suite each technique's difference from hybrid rrf on the real questions and on the probes,
side by side, each with its interval and verdict. ``reranker_table`` sets the rerank rows of every
such file side by side (the shipped reranker's, the mixed one's, each adapted one's), suite by suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clear_rag.eval.subsets import SUBSETS, UNSEEN
from clear_rag.report.tables import markdown_table


def _difference(entry: dict[str, Any]) -> str:
    if "skipped" in entry:
        return "not run"
    if "verdict" not in entry:
        return "baseline"
    low, high = entry["ci"]
    return f"{entry['difference']:+.4f} [{low:+.3f}, {high:+.3f}] {entry['verdict']}"


def _unseen(entry: dict[str, Any]) -> str:
    """A row's difference on the questions whose relevant passages were never training positives; only
    a suite whose questions share their corpus with a training set (SciFact's) is split so."""
    if "by_subset" not in entry:
        return "no split" if "verdict" in entry else _difference(entry or {"skipped": ""})
    return _difference(entry["by_subset"].get(UNSEEN, {"skipped": ""}))


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
        # a suite split by what training saw (SciFact): its real questions' seen and unseen parts too
        subsets = [
            name for name in SUBSETS if any(name in real.get("by_subset", {}) for real in entry["real"])
        ]
        detail = [
            [
                real["name"],
                _difference(real),
                *(_difference(real.get("by_subset", {}).get(name, {"skipped": ""})) for name in subsets),
                _difference(probes.get(real["name"], {"skipped": ""})),
            ]
            for real in entry["real"]
        ]
        head = ["row", "real questions vs hybrid rrf", *(f"{name} questions" for name in subsets)]
        parts.append(
            f"**{entry['suite']}** ({entry['metric']} on its real questions, span nDCG@10 on the probes):\n\n"
            + markdown_table([*head, "probes vs hybrid rrf"], detail)
        )
    settings = result["settings"]
    parts.append(
        f"{settings['probes']} probes asked per store"
        + (", each asked of a copy of the store with its sentence taken out" if settings.get("cut") else "")
        + f", {settings['mask']} rarest words masked, seed "
        f"{settings['seed']}; embedder {result['embedder']}, reranker {result['reranker']}; run "
        f"{result['date'][:10]} by `{result['command']}`; from `{source}`."
    )
    return "\n\n".join(parts) + "\n"


RERANK = "rerank"  # the technique rows that rerank (check.TECHNIQUES) start so


def reranker_table(documents: list[tuple[str, dict[str, Any]]]) -> str:
    """The rerank rows on real questions of each agreement file (``(source, document)``), one table row
    per suite and reranker, each against hybrid rrf with its interval and verdict; on a suite split by
    what training saw, the unseen questions' too."""
    measured = [
        (source, document, entry)
        for source, document in documents
        for entry in document["suites"]
        if document.get("kind") == "check-agreement"
    ]
    suites = list(dict.fromkeys(entry["suite"] for _, _, entry in measured))
    rows_named = list(
        dict.fromkeys(r["name"] for _, _, e in measured for r in e["real"] if r["name"].startswith(RERANK))
    )
    unseen = [name for name in rows_named if any("by_subset" in r for _, _, e in measured for r in e["real"])]
    head = ["suite", "reranker", *rows_named, *(f"{name}, unseen questions" for name in unseen), "from"]
    table, shown = [], set()
    for suite in suites:
        for source, document, entry in measured:
            # the real rows of one reranker on one suite are the same in every file that measured them
            if entry["suite"] != suite or (suite, document["reranker"]) in shown:
                continue
            shown.add((suite, document["reranker"]))
            real = {r["name"]: r for r in entry["real"]}
            table.append(
                [
                    suite,
                    Path(str(document["reranker"])).name,
                    *(_difference(real.get(name, {"skipped": ""})) for name in rows_named),
                    *(_unseen(real.get(name, {})) for name in unseen),
                    f"`{source}`",
                ]
            )
    return markdown_table(head, table) + "\n"
