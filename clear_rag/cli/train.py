"""``clear-rag train``: train the SciFact reranker or the adapted embedder (needs the ``train`` extra).

Both commands do nothing when the shipped folder's ``training.json`` names the current inputs (data
file digests, base weights, settings, code version): ``make run`` never trains, and neither does a
second run with unchanged inputs. ``--force`` trains again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.cli.app import StoreOption, app, fail
from clear_rag.errors import ClearRagError
from clear_rag.store.sqlite import DEFAULT_DIR

train_app = typer.Typer(
    help="Train the SciFact reranker and the adapted embedder (pip install -e '.[train]')."
)
app.add_typer(train_app, name="train")

DataOption = Annotated[
    Path,
    typer.Option("--data", help="The BEIR SciFact folder (corpus.jsonl, queries.jsonl, qrels/train.tsv)."),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Write the model here instead of the weights package (models/clear_rag_models)."
    ),
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Train even when the folder's manifest is current.")
]


ResultsOption = Annotated[
    Path, typer.Option("--results-dir", help="Where the manifest's copy goes (training/<name>.json).")
]


def _train(
    build: Callable[..., tuple[dict[str, Any], bool]],
    data: Path,
    store: Path,
    out: Path | None,
    force: bool,
    results_dir: Path,
    copy_name: str = "",
) -> None:
    """Bring one model's folder up to date with ``build`` (``build_reranker`` or ``build_embedder``),
    then report; the manifest's copy in ``results_dir/training/`` is named ``copy_name`` (default: the
    model's name)."""
    from clear_rag.eval.stores import stores_root
    from clear_rag.train.manifest import publish

    try:
        stores = stores_root(store)
        manifest, trained = build(out=out, data_folder=data, stores=stores, force=force, log=typer.echo)
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(f"manifest copied to {publish(manifest, results_dir, name=copy_name)}")
    if trained:
        typer.echo(
            f"trained {manifest['name']}: {manifest['steps']} steps, {manifest['pairs']} pairs, "
            f"{manifest['wall_seconds']} s; int8 against fp32: {manifest['int8_check']}"
        )


CorpusOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--corpus",
        help="A store (made by `clear-rag ingest`) whose own text adds self-supervised pairs; repeatable. "
        "The model goes to STORE/adapted-reranker (or adapted-embedder) unless --out says otherwise.",
    ),
]
MixedOption = Annotated[
    bool,
    typer.Option(
        "--mixed", help="Also train on the documentation corpora (Debian's postgresql-doc-15, python3-doc)."
    ),
]
QueriesOption = Annotated[
    int, typer.Option("--pseudo-queries", help="Pseudo-queries drawn from each corpus.")
]
EpochsOption = Annotated[int | None, typer.Option("--epochs", help="Passes over the training groups.")]


@train_app.command("reranker")
def reranker_command(
    data: DataOption = Path("../shared/data/beir-scifact"),
    store: StoreOption = Path(DEFAULT_DIR),
    out: OutOption = None,
    force: ForceOption = False,
    results_dir: ResultsOption = Path("results"),
    corpus: CorpusOption = None,
    mixed: MixedOption = False,
    pseudo_queries: QueriesOption = 600,
    epochs: EpochsOption = None,
) -> None:
    """Fine-tune all-MiniLM-L6-v2 as a cross-encoder on SciFact's train claims, export it to int8 ONNX.

    With --corpus STORE (or --mixed) the claims are joined by pairs cut from each store's own text
    (a sentence or a few of its words as the query, its passage as the positive, negatives mined by
    the store's BM25): no question or label of the store is read."""
    from clear_rag.train import build
    from clear_rag.train.cross_encoder import CrossEncoderSettings
    from clear_rag.train.reranker_build import build_reranker

    settings = CrossEncoderSettings() if epochs is None else CrossEncoderSettings(epochs=epochs)
    names = (build.RERANKER, build.MIXED, build.ADAPTED)
    _adapt("reranker", build_reranker, names, settings, data, store, out, force, results_dir,
           corpus or [], mixed, pseudo_queries, epochs)  # fmt: skip


def _adapt(
    model: str,
    builder: Callable[..., tuple[dict[str, Any], bool]],
    names: tuple[str, str, str],
    settings: Any,
    data: Path,
    store: Path,
    out: Path | None,
    force: bool,
    results_dir: Path,
    stores: list[Path],
    mixed: bool,
    queries: int,
    epochs: int | None,
) -> None:
    """``train reranker`` or ``train embedder`` (``model``), plain (``names[0]``), with the documentation
    corpora (``--mixed``: ``names[1]``) or adapted to stores (``--corpus``: ``names[2]``)."""
    import functools

    from clear_rag.train import build
    from clear_rag.train import corpus as corpus_store
    from clear_rag.train.pairs import PairSettings

    if not stores and not mixed:
        _train(functools.partial(builder, training=settings), data, store, out, force, results_dir)
        return
    try:
        corpora = (
            [corpus_store.extra_corpus(n, log=typer.echo) for n in corpus_store.EXTRA_CORPORA]
            if mixed
            else []
        )
        corpora += [corpus_store.Corpus(s.resolve().name, s) for s in stores]
    except ClearRagError as err:
        raise fail(err) from None
    name = names[1] if mixed and not stores else names[2]
    folder = out or (stores[0] / f"adapted-{model}" if stores else build.MODELS / name)
    parts = [f"clear-rag train {model}", *(f"--corpus {s}" for s in stores), *(["--mixed"] if mixed else [])]
    parts += [f"--pseudo-queries {queries}", *([f"--epochs {epochs}"] if epochs is not None else [])]
    built = functools.partial(
        builder,
        corpora=corpora,
        pairs=PairSettings(queries=queries),
        training=settings,
        name=name,
        command=" ".join(parts + ([f"--out {out}"] if out is not None else [])),
    )
    # one copy per adapted folder: adaptations to different stores share the recipe's name
    copy_name = (
        (out.name if out is not None else f"adapted-{model}-{stores[0].resolve().name}") if stores else ""
    )
    _train(built, data, store, folder, force, results_dir, copy_name)


@train_app.command("embedder")
def embedder_command(
    data: DataOption = Path("../shared/data/beir-scifact"),
    store: StoreOption = Path(DEFAULT_DIR),
    out: OutOption = None,
    force: ForceOption = False,
    results_dir: ResultsOption = Path("results"),
    corpus: CorpusOption = None,
    mixed: MixedOption = False,
    pseudo_queries: QueriesOption = 600,
    epochs: EpochsOption = None,
) -> None:
    """Contrastive fine-tuning of all-MiniLM-L6-v2 on the same claims and hard negatives, int8 ONNX.

    --corpus STORE and --mixed add the same self-supervised pairs as for the reranker."""
    from clear_rag.train import build
    from clear_rag.train.embedder import EmbedderSettings
    from clear_rag.train.embedder_build import build_embedder

    settings = EmbedderSettings() if epochs is None else EmbedderSettings(epochs=epochs)
    names = (build.EMBEDDER, build.MIXED_EMBEDDER, build.ADAPTED_EMBEDDER)
    _adapt("embedder", build_embedder, names, settings, data, store, out, force, results_dir,
           corpus or [], mixed, pseudo_queries, epochs)  # fmt: skip


@train_app.command("support")
def support_command(
    data: DataOption = Path("../shared/data/beir-scifact"),
    name: Annotated[str, typer.Option("--reranker", help="The shipped cross-encoder to calibrate.")] = (
        "scifact-minilm-l6"
    ),
    results_dir: ResultsOption = Path("results"),
) -> None:
    """Fit the support check's calibration of a shipped cross-encoder on SciFact's rationale sentences
    (test claims with even ids; checked on the odd ones). Needs no torch."""
    import json

    from clear_rag import models
    from clear_rag.atomic import write_atomic
    from clear_rag.train.calibration import calibrate
    from clear_rag.train.manifest import publish

    try:
        folder = models.model_folder(name)
        record = calibrate(
            data,
            models.shipped_reranker(name),
            command=f"clear-rag train support --reranker {name}",
            log=typer.echo,
        )
    except ClearRagError as err:
        raise fail(err) from None
    write_atomic(folder / models.SUPPORT, json.dumps(record, indent=2, sort_keys=True) + "\n")
    copied = publish(record, results_dir, kind="calibration", name=name)
    typer.echo(f"wrote {folder / models.SUPPORT}; copied to {copied}")
    typer.echo(f"held out (odd claims): {record['held_out']}")
