"""Writing and reading result files: the one writer every command and asset uses.

A result file is written whole to a temporary file beside it and renamed over the old one, so a
reader (the README renderer, DuckDB, a second process) sees the old file or the new one, never half
of either, and a run that dies while writing loses nothing that was there before.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError, StoreError


def dumps(document: Any) -> str:
    """The one JSON form of result files: one-space indent, UTF-8 kept, a trailing newline."""
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """``text`` to ``path`` by way of a temporary file in the same folder (a name of its own, so two
    writers never share one) and a rename, which is atomic within one folder: a reader sees the old
    file or the new one, never a mixture; on any failure the temporary file is removed and the old
    file kept. The one atomic writer of result files and generation caches."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise StoreError(f"cannot be written ({err})", path=str(path), fix="Check the folder") from err
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes the file private (0600); the file replaced keeps its mode, a new one is 0644
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(temporary, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(err, OSError):
            raise StoreError(
                f"cannot be written ({err}); the old file is unchanged",
                path=str(path),
                fix="Check the disk space and the folder's permissions",
            ) from err
        raise


def write_result(path: Path, document: dict[str, Any]) -> None:
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
    return data
