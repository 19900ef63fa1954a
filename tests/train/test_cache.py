"""The training cache: the key moves with every input, and a current folder is never trained again."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from clear_rag.hashing import file_sha256
from clear_rag.train import build
from clear_rag.train import manifest as mf
from clear_rag.train.cross_encoder import CrossEncoderSettings
from clear_rag.train.embedder_build import build_embedder
from clear_rag.train.reranker_build import build_reranker
from tests.toy import write_beir


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The toy BEIR dataset with a train split (its test qrels copied)."""
    folder = write_beir(tmp_path / "scifact")
    shutil.copyfile(folder / "qrels" / "test.tsv", folder / "qrels" / "train.tsv")
    return folder


def key(data: Path, mining: build.MiningSettings | None = None, training: object = None) -> str:
    wanted = build.inputs(
        "cross-encoder", data, mining or build.MiningSettings(), training or CrossEncoderSettings()
    )
    return mf.cache_key(wanted)


def test_the_key_is_stable(data: Path) -> None:
    assert key(data) == key(data)


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/train.tsv"])
def test_each_data_file_moves_the_key(data: Path, name: str) -> None:
    before = key(data)
    with (data / name).open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert key(data) != before


def test_the_test_split_does_not_move_the_key(data: Path) -> None:
    before = key(data)
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    assert key(data) == before  # training never reads it


def test_each_setting_moves_the_key(data: Path) -> None:
    base = key(data)
    assert key(data, training=replace(CrossEncoderSettings(), seed=18)) != base
    assert key(data, training=replace(CrossEncoderSettings(), max_tokens=256)) != base
    assert key(data, mining=replace(build.MiningSettings(), pool=31)) != base


def test_the_base_weights_and_the_code_version_move_the_key(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = key(data)
    monkeypatch.setattr(mf, "CODE_VERSION", "test")
    assert key(data) != base
    monkeypatch.undo()
    weights = tmp_path / "weights"
    shutil.copytree(build.base_folder(), weights, ignore=shutil.ignore_patterns("model.safetensors"))
    (weights / "model.safetensors").write_bytes(b"other weights")
    monkeypatch.setattr(build, "base_folder", lambda: weights)
    assert key(data) != base


def shipped_folder(folder: Path, data: Path) -> Path:
    """A model folder whose manifest names the current inputs, as `clear-rag train` leaves one."""
    folder.mkdir(parents=True)
    for name in build.SHIPPED:
        (folder / name).write_text(f"stand-in {name}", encoding="utf-8")
    files = {name: file_sha256(folder / name) for name in build.SHIPPED}
    mf.write_manifest(folder, {"cache_key": key(data), "files": files, "steps": 1, "pairs": 2})
    return folder


def refuse_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def trained(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained although the folder is current")

    monkeypatch.setattr("clear_rag.train.require_torch", trained)


def test_a_current_folder_is_not_trained(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = shipped_folder(tmp_path / "model", data)
    refuse_training(monkeypatch)
    manifest, trained = build_reranker(out=folder, data_folder=data, log=lambda _: None)
    assert not trained and manifest["cache_key"] == key(data)


def test_a_changed_file_or_input_makes_it_stale(data: Path, tmp_path: Path) -> None:
    folder = shipped_folder(tmp_path / "model", data)
    assert mf.is_current(folder, key(data), build.SHIPPED)
    (folder / build.MODEL_FILE).write_text("damaged", encoding="utf-8")
    assert not mf.is_current(folder, key(data), build.SHIPPED)
    other = shipped_folder(tmp_path / "other", data)
    assert not mf.is_current(
        other, key(data, training=replace(CrossEncoderSettings(), seed=1)), build.SHIPPED
    )
    (other / mf.MANIFEST).write_text("{not json", encoding="utf-8")
    assert not mf.is_current(other, key(data), build.SHIPPED)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_second_materialisation_trains_nothing(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The asset twice on one instance, over a current folder: both runs keep the shipped files, and
    the data version is the inputs' cache key, so nothing downstream moves either."""
    from dagster import DagsterInstance, materialize

    from assets.resources import PathsResource
    from assets.training import model_asset

    models = tmp_path / "models"
    shipped_folder(models / build.RERANKER, data)
    before = json.loads((models / build.RERANKER / mf.MANIFEST).read_text())
    refuse_training(monkeypatch)
    asset = model_asset(build.RERANKER, "cross-encoder", build_reranker, models, data)
    assert asset.code_versions_by_key[asset.key] == f"{mf.CODE_VERSION}.{key(data)[:16]}"
    with DagsterInstance.ephemeral() as instance:
        for _ in range(2):
            result = materialize([asset], instance=instance, resources={"paths": PathsResource()})
            (event,) = result.get_asset_materialization_events()
            metadata = event.materialization.metadata
            assert metadata["trained"].value is False
            assert event.materialization.tags is not None
            assert event.materialization.tags["dagster/data_version"] == key(data)
    assert json.loads((models / build.RERANKER / mf.MANIFEST).read_text()) == before


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_without_the_data_the_asset_is_skipped(tmp_path: Path) -> None:
    from dagster import materialize

    from assets.resources import PathsResource
    from assets.training import model_asset

    asset = model_asset(build.RERANKER, "cross-encoder", build_reranker, tmp_path, tmp_path / "absent")
    result = materialize([asset], resources={"paths": PathsResource()})
    (event,) = result.get_asset_materialization_events()
    assert "no SciFact" in str(event.materialization.metadata["skipped"].value)


@pytest.mark.parametrize("kind", ["cross-encoder", "bi-encoder"])
def test_a_corpus_store_is_an_input_and_a_current_folder_with_it_trains_nothing(
    kind: str, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`clear-rag train reranker --corpus STORE` (and `train embedder --corpus`): the store's digest and
    the pair settings join the key, so a second run over an unchanged store trains nothing, and a
    changed store trains again."""
    from dataclasses import asdict

    from clear_rag.train import corpus as corpus_module
    from clear_rag.train.corpus import ingest_folder
    from clear_rag.train.embedder import EmbedderSettings
    from clear_rag.train.pairs import PairSettings

    corpus = tmp_path / "corpus"
    shutil.copytree(Path(__file__).resolve().parents[2] / "corpora" / "sample", corpus)
    corpora = [corpus_module.Corpus("sample", ingest_folder(corpus, tmp_path / "store", lambda _: None))]

    def corpus_key() -> str:
        settings = CrossEncoderSettings() if kind == "cross-encoder" else EmbedderSettings()
        wanted = build.inputs(kind, data, build.MiningSettings(), settings)
        wanted["corpora"] = corpus_module.corpus_digests(corpora)
        wanted["pairs"] = asdict(PairSettings())
        return mf.cache_key(wanted)

    before = corpus_key()
    assert before != key(data)
    folder = shipped_folder(tmp_path / "model", data)
    files = {name: file_sha256(folder / name) for name in build.SHIPPED}
    mf.write_manifest(folder, {"cache_key": before, "files": files, "steps": 1, "pairs": 2})
    refuse_training(monkeypatch)
    builder = build_reranker if kind == "cross-encoder" else build_embedder
    manifest, trained = builder(out=folder, data_folder=data, corpora=corpora, log=lambda _: None)
    assert not trained and manifest["cache_key"] == before
    (corpus / "new.md").write_text("# Saddles\n\nA saddle is set level before a ride.\n", encoding="utf-8")
    ingest_folder(corpus, tmp_path / "store", lambda _: None)
    assert corpus_key() != before


def tech_layouts() -> list[object]:
    from assets.layout import Layout

    return [Layout.load(name, embedder="hash") for name in ("tech", "tech-expansion")]


ADAPTATION_KEYS = [
    "tech/adapted_reranker",
    "tech/adaptation",
    "tech/adapted_embedder",
    "tech/embedder_adaptation",
]


def test_suites_over_one_store_share_one_adapted_reranker_and_embedder() -> None:
    from assets.training import adaptation_assets

    keys = {d.key.to_user_string() for d in adaptation_assets(tech_layouts())}  # type: ignore[arg-type]
    assert keys == set(ADAPTATION_KEYS)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_without_torch_the_adaptation_is_skipped_and_nothing_is_measured(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a machine without the train extra every adaptation asset succeeds, says why it did nothing,
    and leaves no model folder and no result file."""
    from dagster import materialize

    from assets.resources import EmbedderResource, PathsResource
    from assets.training import ADAPTATIONS, adaptation_assets
    from clear_rag.errors import ModelError
    from clear_rag.eval.stores import fill_store, store_dir

    (layout, _) = tech_layouts()
    suite = layout.suite  # type: ignore[attr-defined]
    chunking = next(r for r in suite.rows if r.name == suite.baseline).config.chunking
    fill_store(suite, chunking, tmp_path / "stores", None)[0].close()

    def no_torch() -> None:
        raise ModelError("training needs torch, which is not installed", field="train", fix="install it")

    monkeypatch.setattr("clear_rag.train.require_torch", no_torch)
    paths = PathsResource(store_root=str(tmp_path / "stores"), results_dir=str(tmp_path / "results"))
    result = materialize(
        adaptation_assets([layout], data),  # type: ignore[list-item]
        resources={"paths": paths, "embedder": EmbedderResource(name="hash")},
        selection=ADAPTATION_KEYS,
    )
    skipped = {
        e.asset_key.to_user_string(): str(e.materialization.metadata["skipped"].value)
        for e in result.get_asset_materialization_events()
        if e.asset_key is not None
    }
    assert "torch" in skipped["tech/adapted_reranker"] and "torch" in skipped["tech/adapted_embedder"]
    assert "adapted-reranker" in skipped["tech/adaptation"]
    assert "adapted-embedder" in skipped["tech/embedder_adaptation"]
    assert not (tmp_path / "results").exists()
    for adaptation in ADAPTATIONS:
        assert not (
            store_dir(suite, chunking, tmp_path / "stores") / adaptation.folder / mf.MANIFEST
        ).exists()
