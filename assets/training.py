"""The models trained here: the SciFact cross-encoder reranker and the domain-adapted embedder, and
per suite corpus a reranker and an embedder adapted to it without labels, measured against the
shipped ones.

Each asset calls one library function (``build_reranker`` or ``build_embedder``), which computes the
cache key of its inputs (the SciFact files' digests, the base weights' digest, the mining and training
settings, the training code's version) and trains only when the shipped folder's ``training.json``
names another key. So a second materialisation with unchanged inputs trains nothing, and ``make run``,
which has no torch, uses the shipped int8 files. The key is the asset's code version too, so the
automation condition requests the asset again exactly when an input moved. Without SciFact beside the
repository (``../shared/data/beir-scifact``) the asset is skipped, not failed: the shipped files stay
in use. Nothing here imports torch: the definitions load without the ``train`` extra.

``<suite>/adapted_reranker`` trains the reranker's recipe plus pairs cut from the suite's own store
(its baseline chunking; ``clear-rag train reranker --corpus STORE``) into the store's
``adapted-reranker`` folder, and ``<suite>/adaptation`` runs the technique check against the suite's
real questions with it (``clear-rag check --agreement SUITE --reranker FOLDER``), written to
``check/adapted-<suite>.json`` beside the results. ``<suite>/adapted_embedder`` and
``<suite>/embedder_adaptation`` do the same for the embedder (``adapted-embedder``, measured as the
check's embedder under every row, ``check/adapted-<suite>-embedder.json``). All are skipped, not
failed, without torch or SciFact, and a second run with the same store trains nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dagster import (
    AssetDep,
    AssetKey,
    AssetsDefinition,
    DataVersion,
    MaterializeResult,
    SpecificPartitionsPartitionMapping,
    asset,
    get_dagster_logger,
)

from assets.layout import AUTOMATION, Layout, chunk_key
from assets.resources import EmbedderResource, PathsResource
from clear_rag.errors import ModelError
from clear_rag.train import build
from clear_rag.train import data as training_data
from clear_rag.train import manifest as mf
from clear_rag.train.embedder_build import build_embedder
from clear_rag.train.reranker_build import build_reranker

GROUP = "training"
Builder = Callable[..., tuple[dict[str, Any], bool]]


def input_key(kind: str, data_folder: Path = training_data.SCIFACT) -> str | None:
    """The cache key of one model's current inputs with default settings; None without the data."""
    from clear_rag.train.cross_encoder import CrossEncoderSettings
    from clear_rag.train.embedder import EmbedderSettings

    if not (data_folder / "corpus.jsonl").is_file():
        return None
    settings = CrossEncoderSettings() if kind == "cross-encoder" else EmbedderSettings()
    return mf.cache_key(build.inputs(kind, data_folder, build.MiningSettings(), settings))


def materialise(
    name: str, builder: Builder, folder: Path, data_folder: Path, stores: Path, log: Callable[[str], None]
) -> MaterializeResult:  # type: ignore[type-arg]
    """Bring one model folder up to date (``builder``), or say why it was skipped."""
    if not (data_folder / "corpus.jsonl").is_file():
        shipped = mf.read_manifest(folder)
        log(f"SciFact is not at {data_folder}: {name} is skipped and the shipped files stay in use")
        return MaterializeResult(
            data_version=DataVersion(str((shipped or {}).get("cache_key", "absent"))),
            metadata={"skipped": f"no SciFact at {data_folder}", "trained": False},
        )
    try:
        manifest, trained = builder(out=folder, data_folder=data_folder, stores=stores, log=log)
    except ModelError as err:
        shipped = mf.read_manifest(folder)
        if shipped is None:  # nothing shipped to fall back on: the error (which names the fix) stands
            raise
        log(f"{err}; the shipped {name} (trained {shipped.get('date')}) stays in use")
        return MaterializeResult(
            data_version=DataVersion(str(shipped["cache_key"])),
            metadata={"stale": str(err), "trained": False, "cache_key": str(shipped["cache_key"])},
        )
    return MaterializeResult(
        data_version=DataVersion(str(manifest["cache_key"])),
        metadata={
            "trained": trained,
            "cache_key": str(manifest["cache_key"]),
            "folder": str(folder),
            **{k: manifest[k] for k in ("steps", "pairs", "wall_seconds", "date") if k in manifest},
        },
    )


def model_asset(name: str, kind: str, builder: Builder, models: Path, data_folder: Path) -> AssetsDefinition:
    """One model's asset; its code version carries the cache key of the current inputs."""
    key = input_key(kind, data_folder)

    @asset(
        key=AssetKey([GROUP, name.replace("-", "_")]),
        group_name=GROUP,
        code_version=f"{mf.CODE_VERSION}.{(key or 'no-data')[:16]}",
        automation_condition=AUTOMATION,
        description=f"{name}: trained on SciFact's train claims, int8 ONNX in the weights package "
        f"(models/clear_rag_models/{name}/).",
    )
    def model(paths: PathsResource) -> MaterializeResult:  # type: ignore[type-arg]
        log = get_dagster_logger().info
        return materialise(name, builder, models / name, data_folder, Path(paths.store_root), log)

    return model


def training_assets(
    models: Path = build.MODELS, data_folder: Path = training_data.SCIFACT
) -> list[AssetsDefinition]:
    """The reranker's and the adapted embedder's assets, writing into ``models``."""
    return [
        model_asset(build.RERANKER, "cross-encoder", build_reranker, models, data_folder),
        model_asset(build.EMBEDDER, "bi-encoder", build_embedder, models, data_folder),
    ]


ADAPTED_FOLDER = "adapted-reranker"  # in the store it was adapted to, as `train reranker --corpus` puts it


@dataclass(frozen=True)
class Adaptation:
    """One kind of model adapted to a suite's store: how it is built, where it goes, what it is called.
    The reranker is measured in the rerank rows; the embedder under every row, as the check's embedder."""

    kind: Literal["reranker", "embedder"]
    folder: str  # in the store it was adapted to, as `train KIND --corpus STORE` puts it
    builder: Callable[..., tuple[dict[str, Any], bool]]
    name: str  # the manifest's model name
    files: tuple[str, ...]  # the files a current folder holds (beside its manifest)

    def key(self, what: Literal["model", "measured"]) -> str:
        """The asset's name: adapted_reranker and adaptation (as they were), or adapted_embedder and
        embedder_adaptation."""
        if what == "model":
            return f"adapted_{self.kind}"
        return "adaptation" if self.kind == "reranker" else "embedder_adaptation"

    def result(self, suite: str) -> str:
        return f"adapted-{suite}" if self.kind == "reranker" else f"adapted-{suite}-embedder"


ADAPTATIONS = (
    Adaptation("reranker", ADAPTED_FOLDER, build_reranker, build.ADAPTED, build.SHIPPED),
    Adaptation("embedder", "adapted-embedder", build_embedder, build.ADAPTED_EMBEDDER, (build.MODEL_FILE,)),
)


def adaptation_assets(
    layouts: Sequence[Layout], data_folder: Path = training_data.SCIFACT
) -> list[AssetsDefinition]:
    """``<suite>/adapted_reranker`` and ``<suite>/adaptation``, and the embedder's pair
    (``adapted_embedder``, ``embedder_adaptation``), for each store the suites' baselines read (suites
    over one corpus and chunking, tech and tech-expansion, share them)."""
    from clear_rag.eval.stores import store_dir

    made: list[AssetsDefinition] = []
    seen: set[Path] = set()
    for layout in layouts:
        baseline = next(r for r in layout.suite.rows if r.name == layout.suite.baseline)
        folder = store_dir(layout.suite, baseline.config.chunking, Path())
        if folder in seen:
            continue
        seen.add(folder)
        for adaptation in ADAPTATIONS:
            made += adapted_model(layout, chunk_key(baseline.config.chunking), data_folder, adaptation)
    return made


def adapted_model(
    layout: Layout, chunking: str, data_folder: Path, adaptation: Adaptation
) -> list[AssetsDefinition]:
    """One suite's adapted model of one kind, and its measurement on the suite's real questions."""
    store = AssetDep(layout.key("store"), partition_mapping=SpecificPartitionsPartitionMapping([chunking]))
    kind = adaptation.kind

    def folders(paths: PathsResource) -> tuple[Path, Path]:
        from clear_rag.eval.stores import store_dir

        suite = layout.current()
        where = store_dir(suite, layout.chunkings[chunking], Path(paths.store_root))
        return where, where / adaptation.folder

    def current(folder: Path) -> dict[str, Any] | None:
        manifest = mf.read_manifest(folder)
        if manifest is None or not mf.is_current(folder, str(manifest["cache_key"]), adaptation.files):
            return None
        return manifest

    @asset(
        key=layout.key(adaptation.key("model")),
        deps=[store],
        group_name=GROUP,
        code_version=mf.CODE_VERSION,
        automation_condition=AUTOMATION,
        description=f"The {kind}'s recipe plus pairs cut from {layout.suite.name}'s store (no labels).",
    )
    def adapted(paths: PathsResource) -> MaterializeResult:  # type: ignore[type-arg]
        import functools

        from clear_rag.train.corpus import Corpus
        from clear_rag.train.manifest import publish

        log = get_dagster_logger().info
        where, folder = folders(paths)
        builder = functools.partial(
            adaptation.builder,
            corpora=[Corpus(where.name, where)],
            name=adaptation.name,
            command=f"clear-rag train {kind} --corpus {where}",
        )
        try:
            found = materialise(
                f"the {kind} adapted to {where.name}",
                builder,
                folder,
                data_folder,
                Path(paths.store_root),
                log,
            )
        except ModelError as err:  # no torch here, say: nothing adapted, nothing lost
            log(f"{err}; {layout.suite.name}'s store is not adapted to")
            return MaterializeResult(data_version=DataVersion("absent"), metadata={"skipped": str(err)})
        manifest = current(folder)
        if manifest is not None:
            publish(manifest, Path(paths.results_dir), name=adaptation.result(layout.suite.name))
        return found

    @asset(
        key=layout.key(adaptation.key("measured")),
        deps=[layout.key(adaptation.key("model"))],
        group_name=GROUP,
        code_version=mf.CODE_VERSION,
        automation_condition=AUTOMATION,
        description=f"The technique rows on {layout.suite.name}'s real questions with the adapted {kind}.",
    )
    def adaptation_measured(paths: PathsResource, embedder: EmbedderResource) -> MaterializeResult:  # type: ignore[type-arg]
        from clear_rag.eval import agreement, check, probes
        from clear_rag.models import trained_embedder

        log = get_dagster_logger().info
        _, folder = folders(paths)
        manifest = current(folder)
        if manifest is None:
            log(f"no adapted {kind} in {folder}: {layout.suite.name}'s adaptation is not measured")
            return MaterializeResult(
                data_version=DataVersion("absent"), metadata={"skipped": f"no adapted {kind} in {folder}"}
            )
        settings = probes.CheckSettings()
        model = trained_embedder(folder) if kind == "embedder" else embedder.get()
        reranker = str(folder) if kind == "reranker" else check.RERANKER
        measured = agreement.suite_agreement(
            str(layout.suite.path),
            embedder=model,
            reranker=reranker,
            settings=settings,
            root=Path(paths.store_root),
        )
        path = Path(paths.results_dir) / "check" / f"{adaptation.result(layout.suite.name)}.json"
        named = f"--reranker {folder}" if kind == "reranker" else f"--embedder {folder}"
        document = agreement.agreement_document(
            [measured],
            settings=settings,
            embedder=str(getattr(model, "name", "")),
            reranker=reranker,
            command=f"clear-rag check --agreement {layout.suite.name} {named} --save-results --out {path}",
        )
        agreement.save_agreement(path, document)
        return MaterializeResult(
            data_version=DataVersion(str(manifest["cache_key"])),
            metadata={"path": str(path), "kendall_tau": measured["agreement"]["kendall_tau"]},
        )

    return [adapted, adaptation_measured]
