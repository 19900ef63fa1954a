"""The models of the weights package (models/clear_rag_models) load by name, with no torch, as trained."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from clear_rag import models
from clear_rag.hashing import file_sha256
from clear_rag.providers.cross_encoder import OnnxCrossEncoder
from clear_rag.providers.select import EMBEDDERS, RERANKERS, make_embedder, make_reranker
from clear_rag.train import build
from clear_rag.train import manifest as mf

CLAIM = "Vitamin D supplementation increases bone mineral density in older adults."
RELEVANT = (
    "Effect of vitamin D on bone density in the elderly\n\nIn a randomised trial of 400 adults over 65, "
    "daily vitamin D3 raised lumbar spine bone mineral density by 1.2% against placebo after two years."
)
UNRELATED = (
    "Graphene transistors at terahertz frequencies\n\nWe report field-effect transistors made of "
    "graphene whose cut-off frequency reaches 300 GHz at room temperature."
)
SHIPPED = [*models.RERANKERS, *models.EMBEDDERS]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_folder_holds_what_its_manifest_names(name: str) -> None:
    folder = models.shipped(name)
    manifest = json.loads((folder / mf.MANIFEST).read_text(encoding="utf-8"))
    for file, digest in manifest["files"].items():
        # the tokenizer is not shipped twice: the base package's, the one training recorded, is read
        path = models.tokenizer_file(folder) if file == models.TOKENIZER else folder / file
        assert file_sha256(path) == digest, f"{file} differs from its manifest"
    assert not (folder / models.TOKENIZER).exists()
    kind = "cross-encoder" if name in models.RERANKERS else "bi-encoder"
    assert manifest["name"] == name and manifest["inputs"]["kind"] == kind
    assert manifest["cache_key"] == mf.cache_key(manifest["inputs"])


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_model_is_offered_by_name(name: str) -> None:
    assert name in (RERANKERS if name in models.RERANKERS else EMBEDDERS)


def test_the_int8_files_follow_their_torch_models() -> None:
    """What each manifest measured between the shipped int8 file and the fp32 torch model it came from."""
    reranker = models.manifest(build.RERANKER)["int8_check"]
    assert reranker["mean_kendall_tau"] > 0.8 and reranker["same_top"] >= 0.8
    embedder = models.manifest(build.EMBEDDER)["int8_check"]
    assert embedder["mean_cosine"] > 0.95 and embedder["min_cosine"] > 0.9


@pytest.mark.slow
def test_the_shipped_reranker_loads_by_name_and_ranks_the_relevant_abstract_first() -> None:
    reranker = make_reranker(build.RERANKER)
    assert reranker.name == build.RERANKER and reranker.version == models.version(
        models.manifest(build.RERANKER)
    )
    logits = reranker.score(CLAIM, [UNRELATED, RELEVANT])
    assert logits.shape == (2,) and np.isfinite(logits).all()
    assert logits[1] > logits[0]


def test_a_trained_folder_given_as_a_path_loads_as_trained(tmp_path: Path) -> None:
    """A folder `clear-rag train reranker --out` wrote is read with its manifest: the version it records
    and the length it was trained at, as the shipped one is by name."""
    copy = tmp_path / "my-reranker"
    shutil.copytree(models.shipped(build.RERANKER), copy)
    reranker = make_reranker(str(copy))
    found = models.manifest(build.RERANKER)
    assert isinstance(reranker, OnnxCrossEncoder)
    assert (reranker.name, reranker.version) == ("my-reranker", models.version(found))
    assert reranker.max_tokens == found["inputs"]["training"]["max_tokens"]


def test_a_trained_embedder_folder_given_as_a_path_loads_as_trained(tmp_path: Path) -> None:
    """A folder `clear-rag train embedder --out` (or `--corpus`) wrote is an embedder name anywhere one is
    taken, under its folder's name and its manifest's version; its vectors are the shipped one's."""
    copy = tmp_path / "my-embedder"
    shutil.copytree(models.shipped(build.EMBEDDER), copy)
    embedder = make_embedder(str(copy))
    assert (embedder.name, embedder.version) == (
        "my-embedder",
        models.version(models.manifest(build.EMBEDDER)),
    )
    shipped = make_embedder(build.EMBEDDER)
    assert np.allclose(embedder.embed([CLAIM], "query"), shipped.embed([CLAIM], "query"), atol=1e-6)


@pytest.mark.slow
def test_the_shipped_embedder_loads_by_name_and_puts_the_claim_nearest_its_abstract() -> None:
    embedder = make_embedder(build.EMBEDDER)
    assert embedder.name == build.EMBEDDER and embedder.version == models.version(
        models.manifest(build.EMBEDDER)
    )
    query = embedder.embed([CLAIM], "query")
    docs = embedder.embed([UNRELATED, RELEVANT], "document")
    assert docs.shape == (2, embedder.dim) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    cosines = docs @ query[0]
    assert cosines[1] > cosines[0]


@pytest.mark.slow
def test_a_shipped_rerankers_logit_depends_on_its_pair_alone() -> None:
    """The shipped cross-encoder is int8, quantised per call: batched, a passage's logit moved with the
    passages beside it (results/bench/batch.json). As loaded, each logit is its pair's alone, in any
    company and any order, and a second call's reused logits are the ones the model gives."""
    passages = [RELEVANT, UNRELATED, CLAIM, RELEVANT[:120], UNRELATED + " " + RELEVANT, "bone density"]
    fresh = models.shipped_reranker(build.RERANKER, memo=0)
    alone = [float(fresh.score(CLAIM, [p])[0]) for p in passages]
    rng = np.random.default_rng(7)
    for _ in range(4):
        order = rng.permutation(len(passages))[: rng.integers(2, len(passages) + 1)]
        together = fresh.score(CLAIM, [passages[i] for i in order])
        np.testing.assert_array_equal(together, [alone[i] for i in order])
    shared = make_reranker(build.RERANKER)
    assert make_reranker(build.RERANKER) is shared  # one session and one memo per process
    assert isinstance(shared, OnnxCrossEncoder)
    shared.score(CLAIM, passages)
    logits, reused = shared.score_reusing(CLAIM, passages[::-1])
    assert reused == len(passages)
    np.testing.assert_array_equal(logits, alone[::-1])
