"""The typed shapes of result files, checked whenever one is read or written (``check_document``, which
``clear_rag.results.files`` calls): a suite's (``results/<suite>.json``, ``clear_rag.results.document``
writes it), the technique check's agreement (``results/check/``), a training run's manifest
(``results/training/`` and each model folder's ``training.json``), the support check's calibration
(``results/calibration/``), a benchmark's (``results/bench/``: where and how it ran, then figures each
benchmark names) and the parse scores (``results/parse.json``). A suite's chat generations are a cache
with a reader of its own (``clear_rag.generate.cache``), not a result.

Every key is declared and no other is allowed, so a hand edit, a typo or a file of another shape is
refused with the place it went wrong (``rows[3].questions[12].metrics``), rather than read as a
missing figure somewhere downstream. The models check; the code around them still passes the plain
dicts, which the models describe one for one. Every file records ``command``, the command that wrote
it (a suite's rows merged by commands of their own record those), which ``clear_rag.report.commands``
names on the reproduce page; new files record ``versions`` too, the versions of the libraries that
computed their numbers (files written before that hold none).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from clear_rag.errors import InputError
from clear_rag.eval import significance


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _shape_of(record: type) -> type[_Shape]:
    """The shape of a record the code itself builds and writes (a dataclass): its fields and their
    types, read from the record, so the file's shape cannot drift from the code that writes it."""
    hints = typing.get_type_hints(record)
    fields: dict[str, Any] = {name: (kind, ...) for name, kind in hints.items()}
    return create_model(record.__name__, __base__=_Shape, __doc__=record.__doc__, **fields)


if TYPE_CHECKING:
    Comparison = _Shape
else:
    # one metric of a row against another: the paired difference, its interval, the sign test's p and
    # the questions that went up, down or neither (``clear_rag.eval.significance.Comparison``)
    Comparison = _shape_of(significance.Comparison)


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


class _Open(_Shape):
    """A shape that also holds keys named by the data (a row of the check names its metric)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class Verdict(_Open):
    """One row of the technique check, on real questions or probes, against hybrid rrf: its metric
    (a key named by the metric), and, for a row that is not the baseline, the paired difference, its
    interval, the sign test's p and the verdict; on SciFact its ``seen`` and ``unseen`` parts."""

    name: str | None = None  # the parts of a row are the row's
    difference: float | None = None
    ci: list[float] | None = None
    p: float | None = None
    verdict: str | None = None
    by_subset: dict[str, Verdict] | None = None


class Agreement(_Shape):
    kendall_tau: float | None
    rows: int
    verdicts: int
    verdicts_agree: int
    helps_or_hurts_agree: int


class CheckedSuite(_Shape):
    suite: str
    metric: str
    questions: int
    probes: int
    agreement: Agreement
    real: list[Verdict]
    probe: list[Verdict]


class AgreementResult(_Shape):
    kind: Literal["check-agreement"]
    command: str
    date: str
    embedder: str
    reranker: str
    settings: dict[str, Any]
    suites: list[CheckedSuite]
    versions: dict[str, str] | None = None  # the first files recorded none


class TrainingRun(_Shape):
    """A model's ``training.json`` and its copy under ``results/training/``."""

    kind: Literal["cross-encoder", "bi-encoder"]
    name: str
    base_model: str
    objective: str
    cache_key: str
    inputs: dict[str, Any]
    files: dict[str, str]
    claims: int
    claims_trained: int | None = None
    pseudo_queries: dict[str, int] | None = None
    negatives_file: str | None = None
    steps: int
    pairs: int
    loss: list[dict[str, float]]
    int8_check: dict[str, float]
    train_seconds: float
    wall_seconds: float
    command: str
    date: str
    versions: dict[str, str]


class Calibration(_Shape):
    """The support check's calibration of a cross-encoder (``clear-rag train support``)."""

    name: str
    model: str
    source: str
    command: str
    date: str
    data: dict[str, str]
    fitted_on: dict[str, Any]
    logit_weight: float
    coverage_weight: float
    bias: float
    in_sample: dict[str, float]
    held_out: dict[str, float]
    versions: dict[str, str] | None = None


class Machine(_Shape):
    python: str
    machine: str
    cpus: int | None


class BenchResult(_Open):
    """A benchmark's file (``results/bench/<name>.json``, ``bench/common.write_result``): where, when, by
    what command and with which library versions it ran, then its own figures, whose keys each
    benchmark names (its renderer in ``clear_rag.report.bench`` reads them)."""

    benchmark: str
    date: str
    commit: str | None
    python: str
    machine: str
    cpus: int | None
    command: str
    versions: dict[str, str] | None = None  # the first files recorded none


class Counts(_Shape):
    tokens_parsed: int
    tokens_truth: int
    tokens_matched: int
    tokens_in_order: int
    cells_truth: int
    cells_in_tables: int
    cells_anywhere: int
    furniture_on_pages: int
    furniture_leaked: int


class ParseScores(_Shape):
    """One document's parse metrics, or a backend's over all of them (``DocumentScore.to_dict``)."""

    words_precision: float
    words_recall: float
    words_f1: float
    order: float
    cells_in_tables: float
    cells_anywhere: float
    furniture_leakage: float
    pages: int
    seconds: float
    pages_per_second: float
    counts: Counts
    error: str | None = None  # the parser refused the file: scored as an empty parse


class _Empty(_Shape):
    """``{}``: a part with nothing in it (every key is refused)."""


class ParseBackend(_Shape):
    """One backend's run: its version, overall and per-document scores; or why it was not run."""

    version: str | None = None
    overall: ParseScores | _Empty | None = None  # {} where no document was scored
    documents: dict[str, ParseScores] | None = None
    not_run: str | None = None


class ParseVersions(_Shape):
    clear_rag: str | None = Field(alias="clear-rag")
    pdfplumber: str | None
    pdfminer_six: str | None = Field(alias="pdfminer.six")
    pypdfium2: str | None
    parsers: dict[str, str]


class ParseResult(_Shape):
    """``results/parse.json`` (``clear-rag parse-eval --save-results``)."""

    suite: Literal["parse"]
    date: str
    command: str
    versions: ParseVersions
    machine: Machine
    backends: dict[str, ParseBackend]


def shape_of(document: object) -> type[_Shape] | None:
    """The shape ``document`` claims (by its ``kind``, a suite's ``suite`` and ``rows``, a benchmark's
    ``benchmark``, the parse scores' ``suite: parse``); None for a file of no result shape (a suite's
    chat generations, which ``clear_rag.generate.cache`` reads and writes)."""
    if not isinstance(document, dict):
        return None
    if is_suite_result(document):
        return SuiteResult
    if "benchmark" in document:
        return BenchResult
    if document.get("suite") == "parse":
        return ParseResult
    kind = document.get("kind")
    if kind == "check-agreement":
        return AgreementResult
    if kind in ("cross-encoder", "bi-encoder"):
        return TrainingRun
    if document.get("name") == "support calibration":
        return Calibration
    return None


def check_document(document: object, path: str) -> None:
    """Refuse ``document`` unless it has the shape it claims (``shape_of``): an ``InputError`` naming
    the file, the first place it differs and how, and how many places differ."""
    shape = shape_of(document)
    if shape is None:
        return
    try:
        shape.model_validate(document)
    except ValidationError as err:
        faults = err.errors()
        first = faults[0]
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        raise InputError(
            f"is not in the shape of {_NAMED[shape]}: {_place(first['loc'])}: {first['msg']}{more}",
            path=path,
            fix="Regenerate it with the command that wrote it (site/reproduce.md names each); "
            "result files are written by clear-rag, never by hand",
        ) from None


def is_suite_result(document: object) -> bool:
    """Whether ``document`` claims to be a suite's result file (a ``suite`` and ``rows``)."""
    return isinstance(document, dict) and "suite" in document and "rows" in document


def _place(location: tuple[int | str, ...]) -> str:
    """``('rows', 3, 'questions', 12, 'metrics')`` as ``rows[3].questions[12].metrics``."""
    said = ""
    for part in location:
        said += f"[{part}]" if isinstance(part, int) else (f".{part}" if said else str(part))
    return said or "the document"


_NAMED: dict[type[_Shape], str] = {
    SuiteResult: "a suite's result file",
    AgreementResult: "the technique check's agreement file",
    TrainingRun: "a training run's manifest",
    Calibration: "a support calibration",
    BenchResult: "a benchmark's file",
    ParseResult: "the parse scores",
}
