"""Which test questions a model trained here has seen the answer of: the "seen" and "unseen" subsets.

SciFact's train and test claims share one corpus, so a test claim's relevant abstract can be a positive
of a train claim, and a model trained on the train claims has then learnt to rank that abstract. A
suite that names the split its trained models saw (``training_split: train``) has every question
assigned from the data files, never typed:

- ``seen``: one of its relevant documents (its qrels, grade > 0) is a positive (grade > 0) of some
  question of the training split's qrels;
- ``unseen``: none is (a question with no relevant document is unseen too).

Every row is then also reported on each subset, so that an in-domain gain is not read as a general one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.beir import read_qrels
from clear_rag.hashing import file_sha256

SEEN = "seen"
UNSEEN = "unseen"
SUBSETS = (SEEN, UNSEEN)


def positives(qrels: Mapping[str, Mapping[str, float]]) -> set[str]:
    """Every document some question of ``qrels`` grades above 0."""
    return {doc for grades in qrels.values() for doc, grade in grades.items() if grade > 0}


def assign(
    qrels: Mapping[str, Mapping[str, float]], training: Mapping[str, Mapping[str, float]]
) -> dict[str, str]:
    """Each question of ``qrels``: ``seen`` if any of its relevant documents (grade > 0) is a positive
    of ``training``, else ``unseen``."""
    taught = positives(training)
    return {
        qid: SEEN if any(grade > 0 and doc in taught for doc, grade in grades.items()) else UNSEEN
        for qid, grades in qrels.items()
    }


@dataclass(frozen=True, slots=True)
class TrainingSubsets:
    """The suite's ``training_split``, the qrels file it was read from, and each question's subset."""

    split: str
    path: str
    sha256: str
    by_question: Mapping[str, str]

    def counts(self) -> dict[str, int]:
        return {name: sum(s == name for s in self.by_question.values()) for name in SUBSETS}

    def to_dict(self) -> dict[str, Any]:
        """What a result file records of it (``training``)."""
        return {"split": self.split, "path": self.path, "sha256": self.sha256, "questions": self.counts()}


def training_subsets(qrels: Mapping[str, Mapping[str, float]], split: str, path: Path) -> TrainingSubsets:
    """The subsets of the questions of ``qrels`` against the training split ``split``, whose qrels
    file is ``path`` (read here)."""
    if not path.is_file():
        raise InputError(
            "is missing",
            path=str(path),
            fix=f"The suite's training_split ({split!r}) needs its qrels file beside the test split's",
        )
    return TrainingSubsets(split, str(path), file_sha256(path), assign(qrels, read_qrels(path)))
