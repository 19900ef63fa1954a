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
from clear_rag.results.schema import check_suite_result, is_suite_result

# the fake-provider baseline that `make test` gates on (`clear-rag ablate tech --embedder hash --bless`)
BASELINE_FAKE = Path("results") / "baseline-fake.json"


def dumps(document: Any) -> str:
    """The one JSON form of result files: one-space indent, UTF-8 kept, a trailing newline."""
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def write_result(path: Path, document: dict[str, Any]) -> None:
    """Write a result file; a suite's is checked against its shape first (``schema``), so a writer
    that drifts from it fails here, not in whoever reads the file next."""
    if is_suite_result(document):
        check_suite_result(document, str(path))
    write_atomic(path, dumps(document))


def read_result(path: Path) -> dict[str, Any]:
    """A result file, or an error naming it and the command that writes it."""
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
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise InputError("is not a result file (no rows)", path=str(path), fix="Regenerate it")
    if is_suite_result(data):
        check_suite_result(data, str(path))
    return data
