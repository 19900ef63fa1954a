"""What the Results view reads, as plain functions of a results folder or a result document: the Results
API (``clear_rag.web.results``) answers them over HTTP and the static export (``clear_rag.results.export``)
writes them to files, so a page on the site and the page of ``clear-rag serve`` cannot disagree.

Each function returns the JSON document of one endpoint, and ``encode`` is the one way an answer
becomes bytes (the API's responses and the exported files both go through it). Errors are
``ClearRagError``: a document missing a field the view needs is a ``ResultsQueryError`` naming the
file, not a ``KeyError`` from deep inside.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from clear_rag.errors import ResultsQueryError
from clear_rag.results.files import read_result
from clear_rag.results.pinned import against_pinned
from clear_rag.results.pinned import moves as question_moves
from clear_rag.results.queries import run_named, unreadable
from clear_rag.results.questions import questions as question_words


def encode(answer: Any) -> bytes:
    """An answer as the bytes sent or written: compact UTF-8 JSON in the answer's own key order (the
    order the view shows a config diff in), no NaN. Starlette's ``JSONResponse`` encodes the same way."""
    text = json.dumps(answer, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
    return text.encode()


def files(results_dir: Path) -> dict[str, Any]:
    """``GET /api/results``: every result file's summary (``summary``), and under ``unreadable`` each
    file DuckDB cannot read, named with why. One such file used to fail the whole list with a 422."""
    found = [
        {
            "file": name.removesuffix(".json"),
            "error": f"{name}: is left out of the list: DuckDB cannot read it ({reason}). "
            "Regenerate it, or move it out of the results folder",
        }
        for name, reason in unreadable(results_dir)
    ]
    return {"files": summary(results_dir), **({"unreadable": found} if found else {})}


def summary(results_dir: Path) -> list[dict[str, Any]]:
    """Per file that DuckDB can read: suite, date, baseline, headline and its rows (metrics, models,
    date, config hash, and how many questions were lost at each stage), read through the named queries;
    none for no files."""
    if not any(results_dir.glob("*.json")):
        return []
    listed = _records(*run_named("suites", results_dir, skip_unreadable=True))
    rows = _records(*run_named("rows", results_dir, skip_unreadable=True))
    lost = {(r["file"], r["row"]): r for r in _records(*run_named("lost", results_dir, skip_unreadable=True))}
    out = {f["file"]: {**f, "rows": []} for f in listed}
    for r in rows:
        columns = list(r)
        metric_names = columns[columns.index("headline") + 1 : columns.index("config")]
        losses = lost.get((r["file"], r["row"]), {})
        out[r["file"]]["rows"].append(
            {
                "name": r["row"],
                "config_hash": r["config_hash"],
                "date": r["date"],
                "questions": r["questions"],
                "models": {k: r[k] for k in ("embedder", "reranker", "chat") if r[k] is not None},
                "metrics": {m: r[m] for m in metric_names if r[m] is not None},
                "lost": {k: v for k, v in losses.items() if k not in ("file", "suite", "row", "questions")},
            }
        )
    return list(out.values())


def _records(columns: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [
        {c: v.isoformat() if isinstance(v, datetime) else v for c, v in zip(columns, row, strict=True)}
        for row in rows
    ]


def pinned(file: str, document: Mapping[str, Any], row: str) -> dict[str, Any]:
    """``GET /api/results/FILE/pinned/ROW``: every other row of ``file`` read against ``row``."""
    with in_shape(file):
        read = against_pinned(document, row, source=f"{file}.json")
    return {"file": file, "pinned": row, "metric_names": document.get("metric_names", []), "rows": read}


def moves(file: str, document: Mapping[str, Any], pinned: str, row: str, metric: str) -> dict[str, Any]:
    """``GET /api/results/FILE/moves?pinned=&row=&metric=``: the questions whose ``metric`` differs
    between the two rows, and how many went up and down."""
    with in_shape(file):
        found = question_moves(document, pinned, row, metric, source=f"{file}.json")
    ups = sum(m["direction"] == "up" for m in found)
    return {
        "file": file,
        "pinned": pinned,
        "row": row,
        "metric": metric,
        "up": ups,
        "down": len(found) - ups,
        "moves": found,
    }


def questions(file: str, document: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """``GET /api/results/FILE/questions``: each question's words and labelled quotes, from the labels
    ``file`` names (paths relative to ``root``, the folder the suite ran in); see
    ``clear_rag.results.questions``."""
    with in_shape(file):
        return question_words(file, document, root)


def measured_rows(document: Mapping[str, Any]) -> list[str]:
    """The names of the rows that can be pinned (measured ones, each once), in the file's order."""
    return list(dict.fromkeys(r["name"] for r in document["rows"] if "skipped" not in r))


def shape_error(file: str, err: Exception) -> ResultsQueryError:
    """The error for a hand-edited or older file lacking a field the view needs (a ``KeyError``,
    ``TypeError`` or ``ValueError`` met while reading it)."""
    return ResultsQueryError(
        f"is not in the shape of a result file ({type(err).__name__}: {err})",
        path=f"{file}.json",
        fix="Regenerate it with `clear-rag ablate SUITE --save-results`",
    )


@contextmanager
def in_shape(file: str) -> Iterator[None]:
    """Turn a missing or mistyped field met while reading ``file`` into its ``shape_error``."""
    try:
        yield
    except (KeyError, TypeError, ValueError) as err:
        raise shape_error(file, err) from None


CHECK_FILE = "answers"  # the graded-answers suite, where the support check is measured


def support_check(results_dir: Path, model: str) -> dict[str, Any] | None:
    """How the support check on ``model`` (``name@version``) agreed with graded answers: the first
    row of ``results_dir/answers.json`` whose answers it checked, with its counts and the share of
    answers graded wrong beside its precision (what flagging every answer would score). ``None`` when
    no graded row was checked by that model (a model measured nowhere is said to be unmeasured)."""
    path = results_dir / f"{CHECK_FILE}.json"
    if not path.is_file():
        return None
    with in_shape(CHECK_FILE):
        document = read_result(path)
        for row in document["rows"]:
            if row.get("models", {}).get("support") != model or "check precision" not in row["metrics"]:
                continue
            per_question = [q["metrics"] for q in row["questions"]]
            answered = [q for q in row["questions"] if not q.get("graded", {}).get("refused", False)]
            wrong = sum("check recall" in m for m in per_question)
            return {
                "file": f"{results_dir.name}/{CHECK_FILE}.json",  # as the project names it, no machine path
                "row": row["name"],
                "chat": row["models"].get("chat", ""),
                "answered": len(answered),
                "graded wrong": wrong,
                "flagged": sum("check precision" in m for m in per_question),
                "wrong share": round(wrong / len(answered), 4) if answered else None,
                # the questions whose context held no labelled span (or the corpus does not answer)
                "no span share": round(sum("weak recall" in m for m in per_question) / len(per_question), 4)
                if per_question
                else None,
                **{k: row["metrics"][k] for k in CHECK_SUMMARY if k in row["metrics"]},
            }
    return None


CHECK_SUMMARY = ("check precision", "check recall", "weak precision", "weak recall")
