"""The files of an index beside the store: atomic writes, checksums and the manifest.

Every data file of an index (``vectors.npy``, ``ids.json``, the BM25 arrays) is written to a
temporary file of its own in the same folder and renamed over the old one, and the manifest is
written last, recording the size and SHA-256 of each data file. The predecessor used fixed
``name.tmp`` names, so two processes writing at once renamed each other's half-written files (one of
nine concurrent ``ask``s crashed on a rename), and it recorded nothing to check a file against, so a
truncated matrix or a shuffled id file was either a traceback or, worse, wrong answers.

Opening an index checks each file against the manifest before reading it; anything that does not
match raises :class:`DamagedIndexError`, which names the file and says how to rebuild it.

Two lock files (``clear_rag.locks``) serialise the writers without making readers wait for them: a
writer holds ``.sync.lock`` for its whole update (a second ``ingest`` waits instead of embedding the
same chunks again) and ``.commit.lock`` only while it replaces the files; a reader holds
``.commit.lock`` shared while it checks and opens them, so it sees one writer's files or the next
one's, never a mixture.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.atomic import replace_file, write_atomic
from clear_rag.errors import StoreError

MANIFEST = "manifest.json"
FORMAT = 2  # 1 (no "format" key): written before checksums; still read, checked by row counts only
REBUILD = "Run `clear-rag ingest PATH` or `clear-rag index --rebuild` to rebuild it from the store"


class DamagedIndexError(StoreError):
    """An index file that does not match its manifest: truncated, garbled, shuffled or missing."""

    def __init__(self, label: str, directory: Path, file: str, problem: str) -> None:
        super().__init__(f"the {label} index is damaged ({problem})", path=str(directory / file), fix=REBUILD)
        self.label, self.directory, self.file, self.problem = label, directory, file, problem

    @property
    def reason(self) -> str:
        """The damage in a few words, naming the file: ``bm25.json: checksum mismatch``."""
        return f"{self.file}: {self.problem}"


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an index covers: per document the version it indexed and the chunk ids it holds (or,
    for a document left out, why), and the size and SHA-256 of each data file as written."""

    settings: dict[str, Any]
    documents: dict[str, dict[str, Any]]
    files: dict[str, dict[str, Any]] | None  # None in a manifest written before checksums

    def chunk_ids(self) -> set[str]:
        return {chunk for entry in self.documents.values() for chunk in entry["chunks"]}

    def missing(self) -> dict[str, str]:
        """The documents left out of the index, each with the reason."""
        return {doc: entry["missing"] for doc, entry in sorted(self.documents.items()) if "missing" in entry}


def read_manifest(directory: Path, label: str, data_files: tuple[str, ...]) -> Manifest | None:
    """The manifest of the index in ``directory``; ``None`` when there is no index there at all.

    Data files without a manifest are damage (a manifest deleted or never committed), not an
    absent index: saying "no index" would hide the files a rebuild is about to replace.
    """
    path = directory / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if any((directory / name).exists() for name in data_files):
            raise DamagedIndexError(label, directory, MANIFEST, "file missing") from None
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise DamagedIndexError(label, directory, MANIFEST, f"unreadable ({err})") from err
    try:
        data = json.loads(text)
    except ValueError:
        raise DamagedIndexError(label, directory, MANIFEST, "not valid JSON") from None
    if not _well_formed(data):
        raise DamagedIndexError(label, directory, MANIFEST, "not an index manifest") from None
    return Manifest(data.get("settings", {}), data["documents"], data.get("files"))


def _well_formed(data: object) -> bool:
    """Whether ``data`` has the shape ``write_manifest`` gives, down to each document's entry."""
    if not isinstance(data, dict) or not isinstance(data.get("documents"), dict):
        return False
    for entry in data["documents"].values():
        chunks = entry.get("chunks") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            return False
        if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
            return False
        if not isinstance(entry.get("missing", ""), str):
            return False
    files = data.get("files")
    if data.get("format") == FORMAT:
        return isinstance(files, dict) and all(
            isinstance(v, dict) and isinstance(v.get("bytes"), int) and isinstance(v.get("sha256"), str)
            for v in files.values()
        )
    return "format" not in data and files is None


def check_files(directory: Path, manifest: Manifest, data_files: tuple[str, ...], label: str) -> None:
    """Each data file as the manifest recorded it: present, the same size, the same SHA-256."""
    if manifest.files is None:
        return  # an index from before checksums: its row counts are still checked on open
    for name in data_files:
        recorded = manifest.files.get(name)
        if recorded is None:
            raise DamagedIndexError(label, directory, MANIFEST, f"it records no checksum of {name}")
        try:
            found = digest(directory / name)
        except FileNotFoundError:
            raise DamagedIndexError(label, directory, name, "file missing") from None
        except OSError as err:
            raise DamagedIndexError(label, directory, name, f"unreadable ({err})") from err
        if found["bytes"] < recorded["bytes"]:
            problem = f"shorter than written: {found['bytes']} of {recorded['bytes']} bytes"
            raise DamagedIndexError(label, directory, name, problem)
        if found != recorded:
            raise DamagedIndexError(label, directory, name, "checksum mismatch")


def digest(path: Path) -> dict[str, Any]:
    """A file's size and SHA-256, as the manifest records them."""
    with path.open("rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
        return {"bytes": fh.tell(), "sha256": sha}


def write_manifest(
    directory: Path,
    settings: dict[str, Any],
    documents: dict[str, dict[str, Any]],
    data_files: tuple[str, ...],
) -> None:
    """Record the data files as they are now on disk, then commit the manifest (atomically, last:
    a crash before this rename leaves files the old manifest does not match, which the next
    ``ingest`` finds and rebuilds)."""
    files = {name: digest(directory / name) for name in data_files}
    body = {"format": FORMAT, "settings": settings, "documents": documents, "files": files}
    write_atomic(directory / MANIFEST, json.dumps(body, sort_keys=True))


def write_array(path: Path, array: npt.NDArray[Any]) -> None:
    """``array`` to ``path`` as ``.npy``, replaced atomically like every index file."""
    replace_file(path, lambda out: np.save(out, array, allow_pickle=False))


NARROW = (np.uint8, np.uint16, np.uint32, np.int64)  # the integer types counts are stored in, narrowest first


def narrowest(counts: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.integer[Any]]:
    """``counts`` (integers >= 0) in the narrowest of ``NARROW`` that holds their largest, as index
    files store them: a posting's document row fits 4 bytes below 4.3 billion documents and its term
    frequency usually 1 or 2, where the arrays in memory use 8 each. Reading widens them back
    (``astype``), value for value."""
    largest = int(counts.max()) if counts.size else 0
    if counts.size and int(counts.min()) < 0:
        raise ValueError(f"narrowest() stores counts, and {int(counts.min())} is negative")
    kind = next(t for t in NARROW if largest <= np.iinfo(t).max)
    return counts.astype(kind, copy=False)


def remove_leftovers(directory: Path) -> None:
    """Delete temporary files a killed writer left behind; call it holding the sync lock, when no
    other writer can be halfway through one."""
    for leftover in directory.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()
