"""Writing and reading result files: the one writer every command and asset uses.

A result file is replaced atomically (``clear_rag.atomic``), so a reader (the README renderer,
DuckDB, a second process) sees the old file or the new one, never half of either, and a run that
dies while writing loses nothing that was there before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clear_rag.atomic import write_atomic
from clear_rag.errors import InputError
from clear_rag.results.schema import check_document

# the fake-provider baseline that `make test` gates on (`clear-rag ablate tech --embedder hash --bless`)
BASELINE_FAKE = Path("results") / "baseline-fake.json"


def dumps(document: Any) -> str:
    """The one JSON form of result files: one-space indent, UTF-8 kept, a trailing newline."""
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def write_result(path: Path, document: dict[str, Any]) -> None:
    """Write a result file, checked against the shape it claims first (``schema``), so a writer that
    drifts from it fails here, not in whoever reads the file next."""
    check_document(document, str(path))
    write_atomic(path, dumps(document))


def read_document(path: Path) -> dict[str, Any]:
    """Any result file (a suite's, a benchmark's, a check's, a training run's), checked against the
    shape it claims; an error naming the file where it is missing, unreadable or out of shape."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            "does not exist",
            path=str(path),
            fix="Write it with `clear-rag ablate SUITE --save-results` (or `python -m assets.run`)",
        ) from None
    except (OSError, ValueError) as err:
        raise InputError(f"cannot be read as JSON ({err})", path=str(path), fix="Regenerate it") from None
    if not isinstance(data, dict):
        raise InputError("is not a result file (not a JSON object)", path=str(path), fix="Regenerate it")
    check_document(data, str(path))
    return data


def read_result(path: Path) -> dict[str, Any]:
    """A suite's result file (``read_document``, with rows), or an error naming it and the command
    that writes it."""
    data = read_document(path)
    if not isinstance(data.get("rows"), list):
        raise InputError("is not a result file (no rows)", path=str(path), fix="Regenerate it")
    return data
