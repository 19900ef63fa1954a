"""The training data: SciFact's train claims, their judged abstracts, and the files' digests.

SciFact (Wadden et al. 2020) in BEIR's layout: ``corpus.jsonl`` (5,183 abstracts), ``queries.jsonl``
and ``qrels/train.tsv`` (809 claims, each with one or more supporting or refuting abstracts). The
abstracts are read through ``clear_rag.eval.beir.documents``, so a training passage is exactly the
text the reranker sees at evaluation time (title, a blank line, the abstract).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clear_rag.eval import beir
from clear_rag.hashing import file_sha256

# External data only through ../shared beside the repository root, as golden/suites/beir-scifact.yaml
# reaches it; relative, so the same path works on every machine that lays shared/ beside the repo.
SCIFACT = Path("../shared/data/beir-scifact")
SPLIT = "train"


@dataclass(frozen=True, slots=True)
class TrainingData:
    """The claims of one qrels split, their relevant abstracts, and every abstract's text by id."""

    folder: Path
    claims: dict[str, str]  # query id -> claim
    positives: dict[str, dict[str, float]]  # query id -> {doc id: grade}
    texts: dict[str, str]  # doc id -> canonical text

    def hashes(self) -> dict[str, str]:
        """SHA-256 of each file the training reads: what its cache key and manifest record."""
        return data_hashes(self.folder)


def data_hashes(folder: Path, split: str = SPLIT) -> dict[str, str]:
    """The digests of ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` under ``folder``."""
    files = {
        beir.CORPUS: folder / beir.CORPUS,
        beir.QUERIES: folder / beir.QUERIES,
        f"qrels/{split}.tsv": beir.qrels_path(folder, split),
    }
    return {name: file_sha256(path) for name, path in files.items()}


def load(folder: str | Path = SCIFACT, *, split: str = SPLIT) -> TrainingData:
    """The split's claims and judgements and the corpus texts (``InputError`` if the folder is not BEIR)."""
    dataset = beir.load(folder, split=split)
    texts = {doc.id: doc.text for doc in beir.documents(dataset)}
    return TrainingData(Path(folder), dict(dataset.queries), dataset.qrels, texts)
