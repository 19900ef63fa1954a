"""``clear-rag beir PATH``: ingest a BEIR dataset and report nDCG@10, recall@100 and MRR@10."""

from __future__ import annotations

import sys
import time
import tomllib
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import EmbedderOption, ProgressBar, app, fail
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, ConfigError
from clear_rag.providers.select import DEFAULT_EMBEDDER


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs, values read as TOML (``true``, ``60``, ``["keyword"]``) or else as text;
    ``chunking.size=128`` sets a nested key."""
    data: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError("is not key=value", field="--set", value=pair, fix="Write e.g. --set rrf_k=60")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        *parents, leaf = key.split(".")
        target = data
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return data


@app.command("beir")
def beir_command(
    path: Annotated[
        Path, typer.Argument(help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/).")
    ],
    config: Annotated[Path | None, typer.Option("--config", help="Pipeline settings file.")] = None,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a setting: key=value (repeatable).")
    ] = None,
    name: Annotated[str | None, typer.Option(help="Row name in the results file.")] = None,
    split: Annotated[str, typer.Option(help="Which qrels split to evaluate.")] = "test",
    store: Annotated[
        Path | None, typer.Option("--store", help="Store directory (default: .clear-rag-beir/<dataset>).")
    ] = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    save_results: Annotated[
        bool, typer.Option("--save-results", help="Write the row to results/beir-<dataset>.json.")
    ] = False,
    results_dir: Annotated[Path, typer.Option(help="Where result files go.")] = Path("results"),
) -> None:
    """Evaluate a pipeline config on a BEIR dataset: nDCG@10, recall@100, MRR@10.

    Chunking defaults to one chunk per document ("whole"), since BEIR judges whole documents.
    """
    from clear_rag.chunk.factory import make_chunker
    from clear_rag.eval import beir
    from clear_rag.ingest import ingest_documents
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import open_pipeline
    from clear_rag.store.sqlite import Store

    try:
        base = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        data = {**base.to_dict(), "chunking": {**base.to_dict()["chunking"]}}
        if config is None:
            data["chunking"]["chunker"] = "whole"
        changes = parse_overrides(overrides or [])
        data["chunking"].update(changes.pop("chunking", {}))
        settings = PipelineConfig.from_mapping({**data, **changes}, source="--set")
        dataset = beir.load(path, split=split)
        directory = store if store is not None else Path(".clear-rag-beir") / dataset.name
        chunking = settings.chunking
        chunker = make_chunker(chunking.chunker, size=chunking.size, overlap=chunking.overlap)
        model = make_embedder(embedder) if "vector" in settings.retrievers else None
        with Store(directory, root=path) as opened:
            started = time.perf_counter()
            report = ingest_documents(opened, beir.documents(dataset), chunker, parser=beir.PARSER)
            ingest_s = time.perf_counter() - started
            started = time.perf_counter()
            pipeline, _ = open_pipeline(
                opened, settings, embedder=model, progress=ProgressBar("embed", "chunk").update
            )
            index_s = time.perf_counter() - started
            run = beir.evaluate(pipeline, dataset, progress=_queries)
    except ClearRagError as err:
        raise fail(err) from None
    row_name = name or _default_name(settings)
    metrics = run["metrics"]
    typer.echo(
        f"{dataset.name} {split}: {run['queries']} queries, config {settings.hash()} ({row_name})\n"
        + "  ".join(f"{k} {v:.4f}" for k, v in metrics.items())
        + f"\ningest {ingest_s:.1f} s ({report.count('unchanged')} documents unchanged), "
        f"indexes {index_s:.1f} s, median {run['seconds_per_query']['median'] * 1000:.1f} ms per query"
    )
    if save_results:
        row = {
            "name": row_name,
            "config": settings.to_dict(),
            "config_hash": settings.hash(),
            "models": pipeline.models,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "dataset": {
                "name": dataset.name,
                "split": split,
                "corpus_sha256": beir.file_sha256(dataset.corpus_path),
                "documents": len(report.outcomes),
                "queries": run["queries"],
            },
            **run,
        }
        suite = f"beir-{dataset.name.removeprefix('beir-')}"
        target = results_dir / f"{suite}.json"
        beir.save_row(target, suite, row)
        typer.echo(f"row {row_name!r} written to {target}")


def _default_name(settings: PipelineConfig) -> str:
    """E.g. ``bm25 (fts5 idf, porter)``, ``dense``, ``hybrid rrf (lucene idf, unstemmed)``."""
    kinds = set(settings.retrievers)
    name = {frozenset({"keyword"}): "bm25", frozenset({"vector"}): "dense"}.get(
        frozenset(kinds), f"hybrid {'rrf' if settings.fusion == 'rrf' else 'min-max'}"
    )
    if "keyword" in kinds:
        name += f" ({settings.idf} idf, {'porter' if settings.stem else 'unstemmed'})"
    return name + (" + rerank" if settings.rerank else "")


def _queries(ids: Iterable[str]) -> Iterable[str]:
    from tqdm import tqdm

    return tqdm(list(ids), desc="queries", unit="q", file=sys.stderr, leave=False)
