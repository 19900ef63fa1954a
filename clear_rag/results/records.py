"""The shapes of the result files other than a suite's: the technique check's agreement
(``results/check/``), a training run's manifest (``results/training/`` and each model folder's
``training.json``), the support check's calibration (``results/calibration/``), a benchmark's
(``results/bench/``) and the parse scores (``results/parse.json``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from clear_rag.results.shapes import Open, Shape


class Verdict(Open):
    """One row of the technique check, on real questions or probes, against hybrid rrf: its metric
    (a key named by the metric), and, for a row that is not the baseline, the paired difference, its
    interval, the sign test's p and the verdict; on SciFact its ``seen`` and ``unseen`` parts."""

    name: str | None = None  # the parts of a row are the row's
    difference: float | None = None
    ci: list[float] | None = None
    p: float | None = None
    verdict: str | None = None
    by_subset: dict[str, Verdict] | None = None


class Agreement(Shape):
    kendall_tau: float | None
    rows: int
    verdicts: int
    verdicts_agree: int
    helps_or_hurts_agree: int


class CheckedSuite(Shape):
    suite: str
    metric: str
    questions: int
    probes: int
    agreement: Agreement
    real: list[Verdict]
    probe: list[Verdict]


class AgreementResult(Shape):
    kind: Literal["check-agreement"]
    command: str
    date: str
    embedder: str
    reranker: str
    settings: dict[str, Any]
    suites: list[CheckedSuite]
    versions: dict[str, str] | None = None  # the first files recorded none


class TrainingRun(Shape):
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


class Calibration(Shape):
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


class Machine(Shape):
    python: str
    machine: str
    cpus: int | None


class BenchResult(Open):
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


class Counts(Shape):
    tokens_parsed: int
    tokens_truth: int
    tokens_matched: int
    tokens_in_order: int
    cells_truth: int
    cells_in_tables: int
    cells_anywhere: int
    cells_in_rows: int | None = None  # files written before issue 31 have none
    furniture_on_pages: int
    furniture_leaked: int
    headings_truth: int | None = None  # these three: none before issue 31
    headings_parsed: int | None = None
    headings_matched: int | None = None


class ParseScores(Shape):
    """One document's parse metrics, or a backend's over all of them (``DocumentScore.to_dict``)."""

    words_precision: float
    words_recall: float
    words_f1: float
    order: float
    # None: not measured (the truth lists no table, the pages print no furniture; the drawn cases)
    cells_in_tables: float | None
    cells_anywhere: float | None
    cells_in_rows: float | None = None  # the truth's table rows recovered whole; none before issue 31
    furniture_leakage: float | None
    headings_recall: float | None = None  # none where the truth lists no headings, or before issue 31
    headings_precision: float | None = None
    pages: int
    seconds: float
    pages_per_second: float
    counts: Counts
    error: str | None = None  # the parser refused the file: scored as an empty parse


class Empty(Shape):
    """``{}``: a part with nothing in it (every key is refused)."""


class ParseBackend(Shape):
    """One backend's run: its version, overall and per-document scores; or why it was not run."""

    version: str | None = None
    overall: ParseScores | Empty | None = None  # {} where no document was scored
    documents: dict[str, ParseScores] | None = None
    not_run: str | None = None


class ParseVersions(Shape):
    clear_rag: str | None = Field(alias="clear-rag")
    pdfplumber: str | None
    pdfminer_six: str | None = Field(alias="pdfminer.six")
    pypdfium2: str | None
    parsers: dict[str, str]


class ScannedParse(Shape):
    """The backends on scanned renders of the same PDFs (pages as images, read by OCR), scored against
    the same truth; or why they were not run (no tesseract)."""

    dpi: int
    folder: str | None = None
    engine: str | None = None
    backends: dict[str, ParseBackend] | None = None
    not_run: str | None = None


class CasesParse(Shape):
    """The backends on the parse suite's drawn cases (``clear_rag.eval.drawn.suite``), one document per
    case, scored against the truth each was drawn with; the cases that could not be drawn, and why."""

    folder: str
    cases: dict[str, str]  # each case's name and what it draws
    backends: dict[str, ParseBackend]
    not_drawn: dict[str, str] | None = None
    # where the part was written alone (``parse-eval --cases-only``): its own command and date
    command: str | None = None
    date: str | None = None


class ParseResult(Shape):
    """``results/parse.json`` (``clear-rag parse-eval --save-results``)."""

    suite: Literal["parse"]
    date: str
    command: str
    versions: ParseVersions
    machine: Machine
    backends: dict[str, ParseBackend]
    scanned: ScannedParse | None = None
    cases: CasesParse | None = None
