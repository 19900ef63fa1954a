"""The SHA-256 of a file, read in blocks: how corpus files, model weights and datasets are recognised."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of ``path``'s bytes (a model file need not fit in memory twice); ``OSError``
    propagates for the caller to name in its own terms."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
