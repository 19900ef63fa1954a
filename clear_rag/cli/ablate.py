"""``clear-rag ablate SUITE``: run every row of a suite, print the table, write results/<suite>.json."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import EmbedderOption, app, fail
from clear_rag.errors import ClearRagError
from clear_rag.eval.golden import Question
from clear_rag.providers.select import DEFAULT_EMBEDDER

BASELINE_FAKE = Path("results") / "baseline-fake.json"


@app.command("ablate")
def ablate_command(
    suite: Annotated[str, typer.Argument(help="A suite name (golden/suites/NAME.yaml) or a suite file.")],
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: Annotated[
        str | None,
        typer.Option("--chat", help="Chat model for rows that expand the query or use HyDE (e.g. smollm2)."),
    ] = None,
    save_results: Annotated[bool, typer.Option("--save-results", help="Write results/<suite>.json.")] = False,
    bless: Annotated[
        bool,
        typer.Option(
            "--bless", help=f"Re-bless {BASELINE_FAKE}, the fake-provider baseline `make test` gates on."
        ),
    ] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Recompute the saved results from stored traces, without models.")
    ] = False,
    results_dir: Annotated[Path, typer.Option(help="Where result files go.")] = Path("results"),
) -> None:
    """Run an ablation suite: every row over the same golden questions, with paired comparisons."""
    from clear_rag.eval import ablate
    from clear_rag.eval.suite import load_suite
    from clear_rag.providers.select import make_chat, make_embedder

    try:
        loaded = load_suite(suite)
        target = results_dir / f"{loaded.name}.json"
        if replay:
            _replay(ablate, loaded, target)
            return
        if bless and embedder != "hash":
            typer.echo("error: --bless records the fake-provider baseline; pass --embedder hash", err=True)
            raise typer.Exit(2)
        uses_vectors = any("vector" in row.config.retrievers for row in loaded.rows)
        model = make_embedder(embedder) if uses_vectors else None
        chat_model = make_chat(chat) if chat is not None else None
        result = ablate.run_suite(loaded, embedder=model, progress=_progress, chat=chat_model)
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(table(result))
    for path, wanted in ((target, save_results), (BASELINE_FAKE, bless)):
        if wanted:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            typer.echo(f"written to {path}")


def _replay(ablate: Any, suite: Any, target: Path) -> None:
    if not target.exists():
        typer.echo(f"error: {target} does not exist; run with --save-results first", err=True)
        raise typer.Exit(2)
    result = json.loads(target.read_text(encoding="utf-8"))
    replayed = ablate.replay(result, suite)
    differ = [
        (row["name"], q["id"])
        for row in result["rows"]
        for q in row["questions"]
        if replayed[row["name"]][q["id"]] != q["metrics"]
    ]
    count = sum(len(r["questions"]) for r in result["rows"])
    if differ:
        typer.echo(f"{len(differ)} of {count} question results differ when replayed, e.g. {differ[:3]}")
        raise typer.Exit(1)
    typer.echo(f"replayed {count} question results from stored traces: all metrics identical")


def table(result: dict[str, Any]) -> str:
    """The suite as a text table: metrics per row, and the nDCG@10 change against the baseline."""
    names = result["metric_names"]
    width = max(len(r["name"]) for r in result["rows"])
    head = f"{'row':<{width}}  " + "  ".join(f"{n:>9}" for n in names) + "  vs baseline ndcg@10 [95% CI] p"
    lines = [f"suite {result['suite']}: {result['golden']['questions']} questions", head]
    for row in result["rows"]:
        cells = "  ".join(f"{row['metrics'][n]:>9.4f}" for n in names)
        versus = row["comparisons"].get("baseline", {}).get("ndcg@10")
        note = (
            f"  {versus['difference']:+.4f} [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}] "
            f"{_p(versus['p_sign'])} ({versus['up']} up, {versus['down']} down)"
            if versus
            else "  (baseline)"
        )
        lines.append(f"{row['name']:<{width}}  {cells}{note}")
    return "\n".join(lines)


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"


def _progress(questions: Iterable[Question], row: str) -> Iterable[Question]:
    from tqdm import tqdm

    return tqdm(list(questions), desc=row[:40], unit="q", file=sys.stderr, leave=False)
