"""Replacing a file atomically: the one way clear-rag writes a file another process may be reading.

The new content goes to a temporary file of its own in the same folder (``mkstemp``: two writers
never share a name), is flushed to disk, and is renamed over the old file, which is atomic within one
folder: a reader sees the old file or the new one, never a mixture or half of either, and on any
failure the temporary file is removed and the old file kept. A file is replaced, never overwritten in
place, so a reader that memory-mapped the old one keeps reading it. Result files, generation caches,
rendered pages and plots, and every index file (the arrays and the manifest) are written through here.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from clear_rag.errors import StoreError


def replace_file(path: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Call ``write`` on a fresh temporary file beside ``path``, then rename it over ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise StoreError(f"cannot be written ({err})", path=str(path), fix="Check the folder") from err
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
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


def write_atomic(path: Path, text: str | bytes) -> None:
    """``text`` (bytes, or a str written as UTF-8 with newlines as given) to ``path``, atomically."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    replace_file(path, lambda out: out.write(data))
