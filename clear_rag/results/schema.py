"""The typed shape of a suite's result file (``results/<suite>.json``; ``clear_rag.results.document``
writes it), checked whenever one is read or written (``clear_rag.results.files``).

Every key is declared and no other is allowed, so a hand edit, a typo or a file of another shape is
refused with the place it went wrong (``rows[3].questions[12].metrics``), rather than read as a
missing figure somewhere downstream. The models check; the code around them still passes the plain
dicts, which the models describe one for one. ``command`` and ``versions`` are what new files record:
the command that wrote them and the versions of the libraries that computed their numbers; files
written before they were recorded hold neither.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clear_rag.errors import InputError


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Comparison(_Shape):
    """One metric of a row against another row: the paired difference, its bootstrap interval, the
    sign test's p and the questions that went up, down or neither."""

    metric: str
    against: str
    difference: float
    ci_low: float
    ci_high: float
    p_sign: float
    up: int
    down: int
    ties: int


Comparisons = dict[str, dict[str, Comparison]]  # against what (baseline, previous, ...) -> metric -> it


class Subset(_Shape):
    questions: int
    metrics: dict[str, float]
    comparisons: Comparisons


class Lost(_Shape):
    """Where a question's labelled passage was lost (``clear_rag.eval.loss``)."""

    verdict: str
    stage: str | None
    ranks: dict[str, int | None]


class Question(_Shape):
    id: str
    category: str
    subset: str | None = None
    retrieved: list[str]
    metrics: dict[str, float]
    trace: str
    first_rank: int | None = None
    covered: list[int] | None = None
    labels: int | None = None
    relevant_chunks: int | None = None
    lost: Lost | None = None
    unresolved: list[Any] | None = None
    answer: str | None = None
    graded: dict[str, Any] | None = None


class Reused(_Shape):
    logits: int
    reused: int


class Row(_Shape):
    name: str
    config: dict[str, Any]
    config_hash: str
    models: dict[str, str]
    store: str
    date: str
    corpus_sha256: str
    golden_sha256: str
    metrics: dict[str, float]
    by_category: dict[str, dict[str, float]]
    seconds_per_question: float
    questions: list[Question]
    comparisons: Comparisons
    chat: str | None = None
    against: str | None = None
    rerank_reused: Reused | None = None
    by_subset: dict[str, Subset] | None = None


class Source(_Shape):
    path: str
    sha256: str


class Golden(Source):
    questions: int
    categories: dict[str, int]


class Training(Source):
    split: str
    questions: dict[str, int]


class Skipped(_Shape):
    name: str
    reason: str


class SuiteResult(_Shape):
    suite: str
    date: str
    embedder: str | None  # None where no row searched vectors
    corpus: Source
    golden: Golden
    training: Training | None = None
    baseline: str
    headline: str
    metric_names: list[str]
    metric_questions: dict[str, int]
    skipped: list[Skipped]
    rows: list[Row]
    row_commands: dict[str, str] | None = None
    rederived_by: str | None = None
    command: str | None = None
    versions: dict[str, str] | None = Field(default=None)


def is_suite_result(document: object) -> bool:
    """Whether ``document`` claims to be a suite's result file (a ``suite`` and ``rows``)."""
    return isinstance(document, dict) and "suite" in document and "rows" in document


def check_suite_result(document: dict[str, Any], path: str) -> None:
    """Refuse ``document`` unless it has a suite result's shape: an ``InputError`` naming the file,
    the first place it differs and how, and how many places differ."""
    try:
        SuiteResult.model_validate(document)
    except ValidationError as err:
        faults = err.errors()
        first = faults[0]
        where = _place(first["loc"])
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        raise InputError(
            f"is not in the shape of a suite's result file: {where}: {first['msg']}{more}",
            path=path,
            fix="Regenerate it with the command that wrote it (site/reproduce.md names each); "
            "result files are written by clear-rag, never by hand",
        ) from None


def _place(location: tuple[int | str, ...]) -> str:
    """``('rows', 3, 'questions', 12, 'metrics')`` as ``rows[3].questions[12].metrics``."""
    said = ""
    for part in location:
        said += f"[{part}]" if isinstance(part, int) else (f".{part}" if said else str(part))
    return said or "the document"
