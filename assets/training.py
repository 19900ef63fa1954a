"""The models trained here: the SciFact cross-encoder reranker and the domain-adapted embedder.

Each asset calls one library function (``clear_rag.train.build``), which computes the cache key of its
inputs (the SciFact files' digests, the base weights' digest, the mining and training settings, the
training code's version) and trains only when the shipped folder's ``training.json`` names another
key. So a second materialisation with unchanged inputs trains nothing, and ``make run``, which has no
torch, uses the shipped int8 files. The key is the asset's code version too, so the automation
condition requests the asset again exactly when an input moved. Without SciFact beside the repository
(``../shared/data/beir-scifact``) the asset is skipped, not failed: the shipped files stay in use.
Nothing here imports torch: the definitions load without the ``train`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import AssetKey, AssetsDefinition, DataVersion, MaterializeResult, asset, get_dagster_logger

from assets.layout import AUTOMATION
from assets.resources import PathsResource
from clear_rag.errors import ModelError
from clear_rag.train import build
from clear_rag.train import data as training_data
from clear_rag.train import manifest as mf

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
        description=f"{name}: trained on SciFact's train claims, int8 ONNX in clear_rag/models/{name}/.",
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
        model_asset(build.RERANKER, "cross-encoder", build.build_reranker, models, data_folder),
        model_asset(build.EMBEDDER, "bi-encoder", build.build_embedder, models, data_folder),
    ]
