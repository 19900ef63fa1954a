"""The shape of a suite's result file (``results/<suite>.json``, written by ``clear_rag.results.document``),
and the base every result shape shares: every key declared, no other allowed, strict types, frozen.
``clear_rag.results.schema`` checks a file against the shape it claims.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from clear_rag.eval import significance


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def shape_of_record(record: type) -> type[Shape]:
    """The shape of a record the code itself builds and writes (a dataclass): its fields and their
    types, read from the record, so the file's shape cannot drift from the code that writes it."""
    hints = typing.get_type_hints(record)
    fields: dict[str, Any] = {name: (kind, ...) for name, kind in hints.items()}
    return create_model(record.__name__, __base__=Shape, __doc__=record.__doc__, **fields)


if TYPE_CHECKING:
    Comparison = Shape
else:
    # one metric of a row against another: the paired difference, its interval, the sign test's p and
    # the questions that went up, down or neither (``clear_rag.eval.significance.Comparison``)
    Comparison = shape_of_record(significance.Comparison)


Comparisons = dict[str, dict[str, Comparison]]  # against what (baseline, previous, ...) -> metric -> it


class Subset(Shape):
    questions: int
    metrics: dict[str, float]
    comparisons: Comparisons


class Lost(Shape):
    """Where a question's labelled passage was lost (``clear_rag.eval.loss``)."""

    verdict: str
    stage: str | None
    ranks: dict[str, int | None]


class Question(Shape):
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


class Reused(Shape):
    logits: int
    reused: int


class Row(Shape):
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


class Source(Shape):
    path: str
    sha256: str


class Golden(Source):
    questions: int
    categories: dict[str, int]


class Training(Source):
    split: str
    questions: dict[str, int]


class Skipped(Shape):
    name: str
    reason: str


class SuiteResult(Shape):
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
    command: str | None = None  # None only where every row was merged by a command of its own
    versions: dict[str, str] | None = Field(default=None)

    @model_validator(mode="after")
    def _every_row_has_its_command(self) -> SuiteResult:
        """Each row was made by the suite's ``command`` or by its own (``row_commands``), so the page
        that names the command behind each file never has to guess one."""
        own = self.row_commands or {}
        if self.command is None and any(row.name not in own for row in self.rows):
            orphans = ", ".join(row.name for row in self.rows if row.name not in own)
            raise ValueError(f"records no command, and no row command made the rows {orphans}")
        return self


class Open(Shape):
    """A shape that also holds keys named by the data (a row of the check names its metric)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
