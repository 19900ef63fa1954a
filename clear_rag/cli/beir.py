"""``clear-rag beir PATH``: the ablation runner over a BEIR folder without a suite file.

One row, the config from ``--config`` and ``--set`` (chunking one chunk per document unless the config
sets it), merged into ``results/beir-<dataset>.json`` through ``clear_rag.eval.ablation.save_row``,
recording the command that made it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import (
    DEFAULT_STORE,
    AgainstOption,
    EmbedderOption,
    RerankerOption,
    ResultsDirOption,
    SetOption,
    StoreOption,
    TimeoutOption,
    app,
    fail,
)
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError
from clear_rag.eval import ablation
from clear_rag.providers.select import DEFAULT_EMBEDDER


@app.command("beir")
def beir_command(
    path: Annotated[
        Path, typer.Argument(help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/).")
    ],
    config: Annotated[Path | None, typer.Option("--config", help="Pipeline settings file.")] = None,
    overrides: SetOption = None,
    name: Annotated[str | None, typer.Option(help="Row name in the results file.")] = None,
    against: AgainstOption = None,
    split: Annotated[str, typer.Option(help="Which qrels split to evaluate.")] = "test",
    store: StoreOption = Path(DEFAULT_STORE),
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    reranker: RerankerOption = None,
    timeout: TimeoutOption = None,
    save_results: Annotated[
        bool,
        typer.Option(
            "--save-results",
            help="Merge the row into results/beir-<dataset>.json (beir-<dataset>-<split>.json for "
            "another split).",
        ),
    ] = False,
    results_dir: ResultsDirOption = Path("results"),
) -> None:
    """Evaluate one config on a BEIR dataset (nDCG@10, recall@100, MRR@10 over documents).

    The same runner as `clear-rag ablate`, with a one-row suite made from the folder. Chunking
    defaults to one chunk per document ("whole"), since BEIR judges whole documents.
    """
    from clear_rag.eval import beir, runner, stores
    from clear_rag.eval.suite import Row, Suite
    from clear_rag.eval.suite import merge as merge_settings
    from clear_rag.providers.select import make_embedder

    try:
        base = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        data = base.to_dict()
        if config is None or "chunking" not in base.model_fields_set:
            data["chunking"]["chunker"] = "whole"
        # merged like a suite row's set: (a nested table key by key); a value of the wrong kind,
        # such as chunking=5, replaces the table and is then reported by the config's checks
        settings = PipelineConfig.from_mapping(
            merge_settings(data, ablation.parse_overrides(overrides or [])), source="--set"
        )
        if reranker is not None:
            settings = settings.replace(rerank=True, reranker=reranker)
        dataset = beir.load(path, split=split)
        row_name = name or ablation.default_name(settings)
        # another split is another question set: its rows go to a file of their own, never among the
        # test split's
        suite = Suite(
            f"beir-{dataset.name.removeprefix('beir-')}" + (f"-{split}" if split != "test" else ""),
            path,
            (Row(row_name, settings),),
            row_name,
            beir=path,
            split=split,
            spans=False,
            metrics=("doc ndcg@10", "doc recall@100", "doc mrr@10"),
        )
        target = results_dir / f"{suite.name}.json"
        ablation.check_against(target, against, save_results)
        model = make_embedder(embedder, timeout=timeout) if "vector" in settings.retrievers else None
        result = runner.run_suite(suite, embedder=model, root=stores.stores_root(store), show_progress=True)
        if save_results:
            # the command that made the row, so that the reproduce page can name it beside the suite's
            command = [
                "clear-rag", "beir", str(path), *(["--config", str(config)] if config is not None else []),
                *(part for pair in overrides or [] for part in ("--set", pair)),
                *(["--split", split] if split != "test" else []),
                *(["--embedder", embedder] if model is not None else []),
                *(["--reranker", reranker] if reranker is not None else []),
                "--name", row_name, *(["--against", against] if against is not None else []),
                *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
                "--save-results",
            ]  # fmt: skip
            ablation.save_row(target, result, command, against)
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(ablation.table(result))
    if save_results:
        typer.echo(f"row {row_name!r} written to {target}")
