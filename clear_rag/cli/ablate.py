"""``clear-rag ablate SUITE``: run every row of a suite, print the table, write results/<suite>.json.

``clear-rag ablate SUITE --row ROW`` runs one row, changed by ``--set`` and renamed by ``--name`` if
asked (with another ``--embedder`` too), and merges it into the suite's result file, recording the
command that made it, through ``clear_rag.eval.ablation.save_row`` (as ``clear-rag beir`` does).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clear_rag import environ
from clear_rag.cli.app import (
    DEFAULT_STORE,
    AgainstOption,
    EmbedderOption,
    RerankerOption,
    ResultsDirOption,
    SetOption,
    StoreOption,
    SupportOption,
    TimeoutOption,
    app,
    fail,
)
from clear_rag.errors import ClearRagError, ConfigError
from clear_rag.eval import ablation
from clear_rag.providers.select import DEFAULT_EMBEDDER, DEFAULT_WRITER
from clear_rag.results.files import BASELINE_FAKE

if TYPE_CHECKING:
    from clear_rag.eval.suite import Suite


SaveOption = Annotated[bool, typer.Option("--save-results", help="Write the result file (atomically).")]
SuiteChatOption = Annotated[
    str,
    typer.Option(
        "--chat",
        envvar=environ.CHAT.name,
        help="Chat model of the rows that answer (a suite with generate: true), expand the query or "
        "use HyDE; their generations come from results/generations/SUITE.json where cached, so the "
        "model runs only for new ones.",
    ),
]


@app.command("ablate")
def ablate_command(
    suite: Annotated[str, typer.Argument(help="A suite name (golden/suites/NAME.yaml) or a suite file.")],
    store: StoreOption = Path(DEFAULT_STORE),
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: SuiteChatOption = DEFAULT_WRITER,
    reranker: RerankerOption = None,
    support: SupportOption = None,
    timeout: TimeoutOption = None,
    golden: Annotated[
        Path | None,
        typer.Option(
            "--golden", help="Evaluate this golden file's questions against the suite's rows instead."
        ),
    ] = None,
    save_results: SaveOption = False,
    bless: Annotated[
        bool,
        typer.Option(
            "--bless", help=f"Re-bless {BASELINE_FAKE}, the fake-provider baseline `make test` gates on."
        ),
    ] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Recompute the saved results from stored traces, without models.")
    ] = False,
    rederive: Annotated[
        bool,
        typer.Option(
            "--rederive",
            help="Derive the saved result file again from its own per-question values, running no "
            "retrieval: each row's aggregates per subset (the suite's training_split) and every paired "
            "comparison; with --save-results, write it back.",
        ),
    ] = False,
    regenerate: Annotated[
        bool,
        typer.Option(
            "--regenerate",
            help="Ask the chat model again instead of the cached generations; report how many changed "
            "and how far each metric moved.",
        ),
    ] = False,
    results_dir: ResultsDirOption = Path("results"),
    row: Annotated[
        str | None,
        typer.Option(
            "--row",
            help="Run only this row; with --save-results, merge it into the suite's result file. With "
            "--set or --name it becomes a new row, which records the command that made it.",
        ),
    ] = None,
    overrides: SetOption = None,
    name: Annotated[str | None, typer.Option(help="With --row: the name of the row it makes.")] = None,
    against: AgainstOption = None,
) -> None:
    """Run an ablation suite: every row over the same golden questions, with paired comparisons.

    The suite's stores live under the store directory (--store, $CLEAR_RAG_STORE), in ablate/.
    """
    from clear_rag.eval import stores
    from clear_rag.eval.suite import load_suite
    from clear_rag.results import reproduce
    from clear_rag.results.document import with_command
    from clear_rag.results.files import read_result, write_result

    try:
        loaded = load_suite(suite)
        if golden is not None:
            loaded = loaded.with_golden(golden)
        loaded.check_data()
        if reranker is not None:
            loaded = loaded.with_reranker(reranker)
        if support is not None and loaded.generate:  # only a suite that answers checks its answers
            loaded = loaded.with_support(support)
        target = results_dir / f"{loaded.name}.json"
        if row is None:
            given = [o for o, v in (("--set", overrides), ("--name", name), ("--against", against)) if v]
            if given:
                raise ConfigError(
                    "changes one row, and no --row names it", field=given[0], fix="Add --row ROW"
                )
        else:
            whole = [
                o
                for o, v in (
                    ("--bless", bless),
                    ("--replay", replay),
                    ("--regenerate", regenerate),
                    ("--rederive", rederive),
                )
                if v
            ]
            if whole:
                raise ConfigError(
                    "works on the whole suite", field=whole[0], fix=f"Drop --row, or drop {whole[0]}"
                )
            order = [r.name for r in loaded.rows]
            loaded = loaded.one_row(row, ablation.parse_overrides(overrides or []), name)
            ablation.check_against(target, against, save_results)
        if replay:
            _replay(loaded, target, stores.stores_root(store))
            return
        if rederive:
            runs = [
                o for o, v in (("--bless", bless), ("--replay", replay), ("--regenerate", regenerate)) if v
            ]
            if runs:
                raise ConfigError(
                    "runs the suite, and --rederive runs nothing", field=runs[0], fix="Use one or the other"
                )
            command = [
                "clear-rag", "ablate", suite, "--rederive",
                *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
                "--save-results",
            ]  # fmt: skip
            rederived = ablation.rederived(loaded, target, shlex.join(command))
            typer.echo(ablation.table(rederived))
            if save_results:
                write_result(target, rederived)
                typer.echo(f"re-derived and written to {target}")
            return
        if bless and embedder != "hash":
            raise ConfigError(
                "records the fake-provider baseline", field="--bless", fix="Pass --embedder hash with it"
            )
        before = read_result(target) if regenerate and target.exists() else None
        result, summary = ablation.run_with_models(
            loaded,
            store=store,
            embedder=embedder,
            chat=chat,
            results_dir=results_dir,
            regenerate=regenerate,
            timeout=timeout,
        )
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(ablation.table(result))
    if summary:
        typer.echo(summary)
    if row is not None:
        if save_results:
            made, vectors = loaded.rows[0].name, "vector" in loaded.rows[0].config.retrievers
            new = made != row or bool(overrides)  # a row the suite file does not define
            command = [
                "clear-rag", "ablate", suite, "--row", row,
                *(part for pair in overrides or [] for part in ("--set", pair)),
                *(["--golden", str(golden)] if golden is not None else []),
                *(["--embedder", embedder] if vectors else []),
                *(["--reranker", reranker] if reranker is not None else []),
                *(["--support", support] if support is not None and loaded.generate else []),
                *(["--name", made] if made != row else []),
                *(["--against", against] if against is not None else []),
                *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
                "--save-results",
            ]  # fmt: skip
            ablation.save_row(target, result, command, against, order, suite_row=not new)
            typer.echo(f"row {made!r} merged into {target}")
        return
    if save_results or bless:
        # the command that writes the whole file, with the options that change what it holds
        vectors = any("vector" in r.config.retrievers for r in loaded.rows)
        command = [
            "clear-rag", "ablate", suite,
            *(["--golden", str(golden)] if golden is not None else []),
            *(["--embedder", embedder] if vectors else []),
            *(["--chat", chat] if any(loaded.needs_chat(r) for r in loaded.rows) else []),
            *(["--reranker", reranker] if reranker is not None else []),
            *(["--support", support] if support is not None and loaded.generate else []),
            *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
            *(["--save-results"] if save_results else []),
            *(["--bless"] if bless else []),
        ]  # fmt: skip
        result = with_command(result, shlex.join(command))
    for path, wanted in ((target, save_results), (BASELINE_FAKE, bless)):
        if wanted:
            write_result(path, result)
            typer.echo(f"written to {path}")
    if before is not None:
        moved = reproduce.compare(result, before, target)
        if moved is not None:
            typer.echo(reproduce.format(moved, every_metric=True))


def _replay(suite: Suite, target: Path, root: Path) -> None:
    differ, count = ablation.replay_differences(suite, target, root)
    if differ:
        typer.echo(f"{len(differ)} of {count} question results differ when replayed, e.g. {differ[:3]}")
        raise typer.Exit(1)
    typer.echo(f"replayed {count} question results from stored traces: all metrics and verdicts identical")
