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

from pydantic import ValidationError

from clear_rag.errors import InputError
from clear_rag.results.records import AgreementResult, BenchResult, Calibration, ParseResult, TrainingRun
from clear_rag.results.shapes import Shape, SuiteResult


def shape_of(document: object) -> type[Shape] | None:
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


_NAMED: dict[type[Shape], str] = {
    SuiteResult: "a suite's result file",
    AgreementResult: "the technique check's agreement file",
    TrainingRun: "a training run's manifest",
    Calibration: "a support calibration",
    BenchResult: "a benchmark's file",
    ParseResult: "the parse scores",
}
