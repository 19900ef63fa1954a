"""``clear-rag check``: which techniques help on a store that has no labels (``clear_rag.eval.check``).

``clear-rag check [--store DIR]`` runs the technique rows over probe questions cut from the store and
prints each row's nDCG@10 against hybrid rrf with its interval and verdict, then how far such verdicts
agreed with real questions on the suites that have them (``results/check/agreement.json``, written by
``clear-rag check --agreement SUITE ... --save-results``).
"""

from __future__ import annotations

import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import EmbedderOption, StoreOption, app, fail
from clear_rag.errors import ClearRagError
from clear_rag.eval import agreement, check
from clear_rag.store.sqlite import DEFAULT_DIR

AGREEMENT = Path("results") / agreement.AGREEMENT
DEFAULT_RERANKER = check.RERANKER

ProbesOption = Annotated[int, typer.Option("--probes", help="Probe questions drawn from the store.")]
SuitesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agreement",
        help="Measure the check against a suite's real questions (repeatable): "
        "tech, beir-scifact, 10k, answers.",
    ),
]


def _row_line(entry: dict[str, Any], metric: str) -> str:
    if "skipped" in entry:
        return f"  {entry['name']:<30} not run: {entry['skipped']}"
    value = entry.get(metric)
    head = f"  {entry['name']:<30} {value:.4f}" if value is not None else f"  {entry['name']:<30}"
    if "verdict" not in entry:
        return head + "  (baseline)"
    low, high = entry["ci"]
    return f"{head}  {entry['difference']:+.4f} [{low:+.3f}, {high:+.3f}]  {entry['verdict']}"


def trust_lines(path: Path = AGREEMENT) -> list[str]:
    """What ``results/check/agreement.json`` says of how far the check's verdicts can be trusted."""
    measured = agreement.agreement_summary(path)
    if not measured:
        return [f"How far to trust this is not measured here ({path} is missing)."]
    lines = [f"How far to trust it, measured against real questions ({path}):"]
    for a in measured:
        lines.append(
            f"  {a['suite']:<14} row order Kendall tau {a['kendall_tau']:+.2f} over {a['rows']} rows; "
            f"verdicts agree {a['verdicts_agree']} of {a['verdicts']} ({a['questions']} questions, "
            f"{a['probes']} probes)"
        )
    return lines


@app.command("check")
def check_command(
    store: StoreOption = Path(DEFAULT_DIR),
    embedder: EmbedderOption = "minilm",
    reranker: Annotated[
        str, typer.Option("--reranker", help="The reranker of the rerank rows.")
    ] = DEFAULT_RERANKER,
    probes: ProbesOption = 100,
    suites: SuitesOption = None,
    cut: Annotated[
        bool,
        typer.Option(
            "--cut",
            help="Ask the probes of a copy of the store with each probe's sentence taken out, so a search "
            "must match its context rather than its own words.",
        ),
    ] = False,
    save_results: Annotated[bool, typer.Option("--save-results", help=f"Write {AGREEMENT}.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="With --save-results: write this file instead.")
    ] = None,
) -> None:
    """Which techniques help on this store, from probe questions cut from its own text (no labels)."""
    from clear_rag.eval.agreement import suite_agreement
    from clear_rag.eval.check import check_store
    from clear_rag.eval.probes import CheckSettings
    from clear_rag.eval.stores import stores_root
    from clear_rag.providers.select import make_embedder
    from clear_rag.store.sqlite import Store
    from clear_rag.train.corpus import open_corpus

    settings = CheckSettings(probes=probes, cut=cut)
    try:
        model = make_embedder(embedder)
        if suites:
            measured = [
                suite_agreement(
                    name, embedder=model, reranker=reranker, settings=settings, root=stores_root(store)
                )
                for name in suites
            ]
            for entry in measured:
                typer.echo(f"{entry['suite']}: {entry['questions']} questions, {entry['probes']} probes")
                for real, probe in zip(entry["real"], entry["probe"], strict=True):
                    typer.echo(
                        _row_line(real, entry["metric"]) + "   probes:" + _row_line(probe, "ndcg@10")[32:]
                    )
            if save_results:
                document = agreement.agreement_document(
                    measured,
                    settings=settings,
                    embedder=getattr(model, "name", embedder),
                    reranker=reranker,
                    command=shlex.join(["clear-rag", *sys.argv[1:]]),
                )
                typer.echo(f"wrote {agreement.save_agreement(out or AGREEMENT, document)}")
            return
        opened: Store = open_corpus(store)
        try:
            found = check_store(opened, embedder=model, reranker=reranker, settings=settings)
        finally:
            opened.close()
    except ClearRagError as err:
        raise fail(err) from None
    from clear_rag.eval.check import save_check

    found["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    kept = save_check(store, found)
    typer.echo(f"{found['probes']} probe questions from {found['store']} (nDCG@10 against hybrid rrf):")
    for entry in found["rows"]:
        typer.echo(_row_line(entry, "ndcg@10"))
    for line in trust_lines():
        typer.echo(line)
    typer.echo(f"kept in {kept}: the page's Lab shows it beside the rerank knob")
