"""The models shipped in clear_rag/models load by name, with no torch, and rank as trained."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clear_rag import models
from clear_rag.hashing import file_sha256
from clear_rag.providers.select import make_reranker
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


def test_the_shipped_folder_holds_what_its_manifest_names() -> None:
    folder = models.FOLDER / build.RERANKER
    manifest = json.loads((folder / mf.MANIFEST).read_text(encoding="utf-8"))
    for name, digest in manifest["files"].items():
        assert file_sha256(folder / name) == digest, f"{name} differs from its manifest"
    assert manifest["name"] == build.RERANKER and manifest["inputs"]["kind"] == "cross-encoder"
    # int8 ranks broadly as the fp32 torch model did (tau 0.72 for the shipped file; see the README)
    assert manifest["int8_check"]["mean_kendall_tau"] > 0.5


@pytest.mark.slow
def test_the_shipped_reranker_loads_by_name_and_ranks_the_relevant_abstract_first() -> None:
    reranker = make_reranker(build.RERANKER)
    assert reranker.name == build.RERANKER and reranker.version == models.version(
        models.manifest(build.RERANKER)
    )
    logits = reranker.score(CLAIM, [UNRELATED, RELEVANT])
    assert logits.shape == (2,) and np.isfinite(logits).all()
    assert logits[1] > logits[0]
