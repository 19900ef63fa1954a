"""A suite's questions and what judges them, whatever the suite is built on.

A suite over a corpus folder has a golden file: questions labelled with quotes, resolved to spans.
A BEIR suite has its judged queries: documents judged by the qrels, and (``spans: true``, where the
dataset has a rationale file) sentences judged as spans. Both become ``Labels``, which the one
evaluation runner scores: span metrics for questions with span labels, document metrics for
questions with qrels.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clear_rag.eval import beir
from clear_rag.eval.golden import Question, load_golden
from clear_rag.eval.subsets import TrainingSubsets, training_subsets
from clear_rag.eval.suite import Suite

NO_RATIONALE = "no rationale"  # a judged query without rationale sentences (SciFact: not enough info)
ALL = "all"  # the one category of a suite judged by qrels alone


@dataclass(frozen=True, slots=True)
class Labels:
    """The questions of a suite, their span labels (``Question.labels``, possibly empty) and their
    document judgements (``qrels`` by question id, empty for a golden file)."""

    name: str
    paths: tuple[str, ...]  # the files the labels were read from
    sha256: str  # of those files' bytes: a result records which labels it was measured on
    questions: tuple[Question, ...]
    qrels: Mapping[str, Mapping[str, float]]
    # a suite with ``training_split``: each question seen or unseen by that training, and from what
    training: TrainingSubsets | None = field(default=None)

    def categories(self) -> list[str]:
        return sorted({q.category for q in self.questions})

    @property
    def spans(self) -> bool:
        return any(q.labels for q in self.questions)


def label_files(suite: Suite) -> list[Path]:
    """What the labels are read from: the golden file, or a BEIR folder's qrels (and rationales)."""
    if suite.beir is None:
        return [suite.golden or Path()]
    files = [beir.qrels_path(suite.beir, suite.split)]
    if suite.spans and (suite.beir / beir.RATIONALES).is_file():
        files.append(suite.beir / beir.RATIONALES)
    return files


def labels_in(suite: Suite, texts: Mapping[str, str]) -> Labels:
    """The suite's labels, span labels resolved against the canonical ``texts`` (doc id -> text)."""
    files = label_files(suite)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    if suite.beir is None:
        golden = load_golden(suite.golden or Path(), texts)
        return Labels(golden.name, (str(suite.golden),), golden.sha256, golden.questions, {})
    dataset = beir.load(suite.beir, split=suite.split)
    spans = beir.rationales(dataset, dict(texts)) if len(files) > 1 else {}
    questions = []
    for qid in sorted(dataset.queries, key=lambda q: (len(q), q)):
        rationale = spans.get(qid)
        if rationale is not None:
            category, labels = rationale.verdict, rationale.labels
        else:
            category, labels = (NO_RATIONALE if spans else ALL), ()
        questions.append(Question(qid, dataset.queries[qid], category, "", labels))
    training = (
        training_subsets(
            dataset.qrels, suite.training_split, beir.qrels_path(suite.beir, suite.training_split)
        )
        if suite.training_split is not None
        else None
    )
    return Labels(dataset.name, tuple(map(str, files)), digest, tuple(questions), dataset.qrels, training)
