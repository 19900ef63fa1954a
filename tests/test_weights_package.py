"""The weights are a distribution of their own (models/, ``clear-rag-models``): none in the code
package, none twice, no training artefact shipped, and a version that follows the manifests."""

from __future__ import annotations

import fnmatch
import importlib.metadata
import importlib.util
import json
import re
import shutil
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from clear_rag import models
from clear_rag.errors import ModelMissing
from clear_rag.hashing import file_sha256
from clear_rag.providers import select
from clear_rag.providers.select import make_embedder, make_reranker

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "models"
VERSION = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,2}\+[0-9a-f]{8}$")


def load_package(folder: Path) -> ModuleType:
    """``clear_rag_models`` imported from ``folder``, apart from the installed one."""
    spec = importlib.util.spec_from_file_location(f"weights_{id(folder)}", folder / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_code_package_holds_no_weights() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["clear_rag"]
    assert not [pattern for pattern in data if "onnx" in pattern or "models" in pattern]
    assert not list((ROOT / "clear_rag").rglob("*.onnx"))


def test_every_file_of_the_weights_is_shipped_once_or_kept_back_as_a_training_artefact() -> None:
    config = tomllib.loads((WEIGHTS / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["setuptools"]["package-data"]["clear_rag_models"]
    kept_back = config["tool"]["setuptools"]["exclude-package-data"]["clear_rag_models"]
    digests: dict[str, str] = {}
    for path in sorted((WEIGHTS / "clear_rag_models").glob("*/*")):
        relative = path.relative_to(WEIGHTS / "clear_rag_models").as_posix()
        if any(fnmatch.fnmatch(relative, pattern) for pattern in kept_back):
            assert path.name == "hard_negatives.json", f"{relative}: only training artefacts are kept back"
            continue
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in shipped), f"{relative} is not shipped"
        digest = file_sha256(path)
        assert digest not in digests, f"{relative} is {digests.get(digest)} again"
        digests[digest] = relative


def test_the_version_is_the_manifests_and_changes_with_a_cache_key(tmp_path: Path) -> None:
    package = load_package(WEIGHTS / "clear_rag_models")
    assert VERSION.match(package.__version__)
    copy = tmp_path / "clear_rag_models"
    shutil.copytree(WEIGHTS / "clear_rag_models", copy, ignore=shutil.ignore_patterns("*.onnx"))
    assert load_package(copy).__version__ == package.__version__  # the weights' files are not read
    manifest = copy / models.RERANKERS[0] / models.MANIFEST
    record = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**record, "cache_key": "0" * 64}), encoding="utf-8")
    retrained = load_package(copy).__version__
    assert VERSION.match(retrained) and retrained != package.__version__


def test_the_installed_weights_are_this_checkout_s() -> None:
    """``make test`` installs models/ (editable): its recorded version is the one its manifests give
    now, or a retrain was not reinstalled."""
    try:
        installed = importlib.metadata.version("clear-rag-models")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("clear-rag-models is not installed (make test installs it)")
    assert installed == load_package(WEIGHTS / "clear_rag_models").__version__
    assert (WEIGHTS / "clear_rag_models").resolve() == models.FOLDER


@pytest.mark.parametrize(
    "load",
    [
        lambda: make_reranker(models.RERANKERS[0]),
        lambda: make_embedder(models.EMBEDDERS[0]),
        lambda: make_embedder("minilm-q8"),
    ],
    ids=["reranker", "embedder", "minilm-q8"],
)
def test_without_the_weights_a_shipped_model_says_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch, load: object
) -> None:
    """The code package alone installs and runs; a model of the weights asked for names the package."""
    monkeypatch.setattr(models, "FOLDER", None)
    select._loaded_reranker.cache_clear()  # one loaded by an earlier test would be given back as it is
    with pytest.raises(ModelMissing, match=r"clear-rag-models.*pip install \./models"):
        load()  # type: ignore[operator]


def test_ask_without_the_weights_answers_unchecked_and_says_why(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default support model is one of the weights: without them `ask` still answers (with a model
    that needs none), says the answer is not checked and how to install the weights; named with
    --support, the missing model is an error."""
    from typer.testing import CliRunner

    from clear_rag.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLEAR_RAG_SUPPORT")  # the default, not the fixture's fake
    monkeypatch.setattr(models, "FOLDER", None)
    select._loaded_reranker.cache_clear()
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hash"]).exit_code == 0
    asked = runner.invoke(app, ["ask", "brake pads", "--embedder", "hash", "--chat", "echo"])
    assert asked.exit_code == 0, asked.output
    assert "not checked for support here" in asked.output and "pip install ./models" in asked.output
    named = ["ask", "brake pads", "--embedder", "hash", "--chat", "echo", "--support", models.RERANKERS[0]]
    refused = runner.invoke(app, named)
    assert refused.exit_code != 0 and "clear-rag-models" in refused.output
